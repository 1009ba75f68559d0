"""Composite splitting ops (``dispatch: composite``): tensor_split (sections, indices or an
index tensor), hsplit / vsplit / dsplit, split_with_sizes, unsafe_split, unsafe_chunk.

Every piece is a ``narrow`` view of self, so it shares self's memory and its gradient flows
back through narrow's; unlike the outputs of the native ``split`` / ``chunk`` (one function
with several view outputs, of which only the first may be written in place, as in
PyTorch), each piece is a view of its own and may be written in place. Registered on
import by ``ops/composite.py``.
"""
from __future__ import annotations

from . import namespace as E
from ..dispatch import wrap_dim
from ..errors import DtypeError
from .composite import composite


def _dim(op: str, self, dim: int) -> int:
    if self.ndim == 0:
        raise RuntimeError(f"{op}(): expected at least a 1-dimensional tensor, but got a "
                           f"tensor with 0 dims; reshape it to (1,) first")
    return wrap_dim(dim, self.ndim, op)


def _pieces(self, dim: int, bounds) -> tuple:
    """Views self.narrow(dim, a, b - a) for consecutive (a, b) in ``bounds``."""
    return tuple(self.narrow(dim, a, max(b - a, 0)) for a, b in zip(bounds, bounds[1:]))


def _sections(op: str, self, sections: int, dim: int) -> tuple:
    if sections <= 0:
        raise RuntimeError(f"{op}(): number of sections must be larger than 0, got {sections}")
    n = self.shape[dim]
    size, extra = divmod(n, sections)
    bounds = [0]
    for i in range(sections):
        bounds.append(bounds[-1] + size + (1 if i < extra else 0))
    return _pieces(self, dim, bounds)


def _indices(self, indices, dim: int) -> tuple:
    n = self.shape[dim]
    # Python slicing: negative counts from the end, out-of-range clamps
    cuts = [min(max(i + n if i < 0 else i, 0), n) for i in indices]
    return _pieces(self, dim, [0, *cuts, n])


@composite("tensor_split.sections")
def tensor_split_sections(self, sections, dim=0):
    dim = _dim("tensor_split", self, dim)
    return _sections("tensor_split", self, sections, dim)


@composite("tensor_split.indices")
def tensor_split_indices(self, indices, dim=0):
    dim = _dim("tensor_split", self, dim)
    return _indices(self, indices, dim)


@composite("tensor_split.tensor_indices_or_sections")
def tensor_split_tensor(self, tensor_indices_or_sections, dim=0):
    t = tensor_indices_or_sections
    if t.dtype is not E.int64:
        raise DtypeError(f"tensor_split(): expected tensor_indices_or_sections to have dtype "
                         f"int64, but got {t.dtype}; convert it with .long()")
    if t.ndim > 1:
        raise RuntimeError(f"tensor_split(): expected tensor_indices_or_sections to be a "
                           f"zero-dimensional or one-dimensional tensor, but got a tensor "
                           f"with {t.ndim} dims")
    dim = _dim("tensor_split", self, dim)
    if t.ndim == 0:  # NOTE: the sizes are data: read on the host, as PyTorch does
        return _sections("tensor_split", self, int(t.item()), dim)
    return _indices(self, t.tolist(), dim)


def _directional(op: str, self, sections_or_indices, dim: int, min_dims: int) -> tuple:
    if self.ndim < min_dims:
        raise RuntimeError(f"{op}(): requires a tensor with at least {min_dims} dimension"
                           f"{'s' if min_dims > 1 else ''}, but got a tensor with {self.ndim} "
                           f"dimensions")
    if isinstance(sections_or_indices, int):
        n = self.shape[dim]
        if sections_or_indices == 0 or n % sections_or_indices:
            raise RuntimeError(f"{op}(): attempted to split along dimension {dim}, but the "
                               f"size of the dimension {n} is not divisible by the "
                               f"split_size {sections_or_indices}; pass a list of indices "
                               f"or use tensor_split")
        return _sections(op, self, sections_or_indices, dim)
    return _indices(self, sections_or_indices, dim)


@composite("hsplit.int")
def hsplit_int(self, sections):
    return _directional("hsplit", self, sections, 0 if self.ndim == 1 else 1, 1)


@composite("hsplit.array")
def hsplit_array(self, indices):
    return _directional("hsplit", self, list(indices), 0 if self.ndim == 1 else 1, 1)


@composite("vsplit.int")
def vsplit_int(self, sections):
    return _directional("vsplit", self, sections, 0, 2)


@composite("vsplit.array")
def vsplit_array(self, indices):
    return _directional("vsplit", self, list(indices), 0, 2)


@composite("dsplit.int")
def dsplit_int(self, sections):
    return _directional("dsplit", self, sections, 2, 3)


@composite("dsplit.array")
def dsplit_array(self, indices):
    return _directional("dsplit", self, list(indices), 2, 3)


@composite("split_with_sizes")
def split_with_sizes(self, split_sizes, dim=0):
    return E.split(self, list(split_sizes), dim)


@composite("unsafe_split")
def unsafe_split(self, split_size, dim=0):
    sizes = [p.shape[dim] for p in E.split(self.detach(), split_size, dim)]  # split's checks
    return _pieces(self, dim, [0, *_cumsum(sizes)])


@composite("unsafe_chunk")
def unsafe_chunk(self, chunks, dim=0):
    sizes = [p.shape[dim] for p in E.chunk(self.detach(), chunks, dim)]
    return _pieces(self, dim, [0, *_cumsum(sizes)])


def _cumsum(sizes) -> list:
    out, total = [], 0
    for s in sizes:
        total += s
        out.append(total)
    return out
