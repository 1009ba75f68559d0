"""Composite selection ops (``dispatch: composite``): median and nanmedian of all
elements (over the native ``median.dim``/``nanmedian.dim`` of the flattened tensor, whose
kernels select with a partition: kernels/selection.py), quantile and nanquantile over a
stable sort, and masked_select, rot90, diff.

Built from ember ops, so gradients need no formulas of their own: a value picked from
``sort`` sends its gradient to the element it came from (median's to the selected index,
quantile's through its interpolation weights, as PyTorch). The sort is stable with NaN
last, so equal values keep their input order and a slice's first NaN sits right after its
numbers. Registered on import by ``ops/composite.py``.
"""
from __future__ import annotations

import math

import numpy as np

from . import namespace as E
from ..dispatch import wrap_dim
from ..errors import DtypeError, ShapeError
from .composite import composite

INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _no_bool(op: str, x) -> None:
    if x.dtype is E.bool_:
        raise NotImplementedError(f"{op}(): not implemented for bool tensors (as PyTorch); "
                                  f"convert with .int() or .float() first")


def _median_all(op: str, self, ignore_nan: bool):
    _no_bool(op, self)
    if self.numel() == 0:
        if not self.is_floating_point():
            raise ShapeError(f"{op}(): cannot take the median of an empty {self.dtype} tensor "
                             f"(there is no NaN to return); pass a non-empty tensor")
        return E.full((), math.nan, dtype=self.dtype, device=self.device)
    along = E.nanmedian if ignore_nan else E.median
    return along(self if self.ndim == 1 else self.reshape(-1), 0).values


@composite("median")
def median(self):
    return _median_all("median", self, False)


@composite("nanmedian")
def nanmedian(self):
    return _median_all("nanmedian", self, True)


def _check_q(op: str, self, q):
    """q as a 0-d or 1-d tensor of self's dtype, after PyTorch's checks."""
    if isinstance(q, E.Tensor):
        if q.ndim > 1:
            raise ValueError(f"{op}(): q must be a number or a 0-d or 1-d tensor, got shape "
                             f"{list(q.shape)}")
        if q.dtype is not self.dtype:
            raise DtypeError(f"{op}(): q must have the input's dtype {self.dtype}, got "
                             f"{q.dtype}; convert it with q.to({self.dtype})")
        if q.numel() and not bool(((q >= 0) & (q <= 1)).all()):
            raise ValueError(f"{op}(): q values must be in the range [0, 1], got "
                             f"{q.tolist()}")
        return q
    if not 0 <= q <= 1:
        raise ValueError(f"{op}(): q must be in the range [0, 1], got {q}")
    return E.tensor(q, dtype=self.dtype, device=self.device)


def _quantile(op: str, self, q, dim, keepdim, interpolation, ignore_nan):
    if self.dtype is not E.float32 and self.dtype is not E.float64:
        raise DtypeError(f"{op}(): expected a float32 or float64 input, got {self.dtype}; "
                         f"convert it with .float() or .double()")
    q = _check_q(op, self, q)
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"{op}(): interpolation must be one of {', '.join(INTERPOLATIONS)}, "
                         f"got {interpolation!r}")
    if self.numel() == 0:
        raise ShapeError(f"{op}(): the input must be non-empty, got shape {list(self.shape)}")
    x = self.reshape(-1) if dim is None or self.ndim == 0 else self
    # sorted slices along the last dim, with a leading dim for the q values
    s = x.sort(0 if dim is None else dim).values.movedim(0 if dim is None else dim, -1)
    s = s.unsqueeze(0)
    qs = q.reshape((-1,) + (1,) * (s.ndim - 1))
    n = s.shape[-1]
    nans = (s != s).sum(-1, keepdim=True)  # noqa: PLR0124
    if ignore_nan:  # rank among the numbers; an all-NaN slice takes its first NaN
        ranks = (qs * (n - 1 - nans)).clamp(min=0)
    else:  # a slice holding NaN takes its last element, a NaN
        ranks = E.where(nans > 0, float(n - 1), qs * (n - 1))
    if interpolation in ("lower", "higher", "nearest"):
        ranks = {"lower": E.floor, "higher": E.ceil, "nearest": E.round}[interpolation](ranks)
    s = s.expand((ranks.shape[0],) + tuple(s.shape[1:]))
    below = ranks.to(E.int64)
    values = s.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        weights = E.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        values = values.lerp(s.gather(-1, ranks.ceil().to(E.int64)), weights)
    values = values.squeeze(-1)  # (len(q), *self.shape without dim)
    if keepdim and self.ndim:
        values = values.reshape((values.shape[0],) + (1,) * self.ndim) if dim is None else \
            values.unsqueeze(dim + 1)
    return values.squeeze(0) if q.ndim == 0 else values


@composite("quantile")
def quantile(self, q, dim=None, keepdim=False, interpolation="linear"):
    return _quantile("quantile", self, q, dim, keepdim, interpolation, False)


@composite("quantile.scalar")
def quantile_scalar(self, q, dim=None, keepdim=False, interpolation="linear"):
    return _quantile("quantile", self, q, dim, keepdim, interpolation, False)


@composite("nanquantile")
def nanquantile(self, q, dim=None, keepdim=False, interpolation="linear"):
    return _quantile("nanquantile", self, q, dim, keepdim, interpolation, True)


@composite("nanquantile.scalar")
def nanquantile_scalar(self, q, dim=None, keepdim=False, interpolation="linear"):
    return _quantile("nanquantile", self, q, dim, keepdim, interpolation, True)


@composite("masked_select")
def masked_select(self, mask):
    if mask.dtype is not E.bool_:
        raise DtypeError(f"masked_select(): expected a bool mask, got {mask.dtype}; pass "
                         f"mask.bool() or (mask != 0)")
    try:
        shape = tuple(np.broadcast_shapes(tuple(self.shape), tuple(mask.shape)))
    except ValueError:
        raise ShapeError(f"masked_select(): the shapes of self {list(self.shape)} and mask "
                         f"{list(mask.shape)} do not broadcast") from None
    return self.expand(shape)[mask.expand(shape)]


@composite("rot90")
def rot90(self, k=1, dims=(0, 1)):
    if len(dims) != 2:
        raise RuntimeError(f"rot90(): expected exactly 2 rotation dims, got dims={list(dims)}")
    if self.ndim < 2:
        raise RuntimeError(f"rot90(): expected a tensor with at least 2 dims, got "
                           f"{self.ndim}-d of shape {list(self.shape)}")
    d0, d1 = (wrap_dim(d, self.ndim, "rot90") for d in dims)
    if d0 == d1:
        raise RuntimeError(f"rot90(): expected the two rotation dims to differ, got "
                           f"dims={list(dims)}")
    k %= 4
    if k == 1:
        return self.flip([d1]).transpose(d0, d1)
    if k == 2:
        return self.flip([d0, d1])
    if k == 3:
        return self.flip([d0]).transpose(d0, d1)
    return self.clone()


@composite("diff")
def diff(self, n=1, dim=-1, prepend=None, append=None):
    if self.ndim == 0:
        raise RuntimeError("diff(): expected a tensor with at least 1 dim, got a 0-d tensor; "
                           "reshape it first, e.g. x.reshape(1)")
    if n < 0:
        raise RuntimeError(f"diff(): the order n must be non-negative, got {n}")
    dim = wrap_dim(dim, self.ndim, "diff")
    for name, t in (("prepend", prepend), ("append", append)):
        if t is not None and t.ndim != self.ndim:
            raise RuntimeError(f"diff(): expected {name} to have self's number of dims "
                               f"({self.ndim}), got shape {list(t.shape)}")
    parts = [t for t in (prepend, self, append) if t is not None]
    x = E.cat(parts, dim) if len(parts) > 1 else self
    if n == 0 or x.shape[dim] == 0:
        return x.clone() if x is self else x  # a new tensor, as PyTorch
    for _ in range(n):
        m = x.shape[dim]
        if m == 0:
            break
        hi, lo = x.narrow(dim, 1, m - 1), x.narrow(dim, 0, m - 1)
        x = hi != lo if x.dtype is E.bool_ else hi - lo  # bool: logical xor, as PyTorch
    return x
