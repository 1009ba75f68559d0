"""Lower GradOf: turn each ``prim::GradOf`` into an explicit test and a ``prim::If``.

``prim::GradOf`` means "run this block only if some input gradient is defined, else every
output is undefined" (:mod:`ember.jit.runtime.autograd_prims`); after
``specialize_autograd_zero`` has resolved the ones whose inputs are known, the rest become
control flow the executor runs like any other.

Before::

    graph(%g : Tensor, %x : Float(2, 3)):
      %gx : Float(2, 3) = prim::GradOf[name="ember::exp"](%g)
        block0():
          %e : Float(2, 3) = ember::exp(%x)
          %m : Float(2, 3) = ember::mul(%g, %e)
          -> (%m)
      return (%gx)

After ``lower_grad_of(g)``::

    graph(%g : Tensor, %x : Float(2, 3)):
      %any : bool = prim::AutogradAnyNonZero(%g)
      %gx : Float(2, 3) = prim::If(%any)
        block0():
          %e : Float(2, 3) = ember::exp(%x)
          %m : Float(2, 3) = ember::mul(%g, %e)
          -> (%m)
        block1():
          %z : Tensor = prim::AutogradZero()
          -> (%z)
      return (%gx)

The then-block is the GradOf's block (its nodes are moved, not copied); the else-block
returns a ``prim::AutogradZero`` for every output (one node per gradient type,
:func:`~ember.jit.runtime.autograd_prims.zero_type`). Outputs keep their types and names.
GradOfs in nested blocks (and inside other GradOfs) are lowered too.

Reference: PyTorch's ``LowerGradOf`` (``torch/csrc/jit/passes/lower_grad_of.cpp``).
"""
from __future__ import annotations

import ember.jit.runtime.autograd_prims as ap
from ember.jit.ir.graph import Block, BoolType, Graph, Node, prim

__all__ = ["lower_grad_of"]


def lower_grad_of(graph: Graph) -> None:
    """Replace, in place, every ``prim::GradOf`` of ``graph`` (nested blocks included) by
    ``prim::AutogradAnyNonZero`` + ``prim::If`` (see the module docstring). Returns None."""
    _lower_block(graph, graph.block)


def _lower_block(graph: Graph, block: Block) -> None:
    for n in list(block.nodes()):
        for b in n.blocks:
            _lower_block(graph, b)
        if n.kind == ap.GRAD_OF:
            _lower(graph, n)


def _lower(graph: Graph, n: Node) -> None:
    body = n.blocks[0]
    any_nonzero = graph.create(ap.AUTOGRAD_ANY_NONZERO, n.inputs).insert_before(n)
    any_nonzero.output().type = BoolType()
    branch = graph.create(prim.If, [any_nonzero.output()], 0).insert_before(n)
    then, otherwise = branch.add_block(), branch.add_block()
    for inner in list(body.nodes()):
        inner.move_before(then.return_node)
    for v in body.outputs:
        then.register_output(v)
    zeros: dict = {}
    for o in n.outputs:
        t = ap.zero_type(o.type)
        if t not in zeros:
            zeros[t] = otherwise.append_node(graph.create(ap.AUTOGRAD_ZERO)).output()
            zeros[t].type = t
        otherwise.register_output(zeros[t])
    names = []
    for o in n.outputs:
        new = branch.add_output(o.type)
        o.replace_all_uses_with(new)
        names.append((new, o.debug_name))
    n.destroy()
    for new, name in names:
        if not name.isdigit():
            new.debug_name = name
