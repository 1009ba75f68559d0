"""ember.linalg's composites (core/ember/linalg.py) against numpy float64: norms, pinv,
matrix_rank, matrix_power, multi_dot, cross, and torch's top-level spellings."""
import math

import numpy as np
import pytest
from helpers import FLOAT_DTYPES, assert_close

import ember as E

TOL = {E.float32: {"rtol": 1e-4, "atol": 1e-5}, E.float64: {}}
RNG = np.random.default_rng(0)
A3 = RNG.uniform(-1, 1, (2, 3, 4))


def t(x, dtype=E.float64):
    return E.tensor(np.asarray(x), dtype=dtype)


def test_namespace_has_torch_linalg_names():
    for name in E.linalg.__all__:
        assert callable(getattr(E.linalg, name)), name
    assert issubclass(E.linalg.LinAlgError, RuntimeError)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, math.inf, -math.inf, 0])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (-1, True), ((0, 2), False)])
def test_vector_norm(dtype, ord, dim, keepdim):
    got = E.linalg.vector_norm(t(A3, dtype), ord, dim, keepdim)
    axis = tuple(range(3)) if dim is None else dim if isinstance(dim, tuple) else (dim,)
    x = np.abs(A3)
    if ord == 0:
        ref = (x != 0).sum(axis, keepdims=keepdim).astype(float)
    elif math.isinf(ord):
        ref = (x.max if ord > 0 else x.min)(axis, keepdims=keepdim)
    else:
        ref = (x ** ord).sum(axis, keepdims=keepdim) ** (1 / ord)
    assert_close(got, ref, dtype, **TOL[dtype])


def test_vector_norm_dtype_widens_and_ints_raise():
    assert E.linalg.vector_norm(t(A3, E.float32), dtype=E.float64).dtype is E.float64
    with pytest.raises(E.DtypeError):
        E.linalg.vector_norm(E.ones(3, dtype=E.int64))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
@pytest.mark.parametrize("dim", [(-2, -1), (2, 0)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_matrix_norm(dtype, ord, dim, keepdim):
    got = E.linalg.matrix_norm(t(A3, dtype), ord, dim, keepdim)
    ref = np.linalg.norm(A3, ord, axis=dim, keepdims=keepdim)
    assert_close(got, ref, dtype, **TOL[dtype])


def test_matrix_norm_errors():
    with pytest.raises(ValueError, match="Order 3 not supported"):
        E.linalg.matrix_norm(E.ones(2, 2), 3)
    with pytest.raises(E.ShapeError, match="at least 2 dimensions"):
        E.linalg.matrix_norm(E.ones(3))


@pytest.mark.parametrize("x, ord, dim", [
    (A3, None, None), (A3[0, 0], 3, None), (A3[0], "nuc", None), (A3[0], math.inf, None),
    (A3, 1, 2), (A3, "fro", (0, 1)), (A3, -2, (1, 2)), (A3, None, (0, 2)),
])
def test_norm_picks_vector_or_matrix(x, ord, dim):
    got = E.linalg.norm(t(x), ord, dim)
    ref = np.linalg.norm(x.reshape(-1) if ord is None and dim is None else x, ord, axis=dim)
    assert_close(got, ref, E.float64)


def test_norm_with_ord_needs_1d_or_2d_input():
    with pytest.raises(E.ShapeError, match="must be 1D or 2D. Got 3D"):
        E.linalg.norm(E.ones(2, 2, 2), 2)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(3, 4), (2, 4, 3)])
def test_pinv_matches_numpy(dtype, shape):
    a = RNG.uniform(-1, 1, shape)
    assert_close(E.linalg.pinv(t(a, dtype)), np.linalg.pinv(a), dtype, **TOL[dtype])
    assert_close(E.pinverse(t(a, dtype)), np.linalg.pinv(a), dtype, **TOL[dtype])


def test_pinv_and_rank_of_a_singular_and_a_hermitian_matrix():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert_close(E.linalg.pinv(t(a)), np.linalg.pinv(a), E.float64)
    assert_close(E.linalg.pinv(t(a), hermitian=True), np.linalg.pinv(a, hermitian=True),
                 E.float64)
    assert int(E.linalg.matrix_rank(t(a))) == 1
    assert int(E.linalg.matrix_rank(t(a), hermitian=True)) == 1
    assert int(E.linalg.matrix_rank(t(np.diag([1.0, 1e-3])), atol=1e-2)) == 1
    r = E.linalg.matrix_rank(t(np.stack([np.eye(3), np.zeros((3, 3))])))
    assert r.dtype is E.int64 and r.tolist() == [3, 0]


@pytest.mark.parametrize("n", [0, 1, 2, 5, -1, -3])
def test_matrix_power(n):
    a = RNG.uniform(-1, 1, (2, 3, 3)) + 2 * np.eye(3)
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
    arrays = [RNG.uniform(-1, 1, s) for s in shapes]
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
    a, b = RNG.uniform(-1, 1, sa), RNG.uniform(-1, 1, sb)
    ref = np.cross(*np.broadcast_arrays(a, b), axis=dim)  # dim of the broadcast shape
    assert_close(E.linalg.cross(t(a), t(b), dim=dim), ref, E.float64)


def test_cross_needs_length_3():
    with pytest.raises(E.ShapeError, match="inputs dimension -1 must have length 3. Got 2 and 2"):
        E.linalg.cross(E.ones(2), E.ones(2))


def test_top_level_spellings():
    a = RNG.uniform(-1, 1, (3, 3)) + 3 * np.eye(3)
    a[0] *= -1
    assert_close(E.det(t(a)), np.linalg.det(a), E.float64)
    assert_close(t(a).inverse(), np.linalg.inv(a), E.float64)
    assert_close(E.slogdet(t(a))[1], np.linalg.slogdet(a)[1], E.float64)
    assert math.isnan(float(E.logdet(t(a))))  # a negative determinant
    assert_close(E.logdet(t(a @ a.T)), np.log(np.linalg.det(a @ a.T)), E.float64)


def test_det_gradient_is_det_times_inverse_transpose():
    a = RNG.uniform(-1, 1, (3, 3)) + 3 * np.eye(3)
    x = E.tensor(a, requires_grad=True)
    E.linalg.det(x).backward()
    assert_close(x.grad, np.linalg.det(a) * np.linalg.inv(a).T, E.float64)


def test_solve_gradients_closed_form():
    a, b = RNG.uniform(-1, 1, (3, 3)) + 3 * np.eye(3), RNG.uniform(-1, 1, (3, 2))
    g = RNG.uniform(-1, 1, (3, 2))
    ta, tb = E.tensor(a, requires_grad=True), E.tensor(b, requires_grad=True)
    E.linalg.solve(ta, tb).backward(E.tensor(g))
    gb = np.linalg.solve(a.T, g)
    assert_close(tb.grad, gb, E.float64)
    assert_close(ta.grad, -gb @ np.linalg.solve(a, b).T, E.float64)
