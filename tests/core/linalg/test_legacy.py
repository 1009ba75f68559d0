"""torch's top-level spellings (ember/linalg/legacy.py): det, logdet, slogdet, inverse,
svd (with V), qr, cholesky, cholesky_solve, cholesky_inverse, triangular_solve,
matrix_exp, lu_solve, orgqr; against numpy float64."""
import math

import numpy as np
import pytest
from core.linalg.references import TOL, t, uniform, well_conditioned
from helpers import FLOAT_DTYPES, assert_close

import ember as E
from ember.autograd import gradcheck, gradgradcheck


def test_top_level_spellings():
    a = well_conditioned((3, 3))
    a[0] *= -1
    assert_close(E.det(t(a)), np.linalg.det(a), E.float64)
    assert_close(t(a).inverse(), np.linalg.inv(a), E.float64)
    assert_close(E.slogdet(t(a))[1], np.linalg.slogdet(a)[1], E.float64)
    assert math.isnan(float(E.logdet(t(a))))  # a negative determinant
    assert_close(E.logdet(t(a @ a.T)), np.log(np.linalg.det(a @ a.T)), E.float64)
    assert_close(t(a).matrix_exp(), E.linalg.matrix_exp(t(a)).tolist(), E.float64)


def test_det_gradient_is_det_times_inverse_transpose():
    a = well_conditioned((3, 3))
    x = t(a, requires_grad=True)
    E.linalg.det(x).backward()
    assert_close(x.grad, np.linalg.det(a) * np.linalg.inv(a).T, E.float64)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
@pytest.mark.parametrize("some", [True, False])
def test_svd_returns_v(shape, some):
    a = uniform(shape)
    U, S, V = E.svd(t(a), some=some)
    m, n = shape[-2:]
    k = min(m, n)
    assert tuple(U.shape[-2:]) == ((m, k) if some else (m, m))
    assert tuple(V.shape[-2:]) == ((n, k) if some else (n, n))
    assert_close(S, np.linalg.svd(a, compute_uv=False))
    assert_close((U[..., :k] * S.unsqueeze(-2)) @ V[..., :k].mT, a, rtol=1e-12, atol=1e-13)
    assert_close(t(a).svd(some=some).S, S.tolist())


def test_svd_without_uv_gives_zero_filled_factors():
    U, S, V = E.svd(t(uniform((2, 4, 3))), compute_uv=False)
    assert tuple(U.shape) == (2, 4, 4) and tuple(V.shape) == (2, 3, 3)
    assert not U.abs().sum().item() and not V.abs().sum().item()


def test_qr_and_cholesky_spellings():
    a = uniform((4, 3))
    Q, R = E.qr(t(a))
    assert tuple(Q.shape) == (4, 3) and tuple(E.qr(t(a), some=False).Q.shape) == (4, 4)
    assert_close(Q @ R, a, rtol=1e-12, atol=1e-13)
    spd = a.T @ a + np.eye(3)
    assert_close(t(spd).cholesky(), np.linalg.cholesky(spd))
    assert_close(E.cholesky(t(spd), upper=True), np.linalg.cholesky(spd).T)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse(dtype, upper):
    x = uniform((2, 3, 3), 1)
    spd = x @ np.swapaxes(x, -1, -2) + np.eye(3)
    L = np.linalg.cholesky(spd)
    factor = np.swapaxes(L, -1, -2) if upper else L
    b = uniform((3, 2), 2)  # broadcasts over the factor's batch
    assert_close(E.cholesky_solve(t(b, dtype), t(factor, dtype), upper), np.linalg.solve(spd, b),
                 dtype, **TOL[dtype])
    assert_close(t(factor, dtype).cholesky_inverse(upper), np.linalg.inv(spd), dtype,
                 **TOL[dtype])


def test_cholesky_solve_errors():
    L = t(np.eye(3))
    with pytest.raises(E.ShapeError, match="at least 2 dimensions"):
        E.cholesky_solve(t(np.ones(3)), L)
    with pytest.raises(E.ShapeError, match="each A matrix is 3 by 3 but each b matrix is 2 by 2"):
        E.cholesky_solve(t(np.ones((2, 2))), L)
    with pytest.raises(E.DtypeError, match="same dtype"):
        E.cholesky_solve(E.ones(3, 1), L)
    with pytest.raises(E.ShapeError, match="at least 2 dimensions"):
        E.cholesky_inverse(t(np.ones(3)))


def test_cholesky_solve_gradient_stays_in_the_factor_triangle():
    # PyTorch's formula also sends gradient to the other triangle, which the forward does
    # not read; ember's is the derivative of the function computed (see the docstring)
    x = uniform((3, 3), 3)
    L = t(np.linalg.cholesky(x @ x.T + np.eye(3)), requires_grad=True)
    b = t(uniform((3, 2), 4), requires_grad=True)
    assert gradgradcheck(E.cholesky_solve, (b, L))
    E.cholesky_solve(b, L).sum().backward()
    assert not np.triu(np.asarray(L.grad.tolist()), 1).any()
    assert gradcheck(lambda f: E.cholesky_inverse(f, True), (t(np.asarray(L.tolist()).T,
                                                                requires_grad=True),))


@pytest.mark.parametrize("upper, transpose", [(True, False), (False, False), (True, True),
                                               (False, True)])
def test_triangular_solve(upper, transpose):
    a, b = well_conditioned((2, 3, 3), 5), uniform((3, 2), 6)
    tri = np.triu(a) if upper else np.tril(a)
    op = np.swapaxes(tri, -1, -2) if transpose else tri
    X, coef = E.triangular_solve(t(b), t(a), upper=upper, transpose=transpose)
    assert_close(X, np.linalg.solve(op, b))
    assert_close(coef, a)
    assert_close(t(b).triangular_solve(t(a), upper, transpose).solution, X.tolist())
    with pytest.raises(E.ShapeError, match="Expected b to have at least 2 dimensions"):
        E.triangular_solve(t(b[:, 0]), t(a))


def test_lu_solve_and_orgqr_spellings():
    a, b = well_conditioned((3, 3), 7), uniform((3, 2), 8)
    LU, piv = E.linalg.lu_factor(t(a))
    assert_close(E.lu_solve(t(b), LU, piv), np.linalg.solve(a, b))
    assert_close(t(b).lu_solve(LU, piv), np.linalg.solve(a, b))
    h, tau = np.linalg.qr(uniform((4, 3), 9), mode="raw")
    assert_close(t(h.T).orgqr(t(tau)), np.linalg.qr(uniform((4, 3), 9))[0])
