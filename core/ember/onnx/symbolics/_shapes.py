"""Helpers shared by the shape, slicing and indexing symbolics (``shape.py``,
``slicing.py``, ``indexing.py``) and by the layer ops (``nn.py``, ``pooling.py``): size
items (``_Dim``) and the 1-D shapes built from them, whether a dim follows a dynamic axis,
the Reshape / Slice / Transpose / Squeeze / Unsqueeze builders, and the batch and spatial
dims of convolution and pooling.
"""
from __future__ import annotations

import numpy as np

from ... import types as _t
from ..context import OnnxValue

INT64_MAX = int(np.iinfo(np.int64).max)   # "to the end" in Slice


# ---- size items and shapes -----------------------------------------------------------------

class _Dim:
    """A size item: dim ``j`` of the tensor a shape is built from (read at run time when
    it follows a dynamic axis)."""

    __slots__ = ("j",)

    def __init__(self, j: int):
        self.j = j


def _norm(dim: int, rank: int) -> int:
    """``dim`` wrapped into [0, rank) (a 0-d tensor takes dims 0 and -1, as in PyTorch)."""
    return dim % max(rank, 1)


def _dyn(x: OnnxValue, d: int) -> bool:
    """Whether dim ``d`` of ``x`` is not known statically."""
    return x.sizes is None or x.is_dynamic(d)


def _static(x: OnnxValue) -> bool:
    return x.sizes is not None and not any(x.dynamic or ())


def _flags(dyn, n: int) -> tuple:
    """``g.dynamic(i)`` of a list as ``n`` bools (a bare True marks them all)."""
    if isinstance(dyn, (tuple, list)):
        return tuple(bool(b) for b in dyn)
    return (bool(dyn),) * n


def _typed(v: OnnxValue, sizes, dynamic, dtype=None) -> OnnxValue:
    """``v`` with its traced sizes and dynamic dims filled in (for intermediate values and
    the items of returned lists, which the exporter does not annotate)."""
    v.sizes = None if sizes is None else tuple(sizes)
    v.dynamic = None if dynamic is None else tuple(bool(b) for b in dynamic)
    if dtype is not None:
        v.dtype = dtype
    return v


def _need_sizes(g, x: OnnxValue) -> tuple:
    if x.sizes is None:
        g.fail("the input's sizes are unknown to the exporter; this op needs them")
    return x.sizes


def _shape(g, x: OnnxValue, items) -> OnnxValue:
    """The 1-D int64 shape of ``items`` (ints, ``_Dim`` of ``x`` and rank-0 run-time
    sizes, ``SizeValue``): a constant when every size is static, else a ``Concat`` of
    constants, ``Shape`` slices of ``x`` and the run-time sizes unsqueezed to ``[1]``."""
    items = [x.sizes[it.j] if isinstance(it, _Dim) and not _dyn(x, it.j) else it
             for it in items]
    if all(isinstance(it, int) for it in items):
        return g.ints(items)
    parts, ints, dims = [], [], []

    def flush():
        if ints:
            parts.append(g.ints(ints))
            ints.clear()
        if dims:
            parts.append(g.shape_of(x, dims[0], dims[-1] + 1))
            dims.clear()

    for it in items:
        if isinstance(it, OnnxValue):     # a size computed at run time
            flush()
            parts.append(_unsqueeze(g, g.cast(it, _t.int64), [0]))
        elif isinstance(it, int):
            if dims:
                flush()
            ints.append(int(it))
        else:
            if ints or (dims and it.j != dims[-1] + 1):
                flush()
            dims.append(it.j)
    flush()
    return parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=0, dtype=_t.int64)


def _sizes_of(g, x: OnnxValue) -> OnnxValue:
    """``x``'s shape as a 1-D int64 value (a constant when static)."""
    if x.sizes is None:
        return g.shape_of(x)
    return _shape(g, x, [_Dim(j) for j in range(len(x.sizes))])


def _reshape(g, x: OnnxValue, items) -> OnnxValue:
    """``Reshape(x, items)``; ``items`` are ints (-1 at most once) and ``_Dim`` of ``x``.
    A dynamic ``_Dim(j)`` at position j becomes 0 (copy the input's dim); others are read
    at run time."""
    items = [x.sizes[it.j] if isinstance(it, _Dim) and not _dyn(x, it.j) else it
             for it in items]
    if x.sizes is not None and list(items) == list(x.sizes):
        return x
    ints = [it for it in items if isinstance(it, int)]
    zero = 0 in ints
    if len(ints) == len(items):
        if zero:
            if g.opset >= 14:
                return g.op("Reshape", x, g.ints(items), allowzero=1, dtype=x.dtype)
            if x.sizes is None or any(s == 0 and (i >= len(x.sizes) or x.sizes[i] != 0)
                                      for i, s in enumerate(items)):
                g.fail("a reshape to a size-0 dim needs opset_version >= 14 (Reshape's "
                       "allowzero)")
        return g.op("Reshape", x, g.ints(items), dtype=x.dtype)
    if not zero and all(isinstance(it, int) or isinstance(it, _Dim) and it.j == i
                        for i, it in enumerate(items)):
        target = [it if isinstance(it, int) else 0 for it in items]
        return g.op("Reshape", x, g.ints(target), dtype=x.dtype)
    allow = 1 if g.opset >= 14 and -1 not in ints else None
    return g.op("Reshape", x, _shape(g, x, items), allowzero=allow, dtype=x.dtype)


def _slice(g, x, starts, ends, axes, steps=None, dtype=None) -> OnnxValue:
    return g.op("Slice", x, g.ints(starts), g.ints(ends), g.ints(axes),
                None if steps is None else g.ints(steps), dtype=dtype or x.dtype)


def _perm(g, x: OnnxValue, perm) -> OnnxValue:
    perm = [int(p) for p in perm]
    if perm == list(range(len(perm))):
        return x
    return g.op("Transpose", x, perm=perm, dtype=x.dtype)


def _unsqueeze(g, x, axes) -> OnnxValue:
    return g.op("Unsqueeze", x, g.ints(axes), dtype=x.dtype)


def _squeeze(g, x, axes) -> OnnxValue:
    return g.op("Squeeze", x, g.ints(axes), dtype=x.dtype)


# ---- the batch and spatial dims of the layer ops -------------------------------------------

def _ntuple(value, n: int) -> list:
    """An int, or a list of one or ``n`` ints, as a list of ``n`` ints."""
    v = list(value) if isinstance(value, (list, tuple)) else [value]
    if len(v) == 1:
        v = v * n
    return [int(a) for a in v]


def _batched(g, x, nd: int):
    """``x`` with a batch dim (ONNX pooling needs (N, C, *spatial)), and whether one was
    added."""
    if x.rank == nd + 1:
        return _unsqueeze(g, x, [0]), True
    return x, False


def _unbatched(g, y, added: bool):
    return _squeeze(g, y, [0]) if added else y


def _spatial(x, nd: int) -> tuple:
    """The traced spatial sizes of ``x`` and whether any follows a dynamic axis."""
    sizes = tuple(x.sizes[-nd:])
    return sizes, any(x.is_dynamic(d) for d in range(-nd, 0))
