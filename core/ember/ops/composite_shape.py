"""Composite shape helpers (``dispatch: composite``): ravel, fliplr, flipud, narrow_copy,
diagflat, concatenate, broadcast_tensors, unravel_index; each a line or two over the ops
it names, so autograd and tracing see through it. Registered on import by
``ops/composite.py``.
"""
from __future__ import annotations

import ember as E

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
