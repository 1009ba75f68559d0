"""Canonicalize ops: one spelling per operation, so that CSE and fusion see equal nodes.

Before::

    graph(%x : Float(2, 3), %y : Float(2, 3)):
      %zero : int = prim::Constant[value=0]()
      %one : int = prim::Constant[value=1]()
      %two : float = prim::Constant[value=2.0]()
      %a : Float(2, 3) = ember::true_divide(%x, %y)
      %b : Float(3, 2) = ember::swapaxes(%a, %zero, %one)
      %c : Float(2, 3) = ember::mul(%two, %x)
      %d : Float(2, 3) = ember::rsub(%x, %c, %one)
      %e : Float(2, 3) = ember::clamp_min(%d, %two)
      return (%b, %e)

After ``canonicalize_ops(g)``::

    graph(%x : Float(2, 3), %y : Float(2, 3)):
      %zero : int = prim::Constant[value=0]()
      %one : int = prim::Constant[value=1]()
      %two : float = prim::Constant[value=2.0]()
      %none : NoneType = prim::Constant[value=None]()
      %a : Float(2, 3) = ember::div(%x, %y, %none)
      %b : Float(3, 2) = ember::transpose(%a, %zero, %one)
      %c : Float(2, 3) = ember::mul(%x, %two)
      %d : Float(2, 3) = ember::sub(%c, %x, %one)
      %none.1 : NoneType = prim::Constant[value=None]()
      %e : Float(2, 3) = ember::clamp(%d, %two, %none.1)
      return (%b, %e)

The rewrites (each op on the left is declared in ``ops/native_functions.yaml`` as an alias
of, or a composite calling, the op on the right with these arguments, so values, dtypes,
shapes and errors are unchanged):

=====================================  =================================================
``true_divide(a, b)``                  ``div(a, b, None)``
``swapaxes(x, d0, d1)``, ``swapdims``  ``transpose(x, d0, d1)``
``moveaxis(x, src, dst)``              ``movedim(x, src, dst)``
``rsub(a, b, alpha)``                  ``sub(b, a, alpha)`` (``b - alpha * a``)
``clamp_min(x, lo)``                   ``clamp(x, lo, None)``
``clamp_max(x, hi)``                   ``clamp(x, None, hi)``
=====================================  =================================================

A constant first operand of a commutative op, ``mul``, ``eq``, ``ne`` and ``add`` with a
constant alpha of 1, moves to the second position (``2 * x`` -> ``x * 2``): broadcasting,
type promotion and these ops are symmetric, and later passes (peephole, constant
propagation) then only look for constants on the right. ``sub`` keeps its spelling,
whatever its alpha: rewriting ``x - c`` as ``x + (-c)`` would accept bool tensors, which
``sub`` rejects. The ``None`` constants are inserted next to each rewritten node; constant
pooling merges them. Nested blocks are rewritten too; subgraph attributes are not.

Reference: PyTorch's ``NormalizeOps`` (``torch/csrc/jit/passes/normalize_ops.cpp``), whose
alias map sends ``aten::true_divide`` to ``aten::div``, ``aten::swapaxes`` to
``aten::transpose`` and ``aten::moveaxis`` to ``aten::movedim``.
"""
from __future__ import annotations

from typing import Sequence

from ember.jit.ir.graph import Block, Graph, Node, Value

__all__ = ["canonicalize_ops"]

_RENAMES = {"ember::swapaxes": "ember::transpose", "ember::swapdims": "ember::transpose",
            "ember::moveaxis": "ember::movedim"}
_COMMUTATIVE = frozenset({"ember::mul", "ember::eq", "ember::ne"})


def canonicalize_ops(graph: Graph) -> None:
    """Rewrite, in place, the aliases listed in the module docstring to their canonical op
    and move constant operands of commutative ops to the second position; nested blocks
    included. Returns None."""
    _run(graph, graph.block)


def _run(graph: Graph, block: Block) -> None:
    for n in list(block.nodes()):
        for b in n.blocks:
            _run(graph, b)
        ins = n.inputs
        if n.kind in _RENAMES:
            _replace(graph, n, _RENAMES[n.kind], ins)
        elif n.kind == "ember::true_divide":
            _replace(graph, n, "ember::div", [*ins, _none(graph, n)])
        elif n.kind == "ember::rsub":
            _replace(graph, n, "ember::sub", [ins[1], ins[0], *ins[2:]])
        elif n.kind == "ember::clamp_min":
            _replace(graph, n, "ember::clamp", [ins[0], ins[1], _none(graph, n)])
        elif n.kind == "ember::clamp_max":
            _replace(graph, n, "ember::clamp", [ins[0], _none(graph, n), ins[1]])
        elif _commutes(n) and ins[0].is_constant and not ins[1].is_constant:
            a = n.replace_input(0, ins[1])
            n.replace_input(1, a)


def _commutes(n: Node) -> bool:
    if n.kind in _COMMUTATIVE:
        return True
    if n.kind != "ember::add" or len(n.inputs) != 3 or not n.input(2).is_constant:
        return False
    alpha = n.input(2).to_ivalue()
    return type(alpha) in (int, float) and alpha == 1


def _none(graph: Graph, n: Node) -> Value:
    with graph.insert_point_guard(n):
        return graph.insert_constant(None)


def _replace(graph: Graph, n: Node, kind: str, inputs: Sequence[Value]) -> None:
    """Put a ``kind`` node reading ``inputs`` in ``n``'s place, with its outputs' types,
    names and source information."""
    new = graph.create(kind, inputs, num_outputs=0)
    for o in n.outputs:
        new.add_output(o.type)
    new.source_location, new.scope = n.source_location, n.scope
    for name in n.attr_names:
        new.set_attr(name, n.attr(name))
    new.insert_before(n)
    n.replace_all_uses_with(new)
    names = [o.debug_name for o in n.outputs]
    n.destroy()
    for o, name in zip(new.outputs, names):
        o.debug_name = name
