"""Canonicalize: renumber values so that structurally equal graphs print the same.

Before (names from tracing, or numbers left by earlier rewrites)::

    graph(%x : Tensor):
      %17 : int = prim::Constant[value=1]()
      %y.3 : Tensor = ember::add(%x, %x, %17)
      return (%y.3)

After ``canonicalize(g)`` (inputs keep their names; everything else is numbered in printing
order, starting after the inputs as if they were ``%0 .. %n-1``)::

    graph(%x : Tensor):
      %1 : int = prim::Constant[value=1]()
      %2 : Tensor = ember::add(%x, %x, %1)
      return (%2)

Values inside nested blocks are numbered where they print; subgraph attributes are
canonicalized too, their inputs included. Source locations and scopes are dropped unless
asked for, since they are not structure. The pass returns a new graph and leaves its
argument unchanged.

Reference: PyTorch's ``Canonicalize`` (``torch/csrc/jit/passes/canonicalize.cpp``), which
the seeds introduce "so that all structurally equivalent graphs render the same".
"""
from __future__ import annotations

from ember.jit.ir.graph import Graph

__all__ = ["canonicalize"]


def canonicalize(graph: Graph, rename_inputs: bool = False,
                 keep_source_info: bool = False) -> Graph:
    """A copy of ``graph`` with values renumbered in printing order.

    Args:
        graph: the graph to canonicalize (not modified).
        rename_inputs: number the graph inputs too (``%0``, ``%1``, ...) instead of keeping
            their names.
        keep_source_info: keep each node's ``source_location`` and ``scope``.
    Returns: the new Graph.
    """
    g = graph.copy()
    _renumber(g, rename_inputs, keep_source_info)
    return g


def _renumber(g: Graph, rename_inputs: bool, keep_source_info: bool) -> None:
    order = [] if not rename_inputs else list(g.inputs)

    def walk(block):
        for n in block.nodes():
            order.extend(n.outputs)
            if not keep_source_info:
                n.source_location = n.scope = None
            for b in n.blocks:
                order.extend(b.inputs)
                walk(b)
            for value in n._attrs.values():
                for sub in _graphs(value):
                    _renumber(sub, True, keep_source_info)
    walk(g.block)
    # NOTE: rebuild the name table from scratch, so that a new number never collides with
    # an old name still held by a value renamed later.
    kept = set() if rename_inputs else {v.debug_name for v in g.inputs}
    for v in order:
        g._free_name(v)
    counter = 0 if rename_inputs else len(g.inputs)
    for v in order:
        while str(counter) in kept:
            counter += 1
        v.debug_name = str(counter)
        counter += 1


def _graphs(value):
    if isinstance(value, Graph):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _graphs(v)
