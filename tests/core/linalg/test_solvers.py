"""solve_triangular, lu_solve, solve_ex, inv_ex, lstsq, tensorinv and tensorsolve against
numpy float64 references; their gradients (gradcheck, gradgradcheck, closed forms)."""
import math

import numpy as np
import pytest
from core.linalg.references import TOL, substitute, t, uniform, well_conditioned
from helpers import FLOAT_DTYPES, assert_close
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
from ember.autograd import gradcheck, gradgradcheck

# ==== solve_triangular ==========================================================================


def _tri_reference(a, b, upper, left, unit):
    a = np.triu(a) if upper else np.tril(a)
    if unit:
        a = a - np.diag(np.diag(a)) + np.eye(a.shape[-1])
    if left:
        return substitute(a, b, upper, unit)
    return substitute(a.T, b.T, not upper, unit).T


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular_reads_one_triangle(dtype, upper, left, unit):
    a = well_conditioned((4, 4))  # both triangles filled: the other one must be ignored
    b = uniform((4, 2) if left else (2, 4), seed=1)
    got = E.linalg.solve_triangular(t(a, dtype), t(b, dtype), upper=upper, left=left,
                                    unitriangular=unit)
    assert_close(got, _tri_reference(a, b, upper, left, unit), dtype, **TOL[dtype])


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([((3, 3), (3, 2)), ((2, 3, 3), (3, 1)), ((3, 3), (4, 3, 2)),
                        ((2, 1, 3, 3), (5, 3, 2)), ((0, 3, 3), (3, 2))]), st.booleans())
def test_solve_triangular_broadcasts_batches(shapes, upper):
    sa, sb = shapes
    a, b = well_conditioned(sa, 2), uniform(sb, 3)
    x = E.linalg.solve_triangular(t(a), t(b), upper=upper)
    tri = np.triu(a) if upper else np.tril(a)
    assert_close(t(tri) @ x, np.broadcast_to(b, tuple(x.shape)), E.float64, rtol=1e-10,
                 atol=1e-12)


def test_solve_triangular_zero_diagonal_gives_inf_not_an_error():
    x = E.linalg.solve_triangular(E.zeros(2, 2, dtype=E.float64),
                                  E.ones(2, 1, dtype=E.float64), upper=True)
    assert not np.isfinite(x.tolist()).any()


def test_solve_triangular_errors():
    a = t(well_conditioned((3, 3)))
    with pytest.raises(E.ShapeError, match=r"Incompatible shapes .* \(3x3 and 2x3\)"):
        E.linalg.solve_triangular(a, t(np.ones((2, 3))), upper=True)
    with pytest.raises(E.ShapeError, match="at least 2 dimensions"):
        E.linalg.solve_triangular(a, t(np.ones(3)), upper=True)
    with pytest.raises(E.ShapeError, match="square"):
        E.linalg.solve_triangular(a[:, :2], t(np.ones((3, 1))), upper=True)
    with pytest.raises(E.DtypeError, match="same dtype"):
        E.linalg.solve_triangular(a, E.ones(3, 1), upper=True)
    with pytest.raises(TypeError, match="upper"):
        E.linalg.solve_triangular(a, t(np.ones((3, 1))))


@pytest.mark.parametrize("upper, left, unit", [(True, True, False), (False, False, True),
                                                (False, True, False)])
def test_solve_triangular_gradients(upper, left, unit):
    a = t(well_conditioned((3, 3), 4), requires_grad=True)
    b = t(uniform((3, 2) if left else (2, 3), 5), requires_grad=True)
    fn = lambda x, y: E.linalg.solve_triangular(x, y, upper=upper, left=left,  # noqa: E731
                                                unitriangular=unit)
    assert gradcheck(fn, (a, b))
    assert gradgradcheck(fn, (a, b))
    E.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit).sum().backward()
    g = np.asarray(a.grad.tolist())  # nothing flows to the entries that are not read
    outside = np.tril(g, -1) if upper else np.triu(g, 1)
    assert not outside.any() and (not unit or not np.diag(g).any())


# ==== lu_solve ==================================================================================

@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_matches_numpy(dtype, left, adjoint):
    a = well_conditioned((2, 3, 3), 6)
    b = uniform((2, 3, 4) if left else (2, 4, 3), 7)
    LU, piv = E.linalg.lu_factor(t(a, dtype))
    op = np.swapaxes(a, -1, -2) if adjoint else a
    ref = np.linalg.solve(op, b) if left else \
        np.swapaxes(np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    got = E.linalg.lu_solve(LU, piv, t(b, dtype), left=left, adjoint=adjoint)
    assert_close(got, ref, dtype, **TOL[dtype])


def test_lu_solve_broadcasts_and_checks():
    a = well_conditioned((3, 3), 8)
    LU, piv = E.linalg.lu_factor(t(a))
    b = uniform((4, 2, 3, 1), 9)
    assert_close(E.linalg.lu_solve(LU, piv, t(b)), np.linalg.solve(a, b), E.float64)
    with pytest.raises(E.ShapeError, match=r"equation AX = B \(3x3 and 2x3\)"):
        E.linalg.lu_solve(LU, piv, t(np.ones((2, 3))))
    with pytest.raises(E.ShapeError, match=r"equation XA = B"):
        E.linalg.lu_solve(LU, piv, t(np.ones((3, 1))), left=False)
    with pytest.raises(E.DtypeError, match="int32"):
        E.linalg.lu_solve(LU, piv.long(), t(np.ones((3, 1))))
    with pytest.raises(E.ShapeError, match="square"):
        E.linalg.lu_solve(LU[:2], piv[:2], t(np.ones((2, 1))))


def test_lu_solve_gradients():
    a = well_conditioned((3, 3), 10)
    LU, piv = E.linalg.lu_factor(t(a))
    lu = t(LU.tolist(), requires_grad=True)
    b = t(uniform((3, 2), 11), requires_grad=True)
    assert gradgradcheck(lambda x, y: E.linalg.lu_solve(x, piv, y, adjoint=True), (lu, b))
    # through lu_factor: the same gradient as solve's, gB = A^-T g, gA = -gB X^T
    x, y = t(a, requires_grad=True), t(uniform((3, 2), 11), requires_grad=True)
    g = uniform((3, 2), 12)
    E.linalg.lu_solve(*E.linalg.lu_factor(x), y).backward(t(g))
    gb = np.linalg.solve(a.T, g)
    assert_close(y.grad, gb, rtol=1e-10)
    assert_close(x.grad, -gb @ np.linalg.solve(a, np.asarray(y.tolist())).T, rtol=1e-10)


# ==== solve_ex, inv_ex ==========================================================================

def _singular_batch():
    s = np.zeros((2, 3, 3))
    s[0] = well_conditioned((3, 3), 13)
    return s


def test_solve_ex_and_inv_ex_report_singular_matrices():
    s, b = _singular_batch(), uniform((2, 3, 2), 14)
    X, info = E.linalg.solve_ex(t(s), t(b))
    assert info.dtype is E.int32 and info.tolist() == [0, 1]
    assert_close(X[0], np.linalg.solve(s[0], b[0]))
    assert not np.isfinite(X[1].tolist()).all()
    inv, info = E.linalg.inv_ex(t(s))
    assert info.tolist() == [0, 1]
    assert_close(inv[0], np.linalg.inv(s[0]))
    with pytest.raises(E.linalg.LinAlgError, match=r"linalg.solve_ex: \(Batch element 1\)"):
        E.linalg.solve_ex(t(s), t(b), check_errors=True)
    with pytest.raises(E.linalg.LinAlgError, match=r"linalg.inv_ex: \(Batch element 1\)"):
        E.linalg.inv_ex(t(s), check_errors=True)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_solve_ex_and_inv_ex_on_invertible_input(dtype):
    a, b = well_conditioned((2, 3, 3), 15), uniform((3,), 16)
    X, info = E.linalg.solve_ex(t(a, dtype), t(b, dtype))
    assert_close(X, np.linalg.solve(a, b[:, None])[..., 0], dtype, **TOL[dtype])
    assert info.tolist() == [0, 0]
    assert_close(E.linalg.inv_ex(t(a, dtype)).inverse, np.linalg.inv(a), dtype, **TOL[dtype])
    X, info = E.linalg.solve_ex(t(_singular_batch()), t(b))  # vector rhs on the LU path
    assert tuple(X.shape) == (2, 3) and info.tolist() == [0, 1]


def test_solve_ex_and_inv_ex_gradients():
    a = t(well_conditioned((3, 3), 17), requires_grad=True)
    b = t(uniform((3, 2), 18), requires_grad=True)
    assert gradgradcheck(lambda x, y: E.linalg.solve_ex(x, y, left=True)[0], (a, b))
    assert gradgradcheck(lambda x: E.linalg.inv_ex(x)[0], (a,))


def test_solve_gradients_closed_form():
    a, b = well_conditioned((3, 3), 19), uniform((3, 2), 20)
    g = uniform((3, 2), 21)
    ta, tb = t(a, requires_grad=True), t(b, requires_grad=True)
    E.linalg.solve(ta, tb).backward(t(g))
    gb = np.linalg.solve(a.T, g)
    assert_close(tb.grad, gb, E.float64)
    assert_close(ta.grad, -gb @ np.linalg.solve(a, b).T, E.float64)


# ==== lstsq =====================================================================================

@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("sa, sb", [((5, 3), (5, 2)), ((3, 5), (3, 2)), ((4, 4), (4, 1)),
                                     ((2, 6, 3), (2, 6, 2)), ((1, 6, 3), (2, 6, 2)),
                                     ((5, 3), (5,)), ((2, 5, 3), (2, 5))])
def test_lstsq_solution_matches_numpy(dtype, sa, sb):
    a, b = uniform(sa, 22), uniform(sb, 23)
    vector = len(sb) == len(sa) - 1
    bm = b[..., None] if vector else b
    batch = np.broadcast_shapes(sa[:-2], bm.shape[:-2])
    ref = np.stack([np.linalg.lstsq(x, y, rcond=None)[0] for x, y in zip(
        np.broadcast_to(a, batch + sa[-2:]).reshape((-1,) + sa[-2:]),
        np.broadcast_to(bm, batch + bm.shape[-2:]).reshape((-1,) + bm.shape[-2:]))])
    ref = ref.reshape(batch + ref.shape[-2:])
    got = E.linalg.lstsq(t(a, dtype), t(b, dtype))
    assert_close(got.solution, ref[..., 0] if vector else ref, dtype, **TOL[dtype])
    assert got.rank.dtype is E.int64 and tuple(got.rank.shape) == batch
    assert got.residuals.numel() == 0 and got.singular_values.numel() == 0


@pytest.mark.parametrize("driver", ["gelsd", "gelss", "gels"])
def test_lstsq_drivers_fill_the_outputs_as_pytorch(driver):
    a, b = uniform((2, 5, 3), 24), uniform((2, 5, 2), 25)
    r = E.linalg.lstsq(t(a), t(b), driver=driver)
    x = np.asarray(r.solution.tolist())
    assert_close(r.residuals, ((a @ x - b) ** 2).sum(-2), E.float64, rtol=1e-10)
    if driver == "gels":
        assert r.rank.numel() == 0 and r.singular_values.numel() == 0
    else:
        assert r.rank.tolist() == [3, 3]
        assert_close(r.singular_values, np.linalg.svd(a, compute_uv=False), E.float64)


def test_lstsq_rank_deficient_gives_the_minimum_norm_solution():
    a = uniform((5, 3), 26)
    a[:, 2] = a[:, 1]
    b = uniform((5, 2), 27)
    r = E.linalg.lstsq(t(a), t(b), driver="gelsd")
    sol, _, rank, _ = np.linalg.lstsq(a, b, rcond=None)
    assert_close(r.solution, sol, E.float64, rtol=1e-9, atol=1e-12)
    assert r.rank.item() == rank == 2 and r.residuals.numel() == 0  # not full rank
    assert E.linalg.lstsq(t(a), t(b), rcond=0.9).rank.item() == 1


@pytest.mark.parametrize("driver", [None, "gelsy", "gelsd"])
@pytest.mark.parametrize("dtype", [E.float32, E.float64])
def test_lstsq_rank_deficient_batch_every_driver_gives_the_minimum_norm_solution(driver, dtype):
    # driver None/gelsy run LAPACK's gelsy per matrix when scipy is installed, the SVD
    # otherwise; every path must give the minimum-norm solution and the rank
    a = uniform((3, 6, 4), 28)
    a[1, :, 3] = a[1, :, 0]  # the second matrix has rank 3
    b = uniform((3, 6, 2), 29)
    r = E.linalg.lstsq(t(a, dtype), t(b, dtype), driver=driver)
    ref = np.stack([np.linalg.lstsq(x, y, rcond=None)[0] for x, y in zip(a, b)])
    assert_close(r.solution, ref, dtype, **TOL[dtype])
    assert r.rank.tolist() == [4, 3, 4]


def test_lstsq_default_driver_uses_lapack_gelsy_when_scipy_is_installed(monkeypatch):
    from ember.backends.kernels.factorizations import lapack
    if lapack.scipy_lapack() is None:
        pytest.skip("scipy is not installed: the SVD path is the only one")
    calls = []
    real = lapack.gelsy
    monkeypatch.setattr(lapack, "gelsy", lambda *a: calls.append(1) or real(*a))
    a, b = uniform((2, 5, 3), 30), uniform((2, 5, 2), 31)
    r = E.linalg.lstsq(t(a), t(b))
    assert calls and r.residuals.numel() == 0 and r.singular_values.numel() == 0
    ref = np.stack([np.linalg.lstsq(x, y, rcond=None)[0] for x, y in zip(a, b)])
    assert_close(r.solution, ref, E.float64, rtol=1e-9)


def test_lstsq_errors():
    a = t(uniform((5, 3)))
    with pytest.raises(ValueError, match="driver"):
        E.linalg.lstsq(a, t(uniform((5, 2))), driver="foo")
    with pytest.raises(E.ShapeError, match=r"size\(-2\) should match"):
        E.linalg.lstsq(a, t(uniform((4, 2))))
    with pytest.raises(E.ShapeError, match="greater or equal"):
        E.linalg.lstsq(a, t(uniform((2, 5, 2))))
    with pytest.raises(E.DtypeError, match="same dtype"):
        E.linalg.lstsq(a, E.ones(5, 2))


@pytest.mark.parametrize("sa, sb, driver", [((4, 2), (4, 2), None), ((2, 3), (2,), None),
                                            ((4, 2), (4, 1), "gelsd")])
def test_lstsq_gradients(sa, sb, driver):
    a, b = t(uniform(sa, 28), requires_grad=True), t(uniform(sb, 29), requires_grad=True)
    fn = lambda x, y: E.linalg.lstsq(x, y, driver=driver)[:2]  # noqa: E731
    assert gradcheck(fn, (a, b))
    assert gradgradcheck(fn, (a, b))


def test_lstsq_gradient_of_a_square_system_is_solves():
    a, b = well_conditioned((3, 3), 30), uniform((3, 2), 31)
    g = uniform((3, 2), 32)
    ta, tb = t(a, requires_grad=True), t(b, requires_grad=True)
    E.linalg.lstsq(ta, tb).solution.backward(t(g))
    gb = np.linalg.solve(a.T, g)
    assert_close(tb.grad, gb, rtol=1e-9)
    assert_close(ta.grad, -gb @ np.linalg.solve(a, b).T, rtol=1e-9, atol=1e-12)


# ==== tensorinv, tensorsolve ====================================================================

def test_tensorinv_matches_numpy():
    a = uniform((4, 6, 8, 3), 33)
    assert_close(E.linalg.tensorinv(t(a)), np.linalg.tensorinv(a, ind=2), E.float64,
                 rtol=1e-9)
    b = well_conditioned((6, 6), 34).reshape(6, 2, 3)
    assert_close(E.linalg.tensorinv(t(b), ind=1), np.linalg.tensorinv(b, ind=1), E.float64)


def test_tensorinv_errors():
    with pytest.raises(ValueError, match="strictly positive"):
        E.linalg.tensorinv(E.ones(2, 2), ind=0)
    with pytest.raises(E.ShapeError, match="144 != 4"):
        E.linalg.tensorinv(E.ones(4, 6, 8, 3), ind=1)
    with pytest.raises(E.linalg.LinAlgError, match="singular"):
        E.linalg.tensorinv(E.zeros(2, 2), ind=1)


@pytest.mark.parametrize("sa, sb, dims", [((6, 2, 3), (6,), None), ((2, 3, 6), (2, 3), None),
                                          ((3, 2, 3, 2), (2, 3), (0,)),
                                          ((2, 2, 3, 3), (2, 3), (0, 2))])
def test_tensorsolve_matches_numpy(sa, sb, dims):
    n = math.prod(sb)
    nd, k = len(sa), len(dims or ())
    rest = sa[len(sb):] if dims is None else sb  # the shape of the solution
    moved = (uniform((n, n), 35) + 3 * np.eye(n)).reshape(sb + rest)  # dims at the end
    a = moved if dims is None else np.moveaxis(moved, list(range(nd - k, nd)), list(dims))
    assert a.shape == sa
    b = uniform(sb, 36)
    assert_close(E.linalg.tensorsolve(t(a), t(b), dims), np.linalg.tensorsolve(a, b, dims),
                 E.float64, rtol=1e-9, atol=1e-12)


def test_tensorsolve_errors_and_gradient():
    with pytest.raises(E.ShapeError, match="requirement"):
        E.linalg.tensorsolve(E.ones(2, 3, 5), E.ones(2, 3))
    a = t(well_conditioned((4, 4), 37).reshape(2, 2, 4), requires_grad=True)
    b = t(uniform((2, 2), 38), requires_grad=True)
    assert gradgradcheck(E.linalg.tensorsolve, (a, b))
