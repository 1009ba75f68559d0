"""``api.py``: ``nnpack_spatial_convolution(input, weight, bias, padding, stride=1)``, the
seeds' ATen function. Its values and gradients against the native algorithm
(``F.conv2d`` with ``ember.backends.nnpack`` switched off), int and pair arguments, bias
None and given, which algorithm it runs, ``gradcheck``/``gradgradcheck`` in float64 on
1x1 kernels (the 1x1 GEMM), and its errors: NNPACK's limits as RuntimeError naming the
limit, shapes as ember's ShapeError, argument types as TypeError.
"""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.backends.nnpack as nnpack
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError, ShapeError
from ember_nnpack_compat import nnpack_spatial_convolution, winograd
from helpers import assert_close, make

from ._shared import native


def _inputs(n, c, k, hw, kernel, dtype=E.float64, bias=True, seed=0):
    x, _ = make((n, c, *hw), dtype, seed=seed)
    w, _ = make((k, c, *kernel), dtype, seed=seed + 1)
    b = make((k,), dtype, seed=seed + 2)[0] if bias else None
    return x, w, b


def _pair(v) -> tuple:
    """(h, w) from an int, a pair or a 1-sequence (which ``F.conv2d`` does not take)."""
    return (v, v) if isinstance(v, int) else tuple(v) * (2 // len(v))


def _native(x, w, b, padding, stride):
    with native():
        return F.conv2d(x, w, b, stride=_pair(stride), padding=_pair(padding))


# ---- values against native, and which algorithm runs -------------------------------------

@pytest.mark.parametrize("stride", [1, 2, (2, 3), [1, 2]])
@pytest.mark.parametrize("padding", [0, (0, 0), [0, 0]])
@pytest.mark.parametrize("bias", [True, False])
def test_1x1_int_and_pair_arguments(ran, stride, padding, bias):
    x, w, b = _inputs(2, 3, 4, (7, 8), (1, 1), bias=bias)
    y = nnpack_spatial_convolution(x, w, b, padding, stride)
    assert [(n, m) for n, m, _ in ran] == [("nnpack_gemm1x1", "forward")]
    assert_close(y, _native(x, w, b, padding, stride).numpy())


def test_stride_defaults_to_1(ran):
    x, w, b = _inputs(1, 2, 3, (5, 5), (1, 1))
    y = nnpack_spatial_convolution(x, w, b, 0)
    assert [(n, m, p.stride) for n, m, p in ran] == [("nnpack_gemm1x1", "forward", (1, 1))]
    assert y.shape == (1, 3, 5, 5)
    assert_close(y, _native(x, w, b, 0, 1).numpy())


@pytest.mark.parametrize("padding", [1, (1, 0), (0, 1), 0])
@pytest.mark.parametrize("bias", [True, False])
def test_3x3_runs_winograd_f4x4(ran, padding, bias):
    x, w, b = _inputs(2, 3, 5, (9, 7), (3, 3), bias=bias)
    y = nnpack_spatial_convolution(x, w, b, padding)
    assert [(n, m) for n, m, _ in ran] == [("nnpack_winograd_f4x4_3x3", "forward")]
    assert_close(y, _native(x, w, b, padding, 1).numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kernel,padding,stride", [
    ((3, 3), 1, 2), ((5, 5), 2, 1), ((3, 5), (1, 2), (1, 2)), ((16, 16), 15, 1)])
def test_other_kernels_run_fft(ran, kernel, padding, stride):
    x, w, b = _inputs(2, 3, 4, (10, 11), kernel)
    y = nnpack_spatial_convolution(x, w, b, padding, stride)
    assert [(n, m) for n, m, _ in ran] == [("nnpack_fft", "forward")]
    assert_close(y, _native(x, w, b, padding, stride).numpy(), rtol=1e-9, atol=1e-9)


def test_float32_within_winograd_bound():
    """float32 through Winograd F(4x4, 3x3): winograd.py bounds the error of an output by
    ERROR_BOUND[4] times the largest sum of |x| |w| over a window of its plane; here that
    sum is at most 16 * 9 * 3 * 3 = 1296 (16 channels, 3x3, values in [-3, 3])."""
    x, w, b = _inputs(4, 16, 8, (12, 12), (3, 3), dtype=E.float32)
    y = nnpack_spatial_convolution(x, w, b, 1)
    assert y.dtype is E.float32 and y.shape == (4, 8, 12, 12)
    with native():
        ref = F.conv2d(x.to(E.float64), w.to(E.float64), b.to(E.float64), padding=1)
    assert_close(y, ref.numpy(), dtype=E.float32, rtol=0,
                 atol=winograd.ERROR_BOUND[4] * 1296)


def test_runs_whatever_the_switch_and_crossover(ran, monkeypatch):
    """Like torch's, the function runs NNPACK even where ``conv2d`` would not."""
    from ember_nnpack_compat import selection
    monkeypatch.setattr(selection, "crossover", lambda name, p: selection.Decline("slow"))
    x, w, b = _inputs(1, 2, 3, (5, 5), (1, 1))
    with nnpack.flags(enabled=False):
        y = nnpack_spatial_convolution(x, w, b, 0)
    assert [(n, m) for n, m, _ in ran] == [("nnpack_gemm1x1", "forward")]
    assert_close(y, _native(x, w, b, 0, 1).numpy())


def test_runs_nnpack_for_shapes_conv2d_ran_on_im2col(ran):
    """A conv2d on im2col first (here: switch off) must not keep the function off nnpack
    for the same shapes: the dispatcher must not cache a choice made after a ``dynamic``
    algorithm declined."""
    x, w, b = _inputs(1, 2, 3, (6, 6), (1, 1))
    with native():
        ref = F.conv2d(x, w, b)
    y = nnpack_spatial_convolution(x, w, b, 0)
    assert [(n, m) for n, m, _ in ran] == [("nnpack_gemm1x1", "forward")]
    assert_close(y, ref.numpy())


# ---- autograd -----------------------------------------------------------------------------

@pytest.mark.parametrize("kernel,padding,stride", [((1, 1), 0, 1), ((1, 1), 0, 2),
                                                   ((3, 3), 1, 1)])
def test_backward_matches_native(kernel, padding, stride):
    x, w, b = _inputs(2, 3, 4, (6, 7), kernel)
    gy = make((2, 4) + tuple(_native(x, w, b, padding, stride).shape[2:]), E.float64,
              seed=9)[0]
    grads = {}
    for how in ("nnpack", "native"):
        xs, ws, bs = (t.detach().requires_grad_() for t in (x, w, b))
        if how == "nnpack":
            y = nnpack_spatial_convolution(xs, ws, bs, padding, stride)
            y.backward(gy)
        else:
            with native():
                y = F.conv2d(xs, ws, bs, stride=stride, padding=padding)
                y.backward(gy)
        grads[how] = [t.grad.numpy() for t in (xs, ws, bs)]
    for got, want in zip(grads["nnpack"], grads["native"]):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("stride", [1, 2])
def test_gradcheck_and_gradgradcheck_1x1(stride):
    x, w, b = _inputs(2, 3, 2, (4, 5), (1, 1))
    inputs = tuple(t.requires_grad_() for t in (x, w, b))
    fn = lambda x, w, b: nnpack_spatial_convolution(x, w, b, 0, stride)
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_gradcheck_without_bias():
    x, w, _ = _inputs(1, 2, 3, (3, 3), (1, 1), bias=False)
    inputs = (x.requires_grad_(), w.requires_grad_())
    assert gradcheck(lambda x, w: nnpack_spatial_convolution(x, w, None, (0, 0)), inputs)


# ---- errors -------------------------------------------------------------------------------

def _limit_error(x, w, b, padding, stride=1) -> str:
    """The message of the RuntimeError (not a ShapeError: the shapes are fine) raised."""
    with pytest.raises(RuntimeError) as err:
        nnpack_spatial_convolution(x, w, b, padding, stride)
    assert not isinstance(err.value, (ShapeError, DtypeError)), repr(err.value)
    msg = str(err.value)
    assert msg.startswith("nnpack_spatial_convolution") and "conv2d" in msg  # the way out
    return msg


@pytest.mark.parametrize("kernel", [(17, 17), (17, 3), (3, 17)])
def test_kernel_above_16_names_the_limit(kernel):
    x, w, b = _inputs(1, 2, 3, (20, 20), kernel, dtype=E.float32)
    msg = _limit_error(x, w, b, 0)
    assert f"kernel {kernel[0]}x{kernel[1]}" in msg and "16x16" in msg


@pytest.mark.parametrize("kernel,padding", [((1, 1), 1), ((3, 3), 3), ((3, 3), (1, 4)),
                                            ((5, 3), (5, 0))])
def test_padding_not_smaller_than_kernel(kernel, padding):
    x, w, b = _inputs(1, 2, 3, (8, 8), kernel, dtype=E.float32)
    assert "padding" in _limit_error(x, w, b, padding)


@pytest.mark.parametrize("dtype", [E.int32, E.int64, E.float16])
def test_dtype_outside_float32_float64(dtype):
    x, w, b = _inputs(1, 2, 3, (5, 5), (3, 3), dtype=dtype)
    assert dtype.name in _limit_error(x, w, b, 1)


@pytest.mark.parametrize("xs,ws,bs", [
    ((2, 5, 5), (3, 2, 3, 3), (3,)),             # unbatched input
    ((1, 2, 5, 5), (3, 4, 3, 3), (3,)),          # channels do not match
    ((1, 2, 5, 5), (3, 2, 3, 3), (4,)),          # bias not (out_channels,)
    ((1, 2, 5, 5), (3, 2, 3), (3,)),             # 1-D weight with 2-D input
    ((1, 2, 2, 2), (3, 2, 5, 5), (3,)),          # kernel larger than the padded input
])
def test_bad_shapes_raise_shape_error(xs, ws, bs):
    x, w, b = (make(s, E.float32)[0] for s in (xs, ws, bs))
    with pytest.raises(ShapeError):
        nnpack_spatial_convolution(x, w, b, 1)


def test_mixed_dtypes_raise_dtype_error():
    x, w, b = _inputs(1, 2, 3, (5, 5), (3, 3), dtype=E.float32)
    with pytest.raises(DtypeError):
        nnpack_spatial_convolution(x, w.to(E.float64), b, 1)


@pytest.mark.parametrize("padding,stride", [("same", 1), (1.0, 1), ((1, 1, 1), 1),
                                            ((1.0, 1), 1), (None, 1), (1, "2"), (1, (1, 2, 3)),
                                            (1, ()), (True, 1), (1, (1,))])
def test_bad_argument_types_raise_type_error(padding, stride):
    x, w, b = _inputs(1, 2, 3, (5, 5), (3, 3), dtype=E.float32)
    with pytest.raises(TypeError) as err:
        nnpack_spatial_convolution(x, w, b, padding, stride)
    assert "int or a pair of ints" in str(err.value)
