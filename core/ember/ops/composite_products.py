"""Composite products and integrals (``dispatch: composite``): tensordot, kron, inner,
trapezoid, cumulative_trapezoid; and take, aminmax, heaviside (cdist lives with the other
distances in ``nn/functional/distance.py``).

Built from ember ops (permute, reshape, mm, sum, ...), so autograd and tracing see
through them. Registered on import by ``ops/composite.py``.
"""
from __future__ import annotations

import math
from collections import namedtuple

from . import namespace as E
from ..dispatch import wrap_dim
from ..errors import DtypeError, ShapeError
from .composite import composite

_AMINMAX = namedtuple("aminmax", ["min", "max"], module="ember.return_types")


def _same_dtype(op: str, a, b) -> None:
    if a.dtype is not b.dtype:
        raise DtypeError(f"{op}(): expected both inputs to have the same dtype, got {a.dtype} "
                         f"and {b.dtype}; convert one with .to({a.dtype}) first (as PyTorch)")


def _dims_pair(dims, a, b):
    """tensordot's ``dims``: an int n (last n of a, first n of b) or a pair of dim lists."""
    if isinstance(dims, E.Tensor):
        dims = dims.item() if dims.ndim == 0 else dims.tolist()
    if isinstance(dims, int) and not isinstance(dims, bool):
        if dims < 0:
            raise ValueError(f"tensordot(): expected dims >= 0, got {dims}")
        if dims > min(a.ndim, b.ndim):
            raise ShapeError(f"tensordot(): cannot contract {dims} dims of tensors of shapes "
                             f"{list(a.shape)} and {list(b.shape)}")
        return list(range(a.ndim - dims, a.ndim)), list(range(dims))
    if isinstance(dims, (list, tuple)) and len(dims) == 2:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
        if len(da) != len(db):
            raise ShapeError(f"tensordot(): expected two dim lists of one length, got {da} "
                             f"and {db}")
        return ([wrap_dim(d, a.ndim, "tensordot") for d in da],
                [wrap_dim(d, b.ndim, "tensordot") for d in db])
    raise TypeError(f"tensordot(): expected dims to be an int or a pair of dim lists, got "
                    f"{dims!r}")


@composite("tensordot")
def tensordot(self, other, dims=2):
    _same_dtype("tensordot", self, other)
    da, db = _dims_pair(dims, self, other)
    for i, j in zip(da, db):
        if self.shape[i] != other.shape[j]:
            raise ShapeError(f"tensordot(): contracted dims must match, but the first has size "
                             f"{self.shape[i]} in dim {i} and the second {other.shape[j]} in "
                             f"dim {j}")
    fa = [d for d in range(self.ndim) if d not in da]
    fb = [d for d in range(other.ndim) if d not in db]
    k = math.prod(self.shape[d] for d in da)
    a, b = self, other
    # NOTE: each permute / reshape is an op (~5 us at small sizes): only those that change
    # something (tensordot(a, b, 1) of two matrices is one mm)
    if fa + da != list(range(self.ndim)):
        a = a.permute(fa + da)
    if db + fb != list(range(other.ndim)):
        b = b.permute(db + fb)
    rows, cols = math.prod(self.shape[d] for d in fa), math.prod(other.shape[d] for d in fb)
    a = a if tuple(a.shape) == (rows, k) else a.reshape(rows, k)
    b = b if tuple(b.shape) == (k, cols) else b.reshape(k, cols)
    out = [self.shape[d] for d in fa] + [other.shape[d] for d in fb]
    r = E.mm(a, b)
    return r if list(r.shape) == out else r.reshape(out)


@composite("kron")
def kron(self, other):
    n = max(self.ndim, other.ndim)
    sa = [1] * (n - self.ndim) + list(self.shape)
    sb = [1] * (n - other.ndim) + list(other.shape)
    a = self.reshape([s for d in sa for s in (d, 1)])
    b = other.reshape([s for d in sb for s in (1, d)])
    return E.mul(a, b).reshape([x * y for x, y in zip(sa, sb)])


@composite("inner")
def inner(self, other):
    if self.ndim == 0 or other.ndim == 0:
        return E.mul(self, other)
    _same_dtype("inner", self, other)
    if self.shape[-1] != other.shape[-1]:
        raise ShapeError(f"inner(): expected the last dims to match, got shapes "
                         f"{list(self.shape)} and {list(other.shape)}")
    if other.ndim <= 2:  # (..., k) @ (m, k)^T: one matmul, its batch folded into a GEMM
        return E.matmul(self, other.mT if other.ndim == 2 else other)
    return tensordot(self, other, ([-1], [-1]))


def _to_float(y):
    return y if y.is_floating_point() else y.to(E.get_default_dtype())


def _pieces(y, dim: int):
    """(y[1:] + y[:-1]) / 2 along dim: the trapezoids' mean heights."""
    m = max(y.shape[dim] - 1, 0)
    return (y.narrow(dim, min(1, m), m) + y.narrow(dim, 0, m)) / 2


def _widths(op: str, y, x, dim: int):
    """x's spacings along dim, shaped to broadcast against the pieces."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise ShapeError(f"{op}(): expected one x value for each of the {y.shape[dim]} "
                             f"sample points along dim {dim}, got x of shape {list(x.shape)}")
        dx = E.diff(x)
        shape = [1] * y.ndim
        shape[dim] = dx.shape[0]
        return dx.reshape(shape)
    return E.diff(x, dim=dim - y.ndim)


@composite("trapezoid.x")
def trapezoid_x(y, x, dim=-1):
    dim = wrap_dim(dim, y.ndim, "trapezoid")
    return (_pieces(_to_float(y), dim) * _widths("trapezoid", y, x, dim)).sum(dim)


@composite("trapezoid.dx")
def trapezoid_dx(y, dx=1, dim=-1):
    dim = wrap_dim(dim, y.ndim, "trapezoid")
    y = _to_float(y)
    if y.shape[dim] < 2:
        return _pieces(y, dim).sum(dim) * dx
    # one pass over y, as PyTorch: the sum, less half of each end
    return (y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) * 0.5) * dx


@composite("cumulative_trapezoid.x")
def cumulative_trapezoid_x(y, x, dim=-1):
    dim = wrap_dim(dim, y.ndim, "trapezoid")
    return (_pieces(_to_float(y), dim) * _widths("cumulative_trapezoid", y, x, dim)).cumsum(dim)


@composite("cumulative_trapezoid.dx")
def cumulative_trapezoid_dx(y, dx=1, dim=-1):
    dim = wrap_dim(dim, y.ndim, "trapezoid")
    return (_pieces(_to_float(y), dim) * dx).cumsum(dim)


@composite("take")
def take(self, index):
    if index.dtype is not E.int64:
        raise DtypeError(f"take(): expected an int64 index tensor, got {index.dtype}; convert "
                         f"it with .long()")
    n = self.numel()
    if index.numel() and (bool((index >= n).any()) or bool((index < -n).any())):
        bad = index[(index >= n) | (index < -n)].reshape(-1)[0].item()
        raise IndexError(f"take(): index {bad} is out of range for a tensor of {n} elements")
    return self.reshape(-1)[index]


@composite("aminmax")
def aminmax(self, dim=None, keepdim=False):
    if self.numel() == 0 and (dim is None or self.ndim == 0 or self.shape[dim] == 0):
        raise IndexError(f"aminmax(): cannot reduce an empty dim (shape {list(self.shape)}): "
                         f"the operation has no identity; pass a dim of non-zero size")
    if dim is None:
        if keepdim and self.ndim:
            dims = list(range(self.ndim))
            return _AMINMAX(self.amin(dims, True), self.amax(dims, True))
        return _AMINMAX(self.amin(), self.amax())
    return _AMINMAX(self.amin(dim, keepdim), self.amax(dim, keepdim))


@composite("heaviside")
def heaviside(self, values):
    _same_dtype("heaviside", self, values)
    step = (self > 0).to(self.dtype)
    return E.where(self == 0, values, step)


@composite("ldexp")
def ldexp(self, other):
    return E.mul(self, E.pow(2.0, other))
