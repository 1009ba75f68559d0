"""Fusing a ``cat`` with the groups that compute its pieces (PyTorch's ``fuseConcats``);
FuseGraph (:mod:`ember.jit.passes.fuse_graph`) calls it after its main walk.

``cat`` is not pointwise, so FuseGraph's walk leaves it out of groups: its pieces come
from one or more FusionGroups, each writing its own output, and ``cat`` then copies them
all once more. Here such a ``cat`` becomes ``prim::FusedConcat[dim=d]`` of the same
pieces, the consumer of a new group that absorbs the pieces' producers the usual way
(every other use of a producer's outputs must come after the cat). A fuser then writes
each piece straight into its slice of one buffer: no piece is stored on its own and
nothing is copied. Two sibling groups that only meet in the cat become one kernel: the
backward of the seeds' LSTM cell (the four gates' gradients, concatenated for the matmul
gradients) is one group instead of two groups and a cat.

Before (with a fuser for "cpu"; ``mm`` is not fusible)::

    graph(%x : Float(2, 4, device=cpu),
          %y : Float(2, 4, device=cpu),
          %w : Float(8, 3, device=cpu)):
      %one : int = prim::Constant[value=1]()
      %a : Float(2, 4, device=cpu) = ember::mul(%x, %y)
      %s : Float(2, 4, device=cpu) = ember::sigmoid(%a)
      %b : Float(2, 4, device=cpu) = ember::sub(%x, %y, %one)
      %t : Float(2, 4, device=cpu) = ember::tanh(%b)
      %l : Tensor[] = prim::ListConstruct(%s, %t)
      %c : Float(2, 8, device=cpu) = ember::cat(%l, %one)
      %m : Float(2, 3, device=cpu) = ember::mm(%c, %w)
      return (%m)

After ``fuse_graph(g)`` (its walk makes the two groups, then this pass)::

    graph(%x : Float(2, 4, device=cpu),
          %y : Float(2, 4, device=cpu),
          %w : Float(8, 3, device=cpu)):
      %c : Float(2, 8, device=cpu) = prim::FusionGroup_0[device=device("cpu")](%x, %y)
      %m : Float(2, 3, device=cpu) = ember::mm(%c, %w)
      return (%m)
    with prim::FusionGroup_0 = graph(%x : Float(2, 4, device=cpu),
          %y : Float(2, 4, device=cpu)):
      %one : int = prim::Constant[value=1]()
      %a : Float(2, 4, device=cpu) = ember::mul(%x, %y)
      %s : Float(2, 4, device=cpu) = ember::sigmoid(%a)
      %b : Float(2, 4, device=cpu) = ember::sub(%x, %y, %one)
      %t : Float(2, 4, device=cpu) = ember::tanh(%b)
      %c : Float(2, 8, device=cpu) = prim::FusedConcat[dim=1](%s, %t)
      return (%c)

A cat is fused when its ``dim`` is a constant, its list is a ``prim::ListConstruct`` in
the same block that only the cat reads, every piece and the result share one device with
a fuser that accepts ``prim::FusedConcat`` (``Fuser.can_fuse_node``), and at least one
piece's producer can join the group (otherwise there is nothing to gain). A piece that is
not computed in the group (a group input) is copied into its slice by the kernel. A group
holding a FusedConcat is never merged into a later consumer: its output is the whole
buffer, which only the fuser's stores fill.

Reference: PyTorch's ``torch/csrc/jit/passes/graph_fuser.cpp`` (``fuseConcats``,
``createFusedConcat``, ``isFusableCatNode``) and ``prim::FusedConcat`` in its fuser's
code generator (``ConcatDesc``: the pieces are written into sub-tensors of the output).
"""
from __future__ import annotations

from typing import Optional

from ember.jit.runtime.fuser import FUSED_CONCAT
from ember.jit.ir.graph import Block, IntType, Node, TensorType, prim
from ember.jit.passes.dead_code_elimination import destroy_with_constants

__all__ = ["fuse_concats", "has_fused_concat"]


def fuse_concats(fuser, block: Block) -> int:
    """Turn each fusible ``ember::cat`` of ``block`` (not of nested blocks) into a
    FusionGroup ending in ``prim::FusedConcat``, as the module docstring describes,
    latest cat first. ``fuser`` is FuseGraph's: its ``checked_device``, ``device_of``,
    ``producers`` and ``try_fuse`` decide and do the merging. Returns how many cats were fused."""
    fused = 0
    for cat in reversed(list(block.nodes())):
        if cat.destroyed:
            continue
        spec = _fusible_cat(cat, block)
        if spec is not None and _fuse_cat(fuser, cat, *spec, block):
            fused += 1
    return fused


def has_fused_concat(group: Node) -> bool:
    """Whether FusionGroup ``group``'s subgraph holds a ``prim::FusedConcat``."""
    return any(n.kind == FUSED_CONCAT for n in group.g("Subgraph").nodes())


def _fusible_cat(cat: Node, block: Block) -> Optional[tuple]:
    """``(list node, dim)`` when ``cat`` may become a FusedConcat, else None."""
    if cat.kind != "ember::cat" or cat.owning_block is not block or len(cat.inputs) != 2:
        return None
    pieces, dim = cat.inputs
    if not (dim.is_constant and isinstance(dim.type, IntType)):
        return None
    lst = pieces.node
    if (lst.kind != prim.ListConstruct or lst.owning_block is not block
            or len(pieces.uses) != 1 or not lst.inputs
            or not isinstance(cat.output().type, TensorType)):
        return None
    return lst, dim.to_ivalue()


def _fuse_cat(fuser, cat: Node, lst: Node, dim: int, block: Block) -> bool:
    concat = cat.graph.create(FUSED_CONCAT, list(lst.inputs)).set_attr("dim", dim)
    concat.output().type = cat.output().type
    concat.source_location, concat.scope = cat.source_location, cat.scope  # for errors
    concat.insert_before(lst)  # uses of the pieces after the list are after the consumer
    device = fuser.checked_device(concat, concat.outputs)
    if device is None or not any(_may_join(fuser, v.node, concat, lst, device, block)
                                 for v in lst.inputs):
        concat.destroy()
        return False
    name = cat.output().debug_name
    cat.output().replace_all_uses_with(concat.output())
    destroy_with_constants(cat)
    lst.destroy()
    if not name.isdigit():
        concat.output().debug_name = name
    consumer = concat
    while True:
        group = None
        for producer in fuser.producers(consumer, block):
            group = fuser.try_fuse(consumer, producer, device, block)
            if group is not None:
                break
        if group is None:
            return True
        consumer = group


def _may_join(fuser, producer: Node, concat: Node, lst: Node, device, block: Block) -> bool:
    """Whether ``producer`` can merge into ``concat``'s group (what ``try_fuse`` will
    check once ``lst`` is gone): it is fusible on ``device``, not a group holding a
    FusedConcat, and every other use of its outputs comes after ``concat``."""
    if fuser.device_of(producer, block) != device or (
            producer.kind == prim.FusionGroup and has_fused_concat(producer)):
        return False
    return all(u.user is concat or u.user is lst or concat.is_before(u.user)
               for out in producer.outputs for u in out.uses)
