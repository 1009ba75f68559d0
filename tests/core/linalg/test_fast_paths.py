"""The fast paths of issue 30 in ember.linalg against float64 references and against the
paths they short-cut: LAPACK getrf / laswp / trtrs (factorizations/lapack.py) against the
batched column loops, triangular solves by getrs, the compact WY householder_product,
values-only svdvals / eigvalsh, and the fused linalg.cross."""
import numpy as np
import pytest
from core.linalg.references import t, uniform, well_conditioned
from helpers import assert_close

import ember as E
from ember.autograd import gradcheck, gradgradcheck
from ember.backends.kernels.factorizations import lapack

F32_EPS = float(np.finfo(np.float32).eps)
needs_scipy = pytest.mark.skipif(lapack.scipy_lapack() is None, reason="scipy not installed")


def _ulps_of_max(got, ref, eps=F32_EPS):
    return float(np.abs(np.asarray(got, np.float64) - ref).max() / np.abs(ref).max() / eps)


# ==== LU: LAPACK per matrix against the batched column loop =====================================

@needs_scipy
@pytest.mark.parametrize("dtype", [E.float32, E.float64])
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 5), (2, 3, 3), (3, 6, 6)])
def test_getrf_matches_the_column_loop(monkeypatch, dtype, shape):
    a = uniform(shape, seed=3)
    a[..., 1, :] = 0 if len(shape) == 3 else a[..., 1, :]  # a singular member: info > 0
    fast = E.linalg.lu_factor_ex(t(a, dtype))
    monkeypatch.setattr(lapack, "use_lapack", lambda *args: False)
    slow = E.linalg.lu_factor_ex(t(a, dtype))
    assert fast.pivots.tolist() == slow.pivots.tolist()
    assert fast.info.tolist() == slow.info.tolist()
    assert fast.LU.dtype is dtype and fast.pivots.dtype is E.int32
    assert_close(fast.LU, slow.LU.numpy(), dtype, rtol=1e-5 if dtype is E.float32 else 1e-12,
                 atol=1e-6 if dtype is E.float32 else 1e-13)
    P, L, U = E.lu_unpack(fast.LU, fast.pivots)
    assert_close(P @ L @ U, a, dtype, rtol=1e-5, atol=1e-5)


@needs_scipy
def test_getrf_leaves_a_fortran_ordered_input_alone():
    a = np.asfortranarray(well_conditioned((5, 5), 1))
    A = E.tensor(a).mT.mT  # same values; the kernel must copy, not factor in place
    before = A.numpy().copy()
    E.linalg.lu_factor(A)
    assert (A.numpy() == before).all()


# ==== solve_triangular: trtrs / getrs against substitution ======================================

@pytest.mark.parametrize("dtype", [E.float32, E.float64])
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_solve_triangular_matches_float64_substitution(dtype, upper, left, unit):
    n = 6
    a = uniform((3, n, n), seed=5) + 3 * np.eye(n)
    b = uniform((2, 1, n, 4) if left else (2, 1, 4, n), seed=6)
    tri = np.triu(a, 1 if unit else 0) if upper else np.tril(a, -1 if unit else 0)
    tri = tri + np.eye(n) if unit else tri
    ref = np.linalg.solve(tri, b) if left else \
        np.swapaxes(np.linalg.solve(np.swapaxes(tri, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    A, B = t(a, dtype), t(b, dtype)
    a_before, b_before = A.numpy().copy(), B.numpy().copy()
    got = E.linalg.solve_triangular(A, B, upper=upper, left=left, unitriangular=unit)
    assert got.dtype is dtype and tuple(got.shape) == ref.shape
    # NOTE: float32 within 4 ulp of max |X| for these well-conditioned triangles
    tol = 4 * F32_EPS if dtype is E.float32 else 1e-13
    assert _ulps_of_max(got.numpy(), ref, 1.0) <= tol
    assert (A.numpy() == a_before).all() and (B.numpy() == b_before).all()


@pytest.mark.parametrize("dtype", [E.float32, E.float64])
def test_solve_triangular_zero_diagonal_gives_inf_not_an_error(dtype):
    a = np.triu(uniform((4, 4), seed=7)) + 2 * np.eye(4)
    a[2, 2] = 0
    x = E.linalg.solve_triangular(t(a, dtype), t(np.ones((4, 2)), dtype), upper=True)
    got = x.numpy()
    assert np.isfinite(got[3]).all() and not np.isfinite(got[:3]).all()


# ==== householder_product: compact WY ===========================================================

def _householder_reference(a, tau):
    m, n = a.shape[-2:]
    out = np.empty(a.shape)
    for idx in np.ndindex(a.shape[:-2]):
        q = np.eye(m)
        for i in range(tau.shape[-1]):
            v = np.concatenate([np.zeros(i), [1.0], a[idx][i + 1:, i]])
            q = q @ (np.eye(m) - tau[idx][i] * np.outer(v, v))
        out[idx] = q[:, :n]
    return out


@pytest.mark.parametrize("shape, k", [((2, 64, 64), 64), ((3, 7, 4), 3), ((5, 5), 5)])
def test_householder_product_float32_within_16_ulp_of_max(shape, k):
    a = uniform(shape, seed=11, lo=-0.5, hi=0.5)
    tau = uniform(shape[:-2] + (k,), seed=12, lo=0.0, hi=1.0)
    tau[..., 1] = 0.0  # H_i = I
    ref = _householder_reference(a, tau)
    got = E.linalg.householder_product(t(a, E.float32), t(tau, E.float32))
    assert got.dtype is E.float32
    assert _ulps_of_max(got.numpy(), ref) <= 16
    g64 = E.linalg.householder_product(t(a), t(tau))
    assert_close(g64, ref, E.float64, rtol=1e-12, atol=1e-12)


def test_householder_product_grad_path_matches_the_no_grad_path():
    a, tau = uniform((2, 6, 4), seed=13), uniform((2, 4), seed=14, lo=0.0, hi=1.5)
    A, T = t(a, requires_grad=True), t(tau, requires_grad=True)
    with_graph = E.linalg.householder_product(A, T)
    with E.no_grad():
        plain = E.linalg.householder_product(A, T)
    assert with_graph.grad_fn is not None and plain.grad_fn is None
    assert_close(with_graph.detach(), plain.numpy(), E.float64, rtol=1e-13, atol=1e-14)


# ==== values-only svdvals / eigvalsh ============================================================

@pytest.mark.parametrize("dtype", [E.float32, E.float64])
def test_values_only_spectra_match_the_vector_path(dtype):
    a = uniform((3, 5, 5), seed=15)
    s = a + np.swapaxes(a, -1, -2)
    A, S = t(a, dtype), t(s, dtype)
    A.requires_grad_(True)
    S.requires_grad_(True)
    with_vectors = E.linalg.svdvals(A), E.linalg.eigvalsh(S)
    with E.no_grad():
        values_only = E.linalg.svdvals(A), E.linalg.eigvalsh(S, UPLO="U")
    for got, ref in zip(values_only, with_vectors):
        assert got.dtype is dtype and got.grad_fn is None
        assert_close(got, ref.detach().numpy(), dtype, rtol=1e-5, atol=1e-5)
    assert_close(values_only[0], np.linalg.svd(a, compute_uv=False), dtype, rtol=1e-5,
                 atol=1e-5)
    assert E.linalg.matrix_rank(A).tolist() == [5, 5, 5]


# ==== linalg.cross: fused =======================================================================

SPECIALS = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 3e38, 1e-38, 1e-45, 1.5, -2.0, 7.0,
                     0.25])


@pytest.mark.parametrize("dtype", [E.float16, E.bfloat16, E.float32, E.float64])
def test_cross_matches_float64_and_the_op_by_op_form(dtype):
    rng = np.random.default_rng(16)
    a, b = rng.standard_normal((50, 3)), rng.standard_normal((50, 3))
    A, B = t(a, dtype), t(b, dtype)
    ref = np.cross(A.double().numpy(), B.double().numpy())
    got = E.linalg.cross(A, B)
    assert got.dtype is dtype
    eps = {E.float16: 2 ** -10, E.bfloat16: 2 ** -7, E.float32: F32_EPS, E.float64: 2 ** -52}
    scale = np.abs(A.double().numpy()).max() * np.abs(B.double().numpy()).max()
    # one rounding of each product and of the difference (two for float16/bfloat16)
    assert np.abs(got.double().numpy() - ref).max() <= 2 * eps[dtype] * scale
    sp = t(SPECIALS.reshape(4, 3), dtype)
    sq = t(np.roll(SPECIALS, 5).reshape(4, 3), dtype)
    want = sp.roll(-1, 1) * sq.roll(-2, 1) - sp.roll(-2, 1) * sq.roll(-1, 1)
    assert np.array_equal(E.linalg.cross(sp, sq).double().numpy(), want.double().numpy(),
                          equal_nan=True)


def test_cross_gradients():
    a = t(uniform((2, 3, 4), seed=17), requires_grad=True)
    b = t(uniform((3, 4), seed=18), requires_grad=True)
    fn = lambda x, y: E.linalg.cross(x, y, dim=-2)  # noqa: E731
    assert gradcheck(fn, (a, b)) and gradgradcheck(fn, (a, b))
