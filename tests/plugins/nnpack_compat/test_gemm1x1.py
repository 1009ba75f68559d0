"""``gemm1x1.py``: a 1x1 convolution as one GEMM over channels, checked against a float64
numpy reference (``einsum``) and the native im2col algorithm, over strides 1/2/3, odd
image sizes (so the stride does not divide them), batch 1 and 3 and both dtypes; then
end to end through ``F.conv2d`` with the algorithm forced, including ``gradcheck`` and
``gradgradcheck`` in float64, and a Hypothesis sweep of shapes.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.backends.convolution import make_params
from ember.backends.im2col import Im2colConvolution
from ember_nnpack_compat import gemm1x1, using
from ember_nnpack_compat.algorithm import ALGORITHMS
from helpers import assert_close, make

from ._shared import native

NATIVE = Im2colConvolution(np, "cpu")
GEMM = next(a for a in ALGORITHMS if a.name == "nnpack_gemm1x1")
# float32: one dot product of C <= 16 terms of values in [-3, 3]; float64: exact to ~1e-14
TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-12, atol=1e-12)}


# ---- float64 references ------------------------------------------------------------------

def ref_forward(x, w, stride):
    """y[n, k, i, j] = sum_c w[k, c] x[n, c, i*sh, j*sw], in float64."""
    xs = x.astype(np.float64)[:, :, ::stride[0], ::stride[1]]
    return np.einsum("kc,nchw->nkhw", w.astype(np.float64)[:, :, 0, 0], xs)


def ref_grad_input(gy, w, input_shape, stride):
    gx = np.zeros(input_shape, np.float64)
    gx[:, :, ::stride[0], ::stride[1]] = np.einsum(
        "kc,nkhw->nchw", w.astype(np.float64)[:, :, 0, 0], gy.astype(np.float64))
    return gx


def ref_grad_weight(gy, x, stride):
    xs = x.astype(np.float64)[:, :, ::stride[0], ::stride[1]]
    return np.einsum("nkhw,nchw->kc", gy.astype(np.float64), xs)[:, :, None, None]


def _arrays(n, c, k, h, w, stride, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3, 3, (n, c, h, w)).astype(dtype)
    wt = rng.uniform(-3, 3, (k, c, 1, 1)).astype(dtype)
    oh, ow = (h - 1) // stride[0] + 1, (w - 1) // stride[1] + 1
    gy = rng.uniform(-3, 3, (n, k, oh, ow)).astype(dtype)
    return x, wt, gy


def _check_module(n, c, k, h, w, stride, dtype, seed=0):
    """The three functions of ``gemm1x1`` against the float64 references, in ``dtype``."""
    x, wt, gy = _arrays(n, c, k, h, w, stride, dtype, seed)
    tol = TOL[dtype]
    y = gemm1x1.forward(x, wt, (0, 0), stride)
    assert y.dtype == dtype and y.shape == gy.shape
    np.testing.assert_allclose(y, ref_forward(x, wt, stride), **tol)
    gx = gemm1x1.grad_input(gy, wt, x.shape, (0, 0), stride)
    assert gx.dtype == dtype and gx.shape == x.shape
    np.testing.assert_allclose(gx, ref_grad_input(gy, wt, x.shape, stride), **tol)
    gw = gemm1x1.grad_weight(gy, x, wt.shape, (0, 0), stride)
    assert gw.dtype == dtype and gw.shape == wt.shape
    # the weight gradient sums N*OH*OW products: scale atol with that count
    terms = n * gy.shape[2] * gy.shape[3]
    np.testing.assert_allclose(gw, ref_grad_weight(gy, x, stride), rtol=tol["rtol"],
                               atol=tol["atol"] * terms)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("stride", [(1, 1), (2, 2), (3, 3), (2, 3)])
@pytest.mark.parametrize("n,c,k,h,w", [(1, 3, 4, 7, 9), (3, 5, 2, 11, 6), (3, 1, 1, 1, 1)])
def test_module_against_float64_reference(n, c, k, h, w, stride, dtype):
    _check_module(n, c, k, h, w, stride, dtype)


@pytest.mark.parametrize("stride", [(1, 1), (2, 2), (3, 3)])
@pytest.mark.parametrize("n", [1, 3])
def test_algorithm_against_native(n, stride):
    """The registered algorithm (module plus bias) against im2col on one call, every
    output of forward and backward, in float64."""
    x, wt, gy = _arrays(n, 6, 5, 9, 7, stride, np.float64, seed=n)
    bias = np.linspace(-1, 1, 5)
    p = make_params("cpu", E.float64, x, wt, bias, stride, (0, 0), (1, 1), False, (0, 0), 1)
    np.testing.assert_allclose(GEMM.forward(x, wt, bias, p), NATIVE.forward(x, wt, bias, p),
                               rtol=1e-12, atol=1e-12)
    got = GEMM.backward(gy, x, wt, p, (True, True, True))
    want = NATIVE.backward(gy, x, wt, p, (True, True, True))
    for g, r in zip(got, want):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-11)


@pytest.mark.parametrize("stride", [1, 2, 3])
@pytest.mark.parametrize("dtype", [E.float32, E.float64])
def test_conv2d_forced_matches_native(ran, stride, dtype):
    """End to end through ``F.conv2d``: forward and every gradient match im2col (and the
    forced call really ran gemm1x1, so this is not im2col against itself)."""
    x, _ = make((3, 4, 10, 7), dtype)
    w, _ = make((6, 4, 1, 1), dtype, seed=1)
    b, _ = make((6,), dtype, seed=2)
    with native():
        xr, wr, br = (t.detach().requires_grad_() for t in (x, w, b))
        ref = F.conv2d(xr, wr, br, stride=stride)
        ref.sum().backward()
    xs, ws, bs = (t.detach().requires_grad_() for t in (x, w, b))
    with using("nnpack_gemm1x1"):
        y = F.conv2d(xs, ws, bs, stride=stride)
        y.sum().backward()
    assert [(n, m) for n, m, _ in ran] == [("nnpack_gemm1x1", "forward"),
                                           ("nnpack_gemm1x1", "backward")]
    tol = dict(rtol=1e-5, atol=1e-5) if dtype is E.float32 else {}
    assert_close(y.detach(), ref.detach().numpy(), **tol)
    for got, want in ((xs, xr), (ws, wr), (bs, br)):
        assert_close(got.grad, want.grad.numpy(), **tol)


def test_conv2d_forced_runs_gemm1x1(monkeypatch):
    """The forced path really runs this module, forward and backward."""
    calls = []
    for fn in ("forward", "grad_input", "grad_weight"):
        real = getattr(gemm1x1, fn)
        monkeypatch.setattr(gemm1x1, fn, lambda *a, _f=real, _n=fn: calls.append(_n) or _f(*a))
    x = E.ones(2, 3, 4, 4, requires_grad=True)
    w = E.ones(2, 3, 1, 1, requires_grad=True)
    with using("nnpack_gemm1x1"):
        F.conv2d(x, w).sum().backward()
    assert sorted(calls) == ["forward", "grad_input", "grad_weight"]


@pytest.mark.parametrize("stride", [1, 2])
def test_gradcheck_float64(stride):
    x, _ = make((2, 3, 5, 4), E.float64)
    w, _ = make((2, 3, 1, 1), E.float64, seed=1)
    b, _ = make((2,), E.float64, seed=2)
    inputs = tuple(t.requires_grad_() for t in (x, w, b))
    fn = lambda x, w, b: F.conv2d(x, w, b, stride=stride)
    with using("nnpack_gemm1x1"):
        assert gradcheck(fn, inputs)
        assert gradgradcheck(fn, inputs)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 3), c=st.integers(1, 6), k=st.integers(1, 6), h=st.integers(1, 12),
       w=st.integers(1, 12), sh=st.integers(1, 3), sw=st.integers(1, 3),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2**16))
def test_module_fuzzed_shapes(n, c, k, h, w, sh, sw, dtype, seed):
    _check_module(n, c, k, h, w, (sh, sw), dtype, seed)
