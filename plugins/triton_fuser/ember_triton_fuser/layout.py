"""Layout: how a kernel walks its operands for one call, from their shapes and strides.

Broadcasting is done with strides: each operand (input piece or output) gets one stride
per dimension of the iteration shape, 0 where it is broadcast (a missing leading
dimension or a size-1 one). Dimensions are then merged where that changes nothing for any
operand (``stride[d] == stride[d+1] * size[d+1]`` in every one) and size-1 dimensions
dropped, so contiguous same-shape operands make a rank-1 walk whatever their rank. The
result's ``pattern`` says, per operand and merged dimension, whether the stride is 0, 1
or something else: it is part of the compile key (a stride of 1 lets Triton vectorize),
while the sizes and other strides are runtime arguments, so a new batch size reuses the
kernel.

A row kernel (one that reduces over the last dimension) keeps that dimension apart: the
leading dimensions are merged into rows, and the last one is the columns.

Reference: PyTorch's ``compressContiguous`` in ``torch/csrc/jit/fuser/executor.cpp`` and
TensorIterator's ``coalesce_dimensions``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Layout", "broadcast_shapes", "aligned_strides", "make_layout", "INT32_LIMIT"]

INT32_LIMIT = 2 ** 31 - 1


def broadcast_shapes(*shapes) -> tuple:
    """The numpy broadcast of ``shapes`` (tuples of ints), from ``np.broadcast_shapes``.
    Raises ValueError naming the shapes when they do not broadcast."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"shapes {' and '.join(map(str, shapes))} do not broadcast") from None


def aligned_strides(shape: tuple, strides: tuple, target: tuple) -> tuple:
    """Element strides of an operand of ``shape``/``strides`` walked over the broadcast
    shape ``target``: 0 for missing and size-1 dimensions."""
    lead = len(target) - len(shape)
    out = [0] * lead
    for size, stride in zip(shape, strides):
        out.append(0 if size == 1 else stride)
    return tuple(out)


def _merge(sizes: list, strides: list) -> tuple:
    """Drop size-1 dims and merge neighbours that are contiguous in every operand."""
    keep = [d for d, s in enumerate(sizes) if s != 1]
    sizes = [sizes[d] for d in keep]
    strides = [[st[d] for d in keep] for st in strides]
    d = len(sizes) - 2
    while d >= 0:
        if all(st[d] == st[d + 1] * sizes[d + 1] for st in strides):
            sizes[d] *= sizes[d + 1]
            del sizes[d + 1]
            for st in strides:
                st[d] = st[d + 1]
                del st[d + 1]
        d -= 1
    return sizes, strides


def _code(stride: int) -> int:
    return 0 if stride == 0 else 1 if stride == 1 else 2


@dataclass(frozen=True)
class Layout:
    """One call's walk (see the module docstring).

    Attributes:
        sizes: merged sizes, outermost first (the rows' dims for a row kernel); at least
            one entry.
        strides: per operand (inputs, then outputs), merged element strides.
        cols: a row kernel's last-dim size C, with ``col_strides`` per operand; None for a
            pointwise kernel.
        pattern: per operand, a tuple of stride codes (0: broadcast, 1: unit, 2: other),
            then for a row kernel the column code last: the compile key part.
        wide: whether offsets need 64-bit integers.
    """

    sizes: tuple
    strides: tuple
    cols: object
    col_strides: tuple
    pattern: tuple
    wide: bool

    @property
    def numel(self) -> int:
        """Elements walked (rows x cols for a row kernel)."""
        n = 1
        for s in self.sizes:
            n *= s
        return n * (self.cols if self.cols is not None else 1)

    @property
    def rows(self) -> int:
        """A row kernel's row count (the product of the merged leading sizes)."""
        n = 1
        for s in self.sizes:
            n *= s
        return n


def make_layout(shape: tuple, operands: list, rowwise: bool) -> Layout:
    """The Layout for iteration shape ``shape`` and ``operands``, a list of
    ``(shape, element_strides)`` (inputs then outputs), each broadcastable to ``shape``.

    For ``rowwise`` the last dimension is kept apart (``shape`` must have rank >= 1).
    """
    aligned = [aligned_strides(s, st, shape) for s, st in operands]
    if rowwise:
        lead, cols = list(shape[:-1]), shape[-1]
        col_strides = tuple(a[-1] if cols != 1 else 0 for a in aligned)
        sizes, strides = _merge(lead, [list(a[:-1]) for a in aligned])
    else:
        cols, col_strides = None, ()
        sizes, strides = _merge(list(shape), [list(a) for a in aligned])
    if not sizes:
        sizes, strides = [1], [[0] for _ in aligned]
    pattern = tuple(tuple(_code(s) for s in st) + ((_code(cs),) if rowwise else ())
                    for st, cs in zip(strides, col_strides or [None] * len(strides)))
    numel = 1
    for s in shape:
        numel *= s
    reach = max((sum((n - 1) * abs(s) for n, s in zip(shape, a)) for a in aligned), default=0)
    wide = numel > INT32_LIMIT or reach > INT32_LIMIT
    return Layout(tuple(sizes), tuple(tuple(s) for s in strides), cols, col_strides,
                  pattern, wide)
