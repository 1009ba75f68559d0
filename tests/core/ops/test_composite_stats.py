"""cov, corrcoef, mode, msort, isin, histogram, histogramdd (ops/composite_stats.py)
against numpy float64 references, with gradients where the op has one.

The conventions numpy does not share (mode's tie and index rule, histogram's degenerate
range) were checked by hand against PyTorch 2.x (no torch import here).
"""
from __future__ import annotations

import math
from collections import Counter

import ember as E
import numpy as np
import pytest
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError, ShapeError
from helpers import assert_close
from hypothesis import given, settings
from hypothesis import strategies as st

RNG = np.random.default_rng(3)


def arr(*shape):
    return RNG.uniform(-2, 2, shape)


def leaf(a):
    return E.tensor(np.array(a, dtype=np.float64), requires_grad=True)


# ---- cov / corrcoef -----------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(3, 6), (6,), (1, 5), (2, 4)])
@pytest.mark.parametrize("correction", [0, 1, 2])
def test_cov_matches_numpy(shape, correction):
    x = arr(*shape)
    assert_close(E.cov(E.tensor(x), correction=correction), np.cov(x, ddof=correction))
    assert_close(E.tensor(x).cov(correction=correction), np.cov(x, ddof=correction))


@pytest.mark.parametrize("correction", [0, 1, 3])
def test_cov_weights_match_numpy(correction):
    x, fw, aw = arr(3, 7), RNG.integers(0, 4, 7), RNG.uniform(0.1, 2, 7)
    fw[0] = 2
    want = np.cov(x, ddof=correction, fweights=fw, aweights=aw)
    assert_close(E.cov(E.tensor(x), correction=correction, fweights=E.tensor(fw),
                       aweights=E.tensor(aw)), want)
    assert_close(E.cov(E.tensor(x), fweights=E.tensor(fw)), np.cov(x, fweights=fw))
    assert_close(E.cov(E.tensor(x), aweights=E.tensor(aw)), np.cov(x, aweights=aw))


def test_cov_dtypes():
    ints = E.cov(E.tensor([1, 2, 4]))
    assert ints.dtype is E.float32
    assert_close(ints, np.cov([1, 2, 4]), dtype=E.float32)
    mixed = E.cov(E.tensor([1, 2, 4], dtype=E.int32), aweights=E.tensor([1.0, 2.0, 1.0]))
    assert mixed.dtype is E.float32
    assert E.cov(E.ones(2, 3, dtype=E.float64)).dtype is E.float64


def test_cov_errors_and_degenerate_cases():
    x = E.ones(2, 3)
    with pytest.raises(ShapeError, match="two or fewer dims"):
        E.cov(E.ones(2, 2, 2))
    with pytest.raises(DtypeError, match="bool"):
        E.cov(E.tensor([True, False]))
    with pytest.raises(DtypeError, match="integral dtype"):
        E.cov(x, fweights=E.tensor([1.0, 2.0, 1.0]))
    with pytest.raises(DtypeError, match="floating point dtype"):
        E.cov(x, aweights=E.tensor([1, 2, 1]))
    with pytest.raises(ValueError, match="cannot be negative"):
        E.cov(x, fweights=E.tensor([-1, 2, 1]))
    with pytest.raises(ShapeError, match="same numel"):
        E.cov(x, aweights=E.tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match="sum to zero"):
        E.cov(x, fweights=E.tensor([0, 0, 0]))
    # (pytest.warns re-emits numpy's divide warnings, which ember's filter would drop)
    with np.errstate(divide="ignore", invalid="ignore"):
        with pytest.warns(UserWarning, match="degrees of freedom"):
            assert math.isnan(E.cov(E.tensor([1.0])).item())
        with pytest.warns(UserWarning, match="degrees of freedom"):
            assert math.isinf(E.cov(E.tensor([[0.0, 1.0, 3.0]]), correction=5).item())


def test_cov_corrcoef_gradients():
    x, aw = leaf(arr(2, 5)), leaf(RNG.uniform(0.5, 2, 5))
    fw = E.tensor([1, 2, 1, 3, 1])
    assert gradcheck(lambda t, w: E.cov(t, fweights=fw, aweights=w), (x, aw))
    assert gradgradcheck(lambda t: E.cov(t, correction=0), (x,))
    assert gradcheck(E.corrcoef, (leaf(arr(3, 4)),))


@pytest.mark.parametrize("shape", [(3, 6), (6,), (2, 9)])
def test_corrcoef_matches_numpy(shape):
    x = arr(*shape)
    assert_close(E.corrcoef(E.tensor(x)), np.corrcoef(x))
    assert_close(E.tensor(x).corrcoef(), np.corrcoef(x))


def test_corrcoef_constant_rows_and_clipping():
    got = E.corrcoef(E.tensor([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]]))
    assert math.isnan(got[0, 0].item()) and got[1, 1].item() == 1.0
    perfect = E.corrcoef(E.tensor([[1.0, 2.0, 3.5], [2.0, 4.0, 7.0]], dtype=E.float32))
    assert float(perfect.abs().max()) <= 1.0


# ---- mode / msort -------------------------------------------------------------------------------

def _np_mode(row):
    """PyTorch's rule: the smallest most frequent value, at its last index."""
    counts = Counter(row.tolist())
    best = max(counts.values())
    value = min(v for v, c in counts.items() if c == best)
    return value, max(i for i, v in enumerate(row.tolist()) if v == value)


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 4), n=st.integers(1, 8), keepdim=st.booleans(),
       dim=st.sampled_from([0, 1, -1]), seed=st.integers(0, 2 ** 16))
def test_mode_matches_reference(rows, n, keepdim, dim, seed):
    x = np.random.default_rng(seed).integers(-2, 3, (rows, n)).astype(np.float64)
    values, indices = E.mode(E.tensor(x), dim, keepdim)
    moved = np.moveaxis(x, dim, -1)
    want = [_np_mode(r) for r in moved]
    shape = list(x.shape)
    if keepdim:
        shape[dim] = 1
    else:
        del shape[dim]
    assert_close(values, np.array([v for v, _ in want]).reshape(shape))
    assert indices.dtype is E.int64
    np.testing.assert_array_equal(indices.numpy(), np.array([i for _, i in want]).reshape(shape))


def test_mode_cases_and_gradient():
    r = E.mode(E.tensor([3, 1, 3, 1, 2]))
    assert r.values.item() == 1 and r.indices.item() == 3 and type(r).__name__ == "mode"
    assert E.tensor([[5, 5, 4, 4, 4]]).mode(1).values.tolist() == [4]
    zero_d = E.mode(E.tensor(4.0))
    assert zero_d.values.item() == 4.0 and zero_d.indices.item() == 0
    with pytest.raises(IndexError, match="non-zero size"):
        E.mode(E.zeros(2, 0))
    x = leaf([2.0, 1.0, 2.0, 7.0, 1.0, 1.0])
    E.mode(x).values.backward()
    assert x.grad.tolist() == [0, 0, 0, 0, 0, 1]  # the gradient goes to the returned index
    # distinct values: a tie would break under gradcheck's perturbation (mode is the min)
    assert gradcheck(lambda t: E.mode(t, 1).values, (leaf([[1.0, 2.0, 0.3], [3.0, -1.0, 0.5]]),))


def test_msort_matches_numpy():
    x = arr(4, 3)
    assert_close(E.msort(E.tensor(x)), np.sort(x, axis=0))
    assert_close(E.tensor(x).msort(), np.sort(x, axis=0))
    out = E.empty(4, 3, dtype=E.float64)
    E.msort(E.tensor(x), out=out)
    assert_close(out, np.sort(x, axis=0))


# ---- isin ---------------------------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 8), m=st.integers(0, 6), invert=st.booleans(),
       seed=st.integers(0, 2 ** 16))
def test_isin_matches_numpy(n, m, invert, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(-4, 5, (n, 2)), rng.integers(-4, 5, (m,))
    got = E.isin(E.tensor(a), E.tensor(b), invert=invert)
    assert got.dtype is E.bool_
    np.testing.assert_array_equal(got.numpy(), np.isin(a, b, invert=invert))


def test_isin_scalars_promotion_and_nan():
    assert E.isin(E.tensor([1, 2, 3, 4]), 2).tolist() == [False, True, False, False]
    assert E.isin(2, E.tensor([1, 2])).item() is True
    assert E.isin(2.5, E.tensor([1, 2])).item() is False
    # compared in the promoted dtype: 2.5 is not 2
    assert E.isin(E.tensor([1, 2, 3, 4]), E.tensor([2.5, 4.0])).tolist() == [False, False,
                                                                               False, True]
    assert E.isin(E.tensor([math.nan, 2.0]), E.tensor([math.nan, 2.0])).tolist() == [False, True]
    assert E.isin(E.tensor([[1, 2], [3, 4]]), E.tensor([[2], [3]]),
                  assume_unique=True).tolist() == [[False, True], [True, False]]
    with pytest.raises(DtypeError, match="bool"):
        E.isin(E.tensor([True, False]), E.tensor([True]))


# ---- histogram / histogramdd --------------------------------------------------------------------

@pytest.mark.parametrize("bins", [1, 4, 7])
@pytest.mark.parametrize("density", [False, True])
def test_histogram_matches_numpy(bins, density):
    x, w = arr(20), RNG.uniform(0, 1, 20)
    hist, edges = E.histogram(E.tensor(x), bins, density=density)
    h, e = np.histogram(x, bins, density=density)
    assert_close(hist, h)
    assert_close(edges, e)
    hist, edges = E.tensor(x).histogram(bins, range=(-1.0, 1.5), weight=E.tensor(w),
                                        density=density)
    h, e = np.histogram(x, bins, range=(-1.0, 1.5), weights=w, density=density)
    assert_close(hist, h)
    assert_close(edges, e)


def test_histogram_edges_tensor_and_float32():
    x, edges = arr(3, 5), np.array([-2.0, -0.5, 0.0, 0.1, 2.0])
    hist, got = E.histogram(E.tensor(x), E.tensor(edges))
    assert_close(hist, np.histogram(x, edges)[0])
    assert_close(got, edges)
    x32 = x.astype(np.float32)
    hist32, edges32 = E.histogram(E.tensor(x32), 5)
    assert hist32.dtype is E.float32 and edges32.dtype is E.float32
    assert_close(hist32, np.histogram(x32, 5)[0])


def test_histogram_degenerate_ranges_and_nan():
    hist, edges = E.histogram(E.tensor([1.0, 1.0]), 2)  # a constant input widens by 0.5
    assert hist.tolist() == [0, 2] and edges.tolist() == [0.5, 1.0, 1.5]
    hist, edges = E.histogram(E.tensor([]), 2)
    assert hist.tolist() == [0, 0] and edges.tolist() == [0.0, 0.5, 1.0]
    hist, _ = E.histogram(E.tensor([1.0, math.nan, 1.0]), 2, range=(0.0, 2.0))
    assert hist.tolist() == [0, 2]  # NaN is in no bin


def test_histogram_errors():
    x = E.tensor([1.0, 2.0])
    with pytest.raises(ValueError, match="bins must be > 0"):
        E.histogram(x, 0)
    with pytest.raises(ValueError, match="min should not exceed max"):
        E.histogram(x, 2, range=(3.0, 1.0))
    with pytest.raises(ValueError, match="not finite"):
        E.histogram(E.tensor([1.0, math.inf]), 2)
    with pytest.raises(NotImplementedError, match="int64"):
        E.histogram(E.tensor([1, 2]), 2)
    with pytest.raises(DtypeError, match="weight of the input's dtype"):
        E.histogram(x, 3, weight=E.tensor([1.0, 2.0], dtype=E.float64))
    with pytest.raises(ShapeError, match="weight of the input's shape"):
        E.histogram(x, 3, weight=E.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(DtypeError, match="bins of the input's dtype"):
        E.histogram(x, E.tensor([0.0, 1.0], dtype=E.float64))
    with pytest.raises(ValueError, match="1-D bins"):
        E.histogram(x, E.tensor([[0.0, 1.0]]))


@pytest.mark.parametrize("bins", [3, [2, 4]])
@pytest.mark.parametrize("density", [False, True])
def test_histogramdd_matches_numpy(bins, density):
    x, w = arr(15, 2), RNG.uniform(0, 1, 15)
    r = E.histogramdd(E.tensor(x), bins, weight=E.tensor(w), density=density)
    h, e = np.histogramdd(x, bins, weights=w, density=density)
    assert type(r).__name__ == "histogramdd" and len(r.bin_edges) == 2
    assert_close(r.hist, h)
    for got, want in zip(r.bin_edges, e):
        assert_close(got, want)
    rng = [-1.0, 1.0, 0.0, 2.0]
    r = E.histogramdd(E.tensor(x), bins, range=rng, density=density)
    h, _ = np.histogramdd(x, bins, range=[rng[:2], rng[2:]], density=density)
    assert_close(r.hist, np.nan_to_num(h))


def test_histogramdd_edges_batches_and_errors():
    x = E.tensor([[0.0, 1.0], [1.0, 0.0], [2.0, 0.0], [2.0, 2.0]])
    r = E.histogramdd(x, [E.tensor([0.0, 1.0, 2.0]), E.tensor([0.0, 3.0])])
    assert r.hist.tolist() == [[1.0], [3.0]]
    assert E.histogramdd(E.tensor(arr(2, 3, 2)), 2).hist.shape == (2, 2)
    with pytest.raises(ShapeError, match="at least 2 dims"):
        E.histogramdd(E.tensor([0.0, 1.0]), 2)
    with pytest.raises(ValueError, match="2 bin specifications"):
        E.histogramdd(x, [2, 2, 2])
    with pytest.raises(ValueError, match="4 values"):
        E.histogramdd(x, 2, range=[0.0, 1.0])
