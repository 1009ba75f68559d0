"""Dense linear algebra of ``torch.linalg``: inv, solve, det, slogdet and the
factorizations cholesky, qr, eigh and svd, over batches of matrices ``(*, m, n)``.

Written once against ``xp.linalg`` (numpy's LAPACK, CuPy's cuSOLVER). Inputs must be
float32 or float64 (integers raise DtypeError as in PyTorch; float16/bfloat16 are listed
in UNSUPPORTED, as PyTorch has no half-precision CPU solvers). Results keep the input
dtype. Failures name the batch element and the pivot the way PyTorch's LinAlgError does;
numpy raises for them, CuPy returns non-finite values, so both paths end in the same
host-side diagnosis (run only on failure).
"""
from __future__ import annotations

import numpy as np

from ...errors import DtypeError, ShapeError
from ...types import bfloat16, float16


class LinAlgError(RuntimeError):
    """A matrix the algorithm cannot handle: singular (inv, solve) or not positive-definite
    (cholesky). The message names the batch element (torch.linalg.LinAlgError)."""


def _x(shape) -> str:
    return "x".join(str(n) for n in shape)


def check_float(op: str, a) -> None:
    """PyTorch's dtype check of every linalg function: float32/float64 only."""
    if not hasattr(a, "dtype"):
        raise TypeError(f"{op}: expected a Tensor, got {type(a).__name__}")
    if a.dtype.kind != "f":
        raise DtypeError(f"{op}: Expected a floating point tensor as input. Got {a.dtype.name}; "
                         f"convert with .double() or .float()")


def check_matrix(op: str, a, square: bool = False, name: str = "A") -> None:
    """At least 2 dims (and square ones if ``square``), else ShapeError."""
    check_float(op, a)
    if a.ndim < 2:
        raise ShapeError(f"{op}: The input tensor {name} must have at least 2 dimensions, got "
                         f"shape {list(a.shape)}; expected (*, m, n)")
    if square and a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{op}: {name} must be batches of square matrices, but they are "
                         f"{a.shape[-2]} by {a.shape[-1]} matrices")


def _host(a) -> np.ndarray:
    return np.asarray(a.get() if hasattr(a, "get") else a)


def _zero_pivot(m: np.ndarray) -> int:
    """1-based index of the first zero diagonal element of U in LU with partial pivoting
    (LAPACK getrf's ``info``), 0 if there is none."""
    u = m.copy()
    n = u.shape[0]
    for k in range(n):
        p = k + int(np.argmax(np.abs(u[k:, k])))
        if u[p, k] == 0:
            return k + 1
        u[[k, p]] = u[[p, k]]
        u[k + 1:] -= np.outer(u[k + 1:, k] / u[k, k], u[k])
    return 0


def _failed_minor(m: np.ndarray) -> int:
    """The order of the first leading minor that is not positive-definite (potrf's info)."""
    for k in range(1, m.shape[0] + 1):
        try:
            if not np.isfinite(np.linalg.cholesky(m[:k, :k])).all():
                return k
        except np.linalg.LinAlgError:
            return k
    return 0


def _where(batch_index: int, a) -> str:
    return f"(Batch element {batch_index}): " if a.ndim > 2 else ""


def raise_singular(op: str, a, solver: bool = False) -> None:
    """Raise LinAlgError naming the first singular matrix of batch ``a`` (if any)."""
    mats = _host(a).reshape((-1,) + a.shape[-2:])
    for i, m in enumerate(mats):
        k = _zero_pivot(m)
        if k:
            what = ("The solver failed because the input matrix is singular." if solver else
                    f"The diagonal element {k} is zero, the inversion could not be completed "
                    f"because the input matrix is singular.")
            raise LinAlgError(f"{op}: {_where(i, a)}{what}")
    if solver or mats.size:  # LAPACK refused it but our LU did not see a zero pivot
        raise LinAlgError(f"{op}: the input matrix is singular (to working precision)")


def _raise_not_pd(a) -> None:
    mats = _host(a).reshape((-1,) + a.shape[-2:])
    for i, m in enumerate(mats):
        k = _failed_minor(m)
        if k:
            raise LinAlgError(f"linalg.cholesky: {_where(i, a)}The factorization could not be "
                              f"completed because the input is not positive-definite (the "
                              f"leading minor of order {k} is not positive-definite).")


def is_vector_rhs(a_shape, b_shape) -> bool:
    """torch.linalg.solve's rule: B is a batch of vectors when it is 1-D or has A's shape
    without the last dim."""
    return len(b_shape) == 1 or (len(b_shape) == len(a_shape) - 1 and
                                 tuple(b_shape) == tuple(a_shape[:-1]))


def kernels(xp) -> dict:
    lin = xp.linalg

    def _guarded(fn, a, *args):
        """``fn(a, *args)`` and whether it failed: numpy raises, CuPy gives non-finite
        values from finite input."""
        try:
            r = fn(a, *args)
        except np.linalg.LinAlgError:
            return None, True
        out = r[0] if isinstance(r, tuple) else r
        bad = not bool(xp.isfinite(out).all()) and bool(xp.isfinite(a).all())
        return r, bad

    def linalg_inv(a):
        check_matrix("linalg.inv", a, square=True)
        r, bad = _guarded(lin.inv, a)
        if bad:
            raise_singular("linalg.inv", a)
        return r

    def linalg_solve(a, b, left):
        op = "linalg.solve"
        check_matrix(op, a, square=True)
        check_float(op, b)
        if b.dtype != a.dtype:
            raise DtypeError(f"{op}: Expected A and B to have the same dtype, but found "
                             f"A of type {a.dtype.name} and B of type {b.dtype.name} instead")
        vector = is_vector_rhs(a.shape, b.shape)
        if not left:
            if vector:
                raise ShapeError(f"{op}: Vector broadcasting of the left hand side is not "
                                 f"supported for left=False; in this case linalg.solve is "
                                 f"equivalent to B / A.squeeze(-1)")
            return xp.swapaxes(linalg_solve(xp.swapaxes(a, -1, -2), xp.swapaxes(b, -1, -2),
                                            True), -1, -2)
        bm = b[..., None] if vector else b
        if bm.ndim < 2 or bm.shape[-2] != a.shape[-1]:
            raise ShapeError(f"{op}: Incompatible shapes of A and B for the equation AX = B "
                             f"({_x(a.shape[-2:])} and {_x(bm.shape[-2:])})")
        try:
            batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
        except ValueError:
            raise ShapeError(f"{op}: the batch dims of A {list(a.shape[:-2])} and B "
                             f"{list(bm.shape[:-2])} do not broadcast") from None
        a_ = xp.broadcast_to(a, batch + a.shape[-2:])
        b_ = xp.broadcast_to(bm, batch + bm.shape[-2:])
        r, bad = _guarded(lin.solve, a_, b_)
        if bad:
            raise_singular(op, a_, solver=True)
        return r[..., 0] if vector else r

    def linalg_det(a):
        check_matrix("linalg.det", a, square=True)
        return xp.asarray(lin.det(a)).astype(a.dtype, copy=False)

    def linalg_slogdet(a):
        check_matrix("linalg.slogdet", a, square=True)
        sign, logabs = lin.slogdet(a)
        return (xp.asarray(sign).astype(a.dtype, copy=False),
                xp.asarray(logabs).astype(a.dtype, copy=False))

    def linalg_cholesky(a, upper):
        check_matrix("linalg.cholesky", a, square=True)
        r, bad = _guarded(lin.cholesky, a)
        if bad:
            _raise_not_pd(a)
        if r is None:  # LAPACK refused a matrix our minors accept (rounding): still fail
            raise LinAlgError("linalg.cholesky: the input is not positive-definite")
        return xp.ascontiguousarray(xp.swapaxes(r, -1, -2)) if upper else r

    def linalg_qr(a, mode):
        if mode not in ("reduced", "complete", "r"):
            raise ValueError(f"linalg.qr: qr received unrecognized mode '{mode}' but expected "
                             f"one of 'reduced' (default), 'r', or 'complete'")
        check_matrix("linalg.qr", a)
        if mode == "r":
            return xp.empty((0,), dtype=a.dtype), lin.qr(a, mode="r")
        q, r = lin.qr(a, mode=mode)
        return q, r

    def linalg_eigh(a, uplo):
        if uplo not in ("L", "U"):
            raise ValueError(f"linalg.eigh: Expected UPLO argument to be 'L' or 'U', but got "
                             f"{uplo!r}")
        check_matrix("linalg.eigh", a, square=True)
        w, v = lin.eigh(a, UPLO=uplo)
        return w.astype(a.dtype, copy=False), v

    def linalg_svd(a, full_matrices):
        check_matrix("linalg.svd", a)
        u, s, vh = lin.svd(a, full_matrices=full_matrices)
        return u, s.astype(a.dtype, copy=False), vh

    return {"linalg_inv": linalg_inv, "linalg_solve": linalg_solve, "linalg_det": linalg_det,
            "linalg_slogdet": linalg_slogdet, "linalg_cholesky": linalg_cholesky,
            "linalg_qr": linalg_qr, "linalg_eigh": linalg_eigh, "linalg_svd": linalg_svd}


UNSUPPORTED = {op: frozenset({float16, bfloat16}) for op in (
    "linalg_inv", "linalg_solve", "linalg_det", "linalg_slogdet", "linalg_cholesky",
    "linalg_qr", "linalg_eigh", "linalg_svd")}
