"""Symbolics of the shape and view ops: reshaping, permutations, broadcasting and tiling,
and dtype casts. Slicing, splitting and joining are in ``slicing.py``, ``x[...]`` and the
gather/scatter family in ``indexing.py``.

Mapping (ONNX operators, https://onnx.ai/onnx/operators/):

* ``view``/``reshape``/``view_as``/``reshape_as``/``flatten``/``unflatten`` -> ``Reshape``
  (``Flatten`` for ``flatten(1)`` of a rank >= 2 tensor); ``permute``/``transpose``/
  ``swapaxes``/``swapdims``/``t``/``movedim``/``moveaxis`` -> ``Transpose``;
  ``squeeze``/``unsqueeze`` -> ``Squeeze``/``Unsqueeze`` (axes as inputs, opset 13);
  ``expand``/``expand_as`` -> ``Expand``; ``contiguous``/``clone`` -> the input itself.
* ``repeat`` -> ``Tile``.
* ``type_as`` and ``_to_copy`` (what ``Tensor.to(dtype)`` traces to) -> ``Cast``.

Dynamic axes. A trace bakes sizes in (``x.view(x.shape[0], -1)`` records ``[4, -1]``);
the ops that take sizes read ``g.dynamic`` and write each size that follows a dynamic
axis as: ``0`` in a ``Reshape`` target when it is the same dynamic dim of the input,
``-1`` when it is the only unknown, the size read at run time (``Shape``) when it is a
dynamic dim of the input elsewhere, and ``1`` in an ``Expand`` shape for a dim it keeps
(slices and splits: ``slicing.py``). Anything else stops the export with the reason and
the way out (a size taken from another tensor).

Departures:

* A ``Reshape`` whose target is read at run time uses ``allowzero=1`` (opset 14 on); at
  opset 13 a run-time size of 0 would copy the input's dim instead.

Reference: PyTorch's ``torch/onnx/symbolic_opset9.py``, ``symbolic_opset11.py``,
``symbolic_opset13.py``, ``symbolic_opset16.py`` and ``symbolic_opset18.py`` (the mapping;
own code) and the ONNX operator specifications.
"""
from __future__ import annotations

import numpy as np

from ..context import OnnxValue, has_size_value, takes_size_values
from ..registry import builtin
from ._shapes import (_Dim, _dyn, _flags, _need_sizes, _norm, _perm, _reshape, _shape,
                      _sizes_of, _squeeze, _static, _unsqueeze)
from .sizes import size_items


# ---- helpers -----------------------------------------------------------------------------

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


# ---- reshaping -----------------------------------------------------------------------------

@builtin("ember::view", "ember::reshape")
@takes_size_values
def view(g, x, size):
    """Reshape; sizes computed in the graph (``x.size(0)``) are read at run time, or copied
    with 0 when they are the input's own dim there; traced constants that follow a dynamic
    axis become 0, a run-time size or -1."""
    size = [size] if not isinstance(size, (list, tuple)) else list(size)
    if has_size_value(size):
        return _reshape(g, x, size_items(x, size))
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
@takes_size_values
def unflatten(g, x, dim, sizes):
    """Dim ``dim`` split into ``sizes``: a Reshape keeping the other dims."""
    shape = _need_sizes(g, x)
    rank = len(shape)
    d = _norm(dim, rank)
    sizes = [sizes] if not isinstance(sizes, (list, tuple)) else list(sizes)
    mid = size_items(x, sizes) if has_size_value(sizes) else \
        _resolve_sizes(g, x, sizes, g.dynamic(2), "unflatten", offset=d)
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
@takes_size_values
def expand(g, x, size):
    """Expand (bidirectional broadcast): -1, and a dynamic size equal to the input's own
    dynamic dim, become 1 (keep the dim); a size computed in the graph is read at run
    time; another dynamic dim of the input too."""
    shape = _need_sizes(g, x)
    size = [size] if not isinstance(size, (list, tuple)) else list(size)
    flags = _flags(g.dynamic(1), len(size))
    lead = len(size) - len(shape)
    items = []
    for i, (s, d) in enumerate(zip(size, flags)):
        j = i - lead
        if isinstance(s, OnnxValue):      # a run-time size: 1 keeps x's own dim there
            own = size_items(x, [s])[0]
            # NOTE: a dim of x that is not 1 can only be expanded to itself
            keep = getattr(own, "j", None) == j or (
                j >= 0 and x.is_dynamic(j) and shape[j] == s.traced != 1)
            items.append(1 if keep else s)
        elif s == -1:
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
