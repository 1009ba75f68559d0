"""Symbolics of the indexing ops: ``x[...]`` (``index``), ``index_select``, ``gather``,
``scatter``/``scatter_add``, ``take_along_dim``, ``one_hot`` and ``nonzero``.

Mapping (ONNX operators, https://onnx.ai/onnx/operators/):

* ``index`` (``x[...]``): ints, slices (positive steps; negative starts and stops count
  from the end, as in ``Slice``), None and one bool -> ``Slice`` + ``Squeeze`` +
  ``Unsqueeze``; then one integer index tensor -> ``Gather``, one bool mask ->
  ``Compress``, several integer tensors -> ``GatherND`` (PyTorch's placement of the
  result dims: where the tensors were when they are adjacent, else first).
* ``index_select`` -> ``Gather``; ``gather`` -> ``GatherElements``; ``scatter``/
  ``scatter.value`` -> ``ScatterElements``; ``scatter_add`` -> ``ScatterElements`` with
  ``reduction="add"`` (opset 16 on); ``take_along_dim`` -> ``Expand`` + ``GatherElements``
  (``Gather`` on the flattened tensor without dim); ``one_hot`` -> ``OneHot``
  (``num_classes=-1`` reads ``max + 1`` at run time); ``nonzero`` -> ``NonZero`` +
  ``Transpose`` (ONNX gives (ndim, K), ember (K, ndim); a 0-d input is taken as (1,)
  and the (K, 1) result sliced to ember's (K, 0)).

Dynamic axes (see ``shape.py`` and ``slicing.py``): in ``x[...]`` an int or a slice
bound that follows a dynamic axis stops the export, except a slice along that dynamic
dim whose one bound is its traced size (the end); the way out is a bound that counts
from the end (``x[-1]``, ``x[:-1]``).

Departures:

* ``index_select``/``gather``/``scatter`` raise in ember for out-of-range indices; ONNX
  runtimes give an error or wrap negative ones. ``one_hot`` gives a zero row where ember
  raises (ONNX OneHot).
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
from ..context import (OnnxValue, has_size_value, takes_size_values,
                       traced_value)
from ..registry import builtin
from ._shapes import (INT64_MAX, _Dim, _dyn, _flags, _need_sizes, _norm, _perm, _reshape,
                      _shape, _sizes_of, _slice, _squeeze, _static, _typed, _unsqueeze)


def _slice_bounds(g, it: slice, n: int, dynamic: bool, dim_dynamic: bool) -> tuple:
    """(start, end) of a slice of ``x[...]`` as ONNX Slice bounds. A slice that follows a
    dynamic axis is accepted when it is along that dynamic dim and its one bound is the
    dim's traced size (the end)."""
    lo = 0 if it.start is None else it.start
    hi = INT64_MAX if it.stop is None else it.stop
    if has_size_value(it):    # a bound computed in the graph (x[:x.size(0) // 2])
        if isinstance(it.step, OnnxValue):
            g.fail("index: a slice step computed from a size; ONNX Slice takes it, but "
                   "ember's positive-step check cannot follow it. Use a constant step")
        return lo, hi
    lo, hi = int(lo), int(hi)
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
            n, step = sizes[d], traced_value(it.step) or 1
            lo, hi = _slice_bounds(g, it, n, flag, dyn[d])
            if (lo, hi, step) != (0, INT64_MAX, 1):
                starts.append(lo)
                ends.append(hi)
                steps.append(step)
                axes.append(d)
            out_sizes.append(len(range(n)[traced_value(it)]))
            out_dyn.append(dyn[d] or has_size_value(it))
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
    if axes and has_size_value(starts + ends):
        x = g.op("Slice", x, _shape(g, None, starts), _shape(g, None, ends), g.ints(axes),
                 g.ints(steps), dtype=x.dtype)
    elif axes:
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
@takes_size_values
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


@builtin("ember::nonzero")
def nonzero(g, x):
    """NonZero, transposed to ember's (K, ndim) int64 indices (NaN counts as non-zero);
    K depends on the data, so it is dynamic (``g.data_dependent``), not the traced K."""
    scalar = x.rank == 0
    if x.dtype not in (_t.float32, _t.int32, _t.int64, _t.uint8, _t.bool_):
        # the types onnxruntime's NonZero lacks: x != 0 (NaN too) as bool
        zero = g.constant(np.zeros((), dtype=x.dtype.numpy))
        x = g.op("Not", g.op("Equal", x, zero, dtype=_t.bool_), dtype=_t.bool_)
    if scalar:
        x = g.op("Reshape", x, g.ints([1]), dtype=x.dtype)
    idx = g.op("Transpose", g.op("NonZero", x, dtype=_t.int64), perm=[1, 0], dtype=_t.int64)
    if scalar:
        idx = g.op("Slice", idx, g.ints([0]), g.ints([0]), g.ints([1]), dtype=_t.int64)
    g.data_dependent(0, [0])
    return idx
