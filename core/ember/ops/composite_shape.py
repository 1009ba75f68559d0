"""Composite shape helpers (``dispatch: composite``): ravel, fliplr, flipud, narrow_copy,
diagflat, concatenate, broadcast_tensors, unravel_index; each a line or two over the ops
it names, so autograd and tracing see through it. Also the fronts of the strided views of
``backends/kernels/strided.py``: ``as_strided`` (passes the input's geometry on to
``_as_strided`` for the backward) and ``view.dtype`` (PyTorch's non-autograd view).
Registered on import by ``ops/composite.py``.
"""
from __future__ import annotations

from . import namespace as E
from ..backends.kernels import strided as _strided
from ..dispatch import wrap as _wrap
from .composite import composite


@composite("ravel")
def ravel(self):
    return self.reshape(-1)


@composite("fliplr")
def fliplr(self):
    if self.ndim < 2:
        raise RuntimeError(f"fliplr(): input must be >= 2-d, got shape {list(self.shape)}; "
                           f"use flip(0) for a vector")
    return self.flip([1])


@composite("flipud")
def flipud(self):
    if self.ndim < 1:
        raise RuntimeError("flipud(): input must be >= 1-d, got a 0-d tensor")
    return self.flip([0])


@composite("narrow_copy")
def narrow_copy(self, dim, start, length):
    return self.narrow(dim, start, length).clone()


@composite("diagflat")
def diagflat(self, offset=0):
    return E.diag(self.reshape(-1), offset)


@composite("concatenate")
def concatenate(tensors, axis=0):
    return E.cat(tensors, axis)


@composite("broadcast_tensors")
def broadcast_tensors(tensors):
    shape = E.broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t.expand(shape) for t in tensors)


@composite("unravel_index")
def unravel_index(indices, shape):
    if indices.is_floating_point() or indices.dtype is E.bool_:
        raise TypeError(f"unravel_index(): expected 'indices' to be integer dtype, but got "
                        f"{indices.dtype}")
    if any(s < 0 for s in shape):
        raise ValueError(f"unravel_index(): 'shape' cannot have negative values, but got "
                         f"{tuple(shape)}")
    if 0 in shape and indices.numel() > 0:
        raise ValueError(f"unravel_index(): no index fits a tensor of shape {tuple(shape)}, "
                         f"which has no elements")
    rest = indices.long()
    coords = []
    for size in reversed(shape):
        coords.append(E.remainder(rest, size))
        rest = E.floor_divide(rest, size)
    return tuple(reversed(coords))


@composite("where.cond")
def where_cond(condition):
    # torch.where(condition) is torch.nonzero(condition, as_tuple=True)
    return E.nonzero(condition, as_tuple=True)


def _storage(self) -> tuple:
    """(first byte, size in bytes, self's offset in elements) of self's storage: the memory
    of its base tensor, where Tensor.storage_offset() counts from."""
    root = self if self._base is None else self._base
    low, high = _strided.bounds(root._data)
    return low, high - low, (_strided.address(self._data) - low) // self._data.itemsize


@composite("as_strided")
def as_strided(self, size, stride, storage_offset=None):
    # the input's geometry travels as values for the kernel and the backward (torch's
    # TensorGeometry), so that autograd does not save self
    _, nbytes, own = _storage(self)
    offset = own if storage_offset is None else storage_offset
    return E._as_strided(self, size, stride, offset, self.stride(), own, nbytes)


@composite("view.dtype")
def view_dtype(self, dtype):
    # PyTorch's view(dtype) is not an autograd view (no _base, never requires grad) but
    # shares the version counter, so a write through it still invalidates saved tensors
    backend = self._type.backend
    out = _wrap(_strided.view_dtype(backend.xp, self._data, dtype, _storage(self)[2]),
                backend)
    root = self if self._base is None else self._base
    out._vc = root._version_counter()
    return out
