"""``ember.distributed``: torch.distributed's API on process-group backends from plugins.

Start a script on N ranks with ``ember run -n N script.py`` (mpiexec underneath); in it::

    import ember
    import ember.distributed as dist

    dist.init_process_group("mpi")           # rank and size from the launcher
    t = ember.ones(4) * dist.get_rank()
    dist.all_reduce(t)                       # in place: the sum over ranks
    work = dist.all_reduce(t, op=dist.ReduceOp.MAX, async_op=True)
    ...                                      # overlap other work
    work.wait()
    dist.destroy_process_group()

Backends register through the ``ember_process_group_backends`` hook: ``mpi``
(``pip install ember-mpi``: mpi4py on the mpich wheel; CPU tensors) and ``nccl`` (the
``cuda`` plugin, on ``cupy.cuda.nccl``; CUDA tensors). The protocol a backend implements
is :class:`ProcessGroupBackend` (``types.py``). ``EMBER_DISTRIBUTED_DEBUG=DETAIL`` checks
before every collective that the ranks agree on it (``debug.py``); an uncaught exception on
one rank aborts the job with a message naming the rank (``group.py``); blocking calls and
``Work.wait()`` raise ``DistTimeoutError`` after the group's timeout. See
``docs/distributed.md``.
"""
from . import process_group as _pg
from .collectives import (all_gather, all_gather_into_tensor, all_reduce, barrier, broadcast,
                          gather, reduce, reduce_scatter_tensor, scatter)
from .debug import CollectiveMismatchError
from .process_group import (destroy_process_group, get_backend, get_rank, get_world_size,
                    init_process_group, is_available, is_initialized)
from .objects import all_gather_object, broadcast_object_list
from .p2p import irecv, isend, recv, send
from .types import (DistBackendError, DistError, DistTimeoutError, ProcessGroup,
                    ProcessGroupBackend, ReduceOp, Request, Work)


class group:  # noqa: N801 - torch's spelling: dist.group.WORLD
    """``group.WORLD``: the default process group's name."""

    WORLD = _pg.WORLD


__all__ = ["CollectiveMismatchError", "DistBackendError", "DistError", "DistTimeoutError",
           "ProcessGroup", "ProcessGroupBackend", "ReduceOp", "Request", "Work", "all_gather",
           "all_gather_into_tensor", "all_gather_object", "all_reduce", "barrier", "broadcast",
           "broadcast_object_list", "destroy_process_group", "gather", "get_backend",
           "get_rank", "get_world_size", "group", "init_process_group", "irecv",
           "is_available", "is_initialized", "isend", "recv", "reduce",
           "reduce_scatter_tensor", "scatter", "send"]
