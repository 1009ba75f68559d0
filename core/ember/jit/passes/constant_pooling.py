"""Constant pooling: one ``prim::Constant`` per distinct (type, value), at the graph start.

Before (the same ``1`` three times, once inside a branch; ``1.0`` and ``True`` differ)::

    graph(%x : Tensor, %c : bool):
      %a : int = prim::Constant[value=1]()
      %y : Tensor = ember::add(%x, %x, %a)
      %z : Tensor = prim::If(%c)
        block0():
          %b : int = prim::Constant[value=1]()
          %t : Tensor = ember::sub(%y, %x, %b)
          -> (%t)
        block1():
          -> (%y)
      %d : int = prim::Constant[value=1]()
      %f : float = prim::Constant[value=1.0]()
      %w : Tensor = ember::add(%z, %y, %d)
      %v : Tensor = ember::mul(%w, %f)
      return (%v)

After ``constant_pooling(g)`` (the survivors are hoisted in first-seen order, so each
dominates every use, nested blocks included)::

    graph(%x : Tensor, %c : bool):
      %a : int = prim::Constant[value=1]()
      %f : float = prim::Constant[value=1.0]()
      %y : Tensor = ember::add(%x, %x, %a)
      %z : Tensor = prim::If(%c)
        block0():
          %t : Tensor = ember::sub(%y, %x, %a)
          -> (%t)
        block1():
          -> (%y)
      %w : Tensor = ember::add(%z, %y, %a)
      %v : Tensor = ember::mul(%w, %f)
      return (%v)

Two constants are the same when their output types are equal and their values are equal
*with their Python types*: ``1``, ``1.0`` and ``True`` stay apart, as do ``0.0`` and
``-0.0``; tensor constants compare by dtype, device, shape and bit pattern; lists and
tuples compare element-wise. Constants in subgraph attributes (``prim::FusionGroup``) are
left alone: a subgraph is a separate graph.

Reference: PyTorch's ``ConstantPooling`` (``torch/csrc/jit/passes/constant_pooling.cpp``),
which also moves every constant to the start of the graph.
"""
from __future__ import annotations


from ember.jit.ir.attributes import attrs_key
from ember.jit.ir.graph import Graph, prim

__all__ = ["constant_pooling"]


def constant_pooling(graph: Graph) -> None:
    """Merge identical ``prim::Constant`` nodes of ``graph`` (nested blocks included) into
    one each, hoisted to the start of the graph in the order first seen. In place.

    A constant whose value cannot be keyed exactly (an arbitrary Python object) is only
    merged with itself, i.e. hoisted but kept.
    """
    seen: dict = {}
    last = graph.param_node  # the hoisted constants sit right after it, in order
    # NOTE: a snapshot, since hoisting moves nodes out of the blocks being walked.
    for node in [n for n in graph.all_nodes() if n.kind == prim.Constant]:
        key = (attrs_key(node), tuple(o.type for o in node.outputs))
        kept = seen.get(key)
        if kept is not None:
            node.replace_all_uses_with(kept)
            node.destroy()
            continue
        seen[key] = node
        node.move_after(last)
        last = node
