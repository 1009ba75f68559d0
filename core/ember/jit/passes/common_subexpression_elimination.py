"""Common subexpression elimination: compute each pure expression once.

Before (``%b`` repeats ``%a``; the ``ember::rand`` calls and the ``prim::Print`` must
each run; inside the branch, ``%d`` repeats ``%a`` from the enclosing block)::

    graph(%x : Tensor, %c : bool, %size : int[]):
      %a : Tensor = ember::exp(%x)
      %b : Tensor = ember::exp(%x)
      %r1 : Tensor = ember::rand(%size)
      %r2 : Tensor = ember::rand(%size)
      %y : Tensor = prim::If(%c)
        block0():
          %d : Tensor = ember::exp(%x)
          -> (%d)
        block1():
          -> (%b)
      return (%a, %b, %r1, %r2, %y)

After ``eliminate_common_subexpression(g)`` (``%b`` and ``%d`` are gone, their users read
``%a``)::

    graph(%x : Tensor, %c : bool, %size : int[]):
      %a : Tensor = ember::exp(%x)
      %r1 : Tensor = ember::rand(%size)
      %r2 : Tensor = ember::rand(%size)
      %y : Tensor = prim::If(%c)
        block0():
          -> (%a)
        block1():
          -> (%a)
      return (%a, %a, %r1, %r2, %y)

Two nodes are the same expression when they have the same kind, the very same input
values, equal attributes (``1``, ``1.0`` and ``True`` differ; tensors compare by bits)
and equal output types. Never merged: nodes with side effects, random ops
(``NONDETERMINISTIC_KINDS``), and nodes with blocks. Scoping follows dominance: a node
may reuse one from its own block (earlier) or an enclosing block, never from a sibling
block (a then-branch value does not exist in the else-branch).

NOTE: ember's IR has no alias analysis yet. When the graph mutates something (an in-place
op, or a ``prim::PythonOp`` that may write to its inputs), two equal-looking tensor
expressions may stop being equal, or merging them may make two tensors alias; so in such
graphs only nodes whose inputs and outputs hold no tensors are merged. PyTorch asks its
AliasDb instead (``hasWriters``).

Reference: PyTorch's ``EliminateCommonSubexpression``
(``torch/csrc/jit/passes/common_subexpression_elimination.cpp``) and ``HashNode``/
``EqualNode`` (``torch/csrc/jit/ir/node_hashing.cpp``).
"""
from __future__ import annotations

from collections import ChainMap

from ember.jit.ir.graph import AnyType, Block, Graph, Node, prim
from ember.jit.ir.attributes import attrs_key

__all__ = ["eliminate_common_subexpression"]

# Ops whose two calls with the same arguments give different results. Kinds ending in a
# single ``_`` (``ember::uniform_``) are in-place, hence side-effecting, hence never merged.
NONDETERMINISTIC_KINDS = frozenset(f"ember::{name}" for name in (
    "rand", "rand_like", "randn", "randn_like", "randint", "randint_like", "randperm",
    "bernoulli", "normal", "multinomial", "poisson", "dropout", "feature_dropout",
    "alpha_dropout", "feature_alpha_dropout", "rrelu", "native_dropout",
    # Uninitialized memory: two calls are two distinct buffers, not one value.
    "empty", "empty_like", "empty_strided",
))

# Side effects that write no value another node can read.
_NON_WRITING_KINDS = frozenset({prim.Print, prim.RaiseException, prim.If, prim.Loop})


def eliminate_common_subexpression(graph: Graph) -> None:
    """Merge, in place, the nodes of ``graph`` (nested blocks included) that compute the
    same pure expression as an earlier node visible from them: the later node's users
    read the earlier node's outputs and the later node is destroyed.
    """
    tensors_ok = not any(n.has_side_effects and n.kind not in _NON_WRITING_KINDS
                         for n in graph.all_nodes())
    _eliminate_in_block(graph.block, ChainMap(), tensors_ok)


def _eliminate_in_block(block: Block, seen: ChainMap, tensors_ok: bool) -> None:
    for node in block.nodes():  # destroying the node just yielded is safe
        for b in node.blocks:
            # A child scope: what the branch computes is not visible after it.
            _eliminate_in_block(b, seen.new_child(), tensors_ok)
        if not _mergeable(node, tensors_ok):
            continue
        key = (node.kind, tuple(node.inputs), attrs_key(node),
               tuple(o.type for o in node.outputs))
        earlier = seen.get(key)
        if earlier is None:
            seen[key] = node
        else:
            node.replace_all_uses_with(earlier)
            node.destroy()


def _mergeable(node: Node, tensors_ok: bool) -> bool:
    if node.blocks or not node.outputs or node.kind in NONDETERMINISTIC_KINDS:
        return False
    if node.has_side_effects:
        return False
    if tensors_ok:
        return True
    return not any(_may_hold_tensor(v) for v in node.inputs + node.outputs)


def _may_hold_tensor(value) -> bool:
    return value.type.contains_tensor or isinstance(value.type, AnyType)
