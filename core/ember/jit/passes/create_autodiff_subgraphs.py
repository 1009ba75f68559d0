"""Create autodiff subgraphs: merge runs of differentiable nodes into
``prim::DifferentiableGraph`` nodes, which the executor then differentiates symbolically.

Before (``ember::sin`` has a derivative; ``prim::Print`` does not)::

    graph(%x : Tensor, %y : Tensor):
      %one : int = prim::Constant[value=1]()
      %a : Tensor = ember::mul(%x, %y)
      %b : Tensor = ember::sin(%a)
       = prim::Print(%b)
      %c : Tensor = ember::add(%b, %x, %one)
      return (%c)

After ``create_autodiff_subgraphs(g, threshold=2)`` (``%c`` alone is too small)::

    graph(%x : Tensor, %y : Tensor):
      %one : int = prim::Constant[value=1]()
      %b : Tensor = prim::DifferentiableGraph_0(%x, %y)
       = prim::Print(%b)
      %c : Tensor = ember::add(%b, %x, %one)
      return (%c)
    with prim::DifferentiableGraph_0 = graph(%x : Tensor, %y : Tensor):
      %a : Tensor = ember::mul(%x, %y)
      %b : Tensor = ember::sin(%a)
      return (%b)

The slicer walks each block from its last node up. A differentiable node (see
:func:`ember.jit.autodiff.is_differentiable`) becomes a group; the group then absorbs the
producers of its inputs, latest first, whenever the producer is differentiable (or a
group) and can be moved right before the group without breaking topological order: the
nodes between them that read the producer (directly or through each other) move after
the group instead. Nodes that may write (in-place ops, ``prim::PythonOp``) are never
crossed, and nodes with side effects never move (a ``prim::Print`` may be crossed).
Constants are not merged but copied into the group. This repeats until nothing changes;
then groups whose subgraph has fewer than ``threshold`` nodes doing work (constants and
list/tuple construct/unpack do not count) are inlined back, and common subexpression
elimination merges the constants that copying repeated (constants left unused stay for
dead code elimination). Nested blocks (``prim::If``, ``prim::Loop``) get groups of
their own; a group never crosses a block boundary.

Reference: PyTorch's ``CreateAutodiffSubgraphs``
(``torch/csrc/jit/passes/create_autodiff_subgraphs.cpp``) and ``SubgraphUtils``
(``mergeNodeIntoSubgraph``, ``unmergeSubgraph``).
"""
from __future__ import annotations

from ember.jit.autodiff.differentiation import META_KINDS, is_differentiable
from ember.jit.ir.graph import Block, Graph, Node, prim
from ember.jit.passes.common_subexpression_elimination import eliminate_common_subexpression

__all__ = ["create_autodiff_subgraphs", "subgraph_size", "unmerge_subgraph"]

_PURE_EFFECTS = {prim.Print, prim.RaiseException}  # side effects that write no tensor
_BOOKKEEPING = {prim.Constant, prim.ListConstruct, prim.ListUnpack, prim.TupleConstruct,
                prim.TupleUnpack, *META_KINDS}


def create_autodiff_subgraphs(graph: Graph, threshold: int = 2) -> list:
    """Group the differentiable nodes of ``graph`` in place (see the module docstring);
    returns the ``prim::DifferentiableGraph`` nodes made, nested blocks included.

    ``threshold``: the least number of working nodes a group keeps (1 keeps every group).
    """
    groups: list = []
    _slice(graph, graph.block, threshold, groups)
    eliminate_common_subexpression(graph)
    return groups


def subgraph_size(graph: Graph) -> int:
    """The nodes of ``graph`` that do work: all but constants, list/tuple construct and
    unpack, and the metadata nodes ``prim::TensorMeta`` and ``prim::ReduceMeta`` (what the
    autodiff thresholds count)."""
    return sum(1 for n in graph.nodes() if n.kind not in _BOOKKEEPING)


def _slice(graph: Graph, block: Block, threshold: int, groups: list) -> None:
    changed = True
    while changed:
        changed = False
        node = block.return_node.prev
        while node is not block.param_node:
            node, merged = _scan(graph, node)
            changed |= merged
    for node in list(block.nodes(reverse=True)):
        for b in node.blocks:
            _slice(graph, b, threshold, groups)
        if node.kind == prim.DifferentiableGraph and not node.has_attr("ReverseSubgraph"):
            if subgraph_size(node.g("Subgraph")) < threshold:
                unmerge_subgraph(node)
            else:  # copied-in constants repeat: clean up as the seeds do
                eliminate_common_subexpression(node.g("Subgraph"))
                groups.append(node)


def _considered(node: Node) -> bool:
    if node.kind == prim.DifferentiableGraph:
        return not node.has_attr("ReverseSubgraph")
    return node.kind != prim.Constant and is_differentiable(node)


def _scan(graph: Graph, consumer: Node):
    """Grow the group at ``consumer``; returns (the node to look at next, merged?)."""
    if not _considered(consumer):
        return consumer.prev, False
    if consumer.kind != prim.DifferentiableGraph:
        consumer = _singleton(graph, consumer)
    block = consumer.owning_block
    producers = {v.node for v in consumer.inputs if v.node.owning_block is block and
                 v.node.kind != prim.Param}
    for producer in sorted(producers, key=lambda n: n._pos, reverse=True):
        if _considered(producer) and _move_before(producer, consumer):
            _merge(graph, producer, consumer)
            return consumer, True  # its inputs changed: scan it again
    return consumer.prev, False


def _reads(node: Node) -> set:
    """The values ``node`` reads, inside its blocks included."""
    out = set(node.inputs)
    for b in node.blocks:
        for n in b.nodes():
            out |= _reads(n)
        out |= set(b.outputs)
    return out


def _move_before(producer: Node, consumer: Node) -> bool:
    """Move ``producer`` right before ``consumer`` if topologically valid: the nodes in
    between that depend on it move right after ``consumer``. Returns whether it moved."""
    if producer.next is consumer:
        return True
    moving, produced = [], set(producer.outputs)
    n = producer.next
    while n is not consumer:
        if _reads(n) & produced:
            if n.has_side_effects:
                return False  # a print or a write would change order with those in between
            moving.append(n)
            produced.update(n.outputs)
        elif n.has_side_effects and n.kind not in _PURE_EFFECTS:
            return False  # it may write what the producer reads
        n = n.next
    if _reads(consumer) & (produced - set(producer.outputs)):
        return False  # the group reads something computed from the producer in between
    producer.move_before(consumer)
    after = consumer
    for m in moving:
        m.move_after(after)
        after = m
    return True


def _singleton(graph: Graph, node: Node) -> Node:
    group = graph.create_with_subgraph(prim.DifferentiableGraph)
    group.insert_before(node)
    _merge(graph, node, group)
    return group


def _merge(graph: Graph, node: Node, group: Node) -> None:
    """Move ``node`` (right before ``group``, or a group itself) into ``group``."""
    if node.kind == prim.DifferentiableGraph:
        inner = unmerge_subgraph(node)
        for n in reversed(inner):  # each is right before the group when its turn comes
            if n.kind != prim.Constant:
                _merge(graph, n, group)
        for n in inner:
            if n.kind == prim.Constant and not n.output().has_uses:
                n.destroy()
        return
    sub = group.g("Subgraph")
    env = dict(zip(group.inputs, sub.inputs))
    first = next(iter(sub.nodes()), sub.return_node)
    for v in node.inputs:
        if v in env:
            continue
        if v.node.kind == prim.Constant:  # copied in, so passes inside see the value
            env[v] = sub.create_clone(v.node, {}).insert_before(first).output()
        else:
            group.add_input(v)
            env[v] = sub.add_input(v.debug_name if not v.debug_name.isdigit() else None,
                                   v.type)
    clone = sub.create_clone(node, env.__getitem__).insert_before(first)
    for i, v in reversed(list(enumerate(group.inputs))):  # read inside now, not outside
        if v.node is node:
            group.remove_input(i)
            name = sub.inputs[i].debug_name
            sub.inputs[i].replace_all_uses_with(clone.outputs[v.offset])
            sub.erase_input(i)
            if not name.isdigit():
                clone.outputs[v.offset].debug_name = name
    names = []
    for old, new in zip(node.outputs, clone.outputs):
        if old.has_uses:  # used after the group: becomes one of its outputs
            sub.register_output(new)
            out = group.add_output(old.type)
            old.replace_all_uses_with(out)
            names.append((out, old.debug_name))
    node.destroy()
    for out, name in names:  # the group's outputs keep the names users know
        if not name.isdigit():
            out.debug_name = name


def unmerge_subgraph(group: Node) -> list:
    """Inline ``prim::DifferentiableGraph`` (or FusionGroup) ``group`` back into its block:
    its subgraph's nodes take its place; extra subgraph outputs (temporaries of a
    differentiated ``f``) are dropped. Returns the inlined nodes, in order."""
    graph = group.graph
    before = group.prev
    with graph.insert_point_guard(group):
        outs = graph.insert_graph(group.g("Subgraph"), list(group.inputs))
    names = [(new, old.debug_name) for old, new in zip(group.outputs, outs)]
    for old, new in zip(group.outputs, outs):
        old.replace_all_uses_with(new)
    nodes, n = [], before.next
    while n is not group:
        nodes.append(n)
        n = n.next
    group.destroy()
    inlined = set(nodes)
    for new, name in names:  # values made by the inlined nodes take the group's names
        if not name.isdigit() and new.node in inlined:
            new.debug_name = name
    return nodes
