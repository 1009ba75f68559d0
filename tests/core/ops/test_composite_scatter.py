"""Write-at-index composites (ops/composite_scatter.py) against numpy float64 references
and exact values checked against PyTorch 2.x; gradients by gradcheck/gradgradcheck;
in-place forms; errors leave self unchanged."""
import numpy as np
import pytest

import ember as E
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError, ShapeError

RNG = np.random.default_rng(0)


def arr(*shape):
    return RNG.uniform(-2, 2, shape)


def leaf(a):
    return E.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


# ---- index_copy, index_reduce ----------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_copy_matches_numpy(dim):
    x, = (arr(3, 4),)
    index = [2, 0]
    shape = list(x.shape)
    shape[dim] = 2
    src = arr(*shape)
    ref = x.copy()
    np.moveaxis(ref, dim, 0)[index] = np.moveaxis(src, dim, 0)
    got = E.index_copy(E.tensor(x), dim, E.tensor(index), E.tensor(src))
    np.testing.assert_array_equal(got.numpy(), ref)
    y = E.tensor(x)
    assert y.index_copy_(dim, E.tensor(index, dtype=E.int32), E.tensor(src)) is y
    np.testing.assert_array_equal(y.numpy(), ref)


def test_index_copy_scalars_and_gradients():
    assert E.tensor(1.).index_copy(0, E.tensor([0]), E.tensor(5.)).item() == 5
    fn = lambda x, s: E.index_copy(x, 1, E.tensor([2, 0]), s)  # noqa: E731
    assert gradcheck(fn, (leaf(arr(2, 3)), leaf(arr(2, 2))))
    assert gradgradcheck(fn, (leaf(arr(2, 3)), leaf(arr(2, 2))))


def test_index_copy_errors():
    x = E.zeros(3, 2)
    with pytest.raises(ShapeError, match=r"expected source of shape \[2, 2\]"):
        x.index_copy(0, E.tensor([2, 0]), E.ones(3, 2))
    with pytest.raises(IndexError, match="out of bounds"):
        x.index_copy(0, E.tensor([3]), E.ones(1, 2))
    with pytest.raises(DtypeError, match="same dtype"):
        x.index_copy(0, E.tensor([1]), E.ones(1, 2, dtype=E.float64))
    with pytest.raises(DtypeError, match="int64 or int32"):
        x.index_copy(0, E.tensor([1.]), E.ones(1, 2))
    with pytest.raises(ShapeError, match="same number of dims"):
        x.index_copy(0, E.tensor([1]), E.ones(2))
    with pytest.raises(IndexError, match="vector"):
        x.index_copy(0, E.tensor([[1]]), E.ones(1, 2))
    with pytest.raises(IndexError):
        x.index_copy_(0, E.tensor([5]), E.ones(1, 2))
    assert x.tolist() == [[0, 0]] * 3 and x._version == 0


def test_index_reduce_exact_values():
    x, src, ii = E.ones(3, 2), E.arange(8.).reshape(4, 2), E.tensor([0, 2, 0, 2])
    assert x.index_reduce(0, ii, src, "prod").tolist() == [[0, 5], [1, 1], [12, 21]]
    assert x.index_reduce(0, ii, src, "amax", include_self=False).tolist() == \
        [[4, 5], [1, 1], [6, 7]]
    assert x.index_reduce(0, ii, src, "amin", include_self=False).tolist() == \
        [[0, 1], [1, 1], [2, 3]]
    np.testing.assert_allclose(x.index_reduce(0, ii, src, "mean").numpy(),
                               [[5 / 3, 7 / 3], [1, 1], [3, 11 / 3]], rtol=1e-6)
    xi = E.ones(3, 2, dtype=E.int64)
    assert xi.index_reduce(0, ii, E.arange(8).reshape(4, 2), "mean").tolist() == \
        [[1, 2], [1, 1], [3, 3]]
    y = E.ones(3, 2)
    assert y.index_reduce_(0, ii, src, "amax") is y and y.tolist() == [[4, 5], [1, 1], [6, 7]]


def test_index_reduce_gradients_and_errors():
    fn = lambda x, s: E.index_reduce(x, 0, E.tensor([1, 0, 1]), s, "prod")  # noqa: E731
    assert gradcheck(fn, (leaf(arr(2, 2)), leaf(arr(3, 2))))
    assert gradgradcheck(fn, (leaf(arr(2, 2)), leaf(arr(3, 2))))
    x = E.ones(3, 2)
    with pytest.raises(ValueError, match="use index_add for 'sum'"):
        x.index_reduce(0, E.tensor([0]), E.ones(1, 2), "sum")
    with pytest.raises(ShapeError, match="expected source of shape"):
        x.index_reduce(0, E.tensor([0, 1]), E.ones(3, 2), "prod")


# ---- index_put, put --------------------------------------------------------------------------

def test_index_put_values_and_forms():
    x = E.zeros(3, 2)
    idx = (E.tensor([0, 0]), E.tensor([1, 1]))
    assert E.index_put(x, idx, E.tensor([1., 2.]), accumulate=True).tolist() == \
        [[0, 3], [0, 0], [0, 0]]
    assert x.index_put([E.tensor([True, False, True])], E.tensor(7.)).tolist() == \
        [[7, 7], [0, 0], [7, 7]]
    assert x.tolist() == [[0, 0]] * 3  # out of place
    assert E.index_put_(x, (E.tensor([-1]),), E.tensor(4.)) is x
    assert x.tolist() == [[0, 0], [0, 0], [4, 4]]


def test_index_put_gradients_and_errors():
    fn = lambda x, v: E.index_put(x, (E.tensor([0, 2, 0]),), v, True)  # noqa: E731
    assert gradcheck(fn, (leaf(arr(3, 2)), leaf(arr(3, 2))))
    assert gradgradcheck(fn, (leaf(arr(3, 2)), leaf(arr(2))))
    x = E.zeros(3, 2)
    with pytest.raises(IndexError, match="out of bounds"):
        x.index_put((E.tensor([5]),), E.tensor(7.))
    with pytest.raises(DtypeError, match="same dtype"):
        x.index_put((E.tensor([0]),), E.tensor(7))


def test_put_matches_numpy():
    a = arr(3, 2)
    ref = a.copy()
    np.put(ref, [0, -1], [9.0, 8.0])
    got = E.put(E.tensor(a), E.tensor([0, -1]), E.tensor([9.0, 8.0], dtype=E.float64))
    np.testing.assert_array_equal(got.numpy(), ref)
    acc = E.zeros(2, 2).put(E.tensor([[0, 0]]), E.tensor([9., 8.]), accumulate=True)
    assert acc.tolist() == [[17, 0], [0, 0]]
    y = E.zeros(3)
    assert y.put_(E.tensor([2]), E.tensor([1.])) is y and y.tolist() == [0, 0, 1]
    fn = lambda x, s: E.put(x, E.tensor([3, 0, 3]), s, accumulate=True)  # noqa: E731
    assert gradcheck(fn, (leaf(arr(2, 2)), leaf(arr(3))))
    with pytest.raises(IndexError, match="same number of elements"):
        E.zeros(3).put(E.tensor([1, 2]), E.tensor([9.]))
    with pytest.raises(IndexError, match="out of bounds"):
        E.zeros(3).put(E.tensor([3]), E.tensor([9.]))


# ---- masked_scatter --------------------------------------------------------------------------

def test_masked_scatter_matches_numpy():
    a, mask, src = arr(3, 2), RNG.random((3, 2)) > 0.4, arr(7)
    ref = a.copy()
    ref[mask] = src[:mask.sum()]
    got = E.masked_scatter(E.tensor(a), E.tensor(mask), E.tensor(src))
    np.testing.assert_array_equal(got.numpy(), ref)
    # mask broadcasts (2,) -> (3, 2); self broadcasts (2,) -> (2, 2)
    assert E.zeros(3, 2).masked_scatter(E.tensor([True, False]), E.arange(10.)).tolist() == \
        [[0, 0], [1, 0], [2, 0]]
    assert E.zeros(2).masked_scatter(E.tensor([[True, False], [True, True]]),
                                     E.arange(10.)).tolist() == [[0, 0], [1, 2]]


def test_masked_scatter_inplace_gradients_and_errors():
    x = E.zeros(2, 2)
    assert x.masked_scatter_(E.tensor([[False, True], [True, False]]), E.tensor([5., 6.])) is x
    assert x.tolist() == [[0, 5], [6, 0]]
    m = E.tensor([[True, False, True], [False, True, True]])
    fn = lambda x, s: E.masked_scatter(x, m, s)  # noqa: E731
    assert gradcheck(fn, (leaf(arr(2, 3)), leaf(arr(5))))
    assert gradgradcheck(fn, (leaf(arr(2, 3)), leaf(arr(2, 3))))
    with pytest.raises(RuntimeError, match="number of elements of source"):
        E.zeros(3).masked_scatter(E.tensor([True, True, True]), E.ones(2))
    with pytest.raises(DtypeError, match="bool mask"):
        E.zeros(3).masked_scatter(E.tensor([1, 0, 1]), E.ones(3))
    with pytest.raises(DtypeError, match="same dtype"):
        E.zeros(3).masked_scatter(E.tensor([True, False, True]), E.ones(3, dtype=E.int64))
    y = E.zeros(2)
    with pytest.raises(RuntimeError, match="cannot grow"):
        y.masked_scatter_(E.tensor([[True, False], [True, True]]), E.arange(4.))
    assert y.tolist() == [0, 0]


# ---- select_scatter, slice_scatter, diagonal_scatter -----------------------------------------

def test_slice_replacements_match_numpy():
    a = arr(3, 4)
    ref = a.copy()
    ref[:, -1] = 1.0
    np.testing.assert_array_equal(
        E.select_scatter(E.tensor(a), E.ones(3, dtype=E.float64), 1, -1).numpy(), ref)
    ref = a.copy()
    ref[1:5:2] = 2.0
    np.testing.assert_array_equal(
        E.tensor(a).slice_scatter(E.full((1, 4), 2.0, dtype=E.float64), 0, 1, 5, 2).numpy(),
        ref)
    assert E.slice_scatter(E.zeros(6), E.ones(2), start=4).tolist() == [0, 0, 0, 0, 1, 1]
    ref = a.copy()
    ref[[0, 1, 2], [1, 2, 3]] = [7.0, 8.0, 9.0]
    np.testing.assert_array_equal(
        E.diagonal_scatter(E.tensor(a), E.tensor([7.0, 8.0, 9.0]), 1).numpy(), ref)
    x = E.tensor(a)
    E.select_scatter(x, E.zeros(4, dtype=E.float64), 0, 0)
    np.testing.assert_array_equal(x.numpy(), a)  # out of place


@pytest.mark.parametrize("fn, src_shape", [
    (lambda x, s: E.select_scatter(x, s, 0, 1), (3,)),
    (lambda x, s: E.slice_scatter(x, s, 1, 0, 3, 2), (2, 2)),
    (lambda x, s: E.diagonal_scatter(x, s, -1), (1,)),
])
def test_slice_replacement_gradients(fn, src_shape):
    inputs = (leaf(arr(2, 3)), leaf(arr(*src_shape)))
    assert gradcheck(fn, inputs) and gradgradcheck(fn, inputs)


def test_slice_replacement_errors():
    x = E.zeros(3, 2)
    with pytest.raises(RuntimeError, match=r"src size = \[3\], slice size = \[2\]"):
        E.select_scatter(x, E.ones(3), 0, 0)
    with pytest.raises(RuntimeError, match=r"src size = \[3\], slice size = \[2\]"):
        E.slice_scatter(E.zeros(6), E.ones(3), 0, 1, 5, 2)
    with pytest.raises(RuntimeError, match="step must be positive"):
        E.slice_scatter(E.zeros(6), E.ones(3), 0, 1, 5, 0)
    with pytest.raises(RuntimeError, match="slice size"):
        E.diagonal_scatter(E.zeros(3, 3), E.ones(3), 1)
    with pytest.raises(IndexError):
        E.select_scatter(x, E.ones(2), 0, 3)
