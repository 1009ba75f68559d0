"""The fused layer_norm / group_norm kernel pairs (backends/kernels/normalization.py)
against float64 references: forward and all three gradients, every floating dtype, odd
shapes, special values, and the error bounds the module's docstring states."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.backends.kernels import normalization as K
from helpers import to_np

DTYPES = [E.float16, E.bfloat16, E.float32, E.float64]
# error bound, in units of the dtype's eps times max(|reference|, 1): the 16-bit floats
# are computed in float32 and rounded once (0.5 ulp), float32 / float64 as measured
BOUND = {E.float16: 1.0, E.bfloat16: 1.0, E.float32: 8.0, E.float64: 8.0}
# gradients: in units of eps times the largest reference gradient of the tensor
GRAD_BOUND = {E.float16: 2.0, E.bfloat16: 2.0, E.float32: 64.0, E.float64: 64.0}
AFFINE = ["none", "weight", "bias", "both"]


def _eps(dtype) -> float:
    return float(E.finfo(dtype).eps)


def _tensor(arr, dtype, grad=False):
    t = E.tensor(np.asarray(arr).astype(dtype.numpy))
    return t.requires_grad_(True) if grad else t


def _rows_reference(x, w, b, g, eps):
    """float64 forward and gradients of row normalization: x, g (R, D) and w, b
    broadcasting against them; returns y, dx, g * xhat (dw before its sum over rows) and
    max |rstd * g * w|, the size of the terms that cancel in dx."""
    mean = x.mean(-1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + eps)
    xhat = (x - mean) * rstd
    y = xhat * w + b
    gw = g * w
    dx = rstd * (gw - gw.mean(-1, keepdims=True)
                 - xhat * (gw * xhat).mean(-1, keepdims=True))
    return y, dx, g * xhat, np.abs(rstd * gw).max(initial=0.0)


def _check(got, ref, dtype, bound):
    got = to_np(got).astype(np.float64)
    assert got.shape == ref.shape
    scale = np.maximum(np.abs(ref), 1.0)
    err = np.abs(got - ref) / (_eps(dtype) * scale)
    finite = np.isfinite(ref)
    assert np.array_equal(np.isnan(got), np.isnan(ref)), "nan positions differ"
    assert not finite.any() or err[finite].max() <= bound, err[finite].max()


def _check_grad(got, ref, dtype, terms=0.0):
    """Within the bound of eps times the largest of the reference gradient and of the
    terms that cancel in it (a one-element group has dx = 0 from terms of rstd * g)."""
    got = to_np(got).astype(np.float64)
    assert got.shape == ref.shape
    scale = max(np.abs(ref).max(initial=0.0), terms, 1e-3)
    err = np.abs(got - ref).max(initial=0.0) / (_eps(dtype) * scale)
    assert err <= GRAD_BOUND[dtype], err


def _params(affine, shape, dtype, rng):
    w = rng.uniform(0.5, 2, shape) if affine in ("weight", "both") else None
    b = rng.uniform(-1, 1, shape) if affine in ("bias", "both") else None
    wt = None if w is None else _tensor(w, dtype, True)
    bt = None if b is None else _tensor(b, dtype, True)
    # the reference sees the values the dtype holds
    w64 = np.ones(shape) if w is None else to_np(wt.detach()).astype(np.float64)
    b64 = np.zeros(shape) if b is None else to_np(bt.detach()).astype(np.float64)
    return wt, bt, w64, b64


# ---- layer_norm ------------------------------------------------------------------------------

LN_SHAPES = [((5, 7), (7,)), ((2, 3, 4, 5), (4, 5)), ((3, 1), (1,)), ((4, 2, 3), (4, 2, 3)),
             ((67, 33), (33,)), ((2, 1000), (1000,))]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,normalized", LN_SHAPES)
@pytest.mark.parametrize("affine", AFFINE)
def test_layer_norm_matches_float64(dtype, shape, normalized, affine):
    rng = np.random.default_rng(len(shape) + len(normalized))
    x = _tensor(rng.normal(0.5, 2, shape), dtype, True)
    w, b, w64, b64 = _params(affine, normalized, dtype, rng)
    g = rng.normal(size=shape)
    y = F.layer_norm(x, normalized, w, b, eps=1e-5)
    assert y.dtype is dtype and tuple(y.shape) == shape
    y.backward(_tensor(g, dtype))
    d = int(np.prod(normalized))
    x64 = to_np(x.detach()).astype(np.float64).reshape(-1, d)
    g64 = to_np(_tensor(g, dtype)).astype(np.float64).reshape(-1, d)
    y_ref, dx, dw, terms = _rows_reference(x64, w64.reshape(d), b64.reshape(d), g64, 1e-5)
    _check(y, y_ref.reshape(shape), dtype, BOUND[dtype])
    _check_grad(x.grad, dx.reshape(shape), dtype, terms)
    if w is not None:
        _check_grad(w.grad, dw.sum(0).reshape(normalized), dtype)
    if b is not None:
        _check_grad(b.grad, g64.sum(0).reshape(normalized), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_norm_special_values(dtype):
    # NOTE: float32 (and the 16-bit floats computed in it) square the centered values:
    # |x| up to ~1e18 at D = 4, as PyTorch's float32 accumulation
    big = {E.float16: 3e4, E.bfloat16: 1e15, E.float32: 1e15, E.float64: 1e150}[dtype]
    tiny = float(E.finfo(dtype).tiny) / 4  # subnormal
    rows = np.array([[1.0, 2.0, 3.0, 4.0],
                     [np.nan, 1.0, 2.0, 3.0],            # a nan: that row is nan
                     [np.inf, 1.0, 2.0, 3.0],            # an inf: that row is nan
                     [-0.0, -0.0, 0.0, -0.0],            # constant: zeros
                     [big, -big, big / 2, -big / 4],     # huge but finite squares
                     [tiny, -tiny, 2 * tiny, 0.0],       # subnormal: ~0 next to eps
                     [5.0, 5.0, 5.0, 5.0]])
    x = _tensor(rows, dtype)
    y = F.layer_norm(x, (4,))
    x64 = to_np(x).astype(np.float64)
    with np.errstate(invalid="ignore"):
        ref = _rows_reference(x64, 1.0, 0.0, np.zeros_like(x64), 1e-5)[0]
    _check(y, ref, dtype, BOUND[dtype])
    assert not np.signbit(to_np(y)[3]).any() or np.all(to_np(y)[3] == 0)


def test_layer_norm_float32_statistics_error_bound():
    """The docstring's bounds: mean within 3e-8 std (D = 1000), variance within a few ulps."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 1000)).astype(np.float32)
    c, mean, rstd = K._moments(np, x, 0.0)
    x64 = x.astype(np.float64)
    m64 = x64.mean(1)
    v64 = ((x64 - m64[:, None]) ** 2).mean(1)
    assert mean.dtype == np.float32 and rstd.dtype == np.float32
    assert np.abs(mean - m64).max() / np.sqrt(v64).min() < 1e-7
    eps32 = float(np.finfo(np.float32).eps)
    assert np.abs(rstd * np.sqrt(v64) - 1).max() < 4 * eps32


def test_layer_norm_offset_rows_lose_only_what_float32_input_loses():
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((16, 512)) + 1000).astype(np.float32)
    y = F.layer_norm(E.tensor(x), (512,))
    ref = _rows_reference(x.astype(np.float64), 1.0, 0.0, np.zeros(x.shape), 1e-5)[0]
    assert np.abs(to_np(y) - ref).max() < 2e-4


def test_layer_norm_non_contiguous_and_expanded_inputs():
    rng = np.random.default_rng(2)
    base = rng.standard_normal((6, 5))
    x = E.tensor(base).t()                      # (5, 6), not contiguous
    y = F.layer_norm(x, (6,))
    ref = _rows_reference(base.T.copy(), 1.0, 0.0, np.zeros((5, 6)), 1e-5)[0]
    np.testing.assert_allclose(to_np(y), ref, rtol=1e-12, atol=1e-12)
    row = E.tensor(base[0]).expand(4, 5)        # strides 0
    np.testing.assert_allclose(to_np(F.layer_norm(row, (5,))),
                               np.broadcast_to(_rows_reference(base[:1], 1.0, 0.0,
                                                               np.zeros((1, 5)), 1e-5)[0],
                                               (4, 5)), rtol=1e-12, atol=1e-12)


def test_layer_norm_empty_batch():
    x = E.zeros(0, 4, requires_grad=True)
    w = E.ones(4, requires_grad=True)
    y = F.layer_norm(x, (4,), w)
    assert tuple(y.shape) == (0, 4)
    y.sum().backward()
    assert tuple(x.grad.shape) == (0, 4) and np.all(to_np(w.grad) == 0)


def test_layer_norm_mixed_dtypes_promote_as_the_composite():
    x, w = E.randn(3, 4, dtype=E.float16), E.randn(4)
    y = F.layer_norm(x, (4,), w)
    assert y.dtype is E.float32
    ref = _rows_reference(to_np(x).astype(np.float64), to_np(w).astype(np.float64), 0.0,
                          np.zeros((3, 4)), 1e-5)[0]
    _check(y, ref, E.float32, 8.0)


# ---- group_norm ------------------------------------------------------------------------------

GN_SHAPES = [((2, 6, 5), 3), ((2, 4, 2, 3), 1), ((3, 4), 4), ((2, 8, 3, 3), 4),
             ((1, 4, 16, 16), 2), ((3, 6, 7), 6)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,groups", GN_SHAPES)
@pytest.mark.parametrize("affine", AFFINE)
def test_group_norm_matches_float64(dtype, shape, groups, affine):
    rng = np.random.default_rng(shape[1] + groups)
    n, c = shape[:2]
    x = _tensor(rng.normal(-0.5, 3, shape), dtype, True)
    w, b, w64, b64 = _params(affine, (c,), dtype, rng)
    g = rng.normal(size=shape)
    y = F.group_norm(x, groups, w, b, eps=1e-5)
    assert y.dtype is dtype and tuple(y.shape) == shape
    y.backward(_tensor(g, dtype))
    hw = int(np.prod(shape[2:]))
    x64 = to_np(x.detach()).astype(np.float64).reshape(n * groups, -1)
    g64 = to_np(_tensor(g, dtype)).astype(np.float64).reshape(n * groups, -1)
    # per-channel weight laid out along a group's row: (groups, C / groups * HW)
    w_rows = np.tile(np.repeat(w64, hw).reshape(groups, -1), (n, 1))
    b_rows = np.tile(np.repeat(b64, hw).reshape(groups, -1), (n, 1))
    y_ref, dx, dw, terms = _rows_reference(x64, w_rows, b_rows, g64, 1e-5)
    _check(y, y_ref.reshape(shape), dtype, BOUND[dtype])
    _check_grad(x.grad, dx.reshape(shape), dtype, terms)
    if w is not None:
        _check_grad(w.grad, dw.reshape(n, c, hw).sum((0, 2)), dtype)
    if b is not None:
        _check_grad(b.grad, g64.reshape(n, c, hw).sum((0, 2)), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_group_norm_special_values(dtype):
    x = np.array([[[1.0, 2.0], [3.0, 4.0]], [[np.nan, 1.0], [2.0, 3.0]],
                  [[np.inf, 0.0], [1.0, 2.0]], [[-0.0, 0.0], [-0.0, 0.0]]])
    xt = _tensor(x, dtype)
    y = F.group_norm(xt, 1)
    x64 = to_np(xt).astype(np.float64).reshape(4, -1)
    with np.errstate(invalid="ignore"):
        ref = _rows_reference(x64, 1.0, 0.0, np.zeros_like(x64), 1e-5)[0]
    _check(y, ref.reshape(x.shape), dtype, BOUND[dtype])


@pytest.mark.parametrize("shape", [(0, 4, 3), (2, 4, 0)])
def test_group_norm_empty(shape):
    x = E.zeros(*shape, requires_grad=True)
    w = E.ones(4, requires_grad=True)
    y = F.group_norm(x, 2, w)
    assert tuple(y.shape) == shape
    y.sum().backward()
    assert tuple(x.grad.shape) == shape and np.all(to_np(w.grad) == 0)


def test_kernels_run_on_a_namespace_that_is_not_numpy():
    """The generic path the CUDA plugin (CuPy) takes: no numpy-only calls."""
    import types
    xp = types.SimpleNamespace(**{k: v for k, v in vars(np).items() if k != "vecdot"})
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 4, 3)).astype(np.float32)
    w, b = rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    for fwd, bwd, arrays, args in (
            (K.group_norm_forward, K.group_norm_backward, [x, w, b], (2, 1e-5)),
            (K.layer_norm_forward, K.layer_norm_backward, [x, w[:3], b[:3]], ((3,), 1e-5))):
        y, saved = fwd(xp, arrays, args)
        y_np, saved_np = fwd(np, arrays, args)
        np.testing.assert_allclose(y, y_np, rtol=1e-6, atol=1e-6)
        for got, exp in zip(bwd(xp, g, arrays, saved, args, (True,) * 3),
                            bwd(np, g, arrays, saved_np, args, (True,) * 3)):
            np.testing.assert_allclose(got, exp, rtol=1e-5, atol=1e-5)
