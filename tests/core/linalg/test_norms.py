"""Norms and the condition number (ember/linalg/norms.py) against numpy float64."""
import math

import numpy as np
import pytest
from core.linalg.references import TOL, t, uniform, well_conditioned
from helpers import FLOAT_DTYPES, assert_close

import ember as E
from ember.autograd import gradcheck, gradgradcheck

A3 = uniform((2, 3, 4))


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


# ==== cond ======================================================================================

@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, math.inf, -math.inf])
def test_cond_matches_numpy(dtype, p):
    a = well_conditioned((2, 3, 3), seed=1)
    assert_close(E.linalg.cond(t(a, dtype), p), np.linalg.cond(a, p), dtype, **TOL[dtype])


def test_cond_of_rectangular_and_singular_matrices():
    a = uniform((4, 2), seed=2)
    assert_close(E.linalg.cond(t(a)), np.linalg.cond(a), E.float64)
    singular = np.stack([np.eye(2), [[1.0, 2.0], [2.0, 4.0]]])
    assert E.linalg.cond(t(singular), 1).tolist() == [1.0, math.inf]
    assert E.linalg.cond(t(singular), "fro")[1].item() == math.inf


def test_cond_errors():
    with pytest.raises(ValueError, match="invalid norm type: 3"):
        E.linalg.cond(E.eye(2), 3)
    with pytest.raises(E.ShapeError, match="square"):
        E.linalg.cond(E.ones(2, 3), "fro")
    with pytest.raises(E.DtypeError, match="floating point"):
        E.linalg.cond(E.ones(2, 2, dtype=E.int64))


@pytest.mark.parametrize("p", [None, -2, "fro", 1])
def test_cond_gradients(p):
    a = t(well_conditioned((3, 3), seed=3), requires_grad=True)
    assert gradcheck(lambda x: E.linalg.cond(x, p), (a,))
    assert gradgradcheck(lambda x: E.linalg.cond(x, p), (a,))
