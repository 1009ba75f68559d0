"""Shape composites (ops/composite_shape.py): ravel, fliplr, flipud, narrow_copy, diagflat,
concatenate, broadcast_tensors, unravel_index against numpy, with gradients and errors;
unravel_index's wrapping of out-of-range indices was checked against PyTorch 2.x."""
import numpy as np
import pytest

import ember as E
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import ShapeError

A = np.arange(12.0).reshape(3, 4)


def test_ravel_is_a_view_when_contiguous():
    x = E.tensor(A)
    r = E.ravel(x)
    np.testing.assert_array_equal(r.numpy(), A.ravel())
    assert r._base is x
    np.testing.assert_array_equal(x.t().ravel().numpy(), A.T.ravel())
    assert E.ravel(E.tensor(3.)).shape == (1,)


def test_flips_match_numpy():
    a = np.arange(24).reshape(2, 3, 4)
    np.testing.assert_array_equal(E.fliplr(E.tensor(a)).numpy(), np.fliplr(a))
    np.testing.assert_array_equal(E.tensor(a).flipud().numpy(), np.flipud(a))
    np.testing.assert_array_equal(E.flipud(E.arange(3)).numpy(), [2, 1, 0])
    with pytest.raises(RuntimeError, match=">= 2-d"):
        E.fliplr(E.ones(3))
    with pytest.raises(RuntimeError, match=">= 1-d"):
        E.flipud(E.tensor(1.))


def test_narrow_copy_is_a_copy():
    x = E.tensor(A)
    n = E.narrow_copy(x, 1, 1, 2)
    np.testing.assert_array_equal(n.numpy(), A[:, 1:3])
    assert n._base is None and not np.shares_memory(n.numpy(), x.numpy())
    out = E.empty(3, 2, dtype=E.float64)
    assert E.narrow_copy(x, -1, 0, 2, out=out) is out
    with pytest.raises(RuntimeError):
        x.narrow_copy(0, 2, 5)


@pytest.mark.parametrize("shape, offset", [((4,), 0), ((2, 2), 1), ((), 0), ((3,), -2)])
def test_diagflat_matches_numpy(shape, offset):
    a = np.arange(1.0, 1.0 + int(np.prod(shape))).reshape(shape)
    np.testing.assert_array_equal(E.diagflat(E.tensor(a), offset).numpy(),
                                  np.diagflat(a, offset))
    t = E.tensor(a / 3, dtype=E.float64, requires_grad=True)
    assert gradcheck(lambda v: E.diagflat(v, offset), (t,))


def test_concatenate_takes_axis():
    x = E.tensor(A)
    np.testing.assert_array_equal(E.concatenate([x, x], 1).numpy(), np.concatenate([A, A], 1))
    assert E.concatenate((x, x), axis=-1).shape == (3, 8)
    with pytest.raises(ShapeError):
        E.concatenate([x, x.t()], axis=0)


def test_broadcast_tensors():
    a, b = E.ones(3, 1), E.zeros(4)
    ra, rb = E.broadcast_tensors(a, b)
    assert ra.shape == rb.shape == (3, 4) and ra._base is a
    assert [t.shape for t in E.broadcast_tensors([a, b, E.tensor(1.)])] == [(3, 4)] * 3
    x = E.tensor(np.arange(3.0).reshape(3, 1), requires_grad=True)
    y = E.tensor(np.arange(4.0), requires_grad=True)
    fn = lambda p, q: tuple(t * 2 for t in E.broadcast_tensors(p, q))  # noqa: E731
    assert gradcheck(fn, (x, y)) and gradgradcheck(fn, (x, y))
    with pytest.raises(ShapeError, match="does not broadcast"):
        E.broadcast_tensors(E.ones(2), E.ones(3))


def test_unravel_index_matches_numpy():
    flat = np.array([[4, 7], [0, 11]])
    got = E.unravel_index(E.tensor(flat), (3, 4))
    for g, r in zip(got, np.unravel_index(flat, (3, 4))):
        np.testing.assert_array_equal(g.numpy(), r)
        assert g.dtype is E.int64
    assert [t.tolist() for t in E.unravel_index(E.tensor([-1, 6]), (2, 3))] == [[1, 0], [2, 0]]
    assert [t.item() for t in E.unravel_index(E.tensor(3), 5)] == [3]
    assert E.unravel_index(E.tensor([1], dtype=E.int32), ()) == ()
    with pytest.raises(TypeError, match="integer dtype"):
        E.unravel_index(E.tensor([1.]), (2, 3))
    with pytest.raises(ValueError, match="negative"):
        E.unravel_index(E.tensor([1]), (2, -3))
    with pytest.raises(ValueError, match="no elements"):
        E.unravel_index(E.tensor([1]), (2, 0))
