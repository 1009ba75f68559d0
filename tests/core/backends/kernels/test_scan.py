"""cummax, cummin and nansum (kernels/scan.py), and the composites nanmean, std_mean and
var_mean (ops/composite_math.py), against numpy float64 references.

Tie and NaN conventions were checked by hand against PyTorch 2.x (no torch import here).
"""
import math

import numpy as np
import pytest
from helpers import ALL_DTYPES, FLOAT_DTYPES, LOW_FLOAT_DTYPES, assert_close, make, to_np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes

import ember as E

NAN = math.nan


def _running(x, axis, pick):
    """Reference cummax/cummin by a loop: ties and NaN take over the index (PyTorch)."""
    x = np.moveaxis(np.asarray(x, dtype=np.float64), axis, -1)
    vals, idx = np.empty_like(x), np.zeros(x.shape, dtype=np.int64)
    for pos in np.ndindex(x.shape[:-1]):
        best, at = None, 0
        for i, v in enumerate(x[pos]):
            if best is None or np.isnan(v) or (not np.isnan(best) and pick(v, best)):
                best, at = v, i
            vals[pos + (i,)], idx[pos + (i,)] = best, at
    return np.moveaxis(vals, -1, axis), np.moveaxis(idx, -1, axis)


@settings(max_examples=30, deadline=None)
@given(shape=array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4),
       dtype=st.sampled_from(ALL_DTYPES), data=st.data())
def test_cummax_cummin_match_reference(shape, dtype, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x, ref = make(shape, dtype, low=-2, high=2)  # small range: many ties
    for op, pick in (("cummax", lambda v, b: v >= b), ("cummin", lambda v, b: v <= b)):
        values, indices = getattr(E, op)(x, dim)
        want_v, want_i = _running(ref, dim, pick)
        assert_close(values, want_v, dtype)
        assert indices.dtype is E.int64
        np.testing.assert_array_equal(to_np(indices), want_i)


def test_cummax_ties_and_nan_follow_pytorch():
    v, i = E.cummax(E.tensor([1.0, 3.0, 3.0, 2.0, 3.0]), 0)
    assert_close(v, [1, 3, 3, 3, 3], E.float32)
    np.testing.assert_array_equal(to_np(i), [0, 1, 2, 2, 4])
    v, i = E.tensor([1.0, NAN, 5.0, NAN, 2.0]).cummin(0)
    assert_close(v, [1, NAN, NAN, NAN, NAN])
    np.testing.assert_array_equal(to_np(i), [0, 1, 1, 3, 3])
    r = E.cummax(E.tensor(2.5), 0)
    assert r.values.shape == () and int(r.indices) == 0
    with pytest.raises(IndexError, match="out of range"):
        E.cummax(E.ones(2, 3), 2)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("dim,keepdim", [(None, False), ((0, -1), True), (1, False)])
def test_nansum_is_sum_with_nan_as_zero(dtype, dim, keepdim):
    x, ref = make((2, 3, 4), dtype)
    if dtype.is_floating_point:
        x[0, 1] = NAN
        ref[0, 1] = NAN
    want = E.int64 if not dtype.is_floating_point else dtype
    axis = tuple(d % 3 for d in dim) if isinstance(dim, tuple) else dim
    expected = np.nansum(ref, axis=axis, keepdims=keepdim)
    assert_close(E.nansum(x, dim, keepdim), expected, want,
                 rtol=2e-2 if dtype in LOW_FLOAT_DTYPES else None)
    assert_close(x.nansum(dim, keepdim, dtype=E.float64), expected, E.float64,
                 rtol=1e-2 if dtype in LOW_FLOAT_DTYPES else None)


def test_nansum_empty_and_all_nan():
    assert_close(E.nansum(E.zeros(0, 3), 0), np.zeros(3))
    assert_close(E.nansum(E.tensor([NAN, NAN])), 0.0)


@pytest.mark.parametrize("dtype", LOW_FLOAT_DTYPES + FLOAT_DTYPES)
def test_nanmean(dtype):
    x, ref = make((3, 4), dtype)
    x[1, 2] = NAN
    ref[1, 2] = NAN
    assert_close(E.nanmean(x), np.nanmean(ref), dtype)
    assert_close(x.nanmean(1, keepdim=True), np.nanmean(ref, 1, keepdims=True), dtype)
    assert_close(E.nanmean(E.tensor([NAN, NAN])), NAN)
    assert_close(E.nanmean(E.tensor([1, 2]), dtype=E.float64), 1.5, E.float64)
    with pytest.raises(TypeError, match="nanmean.*floating"):
        E.nanmean(E.tensor([1, 2]))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_std_mean_var_mean(dtype):
    x, ref = make((3, 5), dtype)
    s, m = E.std_mean(x, 1)
    assert_close(s, ref.std(1, ddof=1), dtype)
    assert_close(m, ref.mean(1), dtype)
    v, m = E.var_mean(x, (0, -1), correction=0, keepdim=True)
    assert_close(v, ref.var(keepdims=True), dtype)
    assert_close(m, ref.mean(keepdims=True), dtype)
    v, _ = E.var_mean(x, unbiased=False)
    assert_close(v, ref.var(), dtype)
    with pytest.raises(TypeError, match="floating"):
        E.var_mean(E.tensor([1, 2]))
