"""Moving a chunk above the op that computed it, so its readers fuse with that op
(PyTorch's ``tryToMoveChunk``); FuseGraph (:mod:`ember.jit.passes.fuse_graph`) calls it.

When a fusible consumer reads a piece of ``chunk(op(a, b))`` and that chunk is the only
reader of ``op`` (a broadcasting pointwise op), ``op(a_j, b_j)`` is written for each piece
``j`` of ``prim::BroadcastingChunk(a, b)`` (``a`` and ``b`` broadcast to their common
shape, then chunked; the pieces of ``a`` come first), and the move repeats on ``a``
and ``b``. Before (``%g`` feeds only the chunk)::

    %g : Float(2, 8) = ember::add(%a, %b, %one)
    %p : Tensor[] = ember::chunk(%g, %two, %one)
    %p0 : Float(2, 4), %p1 : Float(2, 4) = prim::ListUnpack(%p)
    %y : Float(2, 4) = ember::mul(%p0, %p1)

After::

    %a0 : Tensor, %a1 : Tensor, %b0 : Tensor, %b1 : Tensor = prim::BroadcastingChunk[
        chunks=2, dim=1](%a, %b)
    %p0 : Float(2, 4) = ember::add(%a0, %b0, %one)
    %p1 : Float(2, 4) = ember::add(%a1, %b1, %one)
    %y : Float(2, 4) = ember::mul(%p0, %p1)

The seeds' LSTM cell, ``chunk(x @ w + h @ u + bias, 4, 1)`` and the gate math, becomes
one group that chunks the two matmul results and the bias. The chunk does not move above
an op with a 0-d operand of another dtype (its pieces would promote differently), nor
above ``type_as``/``masked_fill`` (their result is not the broadcast of their operands).
A ``prim::TensorMeta`` of the op becomes ``prim::TensorMeta[cat_dim=d]`` of its pieces,
and a meta of the chunk's list a meta of a ``prim::ListConstruct`` of them.

Reference: PyTorch's ``torch/csrc/jit/passes/graph_fuser.cpp`` (``tryToMoveChunk``,
``prim::BroadcastingChunk``).
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ember.jit.autodiff.differentiation import TENSOR_META
from ember.jit.runtime.fuser import BROADCASTING_CHUNK
from ember.jit.ir.graph import Block, ListType, Node, TensorType, Value, prim
from ember.jit.passes.dead_code_elimination import destroy_with_constants
from ember.jit.passes.fusion_metas import earliest

__all__ = ["try_move_chunk", "chunk_producing"]

# Fusible ops whose result is not the broadcast of their tensor inputs (``type_as`` reads
# only its other's dtype): a chunk is not moved above them.
_NOT_BROADCASTING = frozenset({"ember::type_as", "ember::masked_fill"})


def try_move_chunk(fuser, chunk: Node, device, block: Block) -> bool:
    """Rewrite ``chunk(op(a, b))`` as ``op(a_j, b_j)`` per piece ``j`` of
    ``BroadcastingChunk(a, b)``, when ``op`` is a fusible pointwise op that only the
    chunk (and ``prim::TensorMeta`` nodes after it) reads. A BroadcastingChunk takes in
    the producer of one of its inputs the same way. The pieces' readers can then fuse
    with ``op``, and the chunk cuts inputs of the group. ``fuser`` is FuseGraph's: its
    ``device_of`` and ``checked_device`` decide what may fuse on ``device``. Returns
    whether it moved."""
    if chunk.kind == BROADCASTING_CHUNK:
        sources = list(chunk.inputs)
        n = len(chunk.outputs) // len(sources)
        pieces = [list(chunk.outputs[k * n:(k + 1) * n]) for k in range(len(sources))]
        chunks, dim, unpack, list_uses = chunk.attr("chunks"), chunk.attr("dim"), None, []
    else:
        if not (chunk.inputs[1].is_constant and chunk.inputs[2].is_constant):
            return False
        chunks, dim = chunk.inputs[1].to_ivalue(), chunk.inputs[2].to_ivalue()
        sources, unpack, list_uses = [chunk.inputs[0]], None, []
        if isinstance(chunk.output(0).type, ListType):
            if len(chunk.outputs) != 1:
                return False
            uses = chunk.output().uses
            unpacks = [u.user for u in uses if u.user.kind == prim.ListUnpack]
            list_uses = [u for u in uses if u.user.kind != prim.ListUnpack]
            if len(unpacks) != 1 or any(u.user.kind != TENSOR_META for u in list_uses):
                return False
            unpack = unpacks[0]
            pieces = [list(unpack.outputs)]
        else:
            pieces = [list(chunk.outputs)]
    if not isinstance(chunks, int) or not isinstance(dim, int):
        return False
    for k, src in enumerate(sources):
        metas = _movable_uses(fuser, src, chunk, device, block)
        if metas is not None and _move_chunk(fuser, chunk, k, sources, pieces, (chunks, dim),
                                             unpack, list_uses, metas, device):
            return True
    return False

def _movable_uses(fuser, src: Value, chunk: Node, device, block: Block):
    """The ``prim::TensorMeta`` nodes reading ``src`` when the chunk may move above its
    producer (a fusible, broadcasting pointwise op on ``device`` that only ``chunk``
    reads otherwise); None when it may not."""
    producer = src.node
    if (producer.owning_block is not block or producer.kind == prim.FusionGroup
            or producer.kind in _NOT_BROADCASTING
            or fuser.device_of(producer, block) != device):
        return None
    metas = []
    for use in src.uses:
        if use.user is chunk:
            continue
        user = use.user
        if (user.kind != TENSOR_META or user.has_attr("cat_dim")
                or not chunk.is_before(user)):
            return None
        metas.append(user)
    if sum(1 for v in chunk.inputs if v is src) != 1:
        return None
    # A 0-d tensor promotes below dimensioned ones; its pieces would be dimensioned.
    types = [v.type for v in producer.inputs if isinstance(v.type, TensorType)]
    if not all(t.rank for t in types) and (
            any(t.dtype is None for t in types) or len({t.dtype for t in types}) != 1):
        return None
    return metas

def _move_chunk(fuser, chunk: Node, k: int, sources: list, pieces: list, params: tuple,
                unpack: Optional[Node], list_uses: list, metas: list, device) -> bool:
    """The rewrite of ``try_move_chunk`` for ``sources[k]``: a new BroadcastingChunk of
    the other sources and the producer's tensor inputs, one clone of the producer per
    piece, the old pieces' readers redirected, the old nodes destroyed. Returns False
    (the graph unchanged) when the fuser refuses the new BroadcastingChunk."""
    graph, src = chunk.graph, sources[k]
    producer = src.node
    chunks, dim = params
    n = len(pieces[k])
    operands = list(dict.fromkeys(v for v in producer.inputs if isinstance(v.type, TensorType)))
    new_sources = sources[:k] + [v for v in operands if v not in sources] + sources[k + 1:]
    bc = graph.create(BROADCASTING_CHUNK, new_sources, num_outputs=len(new_sources) * n)
    bc.set_attr("chunks", chunks)
    bc.set_attr("dim", dim)
    for m, v in enumerate(new_sources):
        for j in range(n):
            piece_type = pieces[k][j].type
            if isinstance(piece_type, TensorType):
                piece_type = dataclasses.replace(piece_type, dtype=v.type.dtype,
                                                 requires_grad=v.type.requires_grad)
            bc.outputs[m * n + j].type = piece_type
    bc.insert_before(chunk)
    if fuser.checked_device(bc, bc.outputs) != device:
        bc.destroy()
        return False
    piece_of = {(v, j): bc.outputs[m * n + j]
                for m, v in enumerate(new_sources) for j in range(n)}
    last, clones = bc, []
    for j in range(n):
        clone = graph.create_clone(producer, lambda v, j=j: piece_of.get((v, j), v))
        clone.output().type = pieces[k][j].type
        clone.insert_after(last)
        last = clone
        clones.append(clone.output())
    renamed = []
    for m, v in enumerate(sources):
        for j, old in enumerate(pieces[m]):
            new = clones[j] if m == k else piece_of[(v, j)]
            renamed.append((new, old.debug_name))
            old.replace_all_uses_with(new)
    if list_uses:  # metas of the list, after the pieces' readers (the group to come)
        lst = graph.create(prim.ListConstruct, clones)
        lst.output().type = chunk.output().type
        lst.insert_before(earliest(u.user for u in list_uses))
        for use in list_uses:
            use.user.replace_input(use.offset, lst.output())
    for meta in metas:
        cat = graph.create(TENSOR_META, clones).set_attr("cat_dim", dim)
        cat.output().type = meta.output().type
        cat.insert_before(meta)
        name = meta.output().debug_name
        meta.output().replace_all_uses_with(cat.output())
        meta.destroy()
        if not name.isdigit():
            cat.output().debug_name = name
    if unpack is not None:
        unpack.destroy()
    destroy_with_constants(chunk)
    destroy_with_constants(producer)
    for new, name in renamed:
        if not name.isdigit():
            new.debug_name = name
    return True


def chunk_producing(v: Value, block: Block) -> Optional[Node]:
    """The ``ember::chunk`` or ``prim::BroadcastingChunk`` in ``block`` of which ``v`` is a
    piece (through a ``prim::ListUnpack`` for a chunk's list), or None."""
    node = v.node
    if node.kind == prim.ListUnpack:
        node = node.input(0).node
        if node.kind != "ember::chunk":
            return None
    elif node.kind not in ("ember::chunk", BROADCASTING_CHUNK):
        return None
    return node if node.owning_block is block else None
