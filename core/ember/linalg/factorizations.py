"""Factorizations built on the native ones: ``lu_factor`` and ``lu`` (over
``linalg_lu_factor_ex`` and ``lu_unpack``) and ``householder_product``."""
from __future__ import annotations

from ..ops import namespace as E
from .._base.grad_mode import is_grad_enabled
from ..backends.kernels.factorizations import raise_lu_info
from ..backends.kernels.factorizations.householder import householder_product
from ..dispatch import wrap
from ..errors import ShapeError
from .._base.tracing_state import STATE as _tracing
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
    # Compact WY (Schreiber & Van Loan 1989; Joffrain et al. 2006, "Accumulating
    # Householder transformations, revisited", TOMS 32(2)): H_1 ... H_k = I - V T V^T with
    # T^-1 = diag(1/tau) + striu(V^T V), i.e. T = (I + diag(tau) striu(V^T V))^-1 diag(tau).
    # The unit upper triangular solve needs no 1/tau (tau = 0 is H_i = I), and the whole
    # product is two GEMMs and one solve instead of k rank-1 updates of (m, n).
    # NOTE: float32 error against a float64 reference: ~13 ulp of max|Q| at 128 x 128,
    # as PyTorch's orgqr (tests/core/linalg/test_fast_paths.py).
    if not (is_grad_enabled() and (input.requires_grad or tau.requires_grad)) and \
            not _tracing.active and k > 0 and input.dtype in (E.float32, E.float64):
        # no gradient wanted: the same formula on arrays, without one op per step
        backend = input._type.backend
        return wrap(householder_product(backend.xp, input._data, tau._data), backend)
    dt, dev = input.dtype, input.device
    V = E.tril(input[..., :, :k], -1) + E.eye(m, k, dtype=dt, device=dev)
    t = tau.unsqueeze(-1)
    S = E.triu(V.mT @ V, 1)
    W = E.linalg_solve(E.eye(k, dtype=dt, device=dev) + t * S, t * V[..., :n, :].mT)
    return E.eye(m, n, dtype=dt, device=dev) - V @ W
