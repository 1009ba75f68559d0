"""sort, argsort, topk and one_hot (kernels/sorting.py) against numpy."""
import math

import numpy as np
import pytest
from helpers import ALL_DTYPES, INT_DTYPES, assert_close, make

import ember as E


def np_stable_argsort(ref, axis, descending):
    """Stable order; descending keeps equal values in input order, as torch's stable sort."""
    if not descending:
        return np.argsort(ref, axis=axis, kind="stable")
    ranks = np.unique(ref, return_inverse=True)[1].reshape(ref.shape)  # nan ranks highest
    return np.argsort(-ranks, axis=axis, kind="stable")


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape,dim", [((6,), 0), ((3, 5), 1), ((3, 5), 0), ((2, 3, 4), -2)])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_and_argsort(dtype, shape, dim, descending):
    x, ref = make(shape, dtype, low=-2, high=2)  # few distinct values: ties everywhere
    axis = dim % len(shape)
    idx = np_stable_argsort(ref, axis, descending)
    r = x.sort(dim, descending)
    assert type(r).__name__ == "sort" and r.values is r[0]
    assert_close(r.indices, idx, E.int64)
    assert_close(r.values, np.take_along_axis(ref, idx, axis), dtype)
    assert_close(x.argsort(dim, descending=descending), idx, E.int64)
    assert_close(E.argsort(x, dim, descending, stable=True), idx, E.int64)


def test_sort_defaults_keywords_and_zero_dim():
    x = E.tensor([[3, 1, 2, 1], [0, 5, 5, 4]])
    r = E.sort(x, descending=True, stable=True)
    np.testing.assert_array_equal(r.values.numpy(), [[3, 2, 1, 1], [5, 5, 4, 0]])
    np.testing.assert_array_equal(r.indices.numpy(), [[0, 2, 1, 3], [1, 2, 3, 0]])
    s = E.tensor(3.0).sort()
    assert s.values.item() == 3.0 and s.indices.item() == 0 and s.indices.shape == ()
    assert E.zeros((0, 3)).sort(0).values.shape == (0, 3)


def test_sort_puts_nan_last_ascending_and_first_descending():
    x = E.tensor([1.0, math.nan, 0.0])
    assert x.sort().indices.tolist() == [2, 0, 1]
    assert x.sort(descending=True).indices.tolist() == [1, 0, 2]


def test_sort_of_unsigned_and_bool_descending():
    x = E.tensor(np.array([0, 255, 7], np.uint8))
    assert x.sort(descending=True).values.tolist() == [255, 7, 0]
    b = E.tensor([True, False, True])
    assert b.sort().indices.tolist() == [1, 0, 2]
    assert b.sort(descending=True).indices.tolist() == [0, 2, 1]


@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d is not E.bool_])
@pytest.mark.parametrize("n,k", [(5, 2), (5, 5), (5, 0), (40, 3), (40, 1)])
@pytest.mark.parametrize("largest", [True, False])
def test_topk(dtype, n, k, largest):
    # n=40 with small k takes the partition path; values must match a full sort
    x, ref = make((3, n), dtype, seed=n)
    r = x.topk(k, 1, largest)
    assert type(r).__name__ == "topk" and r.values.shape == (3, k)
    expected = np.sort(ref, axis=1)[:, ::-1][:, :k] if largest else np.sort(ref, axis=1)[:, :k]
    assert_close(r.values, expected, dtype)
    assert_close(r.values, np.take_along_axis(ref, r.indices.numpy(), 1), dtype)


def test_topk_ties_nan_and_dims():
    x = E.tensor([[1.0, math.nan, 0.0, 1.0]])
    r = x.topk(2)
    assert math.isnan(r.values[0, 0].item()) and r.indices.tolist() == [[1, 0]]
    r = x.topk(2, largest=False)
    assert r.indices.tolist() == [[2, 0]]
    y, ref = make((4, 3), E.float32)
    assert_close(y.topk(2, dim=0).values, np.sort(ref, 0)[::-1][:2])
    s = E.tensor(3.0).topk(1)
    assert s.values.item() == 3.0 and s.indices.shape == ()


def test_topk_partition_path_finds_nan_as_largest():
    x = E.tensor(np.r_[np.arange(50.0), np.nan])
    r = x.topk(2)
    assert math.isnan(r.values[0].item()) and r.indices.tolist() == [50, 49]


def test_topk_k_out_of_range():
    x = E.zeros((2, 4))
    with pytest.raises(IndexError, match=r"k=5 is out of range for dimension 1 of size 4"):
        x.topk(5)
    with pytest.raises(IndexError, match=r"k=-1 .*expected 0 <= k <= 2"):
        x.topk(-1, dim=0)
    with pytest.raises(IndexError, match=r"dimension out of range"):
        x.topk(1, dim=2)


def test_one_hot():
    labels = E.tensor([[0, 2], [1, 0]])
    r = E.one_hot(labels)
    assert r.dtype is E.int64 and r.shape == (2, 2, 3)
    np.testing.assert_array_equal(r.numpy(), np.eye(3, dtype=np.int64)[labels.numpy()])
    assert E.one_hot(E.tensor([1]), 4).tolist() == [[0, 1, 0, 0]]
    assert E.one_hot(E.tensor(2), 3).tolist() == [0, 0, 1]
    assert E.one_hot(E.zeros(0, dtype=E.int64), 3).shape == (0, 3)


@pytest.mark.parametrize("dtype", [d for d in INT_DTYPES if d is not E.int64] + [E.float32])
def test_one_hot_needs_int64(dtype):
    with pytest.raises(TypeError, match=f"dtype int64, got {dtype.name}.*long()"):
        E.one_hot(E.zeros(2, dtype=dtype), 3)


def test_one_hot_range_errors():
    with pytest.raises(IndexError, match="smaller than num_classes=2, got 2"):
        E.one_hot(E.tensor([0, 2]), 2)
    with pytest.raises(IndexError, match="non-negative, got -1"):
        E.one_hot(E.tensor([0, -1]), 3)
    with pytest.raises(ValueError, match="cannot infer the number of classes"):
        E.one_hot(E.zeros(0, dtype=E.int64))
    with pytest.raises(ValueError, match="num_classes must be -1"):
        E.one_hot(E.tensor([0]), -2)


def test_topk_of_bool_is_refused_like_torch():
    with pytest.raises(NotImplementedError, match="topk: no kernel for CPUBoolType"):
        E.tensor([True, False]).topk(1)


def test_bfloat16_sort_with_nan():
    # ml_dtypes' own bfloat16 sort misorders around NaN; the kernel sorts float32 keys
    values = [3.0, float("nan"), 1.0, 2.0, -1.0, float("nan"), 0.5]
    got = E.sort(E.tensor(values, dtype=E.bfloat16))
    np.testing.assert_array_equal(got.indices.numpy(), [4, 6, 2, 3, 0, 1, 5])
    top = E.topk(E.tensor(values, dtype=E.bfloat16), 3)
    np.testing.assert_array_equal(top.indices.numpy(), [1, 5, 0])
