"""LAPACK's getrf and laswp through scipy, when scipy is installed (an optional speed-up).

numpy exposes no getrf (LU with partial pivoting) and no laswp (row interchanges), so
``lu.py`` writes both over ``xp`` as loops over the columns, vectorized across the batch.
On numpy arrays, when scipy is importable, a loop over the batch that calls LAPACK per
matrix is faster whenever the batch is not much larger than the matrices (PyTorch's CPU
kernels loop the same way, in C++): ``use_lapack`` says when. scipy is not a dependency
of ember; it is imported on first use (about 1 s), never at ``import ember``.
"""
from __future__ import annotations

import functools

import numpy as np

# A LAPACK call per matrix costs ~3-5 us; a step of the batched column loop ~20-40 us.
# NOTE: measured on 4x16x16 (getrf 4 x 4 us, column loop 16 x 30 us) and 1024x8x8.
PER_MATRIX_VS_STEP = 6


@functools.cache
def scipy_lapack():
    """``scipy.linalg.lapack``, or None when scipy is not installed."""
    try:
        import threadpoolctl
        before = [c.num_threads for c in
                  threadpoolctl.ThreadpoolController().select(user_api="blas").lib_controllers]
        # NOTE: an optional dependency, imported here so that ``import ember`` never pays
        # for it (not to dodge an import cycle)
        from scipy.linalg import lapack
    except ImportError:
        return None
    # scipy loads its own OpenBLAS with its default thread count: give it the limit the
    # BLAS libraries loaded before it run with (``ember.set_num_threads``'s)
    if before:
        for c in threadpoolctl.ThreadpoolController().select(user_api="blas").lib_controllers:
            if c.num_threads > min(before):
                c.set_num_threads(min(before))
    return lapack


def use_lapack(xp, dtype, batch: int, steps: int) -> bool:
    """Whether ``batch`` LAPACK calls beat ``steps`` batched column steps on arrays of
    ``xp`` and ``dtype``."""
    return (xp is np and dtype in (np.float32, np.float64) and
            0 < batch <= PER_MATRIX_VS_STEP * steps and scipy_lapack() is not None)


def getrf(a):
    """LU with partial pivoting of the (b, m, n) float32/float64 numpy array ``a``, one
    LAPACK ``?getrf`` per matrix: (LU (b, m, n), 1-based int32 pivots (b, k), info (b,)),
    as ``linalg_lu_factor_ex`` returns them. ``a`` is not written."""
    lapack = scipy_lapack()
    fn = lapack.sgetrf if a.dtype == np.float32 else lapack.dgetrf
    b, m, n = a.shape
    # each at[i].T is a Fortran-ordered view of a[i]: getrf factors it in place
    at = a.transpose(0, 2, 1).copy()  # (a copy even when that view is C-contiguous)
    piv = np.empty((b, min(m, n)), dtype=np.int32)
    info = np.zeros(b, dtype=np.int32)
    for i in range(b):
        lu, p, info[i] = fn(at[i].T, overwrite_a=1)
        piv[i] = p
        if not np.shares_memory(lu, at[i]):  # (never for a Fortran view; kept safe)
            at[i] = lu.T
    piv += 1
    # LAPACK's info < 0 (a bad argument) cannot happen here; > 0 is U[info-1, info-1] == 0
    return np.ascontiguousarray(at.transpose(0, 2, 1)), piv, np.maximum(info, 0)


def permutation(flat, m: int):
    """The permutations (b, m) of 0-based sequential row interchanges ``flat`` (b, k), one
    LAPACK ``dlaswp`` per row of ``flat`` (see ``lu.py``'s ``permutation``)."""
    laswp = scipy_lapack().dlaswp
    b, k = flat.shape
    rows = np.broadcast_to(np.arange(m, dtype=np.float64)[:, None], (m, 1))
    piv = flat.astype(np.int32)
    perm = np.empty((b, m), dtype=np.int64)
    for i in range(b):
        perm[i] = laswp(rows, piv[i])[:, 0]
    return perm


def trtrs(a, b, upper: bool, unitriangular: bool):
    """X with A X = B for the triangle of ``a`` (B, n, n) and ``b`` (B, n, k), float32 or
    float64 numpy arrays, one LAPACK ``?trtrs`` (trsm) per matrix; None when a diagonal
    entry is zero (LAPACK then solves nothing: the caller's loop gives PyTorch's inf/nan).
    """
    lapack = scipy_lapack()
    fn = lapack.strtrs if a.dtype == np.float32 else lapack.dtrtrs
    # a[i].T is a Fortran view of A^T (the other triangle): solve with trans=1; each
    # xt[i].T is a Fortran view of B that trtrs overwrites with X
    xt = b.transpose(0, 2, 1).copy()
    for i in range(a.shape[0]):
        x, info = fn(a[i].T, xt[i].T, lower=int(upper), trans=1, unitdiag=int(unitriangular),
                     overwrite_b=1)
        if info:
            return None
        if not np.shares_memory(x, xt[i]):
            xt[i] = x.T
    return np.ascontiguousarray(xt.transpose(0, 2, 1))


def gelsy(a, b, rcond: float):
    """The minimum-norm least-squares solution of A X = B for ``a`` (B, m, n) and ``b``
    (B, m, k), float32 or float64 numpy arrays with m, n, k >= 1, by a complete orthogonal
    factorization (QR with column pivoting), one LAPACK ``?gelsy`` per matrix, PyTorch's
    CPU default driver: (X (B, n, k), rank (B,) int64). The rank is the order of the
    leading triangle of R whose estimated condition number stays below 1 / ``rcond``."""
    lapack = scipy_lapack()
    prefix = "s" if a.dtype == np.float32 else "d"
    fn, query = getattr(lapack, prefix + "gelsy"), getattr(lapack, prefix + "gelsy_lwork")
    nb, m, n = a.shape
    k = b.shape[-1]
    work, _ = query(m, n, k, rcond)
    lwork = max(int(work), 1)
    x = np.empty((nb, n, k), dtype=a.dtype)
    rank = np.empty(nb, dtype=np.int64)
    rhs = np.zeros((max(m, n), k), dtype=a.dtype, order="F")  # gelsy's B is max(m, n) rows
    free = np.zeros(n, dtype=np.int32)  # every column free to move in the pivoting
    for i in range(nb):
        rhs[:m] = b[i]
        rhs[m:] = 0
        # LAPACK's info < 0 (a bad argument) cannot happen with these shapes
        _, sol, _, rank[i], _ = fn(a[i], rhs, free, rcond, lwork)
        x[i] = sol[:n]
    return x, rank
