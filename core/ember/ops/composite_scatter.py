"""Composite write-at-index ops (``dispatch: composite``): index_copy, index_reduce,
index_put, masked_scatter, put, and the ``*_scatter`` ops that replace one slice
(select_scatter, slice_scatter, diagonal_scatter; PyTorch's functional forms of writing
through a view).

Built from ember ops, so autograd and tracing see through them: slice updates write a
clone through a view (autograd's CopySlices routes the gradient), index updates scatter
or go through ``t[indices] = v``. Each ``_`` form comes from ``structured: inplace``.
Registered on import by ``ops/composite.py``.
"""
from __future__ import annotations

from . import namespace as E
from ..errors import DtypeError, ShapeError
from .composite import composite

INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def _same_dtype(op: str, self, other, name: str) -> None:
    if other.dtype is not self.dtype:
        raise DtypeError(f"{op}(): self and {name} expected to have the same dtype, but got "
                         f"(self) {self.dtype} and ({name}) {other.dtype}; convert {name} "
                         f"with .to({self.dtype})")


def _index_vector(op: str, index):
    if index.ndim > 1:
        raise IndexError(f"{op}(): index is supposed to be a vector (0-d or 1-d), got shape "
                         f"{list(index.shape)}; flatten it with .reshape(-1)")
    if index.dtype not in (E.int64, E.int32):
        raise DtypeError(f"{op}(): expected an int64 or int32 index, got {index.dtype}; "
                         f"convert it with .long()")
    return index if index.ndim == 1 else index.reshape(-1)


def _slices_index(op: str, self, dim: int, index, source):
    """(self as >= 1-d, index expanded to source's shape, source as >= 1-d): the scatter
    arguments that move slice i of source to slice index[i] of self along ``dim``."""
    idx = _index_vector(op, index)
    _same_dtype(op, self, source, "source")
    s = self.reshape(1) if self.ndim == 0 else self
    src = source.reshape(1) if source.ndim == 0 else source
    if src.ndim != s.ndim:
        raise ShapeError(f"{op}(): source and self must have the same number of dims (or "
                         f"both be scalars), got source shape {list(source.shape)} and self "
                         f"shape {list(self.shape)}")
    expect = list(s.shape)
    expect[dim] = idx.shape[0]
    if list(src.shape) != expect:
        raise ShapeError(f"{op}(): expected source of shape {expect} (self's shape "
                         f"{list(self.shape)} with dim {dim} of len(index) = "
                         f"{idx.shape[0]}), got {list(source.shape)}")
    if s.ndim == 1:
        return s, idx, src
    view = [1] * s.ndim
    view[dim] = -1
    return s, idx.reshape(view).expand(src.shape), src


@composite("index_copy")
def index_copy(self, dim, index, source):
    s, idx, src = _slices_index("index_copy", self, dim, index, source)
    out = s.scatter(dim, idx, src)
    return out if s is self else out.reshape(self.shape)


@composite("index_reduce")
def index_reduce(self, dim, index, source, reduce, include_self=True):
    if reduce not in INDEX_REDUCTIONS:
        raise ValueError(f"index_reduce(): reduce must be one of "
                         f"{', '.join(INDEX_REDUCTIONS)}, got {reduce!r}; use index_add "
                         f"for 'sum'")
    s, idx, src = _slices_index("index_reduce", self, dim, index, source)
    out = s.scatter_reduce(dim, idx, src, reduce, include_self=include_self)
    return out if s is self else out.reshape(self.shape)


@composite("index_put")
def index_put(self, indices, values, accumulate=False):
    from .._indexing import index_put_normalized, normalize
    _same_dtype("index_put", self, values, "values")
    out = self.clone()
    return index_put_normalized(out, normalize(out, tuple(indices))[0], values, accumulate)


@composite("masked_scatter")
def masked_scatter(self, mask, source):
    if mask.dtype is not E.bool_:
        raise DtypeError(f"masked_scatter(): expected a bool mask, got {mask.dtype}; "
                         f"compare to make one (mask != 0)")
    _same_dtype("masked_scatter", self, source, "source")
    if tuple(mask.shape) == tuple(self.shape):
        out = self.clone()
    else:
        shape = E.broadcast_shapes(self.shape, mask.shape)
        out = self.expand(shape).contiguous() if tuple(shape) != tuple(self.shape) else \
            self.clone()
        mask = mask.expand(shape)
    n = int(mask.sum())
    if source.numel() < n:
        raise RuntimeError(f"masked_scatter(): number of elements of source ({source.numel()}) "
                           f"< number of ones in mask ({n}); give source at least {n} elements")
    values = source.reshape(-1)
    # one bool-mask write (index_put_), which autograd routes back to self and source
    out[mask] = values if values.shape[0] == n else values[:n]
    return out


@composite("put")
def put(self, index, source, accumulate=False):
    if index.numel() != source.numel():
        raise IndexError(f"put(): expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, "
                         f"index.numel() = {index.numel()}")
    _same_dtype("put", self, source, "source")
    flat = self.reshape(-1)
    out = index_put(flat, (index.reshape(-1),), source.reshape(-1), accumulate)
    return out.reshape(self.shape)


def _replace(op: str, self, src, view_of):
    """A clone of self whose view ``view_of(clone)`` holds src (shapes must match)."""
    out = self.clone()
    part = view_of(out)
    if tuple(src.shape) != tuple(part.shape):
        raise RuntimeError(f"{op}(): expected src to have a size equal to the slice of self. "
                           f"src size = {list(src.shape)}, slice size = {list(part.shape)}")
    part.copy_(src)
    return out


@composite("select_scatter")
def select_scatter(self, src, dim, index):
    return _replace("select_scatter", self, src, lambda t: t.select(dim, index))


@composite("slice_scatter")
def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
    if step <= 0:
        raise RuntimeError(f"slice_scatter(): slice step must be positive, got {step}")
    where = (slice(None),) * dim + (slice(start, end, step),)
    return _replace("slice_scatter", self, src, lambda t: t[where])


@composite("diagonal_scatter")
def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    return _replace("diagonal_scatter", self, src, lambda t: t.diagonal(offset, dim1, dim2))


# scatter(..., reduce=): PyTorch's older API, scatter_reduce with include_self=True
_LEGACY_REDUCE = {"add": "sum", "multiply": "prod"}


def _legacy_reduce(reduce: str) -> str:
    if reduce not in _LEGACY_REDUCE:
        raise RuntimeError(f"scatter(): reduce argument must be either add or multiply, got "
                           f"{reduce!r}; use scatter_reduce for 'sum', 'prod', 'mean', "
                           f"'amax' or 'amin'")
    return _LEGACY_REDUCE[reduce]


@composite("scatter.reduce")
def scatter_reduce_legacy(self, dim, index, src, reduce):
    how = _legacy_reduce(reduce)
    if src.dtype is not self.dtype:
        raise DtypeError(f"scatter(): Expected self.dtype to be equal to src.dtype, got "
                         f"(self) {self.dtype} and (src) {src.dtype}; convert src with "
                         f".to({self.dtype})")
    return E.scatter_reduce(self, dim, index, src, how, include_self=True)


@composite("scatter.value_reduce")
def scatter_value_reduce(self, dim, index, value, reduce):
    how = _legacy_reduce(reduce)
    src = E.full(index.shape, value, device=self.device).to(self.dtype)
    return E.scatter_reduce(self, dim, index, src, how, include_self=True)
