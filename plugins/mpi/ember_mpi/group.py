"""The ``mpi`` process group: ember.distributed's collectives on mpi4py's buffer interface.

Every operation is one non-blocking MPI call on a duplicate of ``MPI.COMM_WORLD`` (so the
user's own MPI traffic never matches ember's): ``Iallreduce``, ``Ibcast``, ``Ireduce``,
``Iallgather``, ``Ireduce_scatter_block``, ``Igather``, ``Iscatter``, ``Isend`` /
``Irecv``, ``Ibarrier``; the returned ``MPI.Request`` is progressed by
``Request.Test`` from ember's ``Work`` (which owns the timeout). Buffers are the tensors'
numpy arrays, passed without copies: mpi4py's upper-case methods take buffer-like
objects (reference: mpi4py's tutorial, https://mpi4py.readthedocs.io/en/stable/tutorial.html,
and its ``Comm`` reference, https://mpi4py.readthedocs.io/en/stable/reference/
mpi4py.MPI.Comm.html: ``Iallreduce(sendbuf, recvbuf, op)`` returns an ``MPI.Request``;
``MPI.IN_PLACE`` as the send buffer reduces in place). Moves (broadcast,
gathers, send) go as bytes, so every dtype travels, bfloat16 included; reductions use the
array's own MPI datatype. ``ReduceOp.AVG`` is a SUM followed by a division by the world
size once the request completed (as torch's gloo backend); bool reduces as uint8 with
MAX for SUM / MAX (logical or) and MIN for PRODUCT / MIN (logical and).

Rank and size are ``MPI.COMM_WORLD``'s: start the ranks with ``ember run -n N`` (hydra's
``mpiexec``). ``abort`` calls ``MPI.COMM_WORLD.Abort(1)``, which makes mpiexec end every
rank (as it does when a rank is killed or exits with a non-zero code without MPI); ember's
uncaught-exception hook calls it, as ``python -m mpi4py.run`` does for plain mpi4py
scripts.

A rank whose script ends, or calls ``sys.exit``, with the group still open tells the others
on a second communicator (an ``atexit`` hook that runs before mpi4py finalizes MPI): a rank
waiting for it in an operation raises ``DistBackendError`` naming it (after a grace period
for data still in flight) instead of waiting for the timeout, then aborts the job through
ember's uncaught-exception hook.
"""
from __future__ import annotations

import atexit
import time
from datetime import timedelta

import numpy as np

from ember.distributed import DistBackendError, ReduceOp

MOVE_DTYPES = None   # any: moves go as bytes
REDUCE_DTYPES = frozenset({"float16", "float32", "float64", "int8", "uint8", "int16",
                           "int32", "int64", "bool"})
LEFT_TAG = 1    # on the control communicator: "this rank is leaving"
GRACE = 1.0     # seconds an operation may still complete after a peer's leaving notice


class MpiBackend:
    """The ``mpi`` ProcessGroupBackend (protocol: ``ember.distributed.ProcessGroupBackend``)."""

    name = "mpi"
    device_types = ("cpu",)

    def new_group(self, rank: int, world_size: int, timeout: timedelta) -> MpiGroup:
        """A group on a duplicate of ``MPI.COMM_WORLD``; ``ValueError`` when ``rank`` or
        ``world_size`` (-1: not given) differ from COMM_WORLD's."""
        from mpi4py import MPI
        world = MPI.COMM_WORLD
        for name, given, real in (("world_size", world_size, world.Get_size()),
                                  ("rank", rank, world.Get_rank())):
            if given not in (-1, real):
                raise ValueError(
                    f"init_process_group: {name} {given} (from the arguments or the "
                    f"environment) differs from MPI.COMM_WORLD's {real}; the mpi backend "
                    f"takes rank and size from MPI: start the script with `ember run -n "
                    f"{max(world_size, 1)} script.py` and pass neither")
        group = MpiGroup(MPI, world.Dup(), world.Dup())
        atexit.register(group.leave)   # NOTE: after mpi4py's, so it runs before MPI ends
        return group

    def __repr__(self) -> str:
        return "MpiBackend(name='mpi', device_types=('cpu',))"


class _Request:
    """An ``MPI.Request`` plus what to do once it completed (AVG's division)."""

    __slots__ = ("group", "request", "after", "done", "status", "source")

    def __init__(self, group, request, after=None, status=None):
        self.group, self.request, self.after, self.status = group, request, after, status
        self.done, self.source = False, None

    def test(self) -> bool:
        if self.done:
            return True
        ok = (self.request.Test() if self.status is None else
              self.request.Test(self.status))
        if not ok:
            self.group.check_peers()
        else:
            self.done = True
            if self.status is not None:
                self.source = self.status.Get_source()
            if self.after is not None:
                self.after()
        return ok


def _bytes(a: np.ndarray) -> np.ndarray:
    return a.reshape(-1).view(np.uint8)


class MpiGroup:
    """One MPI communicator as an ember ProcessGroup (see the module docstring)."""

    dtypes = MOVE_DTYPES
    reduce_dtypes = REDUCE_DTYPES

    def __init__(self, mpi, comm, control):
        self.MPI, self.comm, self.control = mpi, comm, control
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.open, self.left, self.noticed = True, None, None
        o = ReduceOp
        self.ops = {o.SUM: mpi.SUM, o.AVG: mpi.SUM, o.PRODUCT: mpi.PROD, o.MIN: mpi.MIN,
                    o.MAX: mpi.MAX}
        self.bool_ops = {o.SUM: mpi.MAX, o.AVG: mpi.MAX, o.PRODUCT: mpi.MIN, o.MIN: mpi.MIN,
                         o.MAX: mpi.MAX}

    def _reduction(self, arr, op):
        """(buffer, MPI op, after) for reducing ``arr`` with ReduceOp ``op``."""
        if arr.dtype == np.bool_:
            return _bytes(arr), self.bool_ops[op], None
        buf = arr.reshape(-1)
        if op is not ReduceOp.AVG:
            return buf, self.ops[op], None

        def divide():
            np.divide(buf, self.size, out=buf, casting="unsafe")
        return buf, self.MPI.SUM, divide

    def allreduce(self, arr, op):
        buf, mop, after = self._reduction(arr, op)
        return _Request(self, self.comm.Iallreduce(self.MPI.IN_PLACE, buf, op=mop), after)

    def broadcast(self, arr, src):
        return _Request(self, self.comm.Ibcast(_bytes(arr), root=src))

    def reduce(self, arr, dst, op):
        buf, mop, after = self._reduction(arr, op)
        if self.rank == dst:
            return _Request(self, self.comm.Ireduce(self.MPI.IN_PLACE, buf, op=mop, root=dst),
                            after)
        return _Request(self, self.comm.Ireduce(buf, None, op=mop, root=dst))

    def allgather(self, out, inp):
        return _Request(self, self.comm.Iallgather(_bytes(inp), _bytes(out)))

    def reduce_scatter(self, out, inp, op):
        buf, mop, after = self._reduction(out, op)
        src = _bytes(inp) if out.dtype == np.bool_ else inp.reshape(-1)
        return _Request(self, self.comm.Ireduce_scatter_block(src, buf, op=mop), after)

    def gather(self, out, inp, dst):
        recv = _bytes(out) if self.rank == dst else None
        return _Request(self, self.comm.Igather(_bytes(inp), recv, root=dst))

    def scatter(self, out, inp, src):
        send = _bytes(inp) if self.rank == src else None
        return _Request(self, self.comm.Iscatter(send, _bytes(out), root=src))

    def send(self, arr, dst, tag):
        return _Request(self, self.comm.Isend(_bytes(arr), dest=dst, tag=tag))

    def recv(self, arr, src, tag):
        source = self.MPI.ANY_SOURCE if src is None else src
        return _Request(self, self.comm.Irecv(_bytes(arr), source=source, tag=tag),
                        status=self.MPI.Status())

    def barrier(self):
        return _Request(self, self.comm.Ibarrier())

    def to_device(self, host_array):
        return host_array

    def to_host(self, arr):
        return arr

    def check_peers(self) -> None:
        """Raise ``DistBackendError`` once a peer's leaving notice is ``GRACE`` s old."""
        if self.left is None:
            status = self.MPI.Status()
            if not self.control.Iprobe(self.MPI.ANY_SOURCE, LEFT_TAG, status):
                return
            self.left, self.noticed = status.Get_source(), time.monotonic()
        if time.monotonic() - self.noticed > GRACE:
            raise DistBackendError(
                f"rank {self.left} left (its script ended or called sys.exit) while rank "
                f"{self.rank} waits for it in an operation it did not make; every rank must "
                f"make the same collective calls")

    def leave(self) -> None:
        """At exit with the group open: tell every other rank (small eager sends)."""
        if not self.open or self.size == 1:
            return
        self.open = False
        note = np.zeros(1, np.uint8)
        reqs = [self.control.Isend(note, dest=r, tag=LEFT_TAG)
                for r in range(self.size) if r != self.rank]
        end = time.monotonic() + GRACE
        while not self.MPI.Request.Testall(reqs) and time.monotonic() < end:
            time.sleep(1e-3)

    def abort(self, message: str) -> None:
        """End the whole job (mpiexec kills every rank); ``message`` was printed."""
        self.MPI.COMM_WORLD.Abort(1)

    def close(self) -> None:
        self.open = False
        self.comm.Free()

    def __repr__(self) -> str:
        return f"MpiGroup(rank={self.rank}, size={self.size})"
