"""lu_factor(_ex), lu, lu_unpack, cholesky_ex and householder_product against numpy float64
references (references.lu_reference, numpy's cholesky and QR)."""
import numpy as np
import pytest
from core.linalg.references import TOL, batched, lu_reference, t, uniform, well_conditioned
from helpers import FLOAT_DTYPES, assert_close
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
from ember.autograd import gradcheck, gradgradcheck

LU_SHAPES = [(3, 3), (4, 2), (2, 5), (2, 3, 3), (2, 1, 4, 3), (0, 2, 2), (3, 0)]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", LU_SHAPES)
def test_lu_factor_ex_matches_the_reference(dtype, shape):
    a = uniform(shape).astype(dtype.numpy)
    P, L, U, piv, info = batched(lu_reference, a.astype(np.float64)) if a.size else \
        (None,) * 5
    LU, pivots, got_info = E.linalg.lu_factor_ex(t(a, dtype))
    k = min(shape[-2:])
    assert tuple(LU.shape) == shape and tuple(pivots.shape) == shape[:-2] + (k,)
    assert pivots.dtype is E.int32 and got_info.dtype is E.int32
    assert tuple(got_info.shape) == shape[:-2]
    if a.size:
        assert pivots.tolist() == piv.tolist() and not np.any(got_info.tolist())
        packed = np.tril(L, -1)[..., :, :k]
        assert_close(LU[..., :, :k].tril(-1), packed, dtype, **TOL[dtype])
        assert_close(LU[..., :k, :].triu(), U, dtype, **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", LU_SHAPES)
def test_lu_reconstructs_a(dtype, shape):
    a = uniform(shape, seed=1)
    P, L, U = E.linalg.lu(t(a, dtype))
    m, n = shape[-2:]
    k = min(m, n)
    assert (tuple(P.shape), tuple(L.shape), tuple(U.shape)) == \
        (shape[:-2] + (m, m), shape[:-2] + (m, k), shape[:-2] + (k, n))
    assert_close(P @ L @ U, a, dtype, **TOL[dtype])
    assert (L.abs() <= 1 + 1e-6).all().item()  # partial pivoting bounds the multipliers


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=2), st.integers(1, 5), st.integers(1, 5),
       st.booleans())
def test_lu_round_trip_for_any_shape(batch, m, n, pivot):
    a = uniform(tuple(batch) + (m, n), seed=m * 7 + n)
    if not pivot:
        a = a + 4 * np.eye(m, n)  # no pivoting: keep the leading minors away from zero
    P, L, U = E.linalg.lu(t(a), pivot=pivot)
    assert_close(P @ L @ U, a, E.float64, rtol=1e-10, atol=1e-12)
    if not pivot:
        assert_close(P, np.broadcast_to(np.eye(m), P.shape), E.float64)


def test_lu_factor_raises_for_singular_but_lu_factor_ex_reports():
    s = np.stack([np.eye(3), [[1.0, 2, 3], [2, 4, 6], [1, 1, 1]]])
    with pytest.raises(E.linalg.LinAlgError,
                       match=r"linalg.lu_factor: \(Batch element 1\): U\[3,3\] is zero"):
        E.linalg.lu_factor(t(s))
    LU, piv, info = E.linalg.lu_factor_ex(t(s))
    assert info.tolist() == [0, 3]
    assert info.tolist() == [lu_reference(m)[4] for m in s]
    with pytest.raises(E.linalg.LinAlgError, match=r"lu_factor_ex: U\[1,1\] is zero"):
        E.linalg.lu_factor_ex(E.zeros(2, 2, dtype=E.float64), check_errors=True)
    LU, piv, info = E.linalg.lu_factor_ex(E.zeros(2, 2, dtype=E.float64))
    assert LU.tolist() == [[0, 0], [0, 0]] and piv.tolist() == [1, 2] and info.item() == 1


def test_lu_factor_errors():
    with pytest.raises(E.ShapeError, match="at least 2 dimensions"):
        E.linalg.lu_factor(E.ones(3))
    with pytest.raises(E.DtypeError, match="floating point"):
        E.linalg.lu_factor(E.ones(3, 3, dtype=E.int64))
    with pytest.raises(NotImplementedError):
        E.linalg.lu_factor(E.ones(3, 3, dtype=E.float16))


def test_lu_unpack_matches_the_reference_and_its_flags():
    a = uniform((2, 4, 3), seed=2)
    LU, piv = E.linalg.lu_factor(t(a))
    P, L, U = E.lu_unpack(LU, piv)
    rP, rL, rU, _, _ = batched(lu_reference, a)
    assert_close(P, rP, E.float64)
    assert_close(L, rL, E.float64, rtol=1e-12, atol=1e-14)
    assert_close(U, rU, E.float64, rtol=1e-12, atol=1e-14)
    P2, L2, U2 = E.lu_unpack(LU, piv, unpack_data=False)
    assert L2.numel() == 0 and U2.numel() == 0 and P2.tolist() == P.tolist()
    assert E.lu_unpack(LU, piv, unpack_pivots=False).P.numel() == 0


def test_lu_unpack_errors():
    LU, piv = E.linalg.lu_factor(t(well_conditioned((2, 3, 3))))
    with pytest.raises(E.DtypeError, match="int32"):
        E.lu_unpack(LU, piv.long())
    with pytest.raises(IndexError, match=r"\[1, 3\]"):
        E.lu_unpack(LU, piv * 0)
    with pytest.raises(E.ShapeError, match="batch dims"):
        E.lu_unpack(LU, piv[0])
    with pytest.raises(E.ShapeError, match="Number of pivots"):
        E.lu_unpack(LU, piv[:, :2])


def test_torch_lu_spelling():
    a = well_conditioned((2, 3, 3))
    LU, piv = E.lu(t(a))
    LU2, piv2, info = E.lu(t(a), get_infos=True)
    assert LU.tolist() == LU2.tolist() and info.tolist() == [0, 0]
    with pytest.raises(E.linalg.LinAlgError, match=r"lu: U\[1,1\] is zero"):
        E.lu(E.zeros(2, 2, dtype=E.float64))


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 2, 3)])
def test_lu_gradients(shape):
    a = t(well_conditioned(shape, seed=4), requires_grad=True)
    assert gradcheck(lambda x: E.linalg.lu(x)[1:], (a,))
    assert gradgradcheck(lambda x: E.linalg.lu_factor_ex(x)[0], (a,))


def test_lu_gradient_closed_form_for_a_square_matrix():
    # A = L U without pivoting: dL = L tril(phi, -1), dU = triu(phi) U with
    # phi = L^-1 dA U^-1, so gA = L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T
    a = np.array([[4.0, 1.0], [2.0, 3.0]])
    gL, gU = np.array([[0.0, 0.0], [1.5, 0.0]]), np.array([[0.5, -1.0], [0.0, 2.0]])
    x = t(a, requires_grad=True)
    _, L, U = E.linalg.lu(x)
    ((L * t(gL)).sum() + (U * t(gU)).sum()).backward()
    Ln, Un = np.array([[1.0, 0.0], [0.5, 1.0]]), np.array([[4.0, 1.0], [0.0, 2.5]])
    phi = np.tril(Ln.T @ gL, -1) + np.triu(gU @ Un.T)
    assert_close(x.grad, np.linalg.inv(Ln).T @ phi @ np.linalg.inv(Un).T)


# ==== cholesky_ex ===============================================================================

@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_cholesky_ex_matches_numpy_and_reports_failures(dtype):
    x = uniform((2, 3, 3), seed=5)
    a = x @ np.swapaxes(x, -1, -2) + np.eye(3)
    L, info = E.linalg.cholesky_ex(t(a, dtype))
    assert_close(L, np.linalg.cholesky(a), dtype, **TOL[dtype])
    assert info.dtype is E.int32 and info.tolist() == [0, 0]
    U, _ = E.linalg.cholesky_ex(t(a, dtype), upper=True)
    assert_close(U, np.swapaxes(np.linalg.cholesky(a), -1, -2), dtype, **TOL[dtype])
    a[1] = np.diag([1.0, 2.0, -3.0])
    L, info = E.linalg.cholesky_ex(t(a, dtype))
    assert info.tolist() == [0, 3] and np.isnan(L[1].tolist()).all()
    assert_close(L[0], np.linalg.cholesky(a[0]), dtype, **TOL[dtype])
    with pytest.raises(E.linalg.LinAlgError, match=r"cholesky_ex: \(Batch element 1\).*"
                                                   r"leading minor of order 3"):
        E.linalg.cholesky_ex(t(a, dtype), check_errors=True)


def test_cholesky_ex_gradient():
    x = t(uniform((3, 3), seed=6), requires_grad=True)
    spd = lambda v: v @ v.mT + E.eye(3, dtype=E.float64)  # noqa: E731
    assert gradgradcheck(lambda v: E.linalg.cholesky_ex(spd(v))[0], (x,))


# ==== householder_product =======================================================================

def _geqrf(a):
    """numpy's Householder QR in LAPACK's packed form: (reflectors in A's shape, tau)."""
    h, tau = np.linalg.qr(a, mode="raw")
    return h.T, tau


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("m, n", [(4, 3), (3, 3), (5, 2)])
def test_householder_product_rebuilds_q(dtype, m, n):
    a = uniform((m, n), seed=7)
    h, tau = _geqrf(a)
    q = np.linalg.qr(a)[0]
    assert_close(E.linalg.householder_product(t(h, dtype), t(tau, dtype)), q, dtype,
                 **TOL[dtype])
    assert_close(E.orgqr(t(h, dtype), t(tau, dtype)), q, dtype, **TOL[dtype])


def test_householder_product_batched_with_fewer_reflectors():
    a = uniform((2, 4, 3), seed=8)
    tau = uniform((2, 2), seed=9)
    ref = []
    for ai, ti in zip(a, tau):
        q = np.eye(4)
        for i in range(2):
            v = np.concatenate([np.zeros(i), [1.0], ai[i + 1:, i]])
            q = q @ (np.eye(4) - ti[i] * np.outer(v, v))
        ref.append(q[:, :3])
    assert_close(E.linalg.householder_product(t(a), t(tau)), np.stack(ref), E.float64)


def test_householder_product_errors_and_gradient():
    with pytest.raises(E.ShapeError, match="greater than or equal to tau.shape"):
        E.linalg.householder_product(E.ones(4, 3), E.ones(4))
    with pytest.raises(E.ShapeError, match=r"input.shape\[-2\] must be greater"):
        E.linalg.householder_product(E.ones(3, 4), E.ones(2))
    with pytest.raises(E.ShapeError, match="batch dims"):
        E.linalg.householder_product(E.ones(2, 4, 3), E.ones(3))
    with pytest.raises(E.DtypeError, match="same dtype"):
        E.linalg.householder_product(E.ones(4, 3), E.ones(2, dtype=E.float64))
    args = (t(uniform((4, 3), 10), requires_grad=True), t(uniform((2,), 11), requires_grad=True))
    assert gradgradcheck(E.linalg.householder_product, args)
