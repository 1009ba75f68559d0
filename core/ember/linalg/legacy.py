"""torch's top-level spellings of linear algebra (``torch.det``, ``torch.svd``,
``torch.cholesky_solve``, ...), each a composite over ``torch.linalg``'s ops; several are
older APIs that PyTorch keeps (``svd`` returns V, ``triangular_solve`` and ``lu_solve``
take their arguments in the old order)."""
from __future__ import annotations

import math

from ..ops import namespace as E
from ..backends.kernels.factorizations import raise_lu_info
from ..errors import ShapeError
from ..ops.composite import composite
from ._checks import named, need_float, need_matrix, need_same_dtype


@composite("det")
def _det(self):
    return E.linalg_det(self)


@composite("logdet")
def _logdet(self):
    sign, logabsdet = E.linalg_slogdet(self)
    return E.where(sign < 0, math.nan, logabsdet)


@composite("slogdet")
def _slogdet(self):
    return E.linalg_slogdet(self)


@composite("inverse")
def _inverse(self):
    return E.linalg_inv(self)


@composite("matrix_power")
def _matrix_power_top(self, n):
    return E.linalg_matrix_power(self, n)


@composite("pinverse")
def _pinverse(self, rcond=1e-15):
    return E.linalg_pinv(self, rtol=rcond)


@composite("matrix_exp")
def _matrix_exp(self):
    return E.linalg_matrix_exp(self)


@composite("svd")
def _svd(self, some=True, compute_uv=True):
    if not compute_uv:
        m, n = self.shape[-2:] if self.ndim >= 2 else (0, 0)
        S = E.linalg_svdvals(self)
        batch = tuple(self.shape[:-2])
        return named("svd", "U S V", E.zeros(batch + (m, m), dtype=self.dtype,
                                             device=self.device), S,
                     E.zeros(batch + (n, n), dtype=self.dtype, device=self.device))
    U, S, Vh = E.linalg_svd(self, full_matrices=not some)
    return named("svd", "U S V", U, S, Vh.mT)


@composite("qr")
def _qr(self, some=True):
    return named("qr", "Q R", *E.linalg_qr(self, "reduced" if some else "complete"))


@composite("cholesky")
def _cholesky(self, upper=False):
    return E.linalg_cholesky(self, upper=upper)


@composite("cholesky_solve")
def _cholesky_solve(self, input2, upper=False):
    op = "cholesky_solve"
    if self.ndim < 2:
        raise ShapeError(f"{op}: b should have at least 2 dimensions, but has {self.ndim} "
                         f"dimensions instead; add a trailing dim: b.unsqueeze(-1)")
    need_matrix(op, input2, square=True)
    need_float(op, input2)
    need_same_dtype(op, self, input2, ("b", "A"))
    n = input2.shape[-1]
    if self.shape[-2] != n:
        raise ShapeError(f"{op}: Incompatible matrix sizes for cholesky_solve: each A matrix "
                         f"is {n} by {n} but each b matrix is {self.shape[-2]} by "
                         f"{self.shape[-1]}")
    tri = E.linalg_solve_triangular
    if upper:  # A = U^T U
        return tri(input2, tri(input2.mT, self, upper=False), upper=True)
    return tri(input2.mT, tri(input2, self, upper=False), upper=True)  # A = L L^T


@composite("cholesky_inverse")
def _cholesky_inverse(self, upper=False):
    need_matrix("cholesky_inverse", self, square=True)
    need_float("cholesky_inverse", self)
    eye = E.eye(self.shape[-1], dtype=self.dtype, device=self.device).expand(self.shape)
    # A^-1 = L^-T L^-1 (A = L L^T) or U^-1 U^-T (A = U^T U): one triangular solve and one
    # product instead of two solves against the identity
    W = E.linalg_solve_triangular(self, eye, upper=upper)
    return W @ W.mT if upper else W.mT @ W


@composite("triangular_solve")
def _triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
    op = "triangular_solve"
    if self.ndim < 2:
        raise ShapeError(f"{op}: Expected b to have at least 2 dimensions, but it has "
                         f"{self.ndim} dimensions instead; add a trailing dim: "
                         f"b.unsqueeze(-1)")
    need_matrix(op, A, square=True)
    X = E.linalg_solve_triangular(A.mT if transpose else A, self, upper=upper != transpose,
                                  unitriangular=unitriangular)
    coefficient = A.expand(tuple(X.shape[:-2]) + tuple(A.shape[-2:])).clone()
    return named("triangular_solve", "solution cloned_coefficient", X, coefficient)


@composite("lu_solve")
def _lu_solve_top(self, LU_data, LU_pivots):
    return E.linalg_lu_solve(LU_data, LU_pivots, self)


@composite("orgqr")
def _orgqr(self, input2):
    return E.linalg_householder_product(self, input2)


def lu(A, pivot=True, get_infos=False):
    """torch.lu: the packed LU factorization (LU (*, m, n), int32 pivots (*, k)) of
    linalg.lu_factor_ex, plus info (*) int32 when ``get_infos``; without it a singular
    matrix raises LinAlgError (torch.lu). Gradient as linalg.lu_factor_ex."""
    LU, pivots, info = E.linalg_lu_factor_ex(A, pivot=pivot)
    if get_infos:
        return LU, pivots, info
    raise_lu_info("lu", info._data)
    return LU, pivots
