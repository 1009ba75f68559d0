"""inv, solve, det, slogdet, cholesky, qr, eigh, svd (kernels/factorizations/dense.py) against
numpy float64, float32 and float64, unbatched and batched; PyTorch's errors."""
import numpy as np
import pytest
from helpers import FLOAT_DTYPES, assert_close

import ember as E

SHAPES = [(3, 3), (2, 3, 3), (2, 1, 2, 2), (0, 2, 2)]
TOL = {E.float32: {"rtol": 1e-4, "atol": 1e-5}, E.float64: {}}


def well_conditioned(shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, shape) + 3 * np.eye(shape[-1])


def t(x, dtype):
    return E.tensor(np.asarray(x), dtype=dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_inv_det_slogdet(dtype, shape):
    a = well_conditioned(shape)
    a[..., 0, :] *= -1  # negative determinants too
    ta = t(a, dtype)
    ref = a.astype(dtype.numpy).astype(np.float64)
    assert_close(E.linalg.inv(ta), np.linalg.inv(ref), dtype, **TOL[dtype])
    assert_close(E.inverse(ta), np.linalg.inv(ref), dtype, **TOL[dtype])
    assert_close(E.linalg.det(ta), np.linalg.det(ref), dtype, **TOL[dtype])
    sign, logabs = E.linalg.slogdet(ta)
    rs, rl = np.linalg.slogdet(ref)
    assert_close(sign, rs, dtype)
    assert_close(logabs, rl, dtype, **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("sa, sb, sx", [
    ((3, 3), (3,), (3,)),                 # a vector
    ((3, 3), (3, 2), (3, 2)),
    ((2, 3, 3), (3,), (2, 3)),            # 1-D B broadcasts over A's batch
    ((2, 3, 3), (2, 3), (2, 3)),          # B of A's shape without the last dim: vectors
    ((3, 3), (4, 3, 1), (4, 3, 1)),       # A broadcasts over B's batch
    ((2, 1, 3, 3), (5, 3, 2), (2, 5, 3, 2)),
])
def test_solve_shapes_follow_torch(dtype, sa, sb, sx):
    a, b = well_conditioned(sa), np.random.default_rng(1).uniform(-1, 1, sb)
    x = E.linalg.solve(t(a, dtype), t(b, dtype))
    assert tuple(x.shape) == sx
    vector = len(sb) == 1 or (len(sb) == len(sa) - 1 and sb == sa[:-1])
    ref = np.linalg.solve(a, b[..., None])[..., 0] if vector else np.linalg.solve(a, b)
    assert_close(x, np.broadcast_to(ref, sx), dtype, **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_solve_left_false_solves_x_a_equals_b(dtype):
    a, b = well_conditioned((2, 3, 3)), np.random.default_rng(2).uniform(-1, 1, (2, 4, 3))
    x = E.linalg.solve(t(a, dtype), t(b, dtype), left=False)
    assert_close(x, b @ np.linalg.inv(a), dtype, **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 2, 2)])
def test_cholesky_lower_and_upper(dtype, shape):
    x = np.random.default_rng(3).uniform(-1, 1, shape)
    a = x @ np.swapaxes(x, -1, -2) + np.eye(shape[-1])
    ref = np.linalg.cholesky(a)
    assert_close(E.linalg.cholesky(t(a, dtype)), ref, dtype, **TOL[dtype])
    assert_close(E.linalg.cholesky(t(a, dtype), upper=True), np.swapaxes(ref, -1, -2), dtype,
                 **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3), (2, 5, 2)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_matches_numpy(dtype, shape, mode):
    a = np.random.default_rng(4).uniform(-1, 1, shape)
    q, r = E.linalg.qr(t(a, dtype), mode)
    if mode == "r":
        assert q.numel() == 0
        assert_close(r, np.linalg.qr(a, mode="r"), dtype, **TOL[dtype])
        return
    rq, rr = np.linalg.qr(a, mode=mode)
    assert_close(q, rq, dtype, **TOL[dtype])
    assert_close(r, rr, dtype, **TOL[dtype])
    assert_close(q @ r, a, dtype, **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_and_eigvalsh(dtype, uplo):
    x = np.random.default_rng(5).uniform(-1, 1, (2, 4, 4))
    a = x + np.swapaxes(x, -1, -2)
    junk = np.triu(np.ones((4, 4)), 1) * 9 if uplo == "L" else np.tril(np.ones((4, 4)), -1) * 9
    w, v = E.linalg.eigh(t(a + junk, dtype), UPLO=uplo)  # the other triangle is not read
    rw, rv = np.linalg.eigh(a)
    assert_close(w, rw, dtype, **TOL[dtype])
    assert_close(v * v, rv * rv, dtype, **TOL[dtype])  # columns up to sign
    assert_close(E.linalg.eigvalsh(t(a, dtype)), rw, dtype, **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3), (0, 3)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_and_svdvals(dtype, shape, full):
    a = np.random.default_rng(6).uniform(-1, 1, shape)
    u, s, vh = E.linalg.svd(t(a, dtype), full_matrices=full)
    ru, rs, rvh = np.linalg.svd(a, full_matrices=full)
    assert tuple(u.shape) == ru.shape and tuple(vh.shape) == rvh.shape
    assert_close(s, rs, dtype, **TOL[dtype])
    assert_close(E.linalg.svdvals(t(a, dtype)), rs, dtype, **TOL[dtype])
    k = s.shape[-1]
    usv = (u[..., :k] * s.unsqueeze(-2)) @ vh[..., :k, :]
    assert_close(usv, a, dtype, **TOL[dtype])


# ---- errors ----------------------------------------------------------------------------------

def test_singular_inverse_names_the_batch_element_and_the_pivot():
    a = np.stack([np.eye(2), [[1.0, 2.0], [2.0, 4.0]]])
    with pytest.raises(E.linalg.LinAlgError, match=r"linalg.inv: \(Batch element 1\): The "
                       r"diagonal element 2 is zero.*singular"):
        E.linalg.inv(E.tensor(a))
    with pytest.raises(RuntimeError, match="linalg.inv: The diagonal element 1 is zero"):
        E.linalg.inv(E.zeros(3, 3))


def test_singular_solve_raises():
    with pytest.raises(E.linalg.LinAlgError, match="linalg.solve: The solver failed because "
                       "the input matrix is singular"):
        E.linalg.solve(E.tensor([[1.0, 2.0], [2.0, 4.0]]), E.ones(2))


def test_singular_det_is_zero_and_slogdet_minus_inf():
    a = E.tensor([[1.0, 2.0], [2.0, 4.0]])
    assert float(E.linalg.det(a)) == 0.0
    sign, logabs = E.linalg.slogdet(a)
    assert float(sign) == 0.0 and float(logabs) == -np.inf


def test_cholesky_names_the_failing_minor():
    a = E.tensor(np.stack([np.eye(3), np.diag([1.0, -1.0, 1.0])]))
    with pytest.raises(E.linalg.LinAlgError, match=r"\(Batch element 1\).*not positive-definite "
                       r"\(the leading minor of order 2 is not positive-definite\)"):
        E.linalg.cholesky(a)


@pytest.mark.parametrize("fn", [E.linalg.inv, E.linalg.det, E.linalg.slogdet, E.linalg.cholesky,
                                E.linalg.eigh])
def test_square_ops_refuse_other_shapes(fn):
    with pytest.raises(E.ShapeError, match="must be batches of square matrices, but they are "
                       "2 by 3 matrices"):
        fn(E.ones(2, 3))
    with pytest.raises(E.ShapeError, match="at least 2 dimensions"):
        fn(E.ones(3))


@pytest.mark.parametrize("fn", [E.linalg.inv, E.linalg.qr, E.linalg.svd])
def test_integer_input_raises_dtype_error(fn):
    with pytest.raises(E.DtypeError, match="Expected a floating point tensor as input. Got "
                       "int64"):
        fn(E.ones(2, 2, dtype=E.int64))


def test_half_precision_has_no_kernel():
    with pytest.raises(NotImplementedError):
        E.linalg.inv(E.ones(2, 2, dtype=E.float16))


def test_solve_errors():
    a = E.eye(3)
    with pytest.raises(E.ShapeError, match=r"Incompatible shapes of A and B for the equation "
                       r"AX = B \(3x3 and 2x1\)"):
        E.linalg.solve(a, E.ones(2))
    with pytest.raises(E.DtypeError, match="same dtype"):
        E.linalg.solve(a, E.ones(3, dtype=E.float64))
    with pytest.raises(E.ShapeError, match="not supported for left=False"):
        E.linalg.solve(a, E.ones(3), left=False)


def test_bad_mode_and_uplo():
    with pytest.raises(ValueError, match="unrecognized mode 'x'"):
        E.linalg.qr(E.ones(2, 2), mode="x")
    with pytest.raises(ValueError, match="UPLO argument to be 'L' or 'U', but got 'X'"):
        E.linalg.eigh(E.eye(2), UPLO="X")
