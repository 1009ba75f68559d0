"""requires_grad propagation: which tensor values will require grad, from the graph inputs'.

Before (``%x`` requires grad, ``%w`` does not)::

    graph(%x : Float(2, requires_grad=1), %w : Float(2, requires_grad=0), %c : bool):
      %one : int = prim::Constant[value=1]()
      %zero : int = prim::Constant[value=0]()
      %a : Float(2) = ember::mul(%w, %w)
      %b : Float(2) = ember::add(%a, %x, %one)
      %m : Bool(2) = ember::gt(%b, %a)
      %v : Float(), %i : Long() = ember::max.dim(%b, %zero, %c)
      %y : Float(2) = prim::If(%c)
        block0():
          -> (%a)
        block1():
          -> (%b)
      return (%y, %m, %v, %i)

After ``propagate_requires_grad(g)``::

    graph(%x : Float(2, requires_grad=1), %w : Float(2, requires_grad=0), %c : bool):
      %one : int = prim::Constant[value=1]()
      %zero : int = prim::Constant[value=0]()
      %a : Float(2, requires_grad=0) = ember::mul(%w, %w)
      %b : Float(2, requires_grad=1) = ember::add(%a, %x, %one)
      %m : Bool(2, requires_grad=0) = ember::gt(%b, %a)
      %v : Float(requires_grad=1), %i : Long(requires_grad=0) = ember::max.dim(%b, %zero, %c)
      %y : Float(2, requires_grad=1) = prim::If(%c)
        block0():
          -> (%a)
        block1():
          -> (%b)
      return (%y, %m, %v, %i)

The rule is eager autograd's (with grad mode on): an output requires grad when some input
it is differentiable in requires grad, the output is differentiable, and its dtype is
floating point (or unknown). What is differentiable comes from ``derivatives.yaml``:
``not_differentiable: true`` ops (comparisons, ``argmax``, logical and bitwise ops) give
outputs that never require grad, ``x: non_differentiable`` inputs (``where``'s condition)
do not count, ``output_differentiability`` rules out outputs (``max.dim``'s indices).
Composite ops, Python ops and other kinds count every input (but ``view_as``,
``reshape_as``, ``expand_as`` and ``type_as`` only their first). ``prim::Constant`` outputs
never require grad. List and tuple construct/unpack pass the flag through (a ``Tensor[]``
requires grad when an element may). ``prim::If`` outputs require grad when the output of
either branch does; ``prim::Loop`` carried values are iterated to a fixed point (a value
that requires grad after some iteration requires grad throughout).

Unknown is kept apart from False: a graph input annotated without ``requires_grad`` is
*unknown*, and so is what it flows into unless another input requires grad (then True)
or the op rules it out (then False). Where the result is unknown, a value's annotation is
left as it was. PyTorch instead takes unknown as True; the GraphExecutor specializes on
each input's requires_grad (``ArgumentSpec``), so in its pipeline nothing is unknown.

Reference: PyTorch's ``PropagateRequiresGrad``
(``torch/csrc/jit/passes/requires_grad_analysis.cpp``).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

from ember.jit.ir.graph import (AnyType, Block, Graph, JitType, ListType, Node, OptionalType,
                                TensorType, TupleType, prim)
from ember.jit.runtime.op_registry import is_op_kind, op_info

__all__ = ["propagate_requires_grad"]

# Kinds whose outputs never require grad although they are not marked so in
# derivatives.yaml (``detach`` is a Tensor method, not a declared op).
_NEVER_REQUIRE_GRAD = frozenset({prim.Constant, "ember::detach", "ember::detach_"})
# Composite ops that read only the shape or dtype of their other tensor inputs.
_FIRST_INPUT_ONLY = frozenset(f"ember::{name}" for name in (
    "view_as", "reshape_as", "expand_as", "type_as"))


def propagate_requires_grad(graph: Graph) -> None:
    """Set, in place, ``requires_grad`` on the TensorType of every tensor-holding value of
    ``graph`` (nested blocks included) from the graph inputs' annotations (see the module
    docstring). Returns None."""
    _propagate_block(graph.block)


def _propagate_block(block: Block) -> None:
    for node in block.nodes():
        if node.kind == prim.If:
            _propagate_if(node)
        elif node.kind == prim.Loop:
            _propagate_loop(node)
        else:
            for b in node.blocks:  # e.g. prim::GradOf
                _propagate_block(b)
            _propagate_simple(node)


def _propagate_if(node: Node) -> None:
    then_block, else_block = node.blocks
    _propagate_block(then_block)
    _propagate_block(else_block)
    for out, t, f in zip(node.outputs, then_block.outputs, else_block.outputs):
        out.type = _with_requires_grad(out.type, _any([_get(t.type), _get(f.type)]))


def _propagate_loop(node: Node) -> None:
    # Carried value j is node input 2+j, body input 1+j, body output 1+j and node output j.
    body = node.blocks[0]
    init = [_get(v.type) for v in node.inputs[2:]]
    carried = list(init)
    while True:
        for v, rg in zip(body.inputs[1:], carried):
            v.type = _with_requires_grad(v.type, rg)
        _propagate_block(body)
        grown = [_any([c, _get(v.type)]) for c, v in zip(carried, body.outputs[1:])]
        if grown == carried:
            break
        carried = grown  # only ever moves up (False < unknown < True): it terminates
    for out, rg in zip(node.outputs, carried):
        out.type = _with_requires_grad(out.type, rg)


def _propagate_simple(node: Node) -> None:
    kind, ins, outs = node.kind, node.inputs, node.outputs
    if kind in _NEVER_REQUIRE_GRAD:
        flags = [False] * len(outs)
    elif kind == prim.ListConstruct:
        flags = [_any([_get(v.type) for v in ins])]
    elif kind == prim.TupleConstruct:
        for out in outs:
            if isinstance(out.type, TupleType) and len(out.type.elems) == len(ins):
                out.type = TupleType(tuple(_with_requires_grad(e, _get(v.type))
                                           for e, v in zip(out.type.elems, ins)))
        return
    elif kind == prim.TupleUnpack and isinstance(ins[0].type, TupleType):
        flags = [_get(e) for e in ins[0].type.elems]
    elif kind in (prim.ListUnpack, prim.TupleUnpack):
        flags = [_get(ins[0].type)] * len(outs)
    else:
        flags = _op_flags(node)
    for b in node.blocks:  # outputs that may come from a block (prim::GradOf's)
        if len(b.outputs) == len(outs):
            flags = [_any([f, _get(v.type)]) for f, v in zip(flags, b.outputs)]
    for out, rg in zip(outs, flags):
        out.type = _with_requires_grad(out.type, rg)


def _op_flags(node: Node) -> list:
    """One flag per output of an op (or other) node: from its derivative entry if any."""
    from ember.ops import DERIVATIVES
    outs, ins = node.outputs, node.inputs
    deriv = None
    if node.kind.startswith("ember::") and is_op_kind(node.kind):
        info = op_info(node.kind)
        deriv = DERIVATIVES.get(info.kernel_name or node.kind.partition("::")[2])
    if deriv is None:
        counted = ins[:1] if node.kind in _FIRST_INPUT_ONLY else ins
        return [_any([_get(v.type) for v in counted])] * len(outs)
    if deriv.not_differentiable:
        return [False] * len(outs)
    names = set(deriv.differentiable_inputs)
    rg = _any([_get(v.type) for a, v in zip(deriv.schema.arguments, ins) if a.name in names])
    od = deriv.output_differentiability or (True,) * len(outs)
    return [rg if diff else False for diff, _ in zip(od, outs)]


# ---- the flag on types: True, False, or None (unknown) ------------------------------------
def _any(flags) -> Optional[bool]:
    """Three-valued or: True if any is True, else None if any is unknown, else False."""
    if any(f is True for f in flags):
        return True
    return None if any(f is None for f in flags) else False


def _get(t: JitType) -> Optional[bool]:
    """Whether a value of type ``t`` requires grad (values holding no tensor never do)."""
    if isinstance(t, TensorType):
        return t.requires_grad
    if isinstance(t, (ListType, OptionalType)):
        return _get(t.elem)
    if isinstance(t, TupleType):
        return _any([_get(e) for e in t.elems])
    return None if isinstance(t, AnyType) else False


def _with_requires_grad(t: JitType, rg: Optional[bool]) -> JitType:
    """``t`` with its tensors' flag set to ``rg`` (False where the dtype is not floating
    point; unchanged where ``rg`` is unknown)."""
    if isinstance(t, TensorType):
        if t.dtype is not None and not t.dtype.is_floating_point:
            rg = False
        return t if rg is None else replace(t, requires_grad=rg)
    if isinstance(t, ListType):
        return ListType(_with_requires_grad(t.elem, rg))
    if isinstance(t, OptionalType):
        return OptionalType(_with_requires_grad(t.elem, rg))
    if isinstance(t, TupleType):
        return TupleType(tuple(_with_requires_grad(e, rg) for e in t.elems))
    return t
