"""Indexing kernels (kernels/indexing.py) against numpy float64 references: masked_fill,
index_select, gather, scatter (src and value), scatter_add, take_along_dim, and their
in-place / out= variants. (``t[...]`` itself is tested in tests/core/test_indexing.py.)"""
import numpy as np
import pytest
from helpers import ALL_DTYPES, FLOAT_DTYPES, assert_close, make

import ember as E

SOME_DTYPES = [E.bool_, E.uint8, E.int32, E.int64, E.bfloat16, E.float16] + FLOAT_DTYPES
INDEX_DTYPES = [E.int64, E.int32]


def index_tensor(values, dtype=E.int64):
    return E.tensor(np.asarray(values, dtype=np.int64)).to(dtype)


def ref_scatter(ref, dim, idx, src, add=False):
    """out[..., idx[i], ...] (=|+=) src[i] at every position i of idx: a plain loop."""
    out = ref.copy()
    for pos in np.ndindex(*idx.shape):
        target = list(pos)
        target[dim] = idx[pos]
        value = src if np.isscalar(src) else src[pos]
        out[tuple(target)] = out[tuple(target)] + value if add else value
    return out


# --- masked_fill ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape,mask_shape", [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (3, 4)),
                                              ((), ()), ((2, 3), ())])
def test_masked_fill(dtype, shape, mask_shape):
    x, ref = make(shape, dtype)
    mask = E.tensor(np.random.default_rng(1).random(mask_shape) > 0.5)
    value = True if dtype is E.bool_ else 2
    expected = np.where(mask.numpy(), float(value), ref)
    assert_close(x.masked_fill(mask, value), expected, dtype)
    assert_close(E.masked_fill(x, mask, E.tensor(value)), expected, dtype)
    if expected.shape == ref.shape:
        y = x.clone()
        assert y.masked_fill_(mask, value) is y and y._version == 1
        assert_close(y, expected, dtype)


def test_masked_fill_casts_value_like_torch():
    x = E.tensor([1, 2, 3], dtype=E.int32)
    mask = E.tensor([True, False, True])
    assert x.masked_fill(mask, 1.5).tolist() == [1, 2, 1]
    assert E.zeros(3, dtype=E.uint8).masked_fill(mask, -1).tolist() == [255, 0, 255]
    assert x.masked_fill(mask, E.tensor(2.5)).tolist() == [2, 2, 2]


def test_masked_fill_errors_leave_self_unchanged():
    x, ref = make((3,), E.int8)
    with pytest.raises(E.DtypeError, match="only boolean masks"):
        x.masked_fill_(E.tensor([1, 0, 1]), 1)
    with pytest.raises(RuntimeError, match="cannot be converted to type int8 without overflow"):
        x.masked_fill_(E.tensor([True, False, True]), 200)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast "
                                           r"shape \[2, 3\]"):
        x.masked_fill_(E.ones(2, 3, dtype=E.bool_), 1)
    with pytest.raises(E.ShapeError, match="broadcast"):
        x.masked_fill(E.ones(2, dtype=E.bool_), 1)
    assert_close(x, ref, E.int8)
    assert x._version == 0
    with pytest.raises(RuntimeError, match="more than one element"):
        E.zeros(1).expand(3).masked_fill_(E.tensor([True, False, True]), 1)


# --- index_select -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", SOME_DTYPES)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("shape,dim,index", [((5,), 0, [4, 0, 0, 2]), ((3, 4), 1, [3, 1]),
                                             ((3, 4), -2, [2]), ((3, 4), 0, []),
                                             ((2, 3, 4), 2, 1)])
def test_index_select(dtype, index_dtype, shape, dim, index):
    x, ref = make(shape, dtype)
    idx = index_tensor(index, index_dtype)
    expected = np.take(ref, np.asarray(index, dtype=np.int64).reshape(-1), axis=dim)
    r = x.index_select(dim, idx)
    assert_close(r, expected, dtype)
    assert_close(E.index_select(x, dim, idx), expected, dtype)
    assert r._base is None and not np.shares_memory(r.numpy(), x.numpy())
    out = E.empty(0, dtype=dtype)
    assert E.index_select(x, dim, idx, out=out) is out
    assert_close(out, expected, dtype)


def test_index_select_0d():
    x = E.tensor(3.0)
    assert_close(x.index_select(0, E.tensor([0])), np.array(3.0))
    with pytest.raises(IndexError, match="only 1 value"):
        x.index_select(0, E.tensor([0, 0]))


def test_index_select_errors():
    x = E.arange(6.0)
    with pytest.raises(IndexError, match="index 6 is out of bounds for dimension 0 with size 6"):
        x.index_select(0, E.tensor([0, 6]))
    with pytest.raises(IndexError, match="index -1 is out of bounds"):
        x.index_select(0, E.tensor([0, -1]))
    with pytest.raises(E.DtypeError, match="expected dtype int64 or int32 for index"):
        x.index_select(0, E.tensor([0.0]))
    with pytest.raises(E.DtypeError, match="int64 or int32"):
        x.index_select(0, E.tensor([0], dtype=E.int16))
    with pytest.raises(IndexError, match="supposed to be a vector"):
        x.index_select(0, E.tensor([[0, 1]]))


# --- gather ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", SOME_DTYPES)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("shape,dim,index", [
    ((3, 4), 1, [[0, 3], [1, 1], [2, 0]]), ((3, 4), 0, [[2, 1, 0, 0]]),
    ((3, 4), -1, [[3], [2]]), ((2, 3, 4), 1, np.zeros((2, 5, 3), np.int64)),
    ((4,), 0, [3, 3, 0]), ((3, 4), 1, np.zeros((3, 0), np.int64))])
def test_gather(dtype, index_dtype, shape, dim, index):
    x, ref = make(shape, dtype)
    idx = np.asarray(index, dtype=np.int64)
    fit = tuple(slice(None) if d == dim % len(shape) else slice(0, n)
                for d, n in enumerate(idx.shape))
    expected = np.take_along_axis(ref[fit], idx, axis=dim)
    it = index_tensor(idx, index_dtype)
    assert_close(x.gather(dim, it), expected, dtype)
    assert_close(E.gather(x, dim, it), expected, dtype)
    out = E.empty(1, dtype=dtype)
    E.gather(x, dim, it, out=out)
    assert_close(out, expected, dtype)


def test_gather_0d():
    assert_close(E.tensor(3.0).gather(0, E.tensor(0)), np.array(3.0))
    assert_close(E.tensor(3.0).gather(0, E.tensor([0, 0])), np.array([3.0, 3.0]))


def test_gather_errors():
    x = E.arange(6.0).view(2, 3)
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 1 with size 3"):
        x.gather(1, E.tensor([[0], [3]]))
    with pytest.raises(IndexError, match="index -1 is out of bounds"):
        x.gather(1, E.tensor([[0], [-1]]))
    with pytest.raises(E.ShapeError, match="same number of dimensions"):
        x.gather(1, E.tensor([0, 1]))
    with pytest.raises(E.ShapeError, match=r"expected index \[1, 4\] to be no larger than self "
                                           r"\[2, 3\] apart from dimension 0"):
        x.gather(0, E.tensor([[0, 1, 0, 1]]))
    with pytest.raises(E.DtypeError, match="int64 or int32"):
        x.gather(0, E.tensor([[0.0]]))


# --- scatter / scatter_add ---------------------------------------------------------------------

SCATTER_CASES = [((3, 4), 1, [[3, 0], [1, 2], [0, 3]], (3, 2)),
                 ((3, 4), 0, [[2, 0, 1, 0], [0, 2, 0, 1]], (2, 4)),
                 ((3, 4), -1, [[1]], (2, 3)),
                 ((2, 3, 4), 2, np.tile([[[3, 1]]], (2, 3, 1)), (2, 3, 5)),
                 ((5,), 0, [4, 1, 2], (3,))]


@pytest.mark.parametrize("dtype", SOME_DTYPES)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("shape,dim,index,src_shape", SCATTER_CASES)
def test_scatter(dtype, index_dtype, shape, dim, index, src_shape):
    x, ref = make(shape, dtype)
    src, sref = make(src_shape, dtype, seed=1)
    idx = np.asarray(index, dtype=np.int64)
    it = index_tensor(idx, index_dtype)
    expected = ref_scatter(ref, dim % len(shape), idx, sref)
    r = x.scatter(dim, it, src)
    assert_close(r, expected, dtype)
    assert_close(E.scatter(x, dim, it, src), expected, dtype)
    assert r._base is None and not np.shares_memory(r.numpy(), x.numpy())
    value = True if dtype is E.bool_ else 7
    assert_close(x.scatter(dim, it, value), ref_scatter(ref, dim % len(shape), idx, float(value)),
                 dtype)
    y = x.clone()
    assert y.scatter_(dim, it, src) is y and y._version == 1
    assert_close(y, expected, dtype)
    y.scatter_(dim, it, value)
    assert_close(y, ref_scatter(expected, dim % len(shape), idx, float(value)), dtype)


@pytest.mark.parametrize("dtype", [E.int32, E.int64, E.float16] + FLOAT_DTYPES)
@pytest.mark.parametrize("shape,dim,index,src_shape", SCATTER_CASES + [
    ((3, 4), 1, [[0, 0, 0], [2, 2, 1], [3, 3, 3]], (3, 3))])  # repeated indices accumulate
def test_scatter_add(dtype, shape, dim, index, src_shape):
    x, ref = make(shape, dtype)
    src, sref = make(src_shape, dtype, seed=1)
    idx = np.asarray(index, dtype=np.int64)
    expected = ref_scatter(ref, dim % len(shape), idx, sref, add=True)
    it = index_tensor(idx)
    assert_close(x.scatter_add(dim, it, src), expected, dtype)
    assert_close(E.scatter_add(x, dim, it, src), expected, dtype)
    y = x.clone()
    assert y.scatter_add_(dim, it, src) is y
    assert_close(y, expected, dtype)


def test_scatter_one_hot():
    labels = E.tensor([2, 0, 1])
    one_hot = E.zeros(3, 4).scatter_(1, labels.unsqueeze(1), 1.0)
    assert one_hot.tolist() == [[0, 0, 1, 0], [1, 0, 0, 0], [0, 1, 0, 0]]
    assert E.zeros(2, 3, dtype=E.int32).scatter(1, E.tensor([[0], [2]]), 5.5).tolist() == \
        [[5, 0, 0], [0, 0, 5]]


def test_scatter_errors_leave_self_unchanged():
    x, ref = make((2, 3), E.float32)
    idx = E.tensor([[0], [2]])
    with pytest.raises(E.DtypeError, match="expected self.dtype to be equal to src.dtype"):
        x.scatter_(1, idx, E.ones(2, 1, dtype=E.float64))
    with pytest.raises(E.ShapeError, match=r"expected index \[2, 2\] to be no larger than self "
                                           r"\[2, 3\] apart from dimension 1 and to be no larger "
                                           r"than src \[2, 1\]"):
        x.scatter_(1, E.tensor([[0, 1], [2, 1]]), E.ones(2, 1))
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 1 with size 3"):
        x.scatter_(1, E.tensor([[0], [3]]), E.ones(2, 1))
    with pytest.raises(IndexError, match="index -1 is out of bounds"):
        x.scatter_add_(1, E.tensor([[0], [-1]]), E.ones(2, 1))
    with pytest.raises(RuntimeError, match="without overflow"):
        x.scatter_(1, idx, 1e39)
    with pytest.raises(E.DtypeError, match="int64 or int32"):
        x.scatter_(1, E.tensor([[0.0], [1.0]]), 1.0)
    with pytest.raises(E.ShapeError, match="same number of dimensions"):
        x.scatter_(1, E.tensor([0, 1]), 1.0)
    assert_close(x, ref)
    assert x._version == 0


# --- take_along_dim -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", SOME_DTYPES)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("shape,index,dim", [
    ((3, 4), [[0], [3], [-1]], 1), ((3, 4), [[0, 1, 2, 0]], 0), ((3, 4), [[2, 0]], 1),
    ((2, 1, 4), np.zeros((1, 3, 2), np.int64), 2), ((3, 4), [[0, 11], [-12, 5]], None),
    ((5,), [4, -5, 0], 0), ((), [0, 0], None)])
def test_take_along_dim(dtype, index_dtype, shape, index, dim):
    x, ref = make(shape, dtype)
    idx = np.asarray(index, dtype=np.int64)
    if dim is None:
        expected = ref.reshape(-1)[idx.reshape(-1)]
    else:
        a_shape, i_shape = list(ref.shape), list(idx.shape)
        a_shape[dim] = i_shape[dim] = 1
        common = np.broadcast_shapes(tuple(a_shape), tuple(i_shape))
        a_b = np.broadcast_to(ref, common[:dim] + (ref.shape[dim],) + common[dim + 1:])
        i_b = np.broadcast_to(idx, common[:dim] + (idx.shape[dim],) + common[dim + 1:])
        expected = np.take_along_axis(a_b, i_b, axis=dim)
    it = index_tensor(idx, index_dtype)
    assert_close(E.take_along_dim(x, it, dim), expected, dtype)
    assert_close(x.take_along_dim(it, dim=dim), expected, dtype)


def test_take_along_dim_errors():
    x = E.arange(6.0).view(2, 3)
    with pytest.raises(E.ShapeError, match="same number of dimensions"):
        E.take_along_dim(x.view(2, 3, 1), E.tensor([[0], [2]]), 1)
    with pytest.raises(E.ShapeError, match="do not match at dimension 0"):
        E.take_along_dim(x, E.tensor([[0], [1], [2]]), 1)
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 1 with size 3"):
        E.take_along_dim(x, E.tensor([[0], [3]]), 1)
    with pytest.raises(IndexError, match="index -7 is out of bounds"):
        E.take_along_dim(x, E.tensor([-7]))
    with pytest.raises(E.DtypeError, match="int64 or int32"):
        E.take_along_dim(x, E.tensor([0.0]))


def test_index_kernel_basic_indices_give_views(numpy_kernels):
    a = np.arange(12.0).reshape(3, 4)
    for idx in [(slice(1, 3),), (1,), (1, 2), (slice(None), 2), (None, slice(0, 2))]:
        r = numpy_kernels["index"](a, idx)
        assert r.__class__ is np.ndarray and r.base is not None  # a 0-d view, never a scalar
        np.testing.assert_array_equal(r, a[idx])
