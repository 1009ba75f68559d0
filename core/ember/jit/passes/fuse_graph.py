"""FuseGraph: merge chains of pointwise ops into ``prim::FusionGroup`` nodes for a fuser.

Before (CPU tensors, with a fuser registered for ``"cpu"``; ``mm`` is not fusible)::

    graph(%x : Float(2, 2, device=cpu),
          %y : Float(2, 2, device=cpu)):
      %one : int = prim::Constant[value=1]()
      %a : Float(2, 2, device=cpu) = ember::mul(%x, %y)
      %b : Float(2, 2, device=cpu) = ember::add(%a, %x, %one)
      %c : Float(2, 2, device=cpu) = ember::tanh(%b)
      %m : Float(2, 2, device=cpu) = ember::mm(%c, %x)
      return (%m)

After ``fuse_graph(g)``::

    graph(%x : Float(2, 2, device=cpu),
          %y : Float(2, 2, device=cpu)):
      %c : Float(2, 2, device=cpu) = prim::FusionGroup_0[device=device("cpu")](%x, %y)
      %m : Float(2, 2, device=cpu) = ember::mm(%c, %x)
      return (%m)
    with prim::FusionGroup_0 = graph(%x : Float(2, 2, device=cpu),
          %y : Float(2, 2, device=cpu)):
      %one : int = prim::Constant[value=1]()
      %a : Float(2, 2, device=cpu) = ember::mul(%x, %y)
      %b : Float(2, 2, device=cpu) = ember::add(%a, %x, %one)
      %c : Float(2, 2, device=cpu) = ember::tanh(%b)
      return (%c)

How (PyTorch's greedy algorithm): walk each block from its last node to its first; a
fusible node (the consumer) tries to absorb the producers of its inputs, latest first. A
producer can move into the consumer's group when it is fusible, in the same block, and
every other use of its outputs comes after the consumer (``Node.is_before``): then
computing it at the consumer's place changes nothing, and those later uses read a new
output of the group. A consumer that is not a group yet becomes one first; a producer
that is a group is merged whole. After each merge the group is scanned again, and the walk
repeats until nothing changes. Groups therefore always hold at least two ops.

A node is fusible when ``fuser.can_fuse_node(node)`` holds (default: ``FUSIBLE_KINDS``)
for the fuser registered for its device type, where its device is the one known
``TensorType.device`` that every tensor it reads and writes shares (an unknown or mixed
device fuses nothing); it has one tensor output and no blocks; and its other inputs are
constants, which are copied into the subgraph (tensors become group inputs). Last, a
``chunk``/``split`` whose pieces are read only by one group is pulled into it, so the group
reads the whole tensor (a chunk always splits a group input: a producer feeding a chunk is
never merged in).

A chunk of a computed value is moved above the op that computed it instead, when that
lets its readers fuse with the op (:mod:`ember.jit.passes.chunk_motion`): the seeds' LSTM
cell, ``chunk(x @ w + h @ u + bias, 4, 1)`` and the gate math, becomes one group that
chunks the two matmul results and the bias.

After the walk, a ``cat`` of pieces that groups compute becomes a group ending in
``prim::FusedConcat``, which absorbs those groups (:mod:`ember.jit.passes.fuse_concat`):
the fuser writes each piece into its slice of the result.

``prim::TensorMeta`` and ``prim::ReduceMeta`` nodes (the shapes autodiff's forward keeps
for backward) are moved first to just before their first reader, so a meta read of a
value in the middle of a chain no longer splits it. A meta of an op that a chunk moved
above becomes ``prim::TensorMeta[cat_dim=d]`` of the op's pieces, and a meta of the
chunk's list a meta of a ``prim::ListConstruct`` of them. Last, a group output that only
metas read is not stored: its meta is computed from the group's inputs
(:mod:`ember.jit.passes.fusion_metas`).

Without a registered fuser the pass does nothing. Nested blocks get their own groups;
subgraph attributes are not entered. A group runs through
:class:`ember.jit.runtime.fuser.FusionGroupOp`, unfused when its fuser declines.

Reference: PyTorch's ``FuseGraph`` (``torch/csrc/jit/passes/graph_fuser.cpp``: ``scanNode``,
``tryFuse``, ``mergeNodeIntoGroup``, ``mergeFusionGroups``, ``tryToMoveChunk``,
``fuseConcats``).
"""
from __future__ import annotations

import functools
from typing import Optional

from ember.jit.ir.attributes import value_key
from ember.jit.runtime.fuser import CHUNK_KINDS, can_fuse_node, registered_fusers
from ember.jit.passes.chunk_motion import chunk_producing, try_move_chunk
from ember.jit.passes.dead_code_elimination import destroy_with_constants
from ember.jit.passes.fuse_concat import fuse_concats, has_fused_concat
from ember.jit.passes.fusion_metas import metas_from_group_inputs, sink_metas
from ember.jit.ir.graph import (Block, BoolType, DeviceType, FloatType, Graph, IntType, ListType,
                                Node, NoneType, ScalarTypeType, StringType, TensorType, Value,
                                prim)

__all__ = ["fuse_graph"]

# Constants of these types (and lists of them) are copied into a subgraph.
_SCALAR_TYPES = (IntType, FloatType, BoolType, NoneType, StringType, ScalarTypeType,
                 DeviceType)


def fuse_graph(graph: Graph) -> None:
    """Group, in place, the fusible ops of ``graph`` (nested blocks included) into
    ``prim::FusionGroup`` nodes, as the module docstring describes; does nothing when no
    fuser is registered. Returns None."""
    fusers = registered_fusers()
    if fusers:
        _GraphFuser(fusers).run(graph.block)


class _GraphFuser:
    def __init__(self, fusers: dict):
        self.fusers = fusers

    def run(self, block: Block) -> None:
        sink_metas(block)
        changed = True
        while changed:
            changed = False
            node = block.return_node.prev
            while node is not block.param_node:
                group = self.scan_node(node, block)
                if group is None:
                    node = node.prev
                else:  # the consumer is now this group: scan it again
                    changed, node = True, group
        fuse_concats(self, block)
        for group in [n for n in block.nodes() if n.kind == prim.FusionGroup]:
            while self.pull_chunk(group, block):
                pass
            metas_from_group_inputs(group)
        for n in block.nodes():
            for b in n.blocks:
                self.run(b)

    # -- which nodes fuse ------------------------------------------------------------------
    def device_of(self, node: Node, block: Block):
        """The device ``node`` would be fused on, or None when it is not fusible."""
        if node.owning_block is not block or node.blocks:
            return None
        if node.kind == prim.FusionGroup:
            return node.attr("device", None)
        if (node.kind in CHUNK_KINDS or len(node.outputs) != 1
                or not isinstance(node.output().type, TensorType)
                or node.has_side_effects):
            return None
        return self.checked_device(node, node.outputs)

    def checked_device(self, node: Node, outputs) -> Optional[object]:
        """The device shared by the tensors ``node`` reads and ``outputs``, if it has a
        fuser that accepts ``node`` and every non-tensor input is a constant."""
        devices = set()
        for v in node.inputs:
            if isinstance(v.type, TensorType):
                devices.add(v.type.device)
            elif not (v.is_constant and _is_scalar_constant(v)):
                return None
        for v in outputs:
            if not isinstance(v.type, TensorType):
                return None
            devices.add(v.type.device)
        if len(devices) != 1 or None in devices:
            return None
        device = devices.pop()
        fuser = self.fusers.get(device.type)
        if fuser is None or not can_fuse_node(fuser, node):
            return None
        return device

    # -- merging ---------------------------------------------------------------------------
    def scan_node(self, consumer: Node, block: Block) -> Optional[Node]:
        device = self.device_of(consumer, block)
        if device is None:
            return None
        for v in consumer.inputs:
            chunk = chunk_producing(v, block)
            if chunk is not None and try_move_chunk(self, chunk, device, block):
                return consumer  # it now reads the moved op's pieces: scan it again
        for producer in self.producers(consumer, block):
            group = self.try_fuse(consumer, producer, device, block)
            if group is not None:
                return group
        return None

    @staticmethod
    def producers(consumer: Node, block: Block) -> list:
        """The values ``consumer`` reads that nodes of ``block`` compute, latest first: in
        f(a, a + b), a cannot join f while a + b (an earlier use of a) is outside; once
        a + b has joined, a can."""
        values = dict.fromkeys(v for v in consumer.inputs
                               if v.node.owning_block is block and v.node.kind != prim.Param)
        order = functools.cmp_to_key(
            lambda u, v: 0 if u.node is v.node else -1 if v.node.is_before(u.node)
            else 1)
        return sorted(values, key=order)

    def try_fuse(self, consumer: Node, producer: Value, device, block: Block):
        pnode = producer.node
        if self.device_of(pnode, block) != device:
            return None
        for out in pnode.outputs:
            for use in out.uses:
                if use.user is not consumer and not consumer.is_before(use.user):
                    return None
        if consumer.kind == prim.FusionGroup and _feeds_chunk(consumer, producer):
            return None
        if pnode.kind == prim.FusionGroup and has_fused_concat(pnode):
            return None  # its output is a concat buffer that only its stores fill
        group = consumer
        if consumer.kind != prim.FusionGroup:
            group = self.singleton_group(consumer, device)
        if pnode.kind == prim.FusionGroup:
            self.merge_groups(group, pnode)
            return group
        merged = merge_node_into_group(group, pnode)
        _expose_remaining_uses(group, pnode, merged)
        destroy_with_constants(pnode)
        return group

    def singleton_group(self, node: Node, device) -> Node:
        """Replace ``node`` by a FusionGroup holding just it; returns the group."""
        group = node.graph.create_with_subgraph(prim.FusionGroup)
        group.set_attr("device", device)
        group.insert_before(node)
        merged = merge_node_into_group(group, node)
        _expose_remaining_uses(group, node, merged)
        destroy_with_constants(node)
        return group

    def merge_groups(self, group: Node, producer: Node) -> None:
        """Merge FusionGroup ``producer`` into ``group``: unpack its nodes in front of it,
        then merge them one by one, latest first."""
        sub = producer.g()
        env = dict(zip(sub.inputs, producer.inputs))
        unpacked = []
        for inner in sub.nodes():
            outer = producer.graph.create_clone(inner, env.__getitem__).insert_before(producer)
            env.update(zip(inner.outputs, outer.outputs))
            unpacked.append(outer)
        renamed = []
        for out, inner in zip(producer.outputs, sub.outputs):
            out.replace_all_uses_with(env[inner])
            renamed.append((env[inner], out.debug_name))
        producer.destroy()
        for v, name in renamed:  # the group's output names, free now, go to the values
            if not name.isdigit() and v.node.kind != prim.Param:
                v.debug_name = name
        for node in reversed(unpacked):
            if node.kind != prim.Constant:  # merge_node_into_group copies constants it reads
                merged = merge_node_into_group(group, node)
                _expose_remaining_uses(group, node, merged)
                node.destroy()
        for node in unpacked:
            if node.kind == prim.Constant and not node.output().has_uses:
                node.destroy()

    def pull_chunk(self, group: Node, block: Block) -> bool:
        """Move into ``group`` one chunk/split (and its ListUnpack) whose pieces only
        ``group`` reads; returns whether one moved."""
        for v in group.inputs:
            node, unpack = v.node, None
            if node.kind == prim.ListUnpack:
                unpack, node = node, node.input(0).node
                if len(node.outputs) != 1 or len(node.output().uses) != 1:
                    continue
            if node.kind not in CHUNK_KINDS or node.owning_block is not block:
                continue
            pieces = (unpack or node).outputs
            if any(u.user is not group for p in pieces for u in p.uses):
                continue
            if unpack is None and any(isinstance(p.type, ListType) for p in pieces):
                continue
            if self.checked_device(node, pieces) != group.attr("device", None):
                continue
            if unpack is not None:
                merge_node_into_group(group, unpack)
                destroy_with_constants(unpack)
            merge_node_into_group(group, node)
            destroy_with_constants(node)
            return True
        return False


def merge_node_into_group(group: Node, node: Node) -> Node:
    """Clone ``node`` into the front of ``group``'s subgraph and return the clone. Its
    inputs that are scalar constants are copied in (once per value); the other ones become
    group inputs. Group inputs that ``node`` produced are replaced by the clone's outputs
    (the node now runs inside). ``node`` itself is left for the caller to destroy."""
    sub = group.g()
    env = dict(zip(group.inputs, sub.inputs))
    for v in node.inputs:
        if v in env:
            continue
        if v.is_constant and _is_scalar_constant(v):
            env[v] = _subgraph_constant(sub, v)
        else:
            env[v] = sub.add_input(_name_of(v), v.type)
            group.add_input(v)
    # Constants stay at the top; the clone goes before the ops already merged (its users).
    first = next((n for n in sub.nodes() if n.kind != prim.Constant), None)
    clone = sub.create_clone(node, env.__getitem__)
    clone.insert_before(sub.return_node if first is None else first)
    for out, inner in zip(node.outputs, clone.outputs):
        if out in group.inputs:
            i = group.inputs.index(out)
            group.remove_input(i)
            sub.inputs[i].replace_all_uses_with(inner)
            sub.block.erase_input(i)
        if _name_of(out):  # the input that held the name may be gone now
            inner.debug_name = out.debug_name
    return clone


def _name_of(v: Value) -> Optional[str]:
    """``v``'s debug name when it was given one (not a plain number), else None."""
    return None if v.debug_name.isdigit() else v.debug_name


def _expose_remaining_uses(group: Node, node: Node, merged: Node) -> None:
    """Make each output of ``node`` that is still used outside an output of ``group``."""
    sub = group.g()
    for out, inner in zip(node.outputs, merged.outputs):
        if out.has_uses:
            sub.register_output(inner)
            new = group.add_output(out.type)
            name = out.debug_name
            out.replace_all_uses_with(new)
            if not name.isdigit():
                out.debug_name = f"{name}.unfused"  # frees the name for the group output
                new.debug_name = name


def _subgraph_constant(sub: Graph, v: Value) -> Value:
    """A copy of constant ``v`` in ``sub``, reusing an equal one already there."""
    key = (value_key(v.to_ivalue()), v.type)
    for n in sub.nodes():
        if n.kind == prim.Constant and (value_key(n.attr("value")), n.output().type) == key:
            return n.output()
    return sub.block.prepend_node(sub.create_clone(v.node, {}.__getitem__)).output()


def _is_scalar_constant(v: Value) -> bool:
    """Whether constant ``v`` is copied into a subgraph: a number, bool, None, string,
    dtype or device, or a list of them (``split``'s sizes); tensors are group inputs."""
    t = v.type
    return isinstance(t.elem if isinstance(t, ListType) else t, _SCALAR_TYPES)


def _feeds_chunk(group: Node, value: Value) -> bool:
    """Whether ``value`` enters ``group`` to be chunked (it must stay a group input)."""
    sub = group.g()
    return any(u.user.kind in CHUNK_KINDS
               for i, v in enumerate(group.inputs) if v is value
               for u in sub.inputs[i].uses)
