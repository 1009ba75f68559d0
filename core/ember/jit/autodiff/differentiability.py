"""What symbolic autodiff can differentiate, and which values of a graph need a gradient.

:func:`is_differentiable` says which nodes may go into an autodiff subgraph
(``create_autodiff_subgraphs`` asks it); :func:`values_needing_grad` is the forward
propagation ``differentiate`` starts from: a graph input needs a gradient unless its type
says it cannot (``requires_grad=False`` or a non-floating dtype), and an op's output needs
one when a differentiable argument does.

Reference: PyTorch's ``torch/csrc/jit/runtime/autodiff.cpp`` (``isDifferentiable``) and
``requires_grad_analysis.cpp``.
"""
from __future__ import annotations

from ember.jit.ir.graph import Graph, Node
from ember.jit.ir.ir_types import JitType, ListType, OptionalType, TensorType, TupleType
from ember.jit.ir.kinds import prim

__all__ = ["SEQUENCE_INVERSE", "derivative_of", "is_differentiable", "may_need_grad",
           "values_needing_grad"]

#: List/tuple construct and unpack, each to its inverse (the backward of one is the other).
SEQUENCE_INVERSE = {prim.ListConstruct: prim.ListUnpack, prim.TupleConstruct: prim.TupleUnpack,
                    prim.ListUnpack: prim.ListConstruct, prim.TupleUnpack: prim.TupleConstruct}


def derivative_of(kind: str):
    """The Derivative entry of an out-of-place ``ember::`` op kind, or None."""
    if not kind.startswith("ember::"):
        return None
    from ember.jit.runtime.op_registry import is_op_kind, op_info
    from ember.ops import DERIVATIVES
    d = DERIVATIVES.get(kind[len("ember::"):])
    if d is None or not is_op_kind(kind) or op_info(kind).inplace:
        return None
    return d


def is_differentiable(node: Node) -> bool:
    """Whether ``node`` may go into an autodiff subgraph: ``prim::Constant``, list/tuple
    construct and unpack, and out-of-place ``ember::`` ops with a differentiable
    ``derivatives.yaml`` entry (nodes with blocks never)."""
    if node.blocks:
        return False
    if node.kind == prim.Constant or node.kind in SEQUENCE_INVERSE:
        return True
    d = derivative_of(node.kind)
    return d is not None and not d.not_differentiable


def may_need_grad(t: JitType) -> bool:
    """Whether a value of type ``t`` may carry a gradient (unknown counts as yes)."""
    if isinstance(t, TensorType):
        return t.requires_grad is not False and (t.dtype is None or
                                                 t.dtype.is_floating_point)
    if isinstance(t, (ListType, OptionalType)):
        return may_need_grad(t.elem)
    if isinstance(t, TupleType):
        return any(may_need_grad(e) for e in t.elems)
    return False


def values_needing_grad(graph: Graph) -> set:
    """The values of ``graph`` that need a gradient, propagated forward from its inputs.
    Raises ValueError for a node that is not differentiable but would need one."""
    rg = {v for v in graph.inputs if may_need_grad(v.type)}
    for n in graph.nodes():
        if n.kind in SEQUENCE_INVERSE:
            if any(v in rg for v in n.inputs):
                rg.update(o for o in n.outputs if may_need_grad(o.type))
            continue
        d = derivative_of(n.kind)
        if d is None:
            if n.kind != prim.Constant and any(v in rg for v in n.inputs):
                raise ValueError(f"differentiate: {n.kind} is not differentiable "
                                 f"(is_differentiable is false) but reads a value that needs "
                                 f"a gradient; keep it out of the autodiff subgraph")
            continue
        args = [a.name for a in d.schema.arguments]
        if len(args) != len(n.inputs):
            raise ValueError(f"differentiate: {n.kind} has {len(n.inputs)} inputs but its "
                             f"schema {d.schema} takes {len(args)}")
        diff = set(d.differentiable_inputs)
        if any(v in rg for v, a in zip(n.inputs, args) if a in diff):
            od = d.output_differentiability or (True,) * len(n.outputs)
            rg.update(o for o, ok in zip(n.outputs, od) if ok and may_need_grad(o.type))
    return rg
