"""Solvers built from the native ones: ``lu_solve``, ``solve_ex``, ``inv_ex``,
``tensorinv`` and ``tensorsolve`` (composites, so their gradients come from
``linalg_solve``, ``linalg_inv``, ``linalg_solve_triangular`` and ``lu_unpack``)."""
from __future__ import annotations

import math

from ..ops import namespace as E
from ..backends.kernels.factorizations import LinAlgError, is_vector_rhs
from ..errors import ShapeError
from ..ops.composite import composite
from ._checks import named, need_float, need_matrix, need_same_dtype


def _x(shape) -> str:
    return "x".join(str(n) for n in shape)


@composite("linalg_lu_solve")
def _lu_solve(LU, pivots, B, left=True, adjoint=False):
    op = "linalg.lu_solve"
    need_matrix(op, LU, square=True, name="LU")
    need_float(op, LU)
    need_same_dtype(op, LU, B, ("LU", "B"))
    n = LU.shape[-1]
    if B.ndim < 2 or (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise ShapeError(f"{op}: Incompatible shapes of A and B for the equation {eq} "
                         f"({_x(LU.shape[-2:])} and {_x(B.shape[-2:])}); B must be "
                         f"(*, n, k) for left=True, (*, k, n) for left=False")
    P, L, U = E.lu_unpack(LU, pivots)
    tri = E.linalg_solve_triangular
    # A = P L U: four arrangements of one permutation and two triangular solves
    if left and not adjoint:     # X = U^-1 L^-1 P^T B
        Y = tri(L, P.mT @ B, upper=False, unitriangular=True)
        return tri(U, Y, upper=True)
    if left:                     # A^T X = B: X = P L^-T U^-T B
        Y = tri(U.mT, B, upper=False)
        return P @ tri(L.mT, Y, upper=True, unitriangular=True)
    if not adjoint:              # X A = B: X = B U^-1 L^-1 P^T
        Y = tri(U, B, upper=True, left=False)
        return tri(L, Y, upper=False, left=False, unitriangular=True) @ P.mT
    Y = tri(L.mT, B @ P, upper=True, left=False, unitriangular=True)  # X A^T = B
    return tri(U.mT, Y, upper=False, left=False)


def _lu_fallback(op, A, error, check_errors):
    """After linalg_solve/inv refused a singular A: raise (check_errors) with this op's
    name, else getrf's info and the LU factors, which give inf/nan where singular."""
    if check_errors:
        raise LinAlgError(str(error).replace(op.replace("_ex", "") + ":", op + ":", 1)) \
            from None
    return E.linalg_lu_factor_ex(A)


@composite("linalg_solve_ex")
def _solve_ex(A, B, left=True, check_errors=False):
    op = "linalg.solve_ex"
    try:
        return named("linalg_solve_ex", "result info", E.linalg_solve(A, B, left=left),
                     E.zeros(A.shape[:-2], dtype=E.int32, device=A.device))
    except LinAlgError as e:
        LU, pivots, info = _lu_fallback(op, A, e, check_errors)
    vector = is_vector_rhs(A.shape, B.shape)
    Bm = B.unsqueeze(-1) if vector else B
    X = E.linalg_lu_solve(LU, pivots, Bm, left=left)
    return named("linalg_solve_ex", "result info", X.squeeze(-1) if vector else X, info)


@composite("linalg_inv_ex")
def _inv_ex(A, check_errors=False):
    op = "linalg.inv_ex"
    try:
        return named("linalg_inv_ex", "inverse info", E.linalg_inv(A),
                     E.zeros(A.shape[:-2], dtype=E.int32, device=A.device))
    except LinAlgError as e:
        LU, pivots, info = _lu_fallback(op, A, e, check_errors)
    eye = E.eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(A.shape)
    return named("linalg_inv_ex", "inverse info", E.linalg_lu_solve(LU, pivots, eye), info)


@composite("linalg_tensorinv")
def _tensorinv(self, ind=2):
    op = "linalg.tensorinv"
    if ind <= 0:
        raise ValueError(f"{op}: Expected a strictly positive integer for 'ind', but got "
                         f"{ind}")
    rows, cols = self.shape[:ind], self.shape[ind:]
    p, q = math.prod(rows), math.prod(cols)
    if p != q:
        raise ShapeError(f"{op}: Expected self to satisfy the requirement "
                         f"prod(self.shape[ind:]) == prod(self.shape[:ind]), but got {q} != "
                         f"{p} (shape {list(self.shape)}, ind={ind})")
    return E.linalg_inv(self.reshape(p, q)).reshape(tuple(cols) + tuple(rows))


@composite("linalg_tensorsolve")
def _tensorsolve(self, other, dims=None):
    op = "linalg.tensorsolve"
    A = self
    if dims is not None:
        n = len(dims)
        A = A.movedim(tuple(dims), tuple(range(A.ndim - n, A.ndim)))
    rest = A.shape[other.ndim:]
    p, q = math.prod(A.shape[:other.ndim]), math.prod(rest)
    if p != q or other.numel() != p:
        raise ShapeError(f"{op}: Expected self to satisfy the requirement "
                         f"prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]) == "
                         f"other.numel(), but got {q}, {p} and {other.numel()} (shapes "
                         f"{list(A.shape)} and {list(other.shape)})")
    return E.linalg_solve(A.reshape(p, q), other.reshape(p)).reshape(tuple(rest))
