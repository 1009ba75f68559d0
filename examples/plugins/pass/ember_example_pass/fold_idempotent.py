"""``fold_idempotent``: ``f(f(x))`` -> ``f(x)`` for elementwise ops with ``f . f == f``.

Before::

    graph(%x : Float(2, 3)):
      %1 : Float(2, 3) = ember::relu(%x)
      %2 : Float(2, 3) = ember::relu(%1)
      %3 : Float(2, 3) = ember::abs(%2)
      %4 : Float(2, 3) = ember::abs(%3)
      %5 : Float(2, 3) = ember::abs(%4)
      return (%5)

After ``fold_idempotent(g)`` (a chain folds to its first node)::

    graph(%x : Float(2, 3)):
      %1 : Float(2, 3) = ember::relu(%x)
      %3 : Float(2, 3) = ember::abs(%1)
      return (%3)

The ops (``IDEMPOTENT``) are exact for every dtype and value, NaN, infinities and -0.0
included: ``relu``, ``abs``, ``floor``, ``ceil``, ``trunc``, ``sign``. Only the one-input
forms fold. ``sgn`` is left out (``z / |z|`` twice is not bit-exact for complex ``z``), and
so is ``round`` with ``decimals`` (a scaled round trip). The fold changes aliasing (the
outer node made a new tensor; its users now read the inner one), so like ember's peephole
pass it leaves a graph with in-place ops alone. Nested blocks (``prim::If``,
``prim::Loop``) are folded too; subgraph attributes (``prim::FusionGroup``) are not.

Each call logs what it folded to the ``ember_example_pass`` logger at INFO.

Reference: PyTorch's ``PeepholeOptimize`` (``torch/csrc/jit/passes/peephole.cpp``) for
the shape of such a rewrite; the pass API is ember's ``docs/plugins.md``.
"""
from __future__ import annotations

import logging
from collections import Counter

from ember.jit.ir.graph import Graph
from ember.jit.ir.kinds import is_inplace_kind

__all__ = ["IDEMPOTENT", "fold_idempotent"]

IDEMPOTENT = frozenset({"ember::relu", "ember::abs", "ember::floor", "ember::ceil",
                        "ember::trunc", "ember::sign"})

logger = logging.getLogger("ember_example_pass")


def fold_idempotent(graph: Graph) -> None:
    """Fold ``f(f(x))`` to ``f(x)`` in place (see the module docstring) and destroy the
    outer nodes. Returns None; raises nothing on a well-formed graph."""
    if any(is_inplace_kind(n.kind) for n in graph.all_nodes()):
        return
    folded: Counter = Counter()
    for node in list(graph.all_nodes()):
        if node.destroyed or node.kind not in IDEMPOTENT or len(node.inputs) != 1:
            continue
        inner = node.inputs[0].node
        if inner.kind != node.kind or len(inner.inputs) != 1:
            continue
        node.output().replace_all_uses_with(inner.output())
        node.destroy()
        folded[node.kind] += 1
    if folded:
        logger.info("fold_idempotent: folded %s", ", ".join(
            f"{kind} x{count}" for kind, count in sorted(folded.items())))
