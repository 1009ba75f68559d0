"""Collectives on tensors (torch.distributed's): ``all_reduce``, ``broadcast``, ``reduce``,
``all_gather``, ``all_gather_into_tensor``, ``reduce_scatter_tensor``, ``gather``,
``scatter``, ``barrier``.

Each works in place on its tensors (outputs for the gathers), as torch: a C-contiguous
tensor's own memory goes to the engine, a strided one through a contiguous temporary
copied back on completion. ``async_op=True`` returns a ``Work``; the tensors hold the
result only after ``wait()`` (or once ``is_completed()``). Every rank must call the same
collectives in the same order with tensors of the same shape and dtype
(``EMBER_DISTRIBUTED_DEBUG=DETAIL`` checks). Errors: ``RuntimeError`` before
``init_process_group``; ``TypeError`` for a dtype or device the backend does not take;
``ValueError`` for a bad rank or mismatched shapes.
"""
from __future__ import annotations

from ..errors import ShapeError
from .buffers import agree, array_of, check_rank, check_tensor, flat, group_for
from .buffers import start
from .types import Done, ReduceOp


def all_reduce(tensor, op: ReduceOp = ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``tensor`` over all ranks with ``op``; every rank gets the result in place."""
    g = group_for("all_reduce", group)
    check_tensor("all_reduce", tensor, "tensor", g, op)
    agree("all_reduce", g, tensor, op=op)
    arr, back = array_of(tensor)
    return start("all_reduce", g, g.allreduce(arr, op), [back], [tensor], async_op, [tensor])


def broadcast(tensor, src: int, group=None, async_op: bool = False):
    """Copy rank ``src``'s ``tensor`` into ``tensor`` on every other rank."""
    g = group_for("broadcast", group)
    check_tensor("broadcast", tensor, "tensor", g)
    check_rank("broadcast", "src", src, g)
    agree("broadcast", g, tensor, root=src)
    arr, back = array_of(tensor)
    return start("broadcast", g, g.broadcast(arr, src), [back], [tensor], async_op, [tensor])


def reduce(tensor, dst: int, op: ReduceOp = ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``tensor`` over all ranks into rank ``dst``'s ``tensor`` (the others' tensors
    are left as they were)."""
    g = group_for("reduce", group)
    check_tensor("reduce", tensor, "tensor", g, op)
    check_rank("reduce", "dst", dst, g)
    agree("reduce", g, tensor, root=dst, op=op)
    arr, back = array_of(tensor)
    if g.rank != dst:
        back = None
    return start("reduce", g, g.reduce(arr, dst, op), [back], [tensor], async_op,
                 [tensor] if g.rank == dst else [])


def _same(what: str, name: str, t, like) -> None:
    if tuple(t.shape) != tuple(like.shape) or t.dtype != like.dtype:
        raise ShapeError(f"{what}: expected every tensor of {name} to have the input's shape "
                         f"{tuple(like.shape)} and dtype {like.dtype.name}, got "
                         f"{tuple(t.shape)} {t.dtype.name}")


def _list(what: str, name: str, tensors, g, like) -> list:
    if not isinstance(tensors, (list, tuple)) or len(tensors) != g.size:
        got = f"{len(tensors)} items" if isinstance(tensors, (list, tuple)) else type(
            tensors).__name__
        raise ValueError(f"{what}: expected {name} to be a list of world_size = {g.size} "
                         f"tensors, got {got}")
    for t in tensors:
        check_tensor(what, t, name, g)
        _same(what, name, t, like)
    return list(tensors)


def _stacked(g, like):
    xp = like._type.backend.xp
    return xp.empty((g.size,) + tuple(like.shape), like._data.dtype)


def _unstack(outs, buf):
    def back():
        for i, t in enumerate(outs):
            t._data[...] = buf[i]
    return back


def all_gather(tensor_list: list, tensor, group=None, async_op: bool = False):
    """Fill ``tensor_list`` (``world_size`` tensors shaped like ``tensor``) with every
    rank's ``tensor``, in rank order."""
    g = group_for("all_gather", group)
    check_tensor("all_gather", tensor, "tensor", g)
    outs = _list("all_gather", "tensor_list", tensor_list, g, tensor)
    agree("all_gather", g, tensor)
    arr, _ = array_of(tensor)
    buf = _stacked(g, tensor)
    return start("all_gather", g, g.allgather(flat(buf), flat(arr)), [_unstack(outs, buf)],
                 outs, async_op, outs)


def _check_cat(what: str, big, small, g, name: str) -> None:
    """``big`` is ``small`` concatenated (dim 0) or stacked over the ranks."""
    s, b = tuple(small.shape), tuple(big.shape)
    if big.dtype != small.dtype:
        raise TypeError(f"{what}: expected {name} of dtype {small.dtype.name} (the other "
                        f"tensor's), got {big.dtype.name}")
    cat = (s[0] * g.size,) + s[1:] if s else None
    if b != (g.size,) + s and b != cat:
        raise ShapeError(f"{what}: expected {name} of shape {cat or (g.size,)} (world_size "
                         f"x dim 0) or {(g.size,) + s} (stacked), got {b}")


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op: bool = False):
    """Gather every rank's ``input_tensor`` into ``output_tensor``, concatenated along dim
    0 (``(world_size * n, ...)``) or stacked (``(world_size, n, ...)``)."""
    what = "all_gather_into_tensor"
    g = group_for(what, group)
    check_tensor(what, input_tensor, "input_tensor", g)
    check_tensor(what, output_tensor, "output_tensor", g)
    _check_cat(what, output_tensor, input_tensor, g, "output_tensor")
    agree(what, g, input_tensor)
    inp, _ = array_of(input_tensor)
    out, back = array_of(output_tensor)
    return start(what, g, g.allgather(flat(out), flat(inp)), [back], [output_tensor],
                 async_op, [output_tensor])


def reduce_scatter_tensor(output, input, op: ReduceOp = ReduceOp.SUM, group=None,
                          async_op: bool = False):
    """Reduce ``input`` (``world_size`` blocks along dim 0, or stacked) over the ranks
    with ``op``; rank ``r`` gets block ``r`` of the result in ``output``."""
    what = "reduce_scatter_tensor"
    g = group_for(what, group)
    check_tensor(what, input, "input", g, op)
    check_tensor(what, output, "output", g, op)
    _check_cat(what, input, output, g, "input")
    agree(what, g, output, op=op)
    inp, _ = array_of(input)
    out, back = array_of(output)
    return start(what, g, g.reduce_scatter(flat(out), flat(inp), op), [back], [output],
                 async_op, [output])


def gather(tensor, gather_list=None, dst: int = 0, group=None, async_op: bool = False):
    """Rank ``dst`` gets every rank's ``tensor`` in ``gather_list`` (``world_size`` tensors
    shaped like it); the other ranks pass ``gather_list=None``."""
    g = group_for("gather", group)
    check_tensor("gather", tensor, "tensor", g)
    check_rank("gather", "dst", dst, g)
    outs, buf, back = [], None, None
    if g.rank == dst:
        outs = _list("gather", "gather_list", gather_list, g, tensor)
        buf = _stacked(g, tensor)
        back = _unstack(outs, buf)
    elif gather_list:
        raise ValueError(f"gather: gather_list is for rank dst = {dst}; pass None on rank "
                         f"{g.rank}")
    agree("gather", g, tensor, root=dst)
    arr, _ = array_of(tensor)
    out = None if buf is None else flat(buf)
    return start("gather", g, g.gather(out, flat(arr), dst), [back], outs, async_op, outs)


def scatter(tensor, scatter_list=None, src: int = 0, group=None, async_op: bool = False):
    """Rank ``r`` gets ``scatter_list[r]`` of rank ``src`` in ``tensor``; the other ranks
    pass ``scatter_list=None``."""
    g = group_for("scatter", group)
    check_tensor("scatter", tensor, "tensor", g)
    check_rank("scatter", "src", src, g)
    inp = None
    if g.rank == src:
        ins = _list("scatter", "scatter_list", scatter_list, g, tensor)
        inp = tensor._type.backend.xp.stack([t._data for t in ins]).reshape(-1)
    elif scatter_list:
        raise ValueError(f"scatter: scatter_list is for rank src = {src}; pass None on rank "
                         f"{g.rank}")
    agree("scatter", g, tensor, root=src)
    arr, back = array_of(tensor)
    return start("scatter", g, g.scatter(flat(arr), inp, src), [back], [tensor], async_op,
                 [tensor])


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Wait until every rank reached this call (``device_ids`` accepted for torch's
    signature)."""
    g = group_for("barrier", group)
    agree("barrier", g)
    return start("barrier", g, g.barrier() if g.size > 1 else Done(), async_op=async_op)
