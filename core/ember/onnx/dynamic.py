"""Which values follow a dynamic axis: trace twice, compare.

A trace bakes sizes in as constants: ``x.view(x.shape[0], -1)`` records
``view(%x, [4, -1])``. To export that with a dynamic batch, the exporter must know that
the 4 is the batch and not, say, a channel count that happens to equal it. So it traces
the model a second time with every dynamic axis twice as long (the example data repeated
along it: doubling keeps divisibility, and it changes ``n // 2``, which growing by one
would not: ``4 // 2 == 5 // 2``), and compares the two graphs node by node: a tensor dim
whose size changed follows a dynamic axis, and so does a constant whose value changed.
Symbolic functions read this through ``OnnxValue.dynamic`` and ``GraphContext.dynamic``.

The two traces must have the same nodes; if they do not, the model's structure depends
on the sizes (Python control flow on a size), and no single ONNX graph can stand for it.
"""
from __future__ import annotations

import numpy as np

from ..jit.ir.ir_types import TensorType
from .errors import OnnxExportError

__all__ = ["grown_inputs", "variation"]


def grown_inputs(flat: list, axes: dict) -> list:
    """The flat example inputs with each dynamic axis twice as long (2 for an empty one).
    ``axes``: input position -> {axis: name}. Inputs without dynamic axes are returned as
    they are."""
    import ember as E
    out = []
    for i, t in enumerate(flat):
        arr = t.detach().numpy()
        for axis in sorted(axes.get(i, {})):
            n = arr.shape[axis]
            if n == 0:
                shape = list(arr.shape)
                shape[axis] = 2
                arr = np.zeros(shape, arr.dtype)
            else:
                arr = np.take(arr, np.tile(np.arange(n), 2), axis=axis)
        out.append(E.tensor(arr) if i in axes else t)
    return out


def variation(graph_a, graph_b) -> dict:
    """For each value of ``graph_a`` that differs in ``graph_b`` (the trace with doubled
    axes): a tuple of per-dim bools for tensors, per-element bools for constant lists,
    True for a scalar constant or a tensor constant. Raises OnnxExportError if the graphs
    do not have the same nodes."""
    out: dict = {}
    for va, vb in zip(graph_a.inputs, graph_b.inputs):
        _compare_types(va, vb, out)
    nodes_a, nodes_b = list(graph_a.nodes()), list(graph_b.nodes())
    for na, nb in zip(nodes_a, nodes_b):
        if na.kind != nb.kind or len(na.outputs) != len(nb.outputs):
            raise OnnxExportError(
                f"the model traces to a different graph when a dynamic axis changes size "
                f"({na.kind} against {nb.kind}): its structure depends on the sizes, so no "
                f"single ONNX graph can stand for it; export without those dynamic_axes", na)
        if na.kind == "prim::Constant":
            diff = _compare_constants(na.output().to_ivalue(), nb.output().to_ivalue())
            if diff:
                out[na.output()] = diff
            continue
        for va, vb in zip(na.outputs, nb.outputs):
            _compare_types(va, vb, out)
    if len(nodes_a) != len(nodes_b):
        raise OnnxExportError(
            f"the model traces to {len(nodes_a)} nodes, and to {len(nodes_b)} when a dynamic "
            f"axis changes size: its structure depends on the sizes; export without those "
            f"dynamic_axes")
    return out


def _compare_types(va, vb, out: dict) -> None:
    ta, tb = va.type, vb.type
    if not (isinstance(ta, TensorType) and isinstance(tb, TensorType)):
        return
    sa, sb = ta.concrete_sizes(), tb.concrete_sizes()
    if sa is None or sb is None or len(sa) != len(sb):
        return
    dims = tuple(a != b for a, b in zip(sa, sb))
    if any(dims):
        out[va] = dims


def _compare_constants(a, b):
    """Falsy when equal; else per-element bools (lists/tuples of scalars) or True."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b) \
            and all(not isinstance(x, (list, tuple)) for x in a):
        diff = tuple(_differ(x, y) for x, y in zip(a, b))
        return diff if any(diff) else None
    return True if _differ(a, b) else None


def _differ(a, b) -> bool:
    if hasattr(a, "shape") and hasattr(b, "shape"):
        return tuple(a.shape) != tuple(b.shape) or not bool(
            np.array_equal(np.asarray(a.detach().numpy() if hasattr(a, "detach") else a),
                           np.asarray(b.detach().numpy() if hasattr(b, "detach") else b)))
    return type(a) is not type(b) or a != b
