"""The gather-free paths of issue 30 against the index paths they replace, in float64:
integer upsampling (nearest as a broadcast copy, linear/cubic as interleaved phases of
shifted copies) and reflect/replicate/circular padding as a cat of edge blocks. Values for
float16, bfloat16, float32 and float64 with +-inf, nan, -0.0, huge, tiny and subnormal
cells; gradcheck and gradgradcheck through the new paths."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.nn.functional import padding, upsampling

DTYPES = [E.float16, E.bfloat16, E.float32, E.float64]
# (rtol, atol) for O(1) values: a phase is w0 x0 + w1 x1 (+ ..) in the input dtype
# (float32 inside for float16/bfloat16), the index path the same sum in another order
TOL = {E.float16: (2e-3, 4e-3), E.bfloat16: (1.6e-2, 3.2e-2), E.float32: (2e-6, 1e-6),
       E.float64: (1e-12, 1e-13)}


def _specials(shape, seed=0, finite=False):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if not finite:
        flat = x.reshape(-1)
        picks = rng.choice(flat.size, 7, replace=False)
        flat[picks] = [np.inf, -np.inf, np.nan, -0.0, 6e4, 1e-30, 1e-41]
    return x


def _reference(x64, mode, factor, align_corners=None):
    """The index path (index_select per tap) on float64, dim by dim."""
    out = x64
    for dim in range(2, x64.ndim):
        n = out.shape[dim]
        n_out = n * factor
        if mode in ("nearest", "nearest-exact"):
            idx = upsampling._nearest_index(n, n_out, float(factor), mode == "nearest-exact")
            out = upsampling._take(out, dim, idx)
            continue
        cubic = mode == "cubic"
        i, t = upsampling._floor_and_frac(
            upsampling._source(n, n_out, align_corners, float(factor), cubic), n)
        taps = [(np.clip(i - 1 + k, 0, n - 1), w)
                for k, w in enumerate(upsampling._cubic_weights(t))] if cubic else \
            [(i, 1.0 - t), (np.minimum(i + 1, n - 1), t)]
        out = upsampling._weighted(out, dim, taps)
    return out


CASES = [("linear", "linear", (2, 3, 9)), ("bilinear", "linear", (2, 3, 6, 7)),
         ("bicubic", "cubic", (2, 3, 6, 7)), ("trilinear", "linear", (1, 2, 6, 7, 8)),
         ("nearest", "nearest", (2, 3, 6, 7)), ("nearest-exact", "nearest-exact", (2, 3, 6, 7))]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("factor", [2, 4])
@pytest.mark.parametrize("mode, ref_mode, shape", CASES)
def test_integer_upsampling_matches_index_path(dtype, factor, mode, ref_mode, shape):
    finite = ref_mode in ("linear", "cubic")   # the index path's 0 * inf would add nan
    x = E.tensor(_specials(shape, finite=finite)).to(dtype)
    kw = {} if "nearest" in mode else {"align_corners": False}
    got = F.interpolate(x, scale_factor=factor, mode=mode, **kw)
    assert got.dtype is dtype
    want = _reference(x.to(E.float64), ref_mode, factor, False)
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(got.to(E.float64).numpy(), want.numpy(), rtol=rtol, atol=atol,
                               equal_nan=True)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_phases_only_for_exact_periods(mode):
    # align_corners and non-integer factors keep the index path
    assert upsampling._plan(7, 14, mode, True, None)[0] == "taps"
    assert upsampling._plan(5, 10, mode, True, 2.0)[0] == "taps"
    assert upsampling._plan(6, 12, mode, True, 2.0)[0] == "taps"
    assert upsampling._plan(7, 10, mode, False, None)[0] == "taps"
    assert upsampling._plan(7, 14, mode, False, 2.0)[0] == "phases"
    assert upsampling._plan(5, 10, mode, False, 2.0)[0] == "taps"  # one interior cell


@pytest.mark.parametrize("mode", ["linear", "bilinear", "bicubic", "nearest"])
def test_integer_upsampling_gradcheck(mode):
    shape = (1, 2, 7) if mode == "linear" else (1, 2, 6, 7)
    x = E.tensor(np.random.default_rng(1).standard_normal(shape), requires_grad=True)
    kw = {} if mode == "nearest" else {"align_corners": False}

    def fn(t):
        return F.interpolate(t, scale_factor=2, mode=mode, **kw)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def _pad_reference(x, pad, mode):
    """The index_select path of padding.py."""
    for i in range(len(pad) // 2):
        dim = x.ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        idx = padding._source_index(mode, x.shape[dim], left, right, dim, tuple(x.shape),
                                    x.device)
        x = E.index_select(x, dim, idx)
    return x


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("pad", [(1, 1, 1, 1), (2, 0, 0, 3), (0, 1, 2, 0), (3, 2, 1, 0)])
def test_pad_edges_match_index_path(dtype, mode, pad):
    x = E.tensor(_specials((2, 3, 5, 6))).to(dtype)
    got = F.pad(x, pad, mode=mode)
    want = _pad_reference(x, pad, mode)
    assert got.dtype is dtype
    np.testing.assert_array_equal(got.to(E.float64).numpy(), want.to(E.float64).numpy())


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_edges_gradcheck(mode):
    x = E.tensor(np.random.default_rng(2).standard_normal((1, 2, 4, 5)), requires_grad=True)

    def fn(t):
        return F.pad(t, (2, 1, 1, 2), mode=mode)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))
