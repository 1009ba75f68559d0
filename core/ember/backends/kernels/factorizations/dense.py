"""inv, solve, det, slogdet and the factorizations cholesky (and cholesky_ex), qr, eigh and
svd, straight through ``xp.linalg`` (numpy's LAPACK, CuPy's cuSOLVER)."""
from __future__ import annotations

import math

import numpy as np

from ....errors import ShapeError
from .checks import (LinAlgError, batch_shape, check_float, check_matrix, check_same_dtype,
                     failed_minor, host, is_vector_rhs, not_pd_message, raise_not_pd,
                     raise_singular, shape_x)


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
        check_same_dtype(op, a, b)
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
                             f"({shape_x(a.shape[-2:])} and {shape_x(bm.shape[-2:])})")
        batch = batch_shape(op, a, bm)
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
            raise_not_pd("linalg.cholesky", a)
        if r is None:  # LAPACK refused a matrix our minors accept (rounding): still fail
            raise LinAlgError("linalg.cholesky: the input is not positive-definite")
        return xp.ascontiguousarray(xp.swapaxes(r, -1, -2)) if upper else r

    def linalg_cholesky_ex(a, upper, check_errors):
        op = "linalg.cholesky_ex"
        check_matrix(op, a, square=True)
        n = a.shape[-1]
        info = xp.zeros(a.shape[:-2], dtype=xp.int32)
        r, bad = _guarded(lin.cholesky, a)
        if bad or r is None:
            # NOTE: the failure path, one matrix at a time on the host's diagnosis; a failed
            # element's L is NaN (LAPACK leaves a partial factorization there).
            flat = a.reshape((math.prod(a.shape[:-2]), n, n))
            r = xp.full(flat.shape, xp.nan, dtype=a.dtype)
            codes = np.zeros(flat.shape[0], dtype=np.int32)
            for i in range(flat.shape[0]):
                codes[i] = failed_minor(host(flat[i])) or 0
                if not codes[i]:
                    li, bad_i = _guarded(lin.cholesky, flat[i])
                    if li is None or bad_i:
                        codes[i] = n  # rounding: LAPACK refused what the minors accept
                    else:
                        r[i] = li
            if check_errors and codes.any():
                i = int(np.flatnonzero(codes)[0])
                prefix = f"(Batch element {i}): " if a.ndim > 2 else ""
                raise LinAlgError(not_pd_message(op, int(codes[i]), prefix))
            r = r.reshape(a.shape)
            info = xp.asarray(codes.reshape(a.shape[:-2]))
        if upper:
            r = xp.ascontiguousarray(xp.swapaxes(r, -1, -2))
        return r, info

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
            "linalg_cholesky_ex": linalg_cholesky_ex, "linalg_qr": linalg_qr,
            "linalg_eigh": linalg_eigh, "linalg_svd": linalg_svd}
