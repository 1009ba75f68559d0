"""Symbolics of the shape, view and indexing ops.

Mapping (ONNX operators, https://onnx.ai/onnx/operators/):

* ``view``/``reshape``/``view_as``/``reshape_as``/``flatten``/``unflatten`` -> ``Reshape``
  (``Flatten`` for ``flatten(1)`` of a rank >= 2 tensor); ``permute``/``transpose``/
  ``swapaxes``/``swapdims``/``t``/``movedim``/``moveaxis`` -> ``Transpose``;
  ``squeeze``/``unsqueeze`` -> ``Squeeze``/``Unsqueeze`` (axes as inputs, opset 13);
  ``expand``/``expand_as`` -> ``Expand``; ``contiguous``/``clone`` -> the input itself.
* ``narrow`` -> ``Slice``; ``select`` -> ``Gather`` with a scalar index; ``split``/
  ``split.sizes``/``chunk`` -> ``Split`` with the piece sizes as its ``split`` input
  (valid at every opset from 13: opset 18's ``num_outputs`` is never needed); ``unbind``
  -> ``Split`` + ``Squeeze``.
* ``cat`` -> ``Concat``; ``stack`` -> ``Unsqueeze`` + ``Concat``; ``flip`` -> ``Slice``
  with step -1; ``roll`` -> two ``Slice`` + ``Concat`` per dim; ``repeat`` -> ``Tile``.
* ``type_as`` and ``_to_copy`` (what ``Tensor.to(dtype)`` traces to) -> ``Cast``.
* ``index`` (``x[...]``): ints, slices (positive steps; negative starts and stops count
  from the end, as in ``Slice``), None and one bool -> ``Slice`` + ``Squeeze`` +
  ``Unsqueeze``; then one integer index tensor -> ``Gather``, one bool mask ->
  ``Compress``, several integer tensors -> ``GatherND`` (PyTorch's placement of the
  result dims: where the tensors were when they are adjacent, else first).
* ``index_select`` -> ``Gather``; ``gather`` -> ``GatherElements``; ``scatter``/
  ``scatter.value`` -> ``ScatterElements``; ``scatter_add`` -> ``ScatterElements`` with
  ``reduction="add"`` (opset 16 on); ``take_along_dim`` -> ``Expand`` + ``GatherElements``
  (``Gather`` on the flattened tensor without dim); ``one_hot`` -> ``OneHot``
  (``num_classes=-1`` reads ``max + 1`` at run time).

Dynamic axes. A trace bakes sizes in (``x.view(x.shape[0], -1)`` records ``[4, -1]``);
the ops that take sizes read ``g.dynamic`` and write each size that follows a dynamic
axis as: ``0`` in a ``Reshape`` target when it is the same dynamic dim of the input,
``-1`` when it is the only unknown, the size read at run time (``Shape``) when it is a
dynamic dim of the input elsewhere, ``1`` in an ``Expand`` shape for a dim it keeps, the
end of the dim for a slice that reaches it, and the rest of the dim (size minus the fixed
pieces) for split/narrow. ``chunk`` along a dynamic dim computes its piece size at run
time. Anything else stops the export with the reason and the way out (a size taken from
another tensor, a slice bound such as ``x.shape[0] - 1``: write ``-1``).

Departures:

* ``index_select``/``gather``/``scatter`` raise in ember for out-of-range indices; ONNX
  runtimes give an error or wrap negative ones. ``one_hot`` gives a zero row where ember
  raises (ONNX OneHot).
* A chunk/split along a dynamic dim is correct at the sizes that give the traced number
  of pieces (other sizes change the model's structure, which ONNX cannot follow).
* A ``Reshape`` whose target is read at run time uses ``allowzero=1`` (opset 14 on); at
  opset 13 a run-time size of 0 would copy the input's dim instead.
* In-place ops (``scatter_``, ``fill_``, ``copy_``, ``x[i] = v``) are not exported: on a
  view they change the base tensor, which a functional graph cannot follow.
* ``x[index_tensor]``: the tracer records index tensors as values in ``index``'s list
  (``ember/_indexing.py``), so an index computed from the inputs stays a graph value.

Reference: PyTorch's ``torch/onnx/symbolic_opset9.py``, ``symbolic_opset11.py``,
``symbolic_opset13.py``, ``symbolic_opset16.py`` and ``symbolic_opset18.py`` (the mapping;
own code) and the ONNX operator specifications.
"""
from __future__ import annotations

import numpy as np

from ... import types as _t
from ..context import OnnxValue
from ..registry import builtin

INT64_MAX = int(np.iinfo(np.int64).max)   # "to the end" in Slice
INT64_MIN = int(np.iinfo(np.int64).min)   # "before the start" in Slice with step -1


# ---- helpers -----------------------------------------------------------------------------

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
    """The 1-D int64 shape of ``items`` (ints and ``_Dim`` of ``x``): a constant when every
    size is static, else a ``Concat`` of constants and ``Shape`` slices of ``x``."""
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
        if isinstance(it, int):
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
    if not zero and all(isinstance(it, int) or it.j == i for i, it in enumerate(items)):
        target = [it if isinstance(it, int) else 0 for it in items]
        return g.op("Reshape", x, g.ints(target), dtype=x.dtype)
    allow = 1 if g.opset >= 14 and -1 not in ints else None
    return g.op("Reshape", x, _shape(g, x, items), allowzero=allow, dtype=x.dtype)


def _source_dim(x: OnnxValue, size: int, at: int):
    """The dynamic dim of ``x`` that a traced ``size`` stands for: ``at`` when that is one,
    else the only dynamic dim of that size; None if there is none or several."""
    if x.sizes is None or not x.dynamic:
        return None
    dims = [j for j, (s, d) in enumerate(zip(x.sizes, x.dynamic)) if d and s == size]
    if at in dims:
        return at
    return dims[0] if len(dims) == 1 else None


def _resolve_sizes(g, x: OnnxValue, sizes, dyn, what: str, offset: int = 0) -> list:
    """Size items for a ``Reshape`` target: static sizes as they are; a size following a
    dynamic axis as the input dim it equals, or -1 when it is the only unknown one.
    ``offset``: the output position of ``sizes[0]``."""
    flags = _flags(dyn, len(sizes))
    items, unknown = [], []
    for i, (s, d) in enumerate(zip(sizes, flags)):
        if not d:
            items.append(int(s))
            continue
        j = _source_dim(x, s, offset + i)
        if j is None:
            unknown.append(i)
        items.append(None if j is None else _Dim(j))
    if unknown:
        if len(unknown) > 1 or -1 in items:
            g.fail(f"{what}: sizes {list(sizes)} have {len(unknown)} entries that follow a "
                   f"dynamic axis and are no dim of the input (besides a -1); write one of "
                   f"them as -1 or take them from the input's own shape")
        items[unknown[0]] = -1
    return items


def _slice(g, x, starts, ends, axes, steps=None, dtype=None) -> OnnxValue:
    return g.op("Slice", x, g.ints(starts), g.ints(ends), g.ints(axes),
                None if steps is None else g.ints(steps), dtype=dtype or x.dtype)


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


def _perm(g, x: OnnxValue, perm) -> OnnxValue:
    perm = [int(p) for p in perm]
    if perm == list(range(len(perm))):
        return x
    return g.op("Transpose", x, perm=perm, dtype=x.dtype)


def _unsqueeze(g, x, axes) -> OnnxValue:
    return g.op("Unsqueeze", x, g.ints(axes), dtype=x.dtype)


def _squeeze(g, x, axes) -> OnnxValue:
    return g.op("Squeeze", x, g.ints(axes), dtype=x.dtype)


# ---- reshaping -----------------------------------------------------------------------------

@builtin("ember::view", "ember::reshape")
def view(g, x, size):
    """Reshape; sizes following a dynamic axis become 0, a run-time size or -1."""
    size = [size] if isinstance(size, int) else list(size)
    items = _resolve_sizes(g, x, size, g.dynamic(1), "view/reshape")
    return _reshape(g, x, items)


@builtin("ember::view_as", "ember::reshape_as")
def view_as(g, x, other):
    """Reshape to ``other``'s shape, read at run time when it has dynamic dims."""
    if _static(other):
        return _reshape(g, x, list(other.sizes))
    allow = 1 if g.opset >= 14 else None
    return g.op("Reshape", x, g.shape_of(other), allowzero=allow, dtype=x.dtype)


@builtin("ember::flatten")
def flatten(g, x, start_dim, end_dim):
    """Dims start..end merged: Flatten for (1, -1), else Reshape (0 copies a leading dim)."""
    sizes = _need_sizes(g, x)
    rank = len(sizes)
    if rank == 0:
        return g.op("Reshape", x, g.ints([1]), dtype=x.dtype)
    start, end = _norm(start_dim, rank), _norm(end_dim, rank)
    if start == end:
        return x
    if start == 1 and end == rank - 1:
        return g.op("Flatten", x, axis=1, dtype=x.dtype)
    merged = range(start, end + 1)
    mid = -1 if any(_dyn(x, j) for j in merged) else int(np.prod([sizes[j] for j in merged]))
    items = [_Dim(j) for j in range(start)] + [mid] + [_Dim(j) for j in range(end + 1, rank)]
    return _reshape(g, x, items)


@builtin("ember::unflatten")
def unflatten(g, x, dim, sizes):
    """Dim ``dim`` split into ``sizes``: a Reshape keeping the other dims."""
    shape = _need_sizes(g, x)
    rank = len(shape)
    d = _norm(dim, rank)
    sizes = [sizes] if isinstance(sizes, int) else list(sizes)
    mid = _resolve_sizes(g, x, sizes, g.dynamic(2), "unflatten", offset=d)
    items = [_Dim(j) for j in range(d)] + mid + [_Dim(j) for j in range(d + 1, rank)]
    return _reshape(g, x, items)


@builtin("ember::contiguous", "ember::clone", "ember::detach")
def identity(g, x):
    """No layout and no autograd in ONNX: the value itself."""
    return x


@builtin("ember::squeeze")
def squeeze(g, x, dim):
    """Squeeze the size-1 dims (of ``dim``, or all); a dynamic dim is never squeezed."""
    sizes = _need_sizes(g, x)
    rank = len(sizes)
    if rank == 0:
        return x
    dims = range(rank) if dim is None else \
        sorted({_norm(d, rank) for d in ([dim] if isinstance(dim, int) else dim)})
    axes = []
    for d in dims:
        if sizes[d] != 1:
            continue
        if x.is_dynamic(d):
            g.fail(f"squeeze of dim {d}, which follows a dynamic axis and had size 1 when "
                   f"traced: whether it is removed depends on the size; squeeze only static "
                   f"dims, or trace with that axis larger than 1")
        axes.append(d)
    return _squeeze(g, x, axes) if axes else x


@builtin("ember::unsqueeze")
def unsqueeze(g, x, dim):
    rank = len(_need_sizes(g, x))
    return _unsqueeze(g, x, [dim % (rank + 1)])


# ---- permutations --------------------------------------------------------------------------

@builtin("ember::permute")
def permute(g, x, dims):
    rank = len(_need_sizes(g, x))
    return _perm(g, x, [_norm(d, rank) for d in dims])


@builtin("ember::transpose", "ember::swapaxes", "ember::swapdims")
def transpose(g, x, dim0, dim1):
    rank = len(_need_sizes(g, x))
    if rank < 2:
        return x
    perm = list(range(rank))
    a, b = _norm(dim0, rank), _norm(dim1, rank)
    perm[a], perm[b] = perm[b], perm[a]
    return _perm(g, x, perm)


@builtin("ember::t")
def t(g, x):
    return x if len(_need_sizes(g, x)) < 2 else _perm(g, x, [1, 0])


@builtin("ember::movedim", "ember::moveaxis")
def movedim(g, x, source, destination):
    """PyTorch's order: moved dims at their destinations, the others in order around."""
    rank = len(_need_sizes(g, x))
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src, dst = [_norm(s, rank) for s in src], [_norm(d, rank) for d in dst]
    perm = [None] * rank
    for s, d in zip(src, dst):
        perm[d] = s
    rest = iter(j for j in range(rank) if j not in src)
    perm = [p if p is not None else next(rest) for p in perm]
    return _perm(g, x, perm)


# ---- broadcasting and tiling ---------------------------------------------------------------

@builtin("ember::expand")
def expand(g, x, size):
    """Expand (bidirectional broadcast): -1, and a dynamic size equal to the input's own
    dynamic dim, become 1 (keep the dim); another dynamic dim of the input is read at run
    time."""
    shape = _need_sizes(g, x)
    size = [size] if isinstance(size, int) else list(size)
    flags = _flags(g.dynamic(1), len(size))
    lead = len(size) - len(shape)
    items = []
    for i, (s, d) in enumerate(zip(size, flags)):
        j = i - lead
        if s == -1:
            items.append(1)
        elif not d:
            items.append(int(s))
        elif j >= 0 and x.is_dynamic(j) and shape[j] == s:
            items.append(1)
        else:
            src = _source_dim(x, s, j)
            if src is None:
                g.fail(f"expand: size {s} at position {i} follows a dynamic axis but is no "
                       f"dynamic dim of the expanded tensor (it comes from another tensor); "
                       f"use expand_as(other), or broadcasting (x + zeros_like(other))")
            items.append(_Dim(src))
    return g.op("Expand", x, _shape(g, x, items), dtype=x.dtype)


@builtin("ember::expand_as")
def expand_as(g, x, other):
    return g.op("Expand", x, _sizes_of(g, other), dtype=x.dtype)


@builtin("ember::repeat")
def repeat(g, x, repeats):
    """Tile, after Unsqueeze for the extra leading repeats."""
    rank = len(_need_sizes(g, x))
    repeats = [repeats] if isinstance(repeats, int) else [int(r) for r in repeats]
    if any(_flags(g.dynamic(1), len(repeats))):
        g.fail("repeat: a repeat count follows a dynamic axis; ONNX would bake it in. Use "
               "expand / expand_as where the tensor has size 1 there")
    extra = len(repeats) - rank
    if extra > 0:
        x = _unsqueeze(g, x, range(extra))
    if all(r == 1 for r in repeats):
        return x
    return g.op("Tile", x, g.ints(repeats), dtype=x.dtype)


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


# ---- dtype ---------------------------------------------------------------------------------

@builtin("ember::type_as")
def type_as(g, x, other):
    """Cast to ``other``'s dtype; the value itself when they match."""
    dtype = other.dtype or g.out(0).dtype
    return g.cast(x, dtype)


@builtin("ember::_to_copy")
def to_copy(g, x, dtype, device):
    """``Tensor.to(dtype[, device])``: Cast. ONNX models carry no device: cpu only."""
    if device is not None:
        kind = getattr(device, "type", None) or str(device).partition(":")[0]
        if kind != "cpu":
            g.fail(f"Tensor.to({str(device)!r}): ONNX models have no device; export the "
                   f"model on cpu and leave device moves out of forward (the runtime picks "
                   f"its own device)")
    return x if dtype is None else g.cast(x, dtype)


# ---- indexing ------------------------------------------------------------------------------

def _slice_bounds(g, it: slice, n: int, dynamic: bool, dim_dynamic: bool) -> tuple:
    """(start, end) of a slice of ``x[...]`` as ONNX Slice bounds. A slice that follows a
    dynamic axis is accepted when it is along that dynamic dim and its one bound is the
    dim's traced size (the end)."""
    lo = 0 if it.start is None else int(it.start)
    hi = INT64_MAX if it.stop is None else int(it.stop)
    if not dynamic:
        return lo, hi
    given = [b for b in (it.start, it.stop) if b is not None]
    if dim_dynamic and len(given) == 1 and given[0] == n:
        return (INT64_MAX, hi) if it.start is not None else (lo, INT64_MAX)
    g.fail(f"index: the slice {it.start}:{it.stop} follows a dynamic axis (like "
           f"x[:x.shape[0] - 1]); ONNX would bake it in. Write it with None or negative "
           f"bounds (x[1:], x[:-1]), which count from the end at any size")


def _basic_index(g, x, indices, flags):
    """Ints, slices, None and bools of ``x[indices]``: Slice, Squeeze, Unsqueeze. Returns
    (the view, [(dim in the view, index tensor), ...]) with the view annotated."""
    sizes = list(_need_sizes(g, x))
    dyn = list(x.dynamic or (False,) * len(sizes))
    starts, ends, steps, axes, drop, new, empty, tensors = [], [], [], [], [], [], [], []
    out_sizes, out_dyn = [], []
    d = 0
    for it, flag in zip(indices, flags):
        if it is None or it is True or it is False:
            new.append(len(out_sizes))
            if it is False:
                empty.append(len(out_sizes))
            out_sizes.append(int(it is not False))
            out_dyn.append(False)
        elif isinstance(it, int):
            if flag:
                g.fail(f"index: index {it} follows a dynamic axis (like x.shape[0] - 1); ONNX "
                       f"would bake it in. Use a negative index (x[-1]) to count from the end")
            starts.append(it)
            ends.append(it + 1 if it != -1 else INT64_MAX)
            steps.append(1)
            axes.append(d)
            drop.append(d)
            d += 1
        elif isinstance(it, slice):
            n, step = sizes[d], it.step or 1
            lo, hi = _slice_bounds(g, it, n, flag, dyn[d])
            if (lo, hi, step) != (0, INT64_MAX, 1):
                starts.append(lo)
                ends.append(hi)
                steps.append(step)
                axes.append(d)
            out_sizes.append(len(range(n)[it]))
            out_dyn.append(dyn[d])
            d += 1
        else:   # an index tensor: an OnnxValue, or an array the tracer kept as it is
            v = it if isinstance(it, OnnxValue) else g.constant(np.asarray(it))
            k = (v.rank or 0) if v.dtype is _t.bool_ else 1
            tensors.append((len(out_sizes), v))
            out_sizes += sizes[d:d + k]
            out_dyn += dyn[d:d + k]
            d += k
    out_sizes += sizes[d:]
    out_dyn += dyn[d:]
    if axes:
        x = _slice(g, x, starts, ends, axes, steps)
    if drop:
        x = _squeeze(g, x, drop)
    if new:
        x = _unsqueeze(g, x, new)
    if empty:
        x = _slice(g, x, [0] * len(empty), [0] * len(empty), empty)
    if axes or drop or new:
        x = _typed(x, out_sizes, out_dyn)
    return x, tensors


def _mask_index(g, v, p: int, mask):
    """``v[..., mask]`` with a bool mask over dims p..p+k-1: Compress on them flattened."""
    k = mask.rank or 0
    if k == 0:
        v = _unsqueeze(g, v, [p])
        mask, k = g.op("Reshape", mask, g.ints([1]), dtype=_t.bool_), 1
    elif k > 1:
        rank = len(v.sizes)
        merged = range(p, p + k)
        mid = -1 if any(_dyn(v, j) for j in merged) else \
            int(np.prod([v.sizes[j] for j in merged]))
        v = _reshape(g, v, [_Dim(j) for j in range(p)] + [mid] +
                     [_Dim(j) for j in range(p + k, rank)])
        mask = g.op("Reshape", mask, g.ints([-1]), dtype=_t.bool_)
    return g.op("Compress", v, mask, axis=p, dtype=v.dtype)


def _gather_nd(g, v, tensors):
    """``v[..., i0, ..., i1, ...]`` with several integer tensors: GatherND on ``v`` with the
    indexed dims moved first; the result dims go where the tensors were when they are
    adjacent, else first (numpy's and PyTorch's rule)."""
    if any(t.dtype is _t.bool_ for _, t in tensors):
        g.fail("index: a bool mask together with other index tensors; index with "
               "mask.nonzero() columns, or one mask at a time")
    if any(not _static(t) for _, t in tensors):
        g.fail("index: several index tensors whose sizes follow a dynamic axis; index with "
               "one tensor at a time")
    shape = np.broadcast_shapes(*(tuple(t.sizes) for _, t in tensors))
    pos = [p for p, _ in tensors]
    rank = len(v.sizes)
    others = [j for j in range(rank) if j not in pos]
    vt = _perm(g, v, pos + others)
    cols = [_unsqueeze(g, g.op("Expand", g.cast(t, _t.int64), g.ints(shape), dtype=_t.int64),
                       [-1]) for _, t in tensors]
    out = g.op("GatherND", vt, g.op("Concat", *cols, axis=-1, dtype=_t.int64), dtype=v.dtype)
    m, first = len(shape), pos[0]
    if pos == list(range(first, first + len(pos))) and first > 0:
        out = _perm(g, out, [m + j for j in range(first)] + list(range(m)) +
                    [m + j for j in range(first, len(others))])
    return out


@builtin("ember::index")
def index(g, x, indices):
    """``x[indices]`` (see ``ember/_indexing.py``: the normalized index: ints, slices with
    steps > 0, None, bools, index tensors)."""
    indices = list(indices)
    flags = _flags(g.dynamic(1), len(indices))
    bools = sum(it is True or it is False for it in indices)
    v, tensors = _basic_index(g, x, indices, flags)
    if bools > 1 or (bools and tensors):
        g.fail("index: several bools (or a bool with index tensors) in one index; index "
               "with None, or in two steps")
    if not tensors:
        return v
    if len(tensors) == 1:
        p, t = tensors[0]
        if t.dtype is _t.bool_:
            return _mask_index(g, v, p, t)
        return g.op("Gather", v, t, axis=p, dtype=v.dtype)
    return _gather_nd(g, v, tensors)


@builtin("ember::index_select")
def index_select(g, x, dim, index):
    """Gather along ``dim``; a 0-d index keeps the dim (size 1)."""
    if x.rank == 0:
        return x
    if index.rank == 0:
        index = g.op("Reshape", index, g.ints([1]), dtype=index.dtype)
    return g.op("Gather", x, index, axis=_norm(dim, x.rank), dtype=x.dtype)


def _as_1d(g, v):
    """A 0-d value as shape (1,) (GatherElements and ScatterElements need rank >= 1)."""
    return g.op("Reshape", v, g.ints([1]), dtype=v.dtype) if v.rank == 0 else v


def _as_0d(g, v, like):
    return g.op("Reshape", v, g.ints([]), dtype=v.dtype) if like.rank == 0 else v


def _fit(g, src, index, skip=None):
    """``src`` sliced down to ``index``'s sizes in every dim but ``skip`` (PyTorch lets the
    index be smaller there; ONNX wants equal shapes)."""
    if src.sizes is None or index.sizes is None:
        g.fail("gather/scatter: the sizes of the inputs are unknown to the exporter")
    dims = [d for d, (a, b) in enumerate(zip(src.sizes, index.sizes))
            if d != skip and (a != b or _dyn(src, d) or _dyn(index, d)) and
            not (_dyn(src, d) and _dyn(index, d) and a == b)]
    if not dims:
        return src
    if all(not _dyn(index, d) for d in dims):
        ends = g.ints([index.sizes[d] for d in dims])
    else:
        ends = g.op("Gather", g.shape_of(index), g.ints(dims), axis=0, dtype=_t.int64)
    return g.op("Slice", src, g.ints([0] * len(dims)), ends, g.ints(dims), dtype=src.dtype)


@builtin("ember::gather")
def gather(g, x, dim, index, sparse_grad):
    """GatherElements; ``x`` is first cut to ``index``'s sizes outside ``dim``."""
    d = _norm(dim, x.rank or 0)
    data = _fit(g, _as_1d(g, x), index, skip=d) if x.rank else _as_1d(g, x)
    out = g.op("GatherElements", data, _as_1d(g, index), axis=d, dtype=x.dtype)
    return _as_0d(g, out, index)


def _scatter(g, x, dim, index, updates, reduction=None):
    d = _norm(dim, x.rank or 0)
    out = g.op("ScatterElements", _as_1d(g, x), _as_1d(g, index), _as_1d(g, updates), axis=d,
               reduction=reduction, dtype=x.dtype)
    return _as_0d(g, out, x)


@builtin("ember::scatter")
def scatter(g, x, dim, index, src):
    """ScatterElements; ``src`` is cut to ``index``'s sizes (ONNX wants equal shapes)."""
    return _scatter(g, x, dim, index, src if src.rank == 0 else _fit(g, src, index))


@builtin("ember::scatter.value")
def scatter_value(g, x, dim, index, value):
    """ScatterElements of ``value`` (in ``x``'s dtype) expanded to ``index``'s shape."""
    updates = g.op("Expand", g.scalar(value, dtype=x.dtype), _sizes_of(g, index),
                   dtype=x.dtype)
    return _scatter(g, x, dim, index, updates)


@builtin("ember::scatter_add", opset=16)
def scatter_add(g, x, dim, index, src):
    """ScatterElements with reduction="add" (opset 16): repeated indices add up."""
    return _scatter(g, x, dim, index, src if src.rank == 0 else _fit(g, src, index), "add")


@builtin("ember::take_along_dim")
def take_along_dim(g, x, indices, dim):
    """With dim: both broadcast outside ``dim`` (Expand with 1 there), then GatherElements;
    without: Gather on the flattened tensor. Negative indices count from the end."""
    if dim is None:
        flat = g.op("Reshape", x, g.ints([-1]), dtype=x.dtype)
        idx = g.op("Reshape", indices, g.ints([-1]), dtype=indices.dtype)
        return g.op("Gather", flat, idx, axis=0, dtype=x.dtype)
    if x.rank == 0:
        out = g.op("GatherElements", _as_1d(g, x), _as_1d(g, indices), axis=0, dtype=x.dtype)
        return _as_0d(g, out, x)
    rank = x.rank
    d = _norm(dim, rank)

    def broadcast(v, other):
        if v.sizes == other.sizes and not (v.dynamic and any(v.dynamic)):
            return v
        items = [1 if j == d else _Dim(j) for j in range(rank)]
        return g.op("Expand", v, _shape(g, other, items), dtype=v.dtype)

    data, idx = broadcast(x, indices), broadcast(indices, x)
    return g.op("GatherElements", data, idx, axis=d, dtype=x.dtype)


@builtin("ember::one_hot")
def one_hot(g, x, num_classes):
    """OneHot with int64 values [0, 1]; num_classes=-1 takes max + 1 at run time."""
    if num_classes == -1:
        depth = g.op("Add", g.reduce("ReduceMax", x, None, keepdims=False),
                     g.scalar(1, dtype=_t.int64), dtype=_t.int64)
    else:
        depth = g.scalar(int(num_classes), dtype=_t.int64)
    values = g.constant(np.array([0, 1], dtype=np.int64))
    if x.rank == 0:     # OneHot wants indices of rank >= 1
        out = g.op("OneHot", _unsqueeze(g, x, [0]), depth, values, axis=-1, dtype=_t.int64)
        return _squeeze(g, out, [0])
    return g.op("OneHot", x, depth, values, axis=-1, dtype=_t.int64)
