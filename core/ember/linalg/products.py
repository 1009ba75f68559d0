"""Products and powers: ``matrix_power``, ``multi_dot``, ``cross``, ``vecdot`` and the
Vandermonde matrix ``vander`` (composites over ember ops)."""
from __future__ import annotations

import numpy as np

from ..ops import namespace as E
from ..backends.kernels.vector_fused import cross_backward, cross_forward
from ..dispatch import wrap_dim
from ..errors import DtypeError, ShapeError
from .._base.hooks import AUTOGRAD as _autograd
from ..ops.composite import composite
from ._checks import need_float, need_matrix, need_same_dtype


@composite("linalg_matrix_power")
def _matrix_power(self, n):
    need_matrix("linalg.matrix_power", self, square=True)
    if n == 0:
        eye = E.eye(self.shape[-1], dtype=self.dtype, device=self.device)
        return eye.expand(self.shape).clone()
    base = E.linalg_inv(self) if n < 0 else self
    n, result = abs(n), None
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return result


def _chain_order(dims):
    """split[i][j]: where the cheapest product of matrices i..j splits (CLRS 15.2)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j], split[i][j] = min(
                (cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1], k)
                for k in range(i, j))
    return split


@composite("linalg_multi_dot")
def _multi_dot(tensors):
    op = "linalg.multi_dot"
    n = len(tensors)
    if n < 2:
        raise ValueError(f"{op}: expected at least 2 tensors but got {n}")
    mats = list(tensors)
    for i, t in enumerate(mats):
        ok = (1, 2) if i in (0, n - 1) else (2,)
        if t.ndim not in ok:
            raise ShapeError(f"{op}: tensor {i} must be {' or '.join(f'{d}D' for d in ok)} but "
                             f"got {t.ndim}D")
    first_1d, last_1d = mats[0].ndim == 1, mats[-1].ndim == 1
    if first_1d:
        mats[0] = mats[0].unsqueeze(0)
    if last_1d:
        mats[-1] = mats[-1].unsqueeze(-1)
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise ShapeError(f"{op}: tensors {i} and {i + 1} with shapes "
                             f"{list(tensors[i].shape)} and {list(tensors[i + 1].shape)} "
                             f"cannot be multiplied")
    split = _chain_order([mats[0].shape[0]] + [m.shape[1] for m in mats])

    def product(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return product(i, k) @ product(k + 1, j)

    r = product(0, n - 1)
    if first_1d:
        r = r.squeeze(0)
    if last_1d:
        r = r.squeeze(-1)
    return r


@composite("linalg_cross")
def _cross(self, other, dim=-1):
    try:
        shape = np.broadcast_shapes(tuple(self.shape), tuple(other.shape))
    except ValueError:
        raise ShapeError(f"linalg.cross: the shapes {list(self.shape)} and "
                         f"{list(other.shape)} do not broadcast") from None
    d = wrap_dim(dim, len(shape), "linalg.cross")
    sizes = [x.shape[i] if i >= 0 else 1 for x in (self, other)
             for i in (d - len(shape) + x.ndim,)]
    if sizes != [3, 3]:
        raise ShapeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                         f"{sizes[0]} and {sizes[1]}")
    a = self if tuple(self.shape) == shape else self.expand(shape)
    b = other if tuple(other.shape) == shape else other.expand(shape)
    if a.dtype is b.dtype:
        return _autograd.kernel_pair("linalg_cross", _cross_reference, cross_forward,
                                     cross_backward, (a, b), (d,))
    return _cross_reference(a, b, d)


def _cross_reference(a, b, d):
    """linalg.cross op by op (the fused kernels' reference)."""
    return a.roll(-1, d) * b.roll(-2, d) - a.roll(-2, d) * b.roll(-1, d)


@composite("linalg_vecdot")
def _vecdot(x, y, dim=-1):
    op = "linalg.vecdot"
    need_float(op, x)
    need_same_dtype(op, x, y, ("x", "y"))
    try:
        shape = np.broadcast_shapes(tuple(x.shape), tuple(y.shape))
    except ValueError:
        raise ShapeError(f"{op}: the shapes of x {list(x.shape)} and y {list(y.shape)} do "
                         f"not broadcast") from None
    return (x * y).sum(wrap_dim(dim, len(shape), op))


@composite("linalg_vander")
def _vander(x, N=None):
    op = "linalg.vander"
    if x.ndim == 0:
        raise ShapeError(f"{op}: x must have at least 1 dimension (*, n), got a 0-d tensor; "
                         f"use x.reshape(1)")
    if x.dtype is E.bool:
        raise DtypeError(f"{op} supports floating point and integer tensors, but got bool; "
                         f"convert with .long() or .float()")
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise ValueError(f"{op}: N must be greater than 1, got {n}")
    if not x.is_floating_point():
        x = x.to(E.int64)  # PyTorch's cumprod widens integers to int64
    powers = x.unsqueeze(-1).expand(*x.shape, n - 1).cumprod(-1)
    return E.cat([E.ones_like(powers[..., :1]), powers], -1)
