"""Argument checks and failure diagnosis shared by the linear-algebra kernels.

The dtype/shape checks run before any work and raise ember's typed errors with PyTorch's
wording. The diagnosis functions run on the host only after a kernel failed (numpy's
LAPACK raises, CuPy's cuSOLVER returns non-finite values): they find the batch element and
the pivot or minor that failed, as PyTorch's LinAlgError messages name them.
"""
from __future__ import annotations

import numpy as np

from ....errors import DtypeError, ShapeError


class LinAlgError(RuntimeError):
    """A matrix the algorithm cannot handle: singular (inv, solve, lu_factor) or not
    positive-definite (cholesky). The message names the batch element
    (torch.linalg.LinAlgError)."""


def shape_x(shape) -> str:
    """A matrix shape as PyTorch prints it: ``3x3``."""
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


def check_same_dtype(op: str, a, b, names=("A", "B")) -> None:
    check_float(op, b)
    if b.dtype != a.dtype:
        raise DtypeError(f"{op}: Expected {names[0]} and {names[1]} to have the same dtype, but "
                         f"found {names[0]} of type {a.dtype.name} and {names[1]} of type "
                         f"{b.dtype.name} instead; cast one with .to()")


def batch_shape(op: str, a, b, names=("A", "B")) -> tuple:
    """The broadcast of the batch dims (all but the last two) of ``a`` and ``b``."""
    try:
        return np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ShapeError(f"{op}: the batch dims of {names[0]} {list(a.shape[:-2])} and "
                         f"{names[1]} {list(b.shape[:-2])} do not broadcast") from None


def is_vector_rhs(a_shape, b_shape) -> bool:
    """torch.linalg.solve's rule: B is a batch of vectors when it is 1-D or has A's shape
    without the last dim."""
    return len(b_shape) == 1 or (len(b_shape) == len(a_shape) - 1 and
                                 tuple(b_shape) == tuple(a_shape[:-1]))


def host(a) -> np.ndarray:
    return np.asarray(a.get() if hasattr(a, "get") else a)


def zero_pivot(m: np.ndarray) -> int:
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


def failed_minor(m: np.ndarray) -> int:
    """The order of the first leading minor that is not positive-definite (potrf's info)."""
    for k in range(1, m.shape[0] + 1):
        try:
            if not np.isfinite(np.linalg.cholesky(m[:k, :k])).all():
                return k
        except np.linalg.LinAlgError:
            return k
    return 0


def where(batch_index: int, a) -> str:
    return f"(Batch element {batch_index}): " if a.ndim > 2 else ""


def raise_singular(op: str, a, solver: bool = False) -> None:
    """Raise LinAlgError naming the first singular matrix of batch ``a`` (if any)."""
    mats = host(a).reshape((-1,) + a.shape[-2:])
    for i, m in enumerate(mats):
        k = zero_pivot(m)
        if k:
            what = ("The solver failed because the input matrix is singular." if solver else
                    f"The diagonal element {k} is zero, the inversion could not be completed "
                    f"because the input matrix is singular.")
            raise LinAlgError(f"{op}: {where(i, a)}{what}")
    if solver or mats.size:  # LAPACK refused it but our LU did not see a zero pivot
        raise LinAlgError(f"{op}: the input matrix is singular (to working precision)")


def not_pd_message(op: str, k: int, prefix: str = "") -> str:
    return (f"{op}: {prefix}The factorization could not be completed because the input is not "
            f"positive-definite (the leading minor of order {k} is not positive-definite).")


def raise_not_pd(op: str, a) -> None:
    mats = host(a).reshape((-1,) + a.shape[-2:])
    for i, m in enumerate(mats):
        k = failed_minor(m)
        if k:
            raise LinAlgError(not_pd_message(op, k, where(i, a)))


def raise_lu_info(op: str, info) -> None:
    """LinAlgError for the first non-zero ``info`` of an LU factorization (getrf's: the
    1-based index of the first exactly zero pivot of U), worded as PyTorch's."""
    flat = host(info).reshape(-1)
    bad = np.flatnonzero(flat)
    if bad.size:
        i, k = int(bad[0]), int(flat[bad[0]])
        prefix = f"(Batch element {i}): " if np.ndim(info) else ""
        raise LinAlgError(f"{op}: {prefix}U[{k},{k}] is zero and using it on lu_solve would "
                          f"result in a division by zero. If you still want to perform the "
                          f"factorization, consider calling linalg.lu(A, pivot) or "
                          f"linalg.lu_factor_ex(A, pivot)")
