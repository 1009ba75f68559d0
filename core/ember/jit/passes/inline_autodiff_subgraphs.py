"""Inline autodiff subgraphs: put small ``prim::DifferentiableGraph`` nodes back inline, so
their few ops run through eager autograd instead of paying for a symbolic backward.

Before (the group does one op of work)::

    graph(%x : Tensor, %y : Tensor):
      %c : Tensor = prim::DifferentiableGraph_0(%x, %y)
      return (%c)
    with prim::DifferentiableGraph_0 = graph(%x : Tensor, %y : Tensor):
      %one : int = prim::Constant[value=1]()
      %c : Tensor = ember::add(%x, %y, %one)
      return (%c)

After ``inline_autodiff_subgraphs(g, threshold=5)``::

    graph(%x : Tensor, %y : Tensor):
      %one : int = prim::Constant[value=1]()
      %c : Tensor = ember::add(%x, %y, %one)
      return (%c)

A group is inlined when its ``Subgraph`` has fewer than ``threshold`` nodes doing work
(:func:`~ember.jit.passes.create_autodiff_subgraphs.subgraph_size`: constants, list/tuple
construct/unpack and ``prim::TensorMeta`` do not count; the ops inside a
``prim::FusionGroup`` do) and every node in it can run under eager autograd. A
FusionGroup inside it is inlined too, unfused: its ops then record autograd history.
A differentiated group's ``Subgraph`` is
its ``f``: only its first ``f_real_outputs`` outputs are the node's, the temporaries (and
the ``prim::TensorMeta`` nodes that fed them) die, and dead code elimination runs at the
end. Groups in nested blocks are visited too.

Reference: PyTorch's ``InlineAutodiffSubgraphs``
(``torch/csrc/jit/passes/inline_autodiff_subgraphs.cpp``).
"""
from __future__ import annotations

from ember.jit.ir.graph import Block, Graph, Node, prim
from ember.jit.passes.create_autodiff_subgraphs import subgraph_size, unmerge_subgraph
from ember.jit.passes.dead_code_elimination import eliminate_dead_code

__all__ = ["inline_autodiff_subgraphs"]


def inline_autodiff_subgraphs(graph: Graph, threshold: int = 5) -> None:
    """Inline, in place, each DifferentiableGraph of ``graph`` whose subgraph does fewer
    than ``threshold`` nodes of work (see the module docstring); then remove dead code."""
    _scan_block(graph.block, threshold)
    eliminate_dead_code(graph)


def _scan_block(block: Block, threshold: int) -> None:
    for node in list(block.nodes()):
        for b in node.blocks:
            _scan_block(b, threshold)
        if node.kind != prim.DifferentiableGraph:
            continue
        sub = node.g("Subgraph")
        if _work(sub) < threshold and all(_runs_with_autograd(n) for n in sub.nodes()):
            for inlined in unmerge_subgraph(node):
                if inlined.kind == prim.FusionGroup:  # its ops run under autograd again
                    unmerge_subgraph(inlined)


def _work(sub: Graph) -> int:
    """``subgraph_size`` counting the ops inside FusionGroups."""
    return subgraph_size(sub) + sum(subgraph_size(n.g("Subgraph")) - 1 for n in sub.nodes()
                                    if n.kind == prim.FusionGroup)


def _runs_with_autograd(node: Node) -> bool:
    if node.kind == prim.FusionGroup:  # inlined unfused: its ops must run with autograd
        return all(_runs_with_autograd(n) for n in node.g("Subgraph").nodes())
    return all(_runs_with_autograd(n) for b in node.blocks for n in b.nodes())
