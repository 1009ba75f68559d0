"""LU factorization with partial pivoting, its unpacking, and triangular solves.

Neither numpy nor CuPy exposes LAPACK's getrf or trsm, so both are written here once over
``xp``: a right-looking LU (LAPACK's getf2, Golub & Van Loan 2013, "Matrix Computations",
alg. 3.4.1) and row-oriented substitution (alg. 3.1.1/3.1.2), each a Python loop over the
columns whose steps are vectorized across the batch (and the right-hand sides). Cost: k =
min(m, n) steps of O(batch m n) work for LU, n steps of O(batch n k) for a solve; no
blocking, so large matrices run at memory speed rather than BLAS-3 speed. On numpy, when
scipy is installed and the batch is not much larger than the matrices, LU and the pivot
permutation call LAPACK per matrix instead (``lapack.py``), and so do triangular solves
(trtrs); elsewhere, small triangular solves go through ``xp.linalg.solve`` (getrf + getrs
at BLAS-3 speed) unless the matrix is singular.
"""
from __future__ import annotations

import math

import numpy as np

from ....errors import DtypeError, ShapeError
from ....types import bfloat16, float16
from . import lapack
from .checks import (batch_shape, check_matrix, check_same_dtype, raise_lu_info, shape_x)


def _check_pivots(op: str, lu, pivots) -> None:
    if not hasattr(pivots, "dtype") or pivots.dtype.name != "int32":
        got = getattr(getattr(pivots, "dtype", None), "name", type(pivots).__name__)
        raise DtypeError(f"{op}: pivots should be a Tensor of scalar type int32 (as "
                         f"lu_factor returns), got {got}; convert with .int()")
    k = min(lu.shape[-2], lu.shape[-1])
    if pivots.ndim < 1 or pivots.shape[-1] != k:
        raise ShapeError(f"{op}: Number of pivots per batch should be same as the dimension "
                         f"of the matrix: expected pivots of shape (*, {k}) for LU of shape "
                         f"{list(lu.shape)}, got {list(pivots.shape)}")


def kernels(xp) -> dict:

    def linalg_lu_factor_ex(a, pivot, check_errors):
        op = "linalg.lu_factor_ex"
        check_matrix(op, a)
        m, n = a.shape[-2:]
        k = min(m, n)
        b = math.prod(a.shape[:-2])
        if pivot and lapack.use_lapack(xp, a.dtype, b, k):
            lu, piv, info = lapack.getrf(a.reshape((b, m, n)))
            info = info.reshape(a.shape[:-2])
            if check_errors:
                raise_lu_info(op, info)
            return lu.reshape(a.shape), piv.reshape(a.shape[:-2] + (k,)), info
        lu = a.reshape((b, m, n)).copy()
        rows = xp.arange(b)
        piv = xp.empty((b, k), dtype=xp.int32)
        info = xp.zeros(b, dtype=xp.int32)
        for j in range(k):
            if pivot:
                p = j + xp.argmax(xp.abs(lu[:, j:, j]), axis=1)
                top = lu[rows, j].copy()
                lu[rows, j] = lu[rows, p]
                lu[rows, p] = top
                piv[:, j] = p + 1
            else:
                piv[:, j] = j + 1
            d = lu[:, j, j]
            zero = d == 0
            info = xp.where((info == 0) & zero, j + 1, info).astype(xp.int32)
            # NOTE: with pivoting a zero pivot means a zero column, which getf2 leaves
            # unscaled (0, not 0/0); without pivoting the division gives inf as cuSOLVER's.
            lu[:, j + 1:, j] /= (xp.where(zero, 1, d) if pivot else d)[:, None]
            lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j:j + 1] * lu[:, j:j + 1, j + 1:]
        info = info.reshape(a.shape[:-2])
        if check_errors:
            raise_lu_info(op, info)
        return lu.reshape(a.shape), piv.reshape(a.shape[:-2] + (k,)), info

    def permutation(pivots, m):
        """LAPACK's sequential row interchanges (*, k), 1-based, as a permutation (*, m):
        row i of P^T A is row perm[i] of A."""
        k = pivots.shape[-1]
        flat = pivots.reshape((math.prod(pivots.shape[:-1]), k)).astype(xp.int64) - 1
        if flat.size and bool(((flat < 0) | (flat >= m)).any()):
            raise IndexError(f"lu_unpack: pivots must lie in [1, {m}] (1-based row "
                             f"numbers, as lu_factor returns them)")
        b = flat.shape[0]
        if lapack.use_lapack(xp, np.float64, b, k):
            return lapack.permutation(flat, m).reshape(pivots.shape[:-1] + (m,))
        rows = xp.arange(b)
        perm = xp.broadcast_to(xp.arange(m), (b, m)).copy()
        for i in range(k):
            j = flat[:, i]
            at_i = perm[:, i].copy()
            perm[:, i] = perm[rows, j]
            perm[rows, j] = at_i
        return perm.reshape(pivots.shape[:-1] + (m,))

    def lu_unpack(lu, pivots, unpack_data, unpack_pivots):
        op = "lu_unpack"
        check_matrix(op, lu, name="LU_data")
        _check_pivots(op, lu, pivots)
        if tuple(pivots.shape[:-1]) != tuple(lu.shape[:-2]):
            raise ShapeError(f"{op}: the batch dims of LU_data {list(lu.shape[:-2])} and "
                             f"LU_pivots {list(pivots.shape[:-1])} must be equal")
        m, n = lu.shape[-2:]
        k = min(m, n)
        empty = xp.empty((0,), dtype=lu.dtype)
        L = U = P = empty
        if unpack_data:
            L = xp.tril(lu[..., :, :k], -1) + xp.eye(m, k, dtype=lu.dtype)
            U = xp.triu(lu[..., :k, :])
        if unpack_pivots:
            perm = permutation(pivots, m)
            P = (xp.arange(m)[:, None] == perm[..., None, :]).astype(lu.dtype)
        return P, L, U

    def linalg_solve_triangular(a, b, upper, left, unitriangular):
        op = "linalg.solve_triangular"
        check_matrix(op, a, square=True)
        check_same_dtype(op, a, b)
        if b.ndim < 2:
            raise ShapeError(f"{op}: The input tensor B must have at least 2 dimensions, got "
                             f"shape {list(b.shape)}; add a trailing dim: B.unsqueeze(-1)")
        if not left:  # X A = B is A^T X^T = B^T, with the other triangle
            x = linalg_solve_triangular(xp.swapaxes(a, -1, -2), xp.swapaxes(b, -1, -2),
                                        not upper, True, unitriangular)
            return xp.ascontiguousarray(xp.swapaxes(x, -1, -2))
        n = a.shape[-1]
        if b.shape[-2] != n:
            raise ShapeError(f"{op}: Incompatible shapes of A and B for the equation AX = B "
                             f"({shape_x(a.shape[-2:])} and {shape_x(b.shape[-2:])})")
        batch = batch_shape(op, a, b)
        nb = math.prod(batch)
        if n and lapack.use_lapack(xp, a.dtype, nb, n):
            if a.shape[:-2] != batch:
                a = xp.broadcast_to(a, batch + a.shape[-2:])
            if b.shape[:-2] != batch:
                b = xp.broadcast_to(b, batch + b.shape[-2:])
            x = lapack.trtrs(a.reshape(nb, n, n), b.reshape((nb,) + b.shape[-2:]), upper,
                             unitriangular)
            if x is not None:
                return x.reshape(batch + b.shape[-2:])
        elif n <= 64 and (unitriangular or bool(xp.all(xp.diagonal(a, 0, -2, -1) != 0))):
            # getrf of an upper triangular matrix with a nonzero diagonal makes no swaps and
            # L = I exactly, so getrs is back substitution at BLAS-3 speed; a lower one is
            # solved as the upper J A J (J: the reversal) against J B. Singular or zero
            # diagonals take the loop below, which gives inf/nan where trsm does.
            t = xp.triu(a, 1 if unitriangular else 0) if upper else \
                xp.tril(a, -1 if unitriangular else 0)
            if unitriangular:
                t = t + xp.eye(n, dtype=a.dtype)
            rhs = b if upper else b[..., ::-1, :]
            try:
                x = xp.linalg.solve(t if upper else t[..., ::-1, ::-1], rhs)
            except np.linalg.LinAlgError:  # (an exact zero pivot; CuPy raises numpy's too)
                pass
            else:
                return x if upper else xp.ascontiguousarray(x[..., ::-1, :])
        x = xp.empty(batch + b.shape[-2:], dtype=b.dtype)
        a = xp.broadcast_to(a, batch + a.shape[-2:])
        for i in (range(n - 1, -1, -1) if upper else range(n)):
            done = slice(i + 1, n) if upper else slice(0, i)
            s = b[..., i, :] - xp.matmul(a[..., i:i + 1, done], x[..., done, :])[..., 0, :]
            x[..., i, :] = s if unitriangular else s / a[..., i, i][..., None]
        return x

    return {"linalg_lu_factor_ex": linalg_lu_factor_ex, "lu_unpack": lu_unpack,
            "linalg_solve_triangular": linalg_solve_triangular}


UNSUPPORTED = {op: frozenset({float16, bfloat16}) for op in (
    "linalg_lu_factor_ex", "lu_unpack", "linalg_solve_triangular")}
