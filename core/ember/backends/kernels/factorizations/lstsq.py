"""Least squares min ||A X - B||_F through the SVD (LAPACK gelsd's method), for every
``driver``: the driver only chooses which of PyTorch's extra outputs are filled.

On numpy float32/float64 with scipy installed, ``driver=None`` and ``"gelsy"`` (PyTorch's
CPU default) call LAPACK's gelsy per matrix instead (``lapack.gelsy``): a QR with column
pivoting, ~5x cheaper than the SVD at (1000, 1000). Both give the minimum-norm solution;
they can differ in the rank of a matrix whose smallest singular values sit at the
``rcond`` cut, as PyTorch's gelsy and gelsd do.
"""
from __future__ import annotations

import numpy as np

from ....errors import ShapeError
from ....types import bfloat16, float16
from . import lapack
from .checks import batch_shape, check_matrix, check_same_dtype

DRIVERS = (None, "gels", "gelsy", "gelsd", "gelss")


def kernels(xp) -> dict:

    def linalg_lstsq(a, b, rcond, driver):
        op = "linalg.lstsq"
        if driver not in DRIVERS:
            raise ValueError(f"{op}: parameter `driver` should be one of (gels, gelsy, gelsd, "
                             f"gelss), got {driver!r}")
        check_matrix(op, a, name="A")
        check_same_dtype(op, a, b)
        if b.ndim not in (a.ndim, a.ndim - 1):
            raise ShapeError(f"{op}: expected B of {a.ndim} dims (*, m, k) or {a.ndim - 1} "
                             f"dims (*, m) for A of shape {list(a.shape)}, got shape "
                             f"{list(b.shape)}: input.dim() must be greater or equal to "
                             f"other.dim() and (input.dim() - other.dim()) <= 1")
        vector = b.ndim == a.ndim - 1
        bm = b[..., None] if vector else b
        m, n = a.shape[-2:]
        if bm.shape[-2] != m:
            raise ShapeError(f"{op}: A has {m} rows but B has {bm.shape[-2]}: input.size(-2) "
                             f"should match other.size(-2)")
        batch = batch_shape(op, a, bm)
        a_ = xp.broadcast_to(a, batch + (m, n))
        b_ = xp.broadcast_to(bm, batch + bm.shape[-2:])
        eps = float(np.finfo(a.dtype).eps)
        cut = (eps * max(m, n) if rcond is None else max(float(rcond), 0.0))
        k, count = bm.shape[-1], int(np.prod(batch, dtype=np.int64))
        if (driver in (None, "gelsy") and min(m, n, k) > 0 and
                lapack.use_lapack(xp, a.dtype, count, max(m, n))):
            x, rank = lapack.gelsy(a_.reshape((count, m, n)), b_.reshape((count, m, k)), cut)
            x = x.reshape(batch + (n, k))
            empty = xp.empty((0,), dtype=a.dtype)
            return (x[..., 0] if vector else x), empty, rank.reshape(batch), empty
        u, s, vh = xp.linalg.svd(a_, full_matrices=False)
        s = s.astype(a.dtype, copy=False)
        top = s[..., :1] if s.shape[-1] else s
        keep = (s > cut * top) & (s > 0)
        inv = xp.where(keep, 1 / xp.where(keep, s, 1), 0).astype(a.dtype, copy=False)
        coef = inv[..., :, None] * xp.matmul(xp.swapaxes(u, -1, -2), b_)
        x = xp.matmul(xp.swapaxes(vh, -1, -2), coef)
        rank = keep.sum(-1).astype(xp.int64)
        empty = xp.empty((0,), dtype=a.dtype)
        residuals = empty
        if driver not in (None, "gelsy") and m > n and bool((rank == n).all()):
            r = xp.matmul(a_, x) - b_
            residuals = (r * r).sum(-2)
        if driver == "gels":
            rank = xp.empty((0,), dtype=xp.int64)
        sv = s if driver in ("gelsd", "gelss") else empty
        return (x[..., 0] if vector else x), residuals, rank, sv

    return {"linalg_lstsq": linalg_lstsq}


UNSUPPORTED = {"linalg_lstsq": frozenset({float16, bfloat16})}
