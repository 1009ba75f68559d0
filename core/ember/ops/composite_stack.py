"""Composite stacking ops (``dispatch: composite``) over cat, stack and reshape: atleast_1d/
2d/3d, vstack (row_stack), hstack, dstack, column_stack, block_diag, cartesian_prod and
combinations, as PyTorch's ``aten/src/ATen/native/TensorShape.cpp`` and ``Itertools.cpp``.

Built from ember ops, so autograd and tracing see through them: each input's gradient is
the slice of the result it was copied to. Registered on import by ``ops/composite.py``.
"""
from __future__ import annotations

import itertools

import numpy as np

from . import namespace as E
from ..errors import ShapeError
from .composite import composite


@composite("atleast_1d")
def atleast_1d(self):
    return self.reshape(1) if self.ndim == 0 else self


@composite("atleast_1d.Sequence")
def atleast_1d_seq(tensors):
    return tuple(atleast_1d(t) for t in tensors)


@composite("atleast_2d")
def atleast_2d(self):
    if self.ndim == 0:
        return self.reshape(1, 1)
    return self.unsqueeze(0) if self.ndim == 1 else self


@composite("atleast_2d.Sequence")
def atleast_2d_seq(tensors):
    return tuple(atleast_2d(t) for t in tensors)


@composite("atleast_3d")
def atleast_3d(self):
    if self.ndim == 0:
        return self.reshape(1, 1, 1)
    if self.ndim == 1:
        return self.reshape(1, self.shape[0], 1)
    return self.unsqueeze(-1) if self.ndim == 2 else self


@composite("atleast_3d.Sequence")
def atleast_3d_seq(tensors):
    return tuple(atleast_3d(t) for t in tensors)


def _nonempty(op: str, tensors) -> None:
    if len(tensors) == 0:
        raise ValueError(f"{op}(): expected a non-empty list of tensors, got an empty one")


@composite("vstack")
def vstack(tensors):
    _nonempty("vstack", tensors)
    return E.cat([atleast_2d(t) for t in tensors], 0)


@composite("row_stack")
def row_stack(tensors):
    _nonempty("row_stack", tensors)
    return vstack(tensors)


@composite("hstack")
def hstack(tensors):
    _nonempty("hstack", tensors)
    rep = [atleast_1d(t) for t in tensors]
    return E.cat(rep, 0 if rep[0].ndim == 1 else 1)


@composite("dstack")
def dstack(tensors):
    _nonempty("dstack", tensors)
    return E.cat([atleast_3d(t) for t in tensors], 2)


@composite("column_stack")
def column_stack(tensors):
    _nonempty("column_stack", tensors)
    return hstack([t.reshape(t.numel(), 1) if t.ndim <= 1 else t for t in tensors])


@composite("block_diag")
def block_diag(tensors):
    blocks = []
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise ShapeError(f"block_diag(): expected tensors of 2 or fewer dims, but tensor {i} "
                             f"has shape {list(t.shape)}; reshape it to 2-D first")
        blocks.append(t.reshape(1, -1) if t.ndim < 2 else t)
    if not blocks:
        return E.zeros(1, 0)
    dtype = E.result_type(*blocks)
    device = blocks[0].device
    cols = sum(b.shape[1] for b in blocks)
    rows, c0 = [], 0
    for b in blocks:
        r, c = b.shape
        rows.append(E.cat([E.zeros(r, c0, dtype=dtype, device=device), b.to(dtype),
                           E.zeros(r, cols - c0 - c, dtype=dtype, device=device)], 1))
        c0 += c
    return E.cat(rows, 0)


def _check_1d(op: str, tensors) -> None:
    for i, t in enumerate(tensors):
        if t.ndim != 1:
            raise ShapeError(f"{op}(): expected 1-D tensors, but tensor {i} has shape "
                             f"{list(t.shape)}; flatten it with .reshape(-1) first")


@composite("cartesian_prod")
def cartesian_prod(tensors):
    _nonempty("cartesian_prod", tensors)
    _check_1d("cartesian_prod", tensors)
    if len(tensors) == 1:
        return tensors[0]
    grids = E.meshgrid(list(tensors), indexing="ij")
    return E.stack([g.reshape(-1) for g in grids], 1)


@composite("combinations")
def combinations(self, r=2, with_replacement=False):
    _check_1d("combinations", [self])
    if r < 0:
        raise ValueError(f"combinations(): expected a non-negative r, got {r}")
    if r == 0:
        return E.zeros(0, dtype=self.dtype, device=self.device)
    n = self.shape[0]
    if r == 2:  # the pairs are a triangle's coordinates, computed in O(N) without Python
        pairs = E.triu_indices(n, n, 0 if with_replacement else 1, device=self.device)
        index = pairs.t().reshape(-1)
        count = pairs.shape[1]
    else:
        pick = itertools.combinations_with_replacement if with_replacement else \
            itertools.combinations
        flat = np.fromiter(itertools.chain.from_iterable(pick(range(n), r)), dtype=np.int64)
        index = E.tensor(flat, device=self.device)
        count = flat.size // r
    return self[index].reshape(count, r)
