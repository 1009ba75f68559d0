"""Composites of ops/composite_select.py: median, nanmedian, kthvalue, quantile,
nanquantile, masked_select, rot90 and diff against numpy float64 references, with their
gradients where they pick elements. (gradcheck/gradgradcheck of each run in op_samples.)

Tie, NaN and error conventions were checked by hand against PyTorch 2.x.
"""
import math
import warnings

import numpy as np
import pytest
from helpers import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, assert_close, make, to_np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes

import ember as E

NAN = math.nan
SORTABLE = INT_DTYPES + [E.float16, E.bfloat16] + FLOAT_DTYPES
INTERPOLATIONS = ["linear", "lower", "higher", "midpoint", "nearest"]


def _lower_median(ref, axis):
    s = np.sort(ref, axis=axis)  # NaN last
    n = s.shape[axis]
    med = np.take(s, (n - 1) // 2, axis=axis)
    return np.where(np.isnan(s).any(axis=axis), np.nan, med)


@pytest.mark.parametrize("dtype", SORTABLE)
@pytest.mark.parametrize("dim", [0, -1])
def test_median_is_the_lower_median(dtype, dim):
    x, ref = make((4, 5), dtype, low=-2, high=2)  # ties
    assert_close(E.median(x), _lower_median(ref.reshape(-1), 0), dtype)
    values, indices = E.median(x, dim, keepdim=True)
    assert_close(values, np.expand_dims(_lower_median(ref, dim), dim), dtype)
    # the index points at an element holding the value
    np.testing.assert_array_equal(np.take_along_axis(ref, to_np(indices), dim),
                                  to_np(values).astype(np.float64))


def test_median_nan_and_nanmedian():
    x = E.tensor([[1.0, NAN, 5.0, NAN, 2.0], [3.0, 1.0, 2.0, 0.0, 9.0]])
    m = E.median(x, 1)
    assert_close(m.values, [NAN, 2.0])
    np.testing.assert_array_equal(to_np(m.indices), [1, 2])  # the first NaN
    n = x.nanmedian(1)
    assert_close(n.values, [2.0, 2.0])
    np.testing.assert_array_equal(to_np(n.indices), [4, 2])
    assert_close(E.median(x), NAN)
    assert_close(E.nanmedian(x), 2.0)
    all_nan = E.nanmedian(E.tensor([NAN, NAN]), 0)
    assert_close(all_nan.values, NAN)
    assert int(all_nan.indices) == 0
    assert_close(E.median(E.zeros(0)), NAN)
    assert E.median(E.zeros(0, 3), 1).values.shape == (0,)
    r = E.median(E.tensor(3.0), 0)
    assert float(r.values) == 3.0 and int(r.indices) == 0


@pytest.mark.parametrize("call,err", [
    (lambda: E.median(E.zeros(0, 3), 0), IndexError),
    (lambda: E.median(E.ones(3, dtype=E.bool_)), NotImplementedError),
    (lambda: E.kthvalue(E.ones(3, dtype=E.bool_), 1), NotImplementedError),
    (lambda: E.median(E.ones(2), 1), IndexError),
    (lambda: E.kthvalue(E.ones(2, 3), 4), IndexError),
    (lambda: E.kthvalue(E.ones(2, 3), 0), IndexError),
])
def test_selection_errors(call, err):
    with pytest.raises(err):
        call()


@pytest.mark.parametrize("dtype", SORTABLE)
def test_kthvalue(dtype):
    x, ref = make((3, 6), dtype)
    for k in (1, 3, 6):
        values, indices = E.kthvalue(x, k)
        assert_close(values, np.sort(ref, -1)[:, k - 1], dtype)
        np.testing.assert_array_equal(np.take_along_axis(ref, to_np(indices)[:, None], 1)[:, 0],
                                      to_np(values).astype(np.float64))
    v, i = x.kthvalue(2, 0, keepdim=True)
    assert v.shape == (1, 6) and i.shape == (1, 6)
    assert_close(E.kthvalue(E.tensor([1.0, NAN, 2.0]), 3).values, NAN)  # NaN is the largest


def test_median_gradient_goes_to_the_selected_index():
    x = E.tensor([[3.0, 1.0, 2.0, 7.0], [0.5, -1.0, 4.0, 2.0]], dtype=E.float64,
                 requires_grad=True)
    values, indices = x.median(1)
    (values * E.tensor([1.0, 10.0], dtype=E.float64)).sum().backward()
    want = np.zeros((2, 4))
    want[0, 2], want[1, 0] = 1.0, 10.0
    assert_close(x.grad, want)
    np.testing.assert_array_equal(to_np(indices), [2, 0])


def _np_quantile(ref, q, axis, method, ignore_nan):
    fn = np.nanquantile if ignore_nan else np.quantile
    with warnings.catch_warnings():  # numpy warns about all-NaN slices
        warnings.simplefilter("ignore", RuntimeWarning)
        out = fn(ref, q, axis=axis, method="closest_observation" if method == "nearest"
                 else method)
    if method == "nearest":  # numpy's 'nearest' rounds differently: round half to even
        s = np.sort(ref if axis is not None else ref.reshape(-1),
                    axis=axis if axis is not None else 0)
        axis = 0 if axis is None else axis
        if ignore_nan:
            n = (~np.isnan(s)).sum(axis=axis)
        else:
            n = np.full(np.delete(s.shape, axis), s.shape[axis])
        qs = np.asarray(q, dtype=np.float64).reshape((-1,) + (1,) * n.ndim)
        rank = np.round(qs * np.maximum(n - 1, 0)).astype(np.int64)
        if not ignore_nan:
            rank = np.where(np.isnan(s).any(axis=axis), s.shape[axis] - 1, rank)
        moved = np.moveaxis(s, axis, -1)
        out = np.take_along_axis(np.broadcast_to(moved, rank.shape + (moved.shape[-1],)),
                                 rank[..., None], -1)[..., 0]
        out = out.reshape(np.shape(q) + out.shape[1:])
    return out


@settings(max_examples=40, deadline=None)
@given(shape=array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
       dtype=st.sampled_from(FLOAT_DTYPES), method=st.sampled_from(INTERPOLATIONS),
       ignore_nan=st.booleans(), with_nan=st.booleans(), data=st.data())
def test_quantile_matches_numpy(shape, dtype, method, ignore_nan, with_nan, data):
    x, ref = make(shape, dtype)
    if with_nan:
        x.view(-1)[0] = NAN
        ref.reshape(-1)[0] = NAN
    dim = data.draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    q = data.draw(st.sampled_from([0.0, 0.3, 0.5, 1.0, [0.25, 0.75], [0.5]]))
    op = E.nanquantile if ignore_nan else E.quantile
    qt = E.tensor(q, dtype=dtype) if isinstance(q, list) else q
    got = op(x, qt, dim)
    want = _np_quantile(ref, q, dim, method="linear", ignore_nan=ignore_nan)
    assert_close(got, want, dtype)
    got = op(x, qt, dim, keepdim=True, interpolation=method)
    want = _np_quantile(ref, q, dim, method, ignore_nan)
    keep = np.expand_dims(want, tuple(range(-len(shape), 0)) if dim is None else
                          dim % len(shape) + (1 if isinstance(q, list) else 0))
    assert_close(got, keep, dtype)


def test_quantile_errors():
    x = E.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="float32 or float64"):
        E.quantile(E.tensor([1, 2]), 0.5)
    with pytest.raises(TypeError, match="float32 or float64"):
        E.quantile(x.half(), 0.5)
    with pytest.raises(TypeError, match="dtype"):
        E.quantile(x, E.tensor([0.5], dtype=E.float64))
    with pytest.raises(ValueError, match=r"range \[0, 1\]"):
        E.quantile(x, 1.5)
    with pytest.raises(ValueError, match=r"range \[0, 1\]"):
        E.nanquantile(x, E.tensor([0.5, -0.1]))
    with pytest.raises(ValueError, match="0-d or 1-d"):
        E.quantile(x, E.tensor([[0.5]]))
    with pytest.raises(ValueError, match="interpolation"):
        E.quantile(x, 0.5, interpolation="bad")
    with pytest.raises(ValueError, match="non-empty"):
        E.quantile(E.zeros(0), 0.5)
    assert_close(E.quantile(E.tensor(3.0), 0.5, 0, keepdim=True), 3.0)


def test_quantile_gradient_follows_the_interpolation_weights():
    x = E.tensor([4.0, 1.0, 3.0, 2.0], dtype=E.float64, requires_grad=True)
    E.quantile(x, 0.4).backward()  # rank 1.2 between sorted 2.0 (x[3]) and 3.0 (x[2])
    assert_close(x.grad, [0.0, 0.0, 0.2, 0.8])
    x.grad = None
    E.quantile(x, 0.4, interpolation="midpoint").backward()
    assert_close(x.grad, [0.0, 0.0, 0.5, 0.5])


@settings(max_examples=25, deadline=None)
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       dtype=st.sampled_from(ALL_DTYPES))
def test_masked_select_broadcasts(shapes, dtype):
    (sx, sm) = shapes.input_shapes
    x, ref = make(sx, dtype)
    m, mref = make(sm, E.bool_, seed=1)
    got = E.masked_select(x, m)
    want = np.broadcast_to(ref, shapes.result_shape)[np.broadcast_to(mref != 0,
                                                                     shapes.result_shape)]
    assert_close(got, want, dtype)


def test_masked_select_errors_and_gradient():
    x = E.arange(6.0, dtype=E.float64).reshape(2, 3).requires_grad_()
    x.masked_select(E.tensor([True, False, True])).sum().backward()
    assert_close(x.grad, [[1.0, 0.0, 1.0], [1.0, 0.0, 1.0]])
    with pytest.raises(TypeError, match="bool mask"):
        E.masked_select(x, E.tensor([1, 0, 1]))
    with pytest.raises(ValueError, match="broadcast"):
        E.masked_select(x, E.tensor([True, False]))


@pytest.mark.parametrize("k", [-1, 0, 1, 2, 3, 6])
@pytest.mark.parametrize("dims", [(0, 1), (1, 0), (-1, 0), (0, 2)])
def test_rot90_matches_numpy(k, dims):
    x, ref = make((2, 3, 4), E.int32)
    assert_close(E.rot90(x, k, dims), np.rot90(ref, k, dims))


@pytest.mark.parametrize("call,match", [
    (lambda: E.rot90(E.ones(2, 3), 1, [0]), "exactly 2"),
    (lambda: E.rot90(E.ones(3)), "at least 2 dims"),
    (lambda: E.rot90(E.ones(2, 3), 1, [0, -2]), "differ"),
])
def test_rot90_errors(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()
    with pytest.raises(IndexError):
        E.rot90(E.ones(2, 3), 1, [0, 2])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("n,dim", [(1, -1), (2, 0), (0, 1), (5, 1)])
def test_diff_matches_numpy(dtype, n, dim):
    x, ref = make((3, 4), dtype)
    got = E.diff(x, n, dim)
    if dtype.is_floating_point:
        assert_close(got, np.diff(ref, n, axis=dim), dtype)
    else:  # in x's own dtype: uint8 wraps, bool gives xor
        assert got.dtype is dtype
        np.testing.assert_array_equal(to_np(got), np.diff(to_np(x), n, axis=dim))


def test_diff_prepend_append_and_errors():
    x, ref = make((2, 3), E.float64)
    p, a = E.ones(2, 1, dtype=E.float64), E.zeros(2, 2, dtype=E.float64)
    assert_close(x.diff(append=a, prepend=p), np.diff(ref, prepend=1.0, append=[[0, 0]] * 2))
    u8 = E.tensor([1, 2], dtype=E.uint8)
    assert_close(E.diff(u8, prepend=E.tensor([3.0])), [-2.0, 1.0], E.float32)
    with pytest.raises(RuntimeError, match="at least 1 dim"):
        E.diff(E.tensor(1.0))
    with pytest.raises(RuntimeError, match="non-negative"):
        E.diff(x, -1)
    with pytest.raises(RuntimeError, match="append to have self's number of dims"):
        E.diff(x, append=E.ones(3))
    with pytest.raises(IndexError):
        E.diff(x, dim=2)
