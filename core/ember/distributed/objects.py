"""Collectives on picklable Python objects: ``all_gather_object``,
``broadcast_object_list`` (torch's, same pickle caveat: unpickling runs code, so only
exchange objects between ranks you trust, which ranks of one job are).

An object travels as its pickle in a uint8 array: first the byte counts (an int64
all-gather or broadcast), then the bytes padded to the largest count. The arrays live
where the group's collectives want them (``ProcessGroup.to_device``: numpy for ``mpi``,
CuPy for ``nccl``).
"""
from __future__ import annotations

import pickle

import numpy as np

from .process_group import default_group, state, WORLD
from .types import Work


def _wait(request, what: str) -> None:
    Work(request, what, state.timeout).wait()


def host_all_gather_object(g, obj) -> list:
    """Every rank's ``obj``, in rank order, through group ``g`` (no argument checks)."""
    data = np.frombuffer(pickle.dumps(obj), dtype=np.uint8)
    sizes = g.to_device(np.zeros(g.size, np.int64))
    _wait(g.allgather(sizes, g.to_device(np.array([data.size], np.int64))),
          "all_gather_object")
    sizes = g.to_host(sizes)
    most = int(sizes.max())
    padded = np.zeros(most, np.uint8)
    padded[:data.size] = data
    out = g.to_device(np.empty(g.size * most, np.uint8))
    _wait(g.allgather(out, g.to_device(padded)), "all_gather_object")
    out = g.to_host(out).reshape(g.size, most)
    return [pickle.loads(out[r, :int(sizes[r])].tobytes()) for r in range(g.size)]


def _check_group(what: str, group):
    g = default_group()
    if group is not None and group is not g and group is not WORLD:
        raise ValueError(f"{what}: ember has only the default process group; pass group=None")
    return g


def all_gather_object(object_list: list, obj, group=None) -> None:
    """Fill ``object_list`` (a list of ``world_size`` items) with every rank's ``obj`` in
    rank order. ``ValueError`` when its length is not the world size."""
    g = _check_group("all_gather_object", group)
    if not isinstance(object_list, list) or len(object_list) != g.size:
        raise ValueError(f"all_gather_object: expected object_list to be a list of "
                         f"world_size = {g.size} items, got {_length(object_list)}; pass "
                         f"[None] * ember.distributed.get_world_size()")
    object_list[:] = host_all_gather_object(g, obj)


def broadcast_object_list(object_list: list, src: int = 0, group=None, device=None) -> None:
    """Replace the items of ``object_list`` on every rank with those of rank ``src``'s list
    (same length on every rank). ``device`` is accepted for torch's signature."""
    g = _check_group("broadcast_object_list", group)
    if not isinstance(object_list, list):
        raise TypeError(f"broadcast_object_list: expected a list, got "
                        f"{type(object_list).__name__}")
    if isinstance(src, bool) or not isinstance(src, int) or not 0 <= src < g.size:
        raise ValueError(f"broadcast_object_list: expected src to be a rank in [0, {g.size}), "
                         f"got {src!r}")
    mine = g.rank == src
    data = np.frombuffer(pickle.dumps(list(object_list)), np.uint8) if mine else None
    size = g.to_device(np.array([data.size if mine else 0], np.int64))
    _wait(g.broadcast(size, src), "broadcast_object_list")
    n = int(g.to_host(size)[0])
    buf = g.to_device(data.copy() if mine else np.empty(n, np.uint8))
    _wait(g.broadcast(buf, src), "broadcast_object_list")
    if not mine:
        got = pickle.loads(g.to_host(buf).tobytes())
        if len(got) != len(object_list):
            raise ValueError(f"broadcast_object_list: rank {src} sent {len(got)} objects, this "
                             f"rank's list holds {len(object_list)}; use lists of one length "
                             f"on every rank")
        object_list[:] = got


def _length(v) -> str:
    return f"{len(v)} items" if isinstance(v, list) else type(v).__name__
