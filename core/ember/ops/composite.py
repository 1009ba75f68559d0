"""Ops implemented once in core in terms of other ember ops (``dispatch: composite``).

A composite receives Tensors and plain values after the generated wrapper has checked
them, and returns a Tensor. Because it is built from ember ops, autograd and tracing see
through it without any extra code. Register one with ``@composite("name.overload")``.
"""
from __future__ import annotations

import warnings
from typing import Callable

from . import namespace as E
from .._base.hooks import AUTOGRAD as _autograd
from .._base.tracing_state import STATE as _tracing
from ..backends.kernels.matrix import trace_backward, trace_forward
from .._base.wrap_dim import wrap_dim
from ..dispatch import wrap as _wrap
from ..errors import DeviceMismatchError, DtypeError, ShapeError

COMPOSITES: dict[str, Callable] = {}


def composite(name: str):
    """Register the implementation of the composite op ``name``."""
    def register(fn):
        COMPOSITES[name] = fn
        return fn
    return register


@composite("rsub")
def rsub(self, other, alpha=1):
    # other - alpha * self: the reflected subtraction behind ``2 - x``.
    return E.sub(other, self, alpha=alpha)


@composite("expand_as")
def expand_as(self, other):
    return self.expand(other.shape)


@composite("type_as")
def type_as(self, other):
    return self.to(other.dtype)


@composite("view_as")
def view_as(self, other):
    return self.view(other.shape)


@composite("reshape_as")
def reshape_as(self, other):
    return self.reshape(other.shape)


@composite("swapaxes")
def swapaxes(self, axis0, axis1):
    return E.transpose(self, axis0, axis1)


@composite("swapdims")
def swapdims(self, dim0, dim1):
    return E.transpose(self, dim0, dim1)


@composite("movedim")
def movedim(self, source, destination):
    # a permutation: the moved dims go to their destinations, the others keep their order
    n = self.ndim
    src = [wrap_dim(d, n, "movedim") for d in source]
    dst = [wrap_dim(d, n, "movedim") for d in destination]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim(): invalid source or destination dims: source "
                           f"({list(source)}) should contain the same number of dims as "
                           f"destination ({list(destination)})")
    for name, dims, given in (("source", src, source), ("destination", dst, destination)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim(): repeated dim in `{name}` ({list(given)})")
    rest = iter(d for d in range(n) if d not in src)
    moved = dict(zip(dst, src))
    return self.permute([moved[i] if i in moved else next(rest) for i in range(n)])


@composite("moveaxis")
def moveaxis(self, source, destination):
    return movedim(self, source, destination)


@composite("zero_")
def zero_(self):
    return self.fill_(0)


# ---- matrices: diag_embed, diag, trace (over diagonal and diagonal_backward) -------------------

@composite("diag_embed")
def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    if self.ndim == 0:
        raise RuntimeError("diag_embed(): expected a tensor of at least 1 dim, got a 0-d one; "
                           "reshape it to (1,) first")
    given = (dim1, dim2)  # dims of the result, which has one more than self
    dim1, dim2 = (wrap_dim(d, self.ndim + 1, "diag_embed") for d in given)
    if dim1 == dim2:
        raise RuntimeError(f"diag_embed(): diagonal dimensions cannot be identical "
                           f"{given[0]}, {given[1]}; pass two different dims")
    # the embedding is diagonal's gradient: zeros with self on the chosen diagonal
    n = self.shape[-1] + abs(offset)
    sizes = list(self.shape[:-1])
    for d in sorted((dim1, dim2)):
        sizes.insert(d, n)
    return E.diagonal_backward(self, sizes, offset, dim1, dim2)


@composite("diag")
def diag(self, diagonal=0):
    if self.ndim == 1:
        return E.diag_embed(self, diagonal, 0, 1)
    if self.ndim == 2:
        return self.diagonal(diagonal).clone()
    raise RuntimeError(f"diag(): supports 1-D or 2-D tensors, got {self.ndim}-D (shape "
                       f"{list(self.shape)}); use diagonal() or diag_embed() for batches")


@composite("trace")
def trace(self):
    a = self._data
    if a.ndim != 2:
        raise RuntimeError(f"trace(): expected a matrix (2-D), got shape {list(self.shape)}; "
                           f"use x.diagonal(dim1=-2, dim2=-1).sum(-1) for batches")
    if a.dtype.kind == "b":
        raise NotImplementedError("trace(): not implemented for bool (as PyTorch); convert "
                                  "with .long() first")
    # NOTE: one kernel pair (one node, ~5 us less per call than diagonal + sum); the
    # composite below stays the reference for create_graph and tracing. Without grad or
    # trace the forward kernel alone (~1 us less than the pair's bookkeeping).
    if self.requires_grad or _tracing.active:  # (the property: a view of a leaf too)
        return _autograd.kernel_pair("trace", _trace_reference, trace_forward, trace_backward,
                                     (self,), ())
    backend = self._type.backend
    return _wrap(trace_forward(backend.xp, (a,), ())[0], backend)


def _trace_reference(self):
    return self.diagonal().sum()


# ---- closeness ---------------------------------------------------------------------------------

@composite("allclose")
def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return E.isclose(self, other, rtol, atol, equal_nan).all().item()


_EQUAL_FIRST_BLOCK = 4096


@composite("equal")
def equal(self, other):
    ty = self._type
    if ty is other._type and ty.backend.device_count == 1:
        # NOTE: one dtype on a one-device backend: the arrays' own == needs no promotion
        # or device check, and a Python bool records nothing for autograd or tracing;
        # E.eq(...).all().item() costs ~15 us of dispatch where torch takes ~2 us.
        a, b = self._data, other._data
        if a.shape != b.shape:
            return False
        a, b = a.reshape(-1), b.reshape(-1)
        n, start, size = a.shape[0], 0, _EQUAL_FIRST_BLOCK
        while start < n:
            end = start + size
            if not (a[start:end] == b[start:end]).all():
                return False
            start, size = end, 2 * size
        return True
    if tuple(self.shape) != tuple(other.shape):
        return False
    # NOTE: blocks that double in size, so a difference near the start returns after
    # a few thousand compares (as PyTorch's early exit) and equal inputs pay ~log2(n) calls
    a, b = self.reshape(-1), other.reshape(-1)
    n, start, size = a.shape[0], 0, _EQUAL_FIRST_BLOCK
    while start < n:
        size = min(size, n - start)
        if not E.eq(a.narrow(0, start, size), b.narrow(0, start, size)).all().item():
            return False
        start, size = start + size, 2 * size
    return True


# ---- data-dependent sizes ----------------------------------------------------------------------

@composite("argwhere")
def argwhere(self):
    return E.nonzero(self)


def _interleave_input(self, dim):
    """(self, dim) for repeat_interleave: flattened with dim 0 when dim is None."""
    if dim is None:
        return self.flatten(), 0
    return (self.reshape(1) if self.ndim == 0 else self), dim


@composite("repeat_interleave.self_int")
def repeat_interleave_self_int(self, repeats, dim=None, output_size=None):
    if repeats < 0:
        raise RuntimeError(f"repeat_interleave(): repeats can not be negative, got {repeats}")
    x, dim = _interleave_input(self, dim)
    counts = E.full((x.shape[dim],), repeats, dtype=E.int64, device=x.device)
    return x.index_select(dim, E.repeat_interleave(counts, output_size=output_size))


@composite("repeat_interleave.self_Tensor")
def repeat_interleave_self_tensor(self, repeats, dim=None, output_size=None):
    x, dim = _interleave_input(self, dim)
    n = x.shape[dim]
    if repeats.ndim > 1:
        raise RuntimeError(f"repeat_interleave(): repeats must be a 0-dim or 1-dim tensor, "
                           f"got shape {list(repeats.shape)}")
    if repeats.numel() == 1:  # one count for every entry, as PyTorch
        repeats = repeats.reshape(1).expand(n)
    elif repeats.shape[0] != n:
        raise RuntimeError(f"repeat_interleave(): repeats must have the same size as input "
                           f"along dim, but got repeats.size(0) = {repeats.shape[0]} and "
                           f"input.size({dim}) = {n}")
    return x.index_select(dim, E.repeat_interleave(repeats, output_size=output_size))


# ---- views and repetition ----------------------------------------------------------------------

@composite("broadcast_to")
def broadcast_to(self, size):
    return self.expand(size)


@composite("tile")
def tile(self, dims):
    dims = tuple(dims)
    return self.repeat((1,) * (self.ndim - len(dims)) + dims)


@composite("meshgrid")
def meshgrid(tensors, indexing=None):
    if indexing is None:
        warnings.warn("meshgrid(): in an upcoming release, it will be required to pass the "
                      "indexing argument; pass indexing='ij' (the default now) or 'xy'",
                      UserWarning, stacklevel=3)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid(): indexing must be 'ij' or 'xy', got {indexing!r}")
    if not tensors:
        raise ValueError("meshgrid(): expected a non-empty list of tensors")
    first = tensors[0]
    for i, t in enumerate(tensors):
        if t.ndim > 1:
            raise ShapeError(f"meshgrid(): expected 0-D or 1-D tensors, got shape "
                             f"{list(t.shape)} for tensor {i}; flatten it first")
        if t.dtype is not first.dtype:
            raise DtypeError(f"meshgrid(): expected all tensors to have dtype {first.dtype}, "
                             f"got {t.dtype} for tensor {i}; convert with .to()")
        if t.device != first.device:
            raise DeviceMismatchError(f"meshgrid(): expected all tensors on {first.device}, "
                                      f"got {t.device} for tensor {i}; move it with .to()")
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2  # Cartesian: the first two dims trade places
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    sizes = [t.numel() for t in ts]
    grids = []
    for i, t in enumerate(ts):
        shape = [1] * len(ts)
        shape[i] = -1
        grids.append(t.reshape(shape).expand(sizes))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


# NOTE: last, once ``composite`` exists: these modules register their ops on import
from . import composite_math, composite_select  # noqa: E402,F401
from . import composite_products, composite_stack  # noqa: E402,F401
from . import composite_blas, composite_numeric  # noqa: E402,F401
from . import composite_stats, composite_windows  # noqa: E402,F401
from . import composite_scatter, composite_shape, composite_split  # noqa: E402,F401
