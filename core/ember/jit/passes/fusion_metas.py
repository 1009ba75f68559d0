"""The shapes autodiff's forward keeps, around FusionGroups: metas never split a group,
and a group computes no output only for its shape.

A forward graph made by autodiff reads the shapes of its values (``prim::TensorMeta``, and
``prim::ReduceMeta`` of two metas) for its backward. FuseGraph calls two functions here:

- :func:`sink_metas` (before fusing): each meta moves to just before its first reader, so
  a meta read of a value in the middle of a chain no longer splits the chain.
- :func:`metas_from_group_inputs` (after): a group output read only by metas is not
  stored; its meta is computed from the group's inputs instead (PyTorch's
  ``removeOutputsUsedOnlyInSize`` with ``prim::BroadcastSizes``). Inside a group every
  value is pointwise, so its shape is the broadcast of the shapes of the group inputs
  (or chunk pieces of them) it is computed from, and its dtype is its static one.

The meta of group output ``%o`` becomes::

    %m : Any = prim::BroadcastMeta[dtype=float32, leaves=[0, 1, 1, 4, 1, 0, 2, 2, 3]](%x, %a, %b)

``leaves`` is a flat record list: ``0, k`` is the shape of input ``k``; ``1, chunks, dim,
j, m, k_1..k_m`` is piece ``j`` of ``chunk(chunks, dim)`` of the broadcast of inputs
``k_1..k_m`` (a ``prim::BroadcastingChunk``; a plain chunk has ``m = 1``). The meta's shape
is the broadcast of the leaves' shapes; its device is input 0's.

A value computed by an op that does not broadcast its operands (``type_as``,
``masked_fill``, a reduction, ``split`` by sizes, ``prim::FusedConcat``), or whose dtype
is not known, keeps its output.

Reference: PyTorch's ``graph_fuser.cpp`` (``removeOutputsUsedOnlyInSize``,
``buildShapeExpressions``) and ``prim::BroadcastSizes``.
"""
from __future__ import annotations

from typing import Optional

from ember.jit.autodiff.differentiation import BROADCAST_META, REDUCE_META, TENSOR_META
from ember.jit.runtime.fuser import BROADCASTING_CHUNK, FUSED_CONCAT, FUSIBLE_KINDS
from ember.jit.ir.graph import Block, Node, Value, prim
from ember.jit.ir.ir_types import AnyType, ListType, TensorType
from ember.jit.passes.dead_code_elimination import eliminate_dead_code

__all__ = ["BROADCAST_META", "sink_metas", "metas_from_group_inputs", "earliest"]

# ops whose result is not the broadcast of their tensor operands
_NOT_BROADCASTING = frozenset({"ember::type_as", "ember::masked_fill", "ember::split",
                               "ember::split.sizes", FUSED_CONCAT})


def sink_metas(block: Block) -> None:
    """Move each metadata node (``prim::TensorMeta``, ``prim::ReduceMeta``) of ``block``
    right before its first reader (the return, for the metas autodiff's forward
    captures); ReduceMetas first, since they read TensorMetas. A meta reads only the
    shape of a value, but where autodiff put it (right after the value) it is a use
    between that value's producer and its consumer, which blocks their fusion."""
    nodes = list(block.nodes())
    for node in [n for n in nodes if n.kind == REDUCE_META] + \
            [n for n in nodes if n.kind == TENSOR_META]:
        readers = []
        for v in node.outputs:
            for use in v.uses:
                user = use.user
                while user is not None and user.owning_block is not block:
                    user = user.owning_block.owning_node
                if user is not None:
                    readers.append(user)
        first = earliest(readers)
        if first is not None and first is not node.next:
            node.move_before(first)


def metas_from_group_inputs(group: Node) -> int:
    """Compute, from ``group``'s inputs, the metas of its outputs that only metas read,
    and drop those outputs (see the module docstring); a group left with no output is
    removed. Returns how many outputs were dropped."""
    sub = group.g("Subgraph")
    leaves: dict = {v: frozenset([(0, k)]) for k, v in enumerate(sub.inputs)}
    made: dict = {}  # (recipe, dtype) -> its BroadcastMeta: equal recipes share one
    dropped = 0
    for i in reversed(range(len(group.outputs))):
        out = group.outputs[i]
        uses = _meta_uses(out)
        dtype = getattr(out.type, "dtype", None)
        if not uses or dtype is None:
            continue
        recipe = _leaves_of(sub.outputs[i], leaves)
        if recipe is None:
            continue
        meta = made.get((recipe, dtype))
        if meta is None:
            meta = made[(recipe, dtype)] = _broadcast_meta(group, recipe, dtype)
        for user, offset in uses:
            if user.kind == TENSOR_META and not user.has_attr("cat_dim"):
                user.output().replace_all_uses_with(meta)
                user.destroy()
            else:  # a cat meta or a list of pieces: read the meta in place of the tensor
                user.replace_input(offset, meta)
                if user.kind == prim.ListConstruct:
                    user.output().type = ListType(AnyType())
        group.erase_output(i)
        sub.erase_output(i)
        dropped += 1
    if not group.outputs:  # it computed only shapes
        group.destroy()
    elif dropped:
        eliminate_dead_code(sub)
    return dropped


def _meta_uses(v: Value) -> list:
    """(user, input offset) for each use of ``v`` when all are metas, or a list of pieces
    read only by metas; else []."""
    uses = []
    for u in v.uses:
        user = u.user
        if user.kind == prim.ListConstruct:
            if not user.output().uses or any(w.user.kind != TENSOR_META
                                             for w in user.output().uses):
                return []
        elif user.kind != TENSOR_META:
            return []
        uses.append((user, u.offset))
    return uses


def _leaves_of(v: Value, leaves: dict) -> Optional[frozenset]:
    """The leaves whose shapes broadcast to ``v``'s shape, or None when unknown."""
    if v in leaves:
        return leaves[v]
    node = v.node
    if node.kind == BROADCASTING_CHUNK or node.kind == prim.ListUnpack:
        result = _piece_leaves(node, v, leaves)
    elif node.kind in FUSIBLE_KINDS and node.kind not in _NOT_BROADCASTING:
        parts = [_leaves_of(a, leaves) for a in node.inputs if a in leaves or
                 _is_tensor_value(a)]
        result = None if any(p is None for p in parts) else frozenset().union(*parts)
    else:
        result = None
    leaves[v] = result
    return result


def _piece_leaves(node: Node, v: Value, leaves: dict) -> Optional[frozenset]:
    """Leaves of piece ``v`` of a BroadcastingChunk, or of a chunk's ListUnpack."""
    if node.kind == prim.ListUnpack:
        chunk = node.input().node
        if chunk.kind != "ember::chunk":
            return None
        src, chunks, dim = chunk.inputs
        if not (chunks.is_constant and dim.is_constant):
            return None
        sources, n = [src], len(node.outputs)
        chunks, dim = chunks.to_ivalue(), dim.to_ivalue()
    else:
        sources = list(node.inputs)
        n = len(node.outputs) // len(sources)
        chunks, dim = node.attr("chunks"), node.attr("dim")
    if any(s not in leaves or len(leaves[s]) != 1 or next(iter(leaves[s]))[0] != 0
           for s in sources):
        return None  # a source that is not a group input
    j = list(node.outputs).index(v) % n
    ks = tuple(next(iter(leaves[s]))[1] for s in sources)
    return frozenset([(1, chunks, dim, j, len(ks)) + ks])


def _is_tensor_value(v: Value) -> bool:
    return isinstance(v.type, TensorType)


def _broadcast_meta(group: Node, recipe: frozenset, dtype) -> Value:
    """A ``prim::BroadcastMeta`` before ``group`` reading the inputs ``recipe`` names."""
    inputs, flat = [], []
    for leaf in sorted(recipe):
        ks = leaf[1:2] if leaf[0] == 0 else leaf[5:]
        local = []
        for k in ks:
            v = group.inputs[k]
            if v not in inputs:
                inputs.append(v)
            local.append(inputs.index(v))
        flat += [0, local[0]] if leaf[0] == 0 else list(leaf[:5]) + local
    node = group.graph.create(BROADCAST_META, inputs)
    node.set_attr("dtype", dtype).set_attr("leaves", flat)
    node.output().type = AnyType()
    node.insert_before(group)
    return node.output()


def earliest(nodes) -> Optional[Node]:
    """The node of ``nodes`` (all in one block) that runs first, or None for none."""
    first = None
    for n in nodes:
        if first is None or n.is_before(first):
            first = n
    return first
