"""ember.nn.functional.conv* against numpy float64 references: values for every
parameter (string paddings, unbatched inputs), gradcheck and gradgradcheck across
stride, padding, dilation, groups, transposed and bias, dtypes, and the errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError, ShapeError
from helpers import assert_close, make


def ref_conv(x, w, b, stride, pads, dilation, groups):
    """Cross-correlation by loops; ``pads`` holds (before, after) per spatial dim."""
    nd = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + list(pads))
    k = w.shape[2:]
    size = [(xp.shape[2 + i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1
            for i in range(nd)]
    y = np.zeros((x.shape[0], w.shape[0], *size))
    ci, co = x.shape[1] // groups, w.shape[0] // groups
    for o in np.ndindex(*size):
        for q in np.ndindex(*k):
            pos = tuple(o[i] * stride[i] + q[i] * dilation[i] for i in range(nd))
            for g in range(groups):
                patch = xp[(slice(None), slice(g * ci, (g + 1) * ci)) + pos]
                y[(slice(None), slice(g * co, (g + 1) * co)) + o] += \
                    patch @ w[(slice(g * co, (g + 1) * co), slice(None)) + q].T
    return y if b is None else y + b.reshape((1, -1) + (1,) * nd)


def ref_conv_transpose(x, w, b, stride, padding, output_padding, groups, dilation):
    """Transposed convolution by scattering each input position, then cropping."""
    nd = x.ndim - 2
    k = w.shape[2:]
    full = [(x.shape[2 + i] - 1) * stride[i] + dilation[i] * (k[i] - 1) + 1 +
            output_padding[i] for i in range(nd)]
    buf = np.zeros((x.shape[0], w.shape[1] * groups, *full))
    ci, co = x.shape[1] // groups, w.shape[1]
    for i in np.ndindex(*x.shape[2:]):
        for q in np.ndindex(*k):
            pos = tuple(i[d] * stride[d] + q[d] * dilation[d] for d in range(nd))
            for g in range(groups):
                buf[(slice(None), slice(g * co, (g + 1) * co)) + pos] += \
                    x[(slice(None), slice(g * ci, (g + 1) * ci)) + i] @ \
                    w[(slice(g * ci, (g + 1) * ci), slice(None)) + q]
    y = buf[(slice(None), slice(None)) + tuple(slice(p, f - p) for p, f in
                                               zip(padding, full))]
    return y if b is None else y + b.reshape((1, -1) + (1,) * nd)


CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}
SPATIAL = {1: (7,), 2: (5, 6), 3: (4, 5, 3)}
KERNEL = {1: (3,), 2: (3, 2), 3: (2, 3, 2)}


def _t(v, nd):
    return tuple(v) if isinstance(v, tuple) else (v,) * nd


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("stride,padding,dilation,groups", [
    (1, 0, 1, 1), (2, 1, 1, 1), (1, 2, 2, 2), (3, 1, 1, 4), (2, 0, 2, 2)])
@pytest.mark.parametrize("bias", [True, False])
def test_conv_values(nd, stride, padding, dilation, groups, bias):
    x, xn = make((2, 4, *SPATIAL[nd]), E.float64, seed=1)
    w, wn = make((4, 4 // groups, *KERNEL[nd]), E.float64, seed=2)
    b, bn = make((4,), E.float64, seed=3) if bias else (None, None)
    if any((s + 2 * padding - dilation * (k - 1)) < 1 for s, k in zip(SPATIAL[nd], KERNEL[nd])):
        pytest.skip("kernel larger than the input")
    y = CONV[nd](x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)
    ref = ref_conv(xn, wn, bn, _t(stride, nd), [(padding, padding)] * nd, _t(dilation, nd),
                   groups)
    assert_close(y, ref)


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("stride,padding,output_padding,groups,dilation", [
    (1, 0, 0, 1, 1), (2, 1, 1, 1, 1), (2, 0, 0, 2, 2), (3, 1, 2, 2, 1), (1, 1, 1, 1, 2)])
def test_conv_transpose_values(nd, stride, padding, output_padding, groups, dilation):
    x, xn = make((2, 4, *SPATIAL[nd]), E.float64, seed=4)
    w, wn = make((4, 6 // groups, *KERNEL[nd]), E.float64, seed=5)
    b, bn = make((6,), E.float64, seed=6)
    y = CONV_T[nd](x, w, b, stride, padding, output_padding, groups, dilation)
    ref = ref_conv_transpose(xn, wn, bn, _t(stride, nd), _t(padding, nd),
                             _t(output_padding, nd), groups, _t(dilation, nd))
    assert_close(y, ref)


@pytest.mark.parametrize("kernel,dilation", [((3, 4), 1), ((2, 3), (1, 2)), ((4, 1), 2),
                                             ((2, 2), 3)])
def test_padding_same_and_valid(kernel, dilation):
    x, xn = make((2, 3, 7, 6), E.float64, seed=7)
    w, wn = make((4, 3, *kernel), E.float64, seed=8)
    d = _t(dilation, 2)
    y = F.conv2d(x, w, padding="same", dilation=dilation)
    assert y.shape == (2, 4, 7, 6)
    totals = [di * (k - 1) for di, k in zip(d, kernel)]
    pads = [(t // 2, t - t // 2) for t in totals]     # PyTorch: the odd element at the end
    assert_close(y, ref_conv(xn, wn, None, (1, 1), pads, d, 1))
    assert_close(F.conv2d(x, w, padding="valid", dilation=dilation),
                 ref_conv(xn, wn, None, (1, 1), [(0, 0)] * 2, d, 1))


def test_padding_same_gradients():
    x = E.tensor(np.random.default_rng(0).standard_normal((1, 2, 5)), requires_grad=True)
    w = E.tensor(np.random.default_rng(1).standard_normal((2, 2, 4)), requires_grad=True)
    assert gradcheck(lambda a, b: F.conv1d(a, b, padding="same"), (x, w))
    assert gradgradcheck(lambda a, b: F.conv1d(a, b, padding="same"), (x, w))


def test_unbatched_input():
    x, xn = make((3, 6, 5), E.float64)
    w, wn = make((2, 3, 3, 3), E.float64, seed=1)
    y = F.conv2d(x, w, padding=1)
    assert y.shape == (2, 6, 5)
    assert_close(y, ref_conv(xn[None], wn, None, (1, 1), [(1, 1)] * 2, (1, 1), 1)[0])
    wt, wtn = make((3, 2, 2), E.float64, seed=2)
    x1, x1n = make((3, 4), E.float64, seed=3)
    assert_close(F.conv_transpose1d(x1, wt, stride=2),
                 ref_conv_transpose(x1n[None], wtn, None, (2,), (0,), (0,), 1, (1,))[0])


# (nd, x shape, w shape, kwargs, transposed): small enough for gradgradcheck
GRAD_CASES = [
    (1, (2, 2, 5), (2, 2, 3), dict(), False),
    (1, (1, 4, 6), (4, 1, 2), dict(stride=2, padding=1, groups=4), False),
    (1, (1, 2, 7), (2, 2, 2), dict(dilation=3, padding=2), False),
    (2, (1, 2, 4, 3), (2, 1, 2, 2), dict(stride=(2, 1), padding=(1, 0), groups=2), False),
    (2, (1, 1, 5, 4), (2, 1, 3, 2), dict(dilation=(2, 1), padding="same"), False),
    (3, (1, 1, 3, 3, 2), (2, 1, 2, 2, 1), dict(stride=(1, 2, 1), padding=1), False),
    (1, (1, 2, 4), (2, 2, 3), dict(stride=2, padding=1, output_padding=1), True),
    (1, (1, 4, 3), (4, 1, 2), dict(stride=1, groups=2, dilation=2, output_padding=1), True),
    (2, (1, 2, 3, 2), (2, 1, 2, 2), dict(stride=(2, 1), padding=(0, 1), groups=2), True),
    (3, (1, 2, 2, 1, 2), (2, 1, 2, 1, 2), dict(stride=2, output_padding=(1, 0, 0)), True),
]


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("case", range(len(GRAD_CASES)))
def test_gradcheck_and_gradgradcheck(case, bias):
    nd, xs, ws, kw, transposed = GRAD_CASES[case]
    rng = np.random.default_rng(case)
    c_out = ws[1] * kw.get("groups", 1) if transposed else ws[0]
    inputs = [E.tensor(rng.standard_normal(s), requires_grad=True) for s in (xs, ws)]
    if bias:
        inputs.append(E.tensor(rng.standard_normal(c_out), requires_grad=True))
    fn = CONV_T[nd] if transposed else CONV[nd]

    def f(x, w, b=None):
        return fn(x, w, b, **kw)
    assert gradcheck(f, tuple(inputs))
    assert gradgradcheck(f, tuple(inputs))


def test_float32_stays_float32():
    x = E.randn(2, 3, 6, 6, requires_grad=True)
    w = E.randn(4, 3, 3, 3, requires_grad=True)
    b = E.randn(4, requires_grad=True)
    y = F.conv2d(x, w, b, padding=1)
    assert y.dtype is E.float32
    y.sum().backward()
    assert x.grad.dtype is w.grad.dtype is b.grad.dtype is E.float32
    yt = F.conv_transpose2d(x, w.transpose(0, 1), stride=2)
    assert yt.dtype is E.float32


@pytest.mark.parametrize("dtype", [E.float16, E.bfloat16])
def test_half_precision(dtype):
    x, xn = make((2, 3, 5, 5), dtype, low=-1, high=1)
    w, wn = make((4, 3, 3, 3), dtype, low=-1, high=1, seed=1)
    y = F.conv2d(x, w, padding=1)
    assert_close(y, ref_conv(xn, wn, None, (1, 1), [(1, 1)] * 2, (1, 1), 1), rtol=3e-2,
                 atol=3e-2)


def test_bad_weight_shape_message():
    x, w = E.zeros(1, 3, 8, 8), E.zeros(16, 1, 3, 3)
    with pytest.raises(ShapeError, match=r"conv2d: expected weight of shape \(out_channels, "
                       r"in_channels/groups, kH, kW\) = \(16, 3, 3, 3\).*got \(16, 1, 3, 3\)"):
        F.conv2d(x, w)


@pytest.mark.parametrize("call,error,match", [
    (lambda: F.conv2d(E.zeros(1, 3, 8, 8), E.zeros(4, 3, 3)), ShapeError, "rank 4"),
    (lambda: F.conv1d(E.zeros(8), E.zeros(4, 1, 3)), ShapeError, "2-D .*unbatched"),
    (lambda: F.conv2d(E.zeros(1, 4, 8, 8), E.zeros(6, 2, 3, 3), groups=4), ShapeError,
     "divisible by groups=4"),
    (lambda: F.conv2d(E.zeros(1, 3, 2, 2), E.zeros(4, 3, 3, 3)), ShapeError,
     "larger than the padded input"),
    (lambda: F.conv2d(E.zeros(1, 3, 5, 5), E.zeros(4, 3, 3, 3), E.zeros(3)), ShapeError,
     r"bias of shape \(4,\)"),
    (lambda: F.conv2d(E.zeros(1, 3, 5, 5), E.zeros(4, 3, 3, 3), stride=0), ShapeError,
     "stride >= 1"),
    (lambda: F.conv2d(E.zeros(1, 3, 5, 5), E.zeros(4, 3, 3, 3), stride=(1, 2, 3)), TypeError,
     "tuple of 2"),
    (lambda: F.conv2d(E.zeros(1, 3, 5, 5), E.zeros(4, 3, 3, 3), padding="full"), ValueError,
     "'same', 'valid'"),
    (lambda: F.conv2d(E.zeros(1, 3, 5, 5), E.zeros(4, 3, 3, 3), padding="same", stride=2),
     ValueError, "strided"),
    (lambda: F.conv_transpose2d(E.zeros(1, 3, 5, 5), E.zeros(3, 4, 3, 3), padding="same"),
     ValueError, "string paddings"),
    (lambda: F.conv_transpose2d(E.zeros(1, 3, 5, 5), E.zeros(3, 4, 3, 3), stride=2,
                                output_padding=2), ShapeError, "output_padding smaller"),
    (lambda: F.conv2d(E.zeros(1, 3, 5, 5), E.zeros(4, 3, 3, 3, dtype=E.float64)), DtypeError,
     "one dtype"),
    (lambda: F.conv2d(E.zeros(1, 3, 5, 5, dtype=E.int64), E.zeros(4, 3, 3, 3,
                                                                  dtype=E.int64)),
     NotImplementedError, "not floating point"),
    (lambda: F.conv2d([1.0], E.zeros(4, 3, 3, 3)), TypeError, "Tensor"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
