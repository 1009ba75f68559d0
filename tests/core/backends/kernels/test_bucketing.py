"""searchsorted, bucketize, bincount, histc (kernels/bucketing.py) against numpy."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
from helpers import assert_close

RNG = np.random.default_rng(3)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 6), st.lists(st.integers(0, 4), max_size=2), st.booleans())
def test_searchsorted_1d_matches_numpy(k, vshape, right):
    seq = np.sort(RNG.integers(-3, 4, k).astype(np.float64))
    v = RNG.integers(-4, 5, vshape).astype(np.float64)
    out = E.searchsorted(E.tensor(seq), E.tensor(v), right=right)
    assert_close(out, np.searchsorted(seq, v, side="right" if right else "left"))
    side = E.searchsorted(E.tensor(seq), E.tensor(v), side="right" if right else "left")
    assert_close(side, out.numpy())


def test_searchsorted_nd_sorter_int32_scalar_and_nan():
    seq = np.array([[1, 3, 5], [2, 4, 6]])
    v = np.array([[3, 6], [1, 7]])
    out = E.searchsorted(E.tensor(seq), E.tensor(v), right=True)
    assert_close(out, np.array([[2, 3], [0, 3]]))
    unsorted = np.array([5.0, 1.0, 3.0])
    got = E.searchsorted(E.tensor(unsorted), E.tensor([2.0, 4.0]),
                         sorter=E.tensor(np.argsort(unsorted)))
    assert_close(got, np.array([1, 2]))
    assert E.searchsorted(E.tensor([1, 2, 3]), E.tensor([2]), out_int32=True).dtype is E.int32
    r = E.searchsorted(E.tensor([1.0, 2.0, 3.0]), 2)
    assert r.ndim == 0 and r.item() == 1
    assert_close(E.searchsorted(E.tensor([1, 2, 3]), E.tensor([2.5])), np.array([2]))
    nan = E.searchsorted(E.tensor([1.0, 2.0, float("nan")]), E.tensor([float("nan"), 5.0]))
    assert_close(nan, np.searchsorted(np.array([1.0, 2.0, np.nan]), [np.nan, 5.0]))


def test_searchsorted_errors():
    with pytest.raises(ValueError, match="opposites"):
        E.searchsorted(E.tensor([1, 2]), E.tensor([1]), right=True, side="left")
    with pytest.raises(ValueError, match="first N-1 dims"):
        E.searchsorted(E.ones(2, 3), E.ones(3, 1))
    with pytest.raises(ValueError, match="sorter"):
        E.searchsorted(E.ones(3), E.ones(1), sorter=E.tensor([0, 1]))
    with pytest.raises(IndexError, match="sorter indices"):
        E.searchsorted(E.ones(3), E.ones(1), sorter=E.tensor([0, 1, 3]))


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("dtype", [E.int64, E.float32, E.float64])
def test_bucketize_matches_numpy_digitize(right, dtype):
    b = np.array([1, 3, 5, 7])
    x = RNG.integers(0, 9, (3, 4)).astype(dtype.numpy)
    out = E.bucketize(E.tensor(x), E.tensor(b), right=right)
    assert_close(out, np.searchsorted(b, x, side="right" if right else "left"))
    assert E.bucketize(E.empty(0, dtype=dtype), E.tensor(b)).shape == (0,)
    with pytest.raises(ValueError, match="1-D boundaries"):
        E.bucketize(E.tensor(x), E.ones(2, 2))


@pytest.mark.parametrize("dtype", [E.uint8, E.int32, E.int64])
def test_bincount_matches_numpy(dtype):
    x = RNG.integers(0, 6, 20).astype(dtype.numpy)
    w = RNG.uniform(0, 1, 20)
    assert_close(E.bincount(E.tensor(x)), np.bincount(x))
    assert_close(E.bincount(E.tensor(x), minlength=10), np.bincount(x, minlength=10))
    assert_close(E.bincount(E.tensor(x), E.tensor(w)), np.bincount(x, w))
    f32 = E.bincount(E.tensor(x), E.tensor(w).float())
    assert_close(f32, np.bincount(x, w).astype(np.float32))
    assert E.bincount(E.tensor(x), E.tensor(w).half()).dtype is E.float64
    assert_close(E.bincount(E.empty(0, dtype=dtype)), np.zeros(0, dtype=np.int64))


def test_bincount_errors():
    with pytest.raises(ValueError, match="non-negative values"):
        E.bincount(E.tensor([1, -1]))
    with pytest.raises(ValueError, match="1-D"):
        E.bincount(E.ones(2, 2).long())
    with pytest.raises(ValueError, match="weights"):
        E.bincount(E.tensor([1, 2]), E.ones(3))
    with pytest.raises(NotImplementedError):
        E.bincount(E.ones(3))


@pytest.mark.parametrize("dtype", [E.float32, E.float64])
def test_histc_matches_numpy_histogram(dtype):
    x = RNG.uniform(-1, 4, 50).astype(dtype.numpy)
    got = E.histc(E.tensor(x), bins=7, min=0, max=3)
    kept = x[(x >= 0) & (x <= 3)].astype(np.float64)
    assert_close(got, np.histogram(kept, bins=7, range=(0, 3))[0].astype(dtype.numpy))
    auto = E.histc(E.tensor(x), bins=5)
    assert_close(auto, np.histogram(x, bins=5)[0].astype(dtype.numpy))
    assert_close(E.histc(E.tensor([1.0, 1.0]), bins=4), np.array([0.0, 0.0, 2.0, 0.0]),
                 dtype=E.float32)
    with pytest.raises(ValueError, match="min <= max"):
        E.histc(E.tensor(x), min=2, max=1)
    with pytest.raises(ValueError, match="bins > 0"):
        E.histc(E.tensor(x), bins=0)
    with pytest.raises(NotImplementedError):
        E.histc(E.tensor([1, 2]), bins=3)
