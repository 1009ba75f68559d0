"""GroupMetas: gather the metas a forward graph keeps for its backward into one cached
``prim::MetaGroup`` node (see :mod:`ember.jit.autodiff.meta_group` for why and how it runs).

Before (a forward graph as autodiff and FuseGraph leave it)::

    graph(%x : Float(*, *), %b : Float(*)):
      %one : int = prim::Constant[value=1]()
      %y : Float(*, *) = ember::add(%x, %b, %one)
      %xm : Any = prim::TensorMeta(%x)
      %ym : Any = prim::TensorMeta(%y)
      %rx : Any = prim::ReduceMeta(%xm, %ym)
      %bm : Any = prim::TensorMeta(%b)
      %rb : Any = prim::ReduceMeta(%bm, %ym)
      return (%y, %rx, %rb)

After ``group_metas(g)``::

    graph(%x : Float(*, *), %b : Float(*)):
      %one : int = prim::Constant[value=1]()
      %y : Float(*, *) = ember::add(%x, %b, %one)
      %rx : Any, %rb : Any = prim::MetaGroup_0(%x, %y, %b)
      return (%y, %rx, %rb)
    with prim::MetaGroup_0 = graph(%x : Float(*, *), %y : Float(*, *), %b : Float(*)):
      %xm : Any = prim::TensorMeta(%x)
      %ym : Any = prim::TensorMeta(%y)
      %rx : Any = prim::ReduceMeta(%xm, %ym)
      %bm : Any = prim::TensorMeta(%b)
      %rb : Any = prim::ReduceMeta(%bm, %ym)
      return (%rx, %rb)

The members: the graph's top-level ``prim::TensorMeta``, ``prim::ReduceMeta`` and
``prim::BroadcastMeta`` nodes, and the ``prim::ListConstruct`` nodes of their outputs.
The group reads the values they read (tensors, lists of tensors), and returns the member
outputs something else reads. It goes right before the first of those readers; when a
value it reads is only made after that point, or there are fewer than two members (one
meta costs what a cache lookup does), the graph is left alone. Nested blocks are not
entered. The pass runs last in the ``nondiff`` stage, after FuseGraph has rewritten the
metas of the values it fused.
"""
from __future__ import annotations

from ember.jit.autodiff.differentiation import META_KINDS
from ember.jit.ir.graph import Graph, Node, prim
from ember.jit.passes.fusion_metas import earliest

__all__ = ["group_metas"]


def group_metas(graph: Graph) -> None:
    """Gather the metas of ``graph``'s top-level block into one ``prim::MetaGroup`` (see
    the module docstring), in place. Returns None."""
    import ember.jit.autodiff.meta_group  # noqa: F401 - registers how the group runs
    block = graph.block
    members: list = []
    made: set = set()  # member outputs
    for n in block.nodes():
        if n.kind in META_KINDS or (n.kind == prim.ListConstruct and n.inputs
                                       and all(v in made for v in n.inputs)):
            members.append(n)
            made.update(n.outputs)
    if len(members) < 2:
        return
    member_set = set(members)
    reads = list(dict.fromkeys(v for n in members for v in n.inputs if v not in made))
    outs, readers = [], []
    for n in members:
        for v in n.outputs:
            users = [_top_level(u.user, block) for u in v.uses]
            users = [u for u in users if u not in member_set]
            if users:
                outs.append(v)
                readers += users
    if not outs:
        return  # nothing reads the metas: dead code elimination removes them
    first = earliest(readers)
    if any(v.node is not graph.param_node and not v.node.is_before(first) for v in reads):
        return
    group = _make_group(graph, members, reads, outs)
    group.insert_before(first)
    names = [v.debug_name for v in outs]
    for v, new in zip(outs, group.outputs):
        new.type = v.type
        v.replace_all_uses_with(new)
    for n in reversed(members):
        n.destroy()
    for name, new in zip(names, group.outputs):  # the names are free now
        if not name.isdigit():
            new.debug_name = name


def _top_level(node: Node, block) -> Node:
    """``node``, or the node of ``block`` whose blocks (transitively) hold it."""
    while node.owning_block is not block:
        node = node.owning_block.owning_node
    return node


def _make_group(graph: Graph, members: list, reads: list, outs: list) -> Node:
    sub = Graph()
    env: dict = {}
    for v in reads:
        env[v] = sub.add_input(None if v.debug_name.isdigit() else v.debug_name, v.type)
    for n in members:
        clone = sub.block.append_node(sub.create_clone(n, env.__getitem__))
        for old, new in zip(n.outputs, clone.outputs):
            env[old] = new
    for v in outs:
        sub.register_output(env[v])
    return graph.create(prim.MetaGroup, reads, num_outputs=len(outs)).set_attr("Subgraph", sub)
