"""matrix_power, multi_dot, cross, vecdot and vander (ember/linalg/products.py) against
numpy float64."""
import numpy as np
import pytest
from core.linalg.references import t, uniform
from helpers import FLOAT_DTYPES, assert_close

import ember as E
from ember.autograd import gradcheck, gradgradcheck


@pytest.mark.parametrize("n", [0, 1, 2, 5, -1, -3])
def test_matrix_power(n):
    a = uniform((2, 3, 3)) + 2 * np.eye(3)
    assert_close(E.linalg.matrix_power(t(a), n), np.linalg.matrix_power(a, n), E.float64,
                 rtol=1e-10)
    assert_close(t(a).matrix_power(n), np.linalg.matrix_power(a, n), E.float64, rtol=1e-10)


def test_matrix_power_of_integers_and_non_square():
    a = np.array([[1, 1], [1, 0]])
    assert E.linalg.matrix_power(E.tensor(a), 10).tolist() == \
        np.linalg.matrix_power(a, 10).tolist()
    with pytest.raises(E.ShapeError, match="square"):
        E.linalg.matrix_power(E.ones(2, 3), 2)


@pytest.mark.parametrize("shapes", [[(3,), (3, 4), (4, 2), (2,)], [(5, 3), (3, 1), (1, 6)],
                                    [(2, 3), (3,)], [(10, 2), (2, 10), (10, 2), (2, 10)]])
def test_multi_dot(shapes):
    arrays = [uniform(s, seed=i) for i, s in enumerate(shapes)]
    assert_close(E.linalg.multi_dot([t(x) for x in arrays]), np.linalg.multi_dot(arrays),
                 E.float64)


def test_multi_dot_errors():
    with pytest.raises(ValueError, match="at least 2 tensors"):
        E.linalg.multi_dot([E.ones(2, 2)])
    with pytest.raises(E.ShapeError, match="tensor 1 must be 2D"):
        E.linalg.multi_dot([E.ones(2, 2), E.ones(2), E.ones(2, 2)])
    with pytest.raises(E.ShapeError, match="cannot be multiplied"):
        E.linalg.multi_dot([E.ones(2, 3), E.ones(2, 2)])


@pytest.mark.parametrize("sa, sb, dim", [((3,), (3,), -1), ((4, 3), (3,), -1),
                                          ((3, 2), (1, 3, 2), 1), ((2, 3, 5), (2, 3, 5), -2)])
def test_cross(sa, sb, dim):
    a, b = uniform(sa, 1), uniform(sb, 2)
    ref = np.cross(*np.broadcast_arrays(a, b), axis=dim)  # dim of the broadcast shape
    assert_close(E.linalg.cross(t(a), t(b), dim=dim), ref, E.float64)


def test_cross_needs_length_3():
    with pytest.raises(E.ShapeError, match="inputs dimension -1 must have length 3. Got 2 and 2"):
        E.linalg.cross(E.ones(2), E.ones(2))


# ==== vecdot ====================================================================================

@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("sx, sy, dim", [((3,), (3,), -1), ((2, 3), (3,), -1),
                                          ((2, 3), (2, 1), 0), ((4, 1, 3), (2, 3), 1)])
def test_vecdot_broadcasts_and_sums(dtype, sx, sy, dim):
    x, y = uniform(sx, 1), uniform(sy, 2)
    ref = (np.broadcast_arrays(x, y)[0] * y).sum(dim)
    assert_close(E.linalg.vecdot(t(x, dtype), t(y, dtype), dim=dim), ref, dtype,
                 rtol=1e-5 if dtype is E.float32 else None)


def test_vecdot_errors():
    with pytest.raises(E.DtypeError, match="same dtype"):
        E.linalg.vecdot(E.ones(3), E.ones(3, dtype=E.float64))
    with pytest.raises(E.DtypeError, match="floating point"):
        E.linalg.vecdot(E.ones(3, dtype=E.int64), E.ones(3, dtype=E.int64))
    with pytest.raises(E.ShapeError, match="do not broadcast"):
        E.linalg.vecdot(E.ones(2, 3), E.ones(4))


# ==== vander ====================================================================================

@pytest.mark.parametrize("N", [None, 2, 5])
def test_vander_is_increasing_powers(N):
    x = uniform((2, 3))
    n = 3 if N is None else N
    ref = x[..., None] ** np.arange(n)
    assert_close(E.linalg.vander(t(x), N=N), ref, E.float64)


def test_vander_of_integers_is_int64():
    v = E.linalg.vander(E.tensor([1, 2, 3], dtype=E.int32))
    assert v.dtype is E.int64 and v.tolist() == [[1, 1, 1], [1, 2, 4], [1, 3, 9]]


def test_vander_errors():
    with pytest.raises(ValueError, match="N must be greater than 1"):
        E.linalg.vander(E.ones(3), N=1)
    with pytest.raises(E.DtypeError, match="bool"):
        E.linalg.vander(E.tensor([True, False]))
    with pytest.raises(E.ShapeError, match="at least 1 dimension"):
        E.linalg.vander(E.tensor(2.0))


def test_vander_and_vecdot_gradients_include_zero():
    x = t([0.0, 0.5, -1.2], requires_grad=True)
    assert gradcheck(lambda v: E.linalg.vander(v, N=4), (x,))
    assert gradgradcheck(lambda v: E.linalg.vander(v, N=4), (x,))
    y = t(uniform((2, 3)), requires_grad=True)
    assert gradgradcheck(E.linalg.vecdot, (y, t(uniform((3,), 1), requires_grad=True)))
