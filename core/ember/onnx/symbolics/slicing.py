"""Symbolics of the slicing, splitting, joining and reordering ops: ``narrow``,
``select``, ``split``, ``chunk``, ``unbind``, ``cat``, ``stack``, ``flip`` and ``roll``.

Mapping (ONNX operators, https://onnx.ai/onnx/operators/):

* ``narrow`` -> ``Slice``; ``select`` -> ``Gather`` with a scalar index; ``split``/
  ``split.sizes``/``chunk`` -> ``Split`` with the piece sizes as its ``split`` input
  (valid at every opset from 13: opset 18's ``num_outputs`` is never needed); ``unbind``
  -> ``Split`` + ``Squeeze``.
* ``cat`` -> ``Concat``; ``stack`` -> ``Unsqueeze`` + ``Concat``; ``flip`` -> ``Slice``
  with step -1; ``roll`` -> two ``Slice`` + ``Concat`` per dim.

Dynamic axes (how a traced size that follows one is written: see ``shape.py``): the end
of the dim for a slice that reaches it, and the rest of the dim (size minus the fixed
pieces) for split/narrow. ``chunk`` along a dynamic dim computes its piece size at run
time. Anything else stops the export with the reason and the way out (a slice bound such
as ``x.shape[0] - 1``: write ``-1``).

Departures:

* A chunk/split along a dynamic dim is correct at the sizes that give the traced number
  of pieces (other sizes change the model's structure, which ONNX cannot follow).

Reference: PyTorch's ``torch/onnx/symbolic_opset9.py``, ``symbolic_opset11.py``,
``symbolic_opset13.py``, ``symbolic_opset16.py`` and ``symbolic_opset18.py`` (the mapping;
own code) and the ONNX operator specifications.
"""
from __future__ import annotations

import numpy as np

from ... import types as _t
from ..context import OnnxValue
from ..registry import builtin
from ._shapes import (INT64_MAX, _flags, _need_sizes, _norm, _reshape, _sizes_of, _slice,
                      _squeeze, _typed, _unsqueeze)

INT64_MIN = int(np.iinfo(np.int64).min)   # "before the start" in Slice with step -1


# ---- helpers -----------------------------------------------------------------------------

def _pieces(g, x: OnnxValue, dim: int, split, sizes: list, varying: list) -> list:
    """``Split`` of ``x`` along ``dim`` by ``split`` (a 1-D int64 value), annotated with the
    traced piece ``sizes``; ``varying[i]``: whether piece i's size follows a dynamic axis."""
    outs = g.op("Split", x, split, axis=dim, outputs=len(sizes), dtype=x.dtype)
    outs = [outs] if len(sizes) == 1 else list(outs)
    base = list(x.dynamic or (False,) * len(x.sizes))
    res = []
    for o, n, v in zip(outs, sizes, varying):
        shape, flags = list(x.sizes), list(base)
        shape[dim], flags[dim] = n, v
        res.append(_typed(o, shape, flags))
    return res


def _static_split(g, x, dim, sizes) -> list:
    if len(sizes) == 1:
        return [x]
    return _pieces(g, x, dim, g.ints(sizes), sizes, [False] * len(sizes))


def _rest_split(g, x, dim, sizes, at: int) -> list:
    """Split sizes with piece ``at`` computed at run time as the rest of the dim."""
    fixed = sum(s for i, s in enumerate(sizes) if i != at)
    rest = g.op("Sub", g.shape_of(x, dim, dim + 1), g.ints([fixed]), dtype=_t.int64)
    parts = ([g.ints(sizes[:at])] if at else []) + [rest] + \
        ([g.ints(sizes[at + 1:])] if at + 1 < len(sizes) else [])
    split = parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=0, dtype=_t.int64)
    return _pieces(g, x, dim, split, sizes, [i == at for i in range(len(sizes))])


# ---- slicing and splitting -----------------------------------------------------------------

@builtin("ember::narrow")
def narrow(g, x, dim, start, length):
    """Slice [start, start + length); a start or length that follows the dim's dynamic size
    so that the slice reaches its end slices to the end."""
    sizes = _need_sizes(g, x)
    d = _norm(dim, len(sizes))
    n = sizes[d]
    dyn_start, dyn_len = bool(g.dynamic(2)), bool(g.dynamic(3))
    begin = start if start >= 0 else start + n
    reaches_end = begin + length == n
    if not (dyn_start or dyn_len):
        end = start + length
        if start < 0 and end >= 0:
            end = INT64_MAX
        return _slice(g, x, [start], [end], [d])
    if not (x.is_dynamic(d) and reaches_end and not (dyn_start and dyn_len)):
        g.fail(f"narrow: start {start} / length {length} follow a dynamic axis in a way ONNX "
               f"cannot express; write the slice with a negative start (x[..., -k:]) or a "
               f"fixed length")
    if dyn_len:     # a fixed start, to the end
        return _slice(g, x, [start], [INT64_MAX], [d])
    first = -length if length else INT64_MAX   # a fixed length counted from the end
    return _slice(g, x, [first], [INT64_MAX], [d])


@builtin("ember::select")
def select(g, x, dim, index):
    """Gather with a scalar index removes the dim; a negative index counts from the end."""
    sizes = _need_sizes(g, x)
    if g.dynamic(2):
        g.fail(f"select: index {index} follows a dynamic axis; ONNX would bake it in. Use a "
               f"negative index (x[-1]) to count from the end")
    d = _norm(dim, len(sizes))
    return g.op("Gather", x, g.scalar(int(index), dtype=_t.int64), axis=d, dtype=x.dtype)


@builtin("ember::split")
def split(g, x, split_size, dim):
    """Pieces of ``split_size`` (the last may be smaller, and is the rest of a dynamic dim)."""
    sizes = _need_sizes(g, x)
    d = _norm(dim, len(sizes))
    if g.dynamic(1):
        g.fail(f"split: split_size {split_size} follows a dynamic axis; the number of "
               f"pieces would change with it. Use chunk(n) with a fixed n")
    n, s = sizes[d], int(split_size)
    count = max(-(-n // s), 1) if s > 0 else 1
    pieces = [s] * (count - 1) + [n - s * (count - 1)]
    if x.is_dynamic(d) and count > 1:
        return _rest_split(g, x, d, pieces, count - 1)
    return _static_split(g, x, d, pieces)


@builtin("ember::split.sizes")
def split_sizes(g, x, split_sizes, dim):
    """Pieces of the given sizes; one size that follows the dynamic dim is computed at run
    time as the rest of the dim."""
    sizes = _need_sizes(g, x)
    d = _norm(dim, len(sizes))
    pieces = [int(s) for s in split_sizes]
    flags = _flags(g.dynamic(1), len(pieces))
    if not any(flags):
        return _static_split(g, x, d, pieces)
    if not x.is_dynamic(d) or sum(flags) != 1:
        g.fail(f"split: sizes {pieces} have {sum(flags)} entries that follow a dynamic axis; "
               f"ONNX can compute one (the rest of a dynamic dim being split). Split with one "
               f"size depending on the batch and the others fixed")
    return _rest_split(g, x, d, pieces, flags.index(True))


@builtin("ember::chunk")
def chunk(g, x, chunks, dim):
    """Pieces of ceil(size / chunks); along a dynamic dim the piece size is computed at run
    time (the number of pieces is the traced one)."""
    sizes = _need_sizes(g, x)
    d = _norm(dim, len(sizes))
    n, c = sizes[d], int(chunks)
    if n == 0:
        pieces = [0] * c
    else:
        k = -(-n // c)
        count = -(-n // k)
        pieces = [k] * (count - 1) + [n - k * (count - 1)]
    if not x.is_dynamic(d):
        return _static_split(g, x, d, pieces)
    count = len(pieces)
    if count == 1:
        return [x]
    size = g.shape_of(x, d, d + 1)
    k = g.op("Div", g.op("Add", size, g.ints([c - 1]), dtype=_t.int64), g.ints([c]),
             dtype=_t.int64)
    last = g.op("Sub", size, g.op("Mul", k, g.ints([count - 1]), dtype=_t.int64),
                dtype=_t.int64)
    split_ = g.op("Concat", *([k] * (count - 1)), last, axis=0, dtype=_t.int64)
    return _pieces(g, x, d, split_, pieces, [True] * count)


@builtin("ember::unbind")
def unbind(g, x, dim):
    """Split into size-1 pieces, each squeezed."""
    sizes = _need_sizes(g, x)
    d = _norm(dim, len(sizes))
    if x.is_dynamic(d):
        g.fail("unbind along a dynamic axis gives a number of tensors that follows its size; "
               "ONNX graphs have a fixed number of values")
    n = sizes[d]
    rest = [s for j, s in enumerate(sizes) if j != d]
    flags = [f for j, f in enumerate(x.dynamic or (False,) * len(sizes)) if j != d]
    pieces = _static_split(g, x, d, [1] * n) if n else []
    return [_typed(_squeeze(g, p, [d]), rest, flags) for p in pieces]


# ---- joining, reordering -------------------------------------------------------------------

@builtin("ember::cat")
def cat(g, tensors, dim):
    """Concat after casting to the promoted dtype; 1-d empty tensors are skipped."""
    dtype = g.out(0).dtype
    keep = [v for v in tensors if not (v.sizes == (0,) and not v.is_dynamic(0))] or \
        list(tensors[:1])
    rank = keep[0].rank if keep[0].rank is not None else 1
    vals = [g.cast(v, dtype) for v in keep]
    if len(vals) == 1:
        return vals[0]
    return g.op("Concat", *vals, axis=_norm(dim, rank), dtype=dtype)


@builtin("ember::stack")
def stack(g, tensors, dim):
    dtype = g.out(0).dtype
    rank = tensors[0].rank
    d = dim % (rank + 1)
    vals = [_unsqueeze(g, g.cast(v, dtype), [d]) for v in tensors]
    return vals[0] if len(vals) == 1 else g.op("Concat", *vals, axis=d, dtype=dtype)


@builtin("ember::flip")
def flip(g, x, dims):
    """Slice with step -1 from the last entry (-1) to before the first (INT64_MIN)."""
    rank = len(_need_sizes(g, x))
    dims = [dims] if isinstance(dims, int) else sorted({_norm(d, rank) for d in dims})
    if not dims or rank == 0:
        return x
    k = len(dims)
    return _slice(g, x, [-1] * k, [INT64_MIN] * k, dims, [-1] * k)


def _roll_dim(g, x, shift: int, d: int, n: int, dynamic: bool):
    """``x`` rolled by ``shift`` along ``d``: the last ``shift`` entries first."""
    if not dynamic:
        if n == 0 or shift % n == 0:
            return x
        k = shift % n
        return g.op("Concat", _slice(g, x, [-k], [INT64_MAX], [d]),
                    _slice(g, x, [0], [-k], [d]), axis=d, dtype=x.dtype)
    size = g.shape_of(x, d, d + 1)
    cut = g.op("Sub", size, g.op("Mod", g.ints([shift]), size, dtype=_t.int64),
               dtype=_t.int64)
    ax = g.ints([d])
    tail = g.op("Slice", x, cut, g.ints([INT64_MAX]), ax, dtype=x.dtype)
    head = g.op("Slice", x, g.ints([0]), cut, ax, dtype=x.dtype)
    return g.op("Concat", tail, head, axis=d, dtype=x.dtype)


@builtin("ember::roll")
def roll(g, x, shifts, dims):
    """Concat of the two Slices per dim; without dims, on the flattened tensor. The shift is
    taken modulo the size at run time along a dynamic dim."""
    sizes = _need_sizes(g, x)
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [dims] if isinstance(dims, int) else list(dims)
    if any(_flags(g.dynamic(1), len(shifts))):
        g.fail("roll: a shift follows a dynamic axis; ONNX would bake it in")
    if not dims:
        dyn = any(x.dynamic or ())
        numel = int(np.prod(sizes, dtype=np.int64))
        flat = _reshape(g, x, [-1 if dyn else numel]) if len(sizes) != 1 else x
        out = _roll_dim(g, flat, shifts[0], 0, numel, dyn)
        if len(sizes) == 1:
            return out
        return g.op("Reshape", out, _sizes_of(g, x), dtype=x.dtype)
    out = x
    for s, dim in zip(shifts, dims):
        d = _norm(dim, len(sizes))
        out = _roll_dim(g, out, int(s), d, sizes[d], x.is_dynamic(d))
    return out
