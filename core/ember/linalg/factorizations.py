"""Factorizations built on the native ones: ``lu_factor`` and ``lu`` (over
``linalg_lu_factor_ex`` and ``lu_unpack``) and ``householder_product``."""
from __future__ import annotations

import ember as E

from ..backends.kernels.factorizations import raise_lu_info
from ..errors import ShapeError
from ..ops.composite import composite
from ._checks import named, need_float, need_matrix, need_same_dtype


@composite("linalg_lu_factor")
def _lu_factor(A, pivot=True):
    LU, pivots, info = E.linalg_lu_factor_ex(A, pivot=pivot)
    raise_lu_info("linalg.lu_factor", info._data)
    return named("linalg_lu_factor", "LU pivots", LU, pivots)


@composite("linalg_lu")
def _lu(A, pivot=True):
    LU, pivots, _ = E.linalg_lu_factor_ex(A, pivot=pivot)
    return named("linalg_lu", "P L U", *E.lu_unpack(LU, pivots))


@composite("linalg_householder_product")
def _householder_product(input, tau):
    op = "linalg.householder_product"
    need_matrix(op, input, name="input")
    need_float(op, input)
    need_same_dtype(op, input, tau, ("input", "tau"))
    m, n = input.shape[-2:]
    k = tau.shape[-1] if tau.ndim else -1
    if m < n:
        raise ShapeError(f"{op}: input.shape[-2] must be greater than or equal to "
                         f"input.shape[-1], got input of shape {list(input.shape)}")
    if tau.ndim != input.ndim - 1 or tuple(tau.shape[:-1]) != tuple(input.shape[:-2]):
        raise ShapeError(f"{op}: Expected tau of shape (*, k) with the batch dims of input "
                         f"{list(input.shape[:-2])}, got {list(tau.shape)}")
    if k > n:
        raise ShapeError(f"{op}: input.shape[-1] must be greater than or equal to "
                         f"tau.shape[-1], got {n} and {k}")
    Q = E.eye(m, n, dtype=input.dtype, device=input.device).expand(input.shape)
    rows = E.arange(m, device=input.device).unsqueeze(-1)
    for i in reversed(range(k)):  # Q <- H_i Q, innermost reflector first
        v = E.where(rows > i, input[..., :, i:i + 1], (rows == i).to(input.dtype))
        Q = Q - tau[..., i:i + 1].unsqueeze(-1) * (v @ (v.mT @ Q))
    return Q
