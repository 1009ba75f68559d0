"""The ``nccl`` process-group backend: ember.distributed's collectives on CUDA tensors
through CuPy's NCCL binding, ``cupy.cuda.nccl`` (CuPy 14's ``NcclCommunicator``; NCCL's
own docs: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/api/colls.html).

* One rank per GPU: make the rank's GPU current before ``init_process_group("nccl")``
  (``ember.cuda.set_device(local_rank)``); the communicator is bound to it.
* The unique id that ``NcclCommunicator(ndev, commId, rank)`` needs comes from rank 0's
  ``get_unique_id()`` (128 bytes). PyTorch passes it through a TCP store; here: through
  MPI (``MPI.COMM_WORLD.bcast``) when mpi4py is installed (``ember run`` starts the ranks
  under mpiexec), else through a file every rank sees, ``init_process_group("nccl",
  init_method="file:///shared/path")`` (rank 0 writes it atomically; the others wait for it
  up to the timeout; use a fresh path per job: rank 0 removes it when the group closes).
* Every operation is enqueued on the current CuPy stream, and its request is a CUDA event
  recorded after it (``test()`` = ``event.done``), so ``Work.wait`` follows the stream.
  ``allReduce``, ``broadcast``, ``reduce``, ``allGather``, ``reduceScatter`` are NCCL's;
  gather, scatter and the barrier are built from ``send`` / ``recv`` in a
  ``groupStart()``/``groupEnd()`` and an all-reduce of one element. Moves go as bytes
  (every dtype); reductions take NCCL's dtypes (no int16); ``AVG`` is ``NCCL_AVG``; bool
  reduces as uint8 with MAX (SUM, MAX) or MIN (PRODUCT, MIN). NCCL has no message tags
  (ignored, as in PyTorch's NCCL backend) and no receive from any source.
"""
from __future__ import annotations

import os
import time
from datetime import timedelta

import numpy as np

from ember.distributed import DistBackendError
from ember.distributed.process_group import state

UID_BYTES = 128
NCCL_DTYPES = {"int8": "NCCL_INT8", "uint8": "NCCL_UINT8", "int32": "NCCL_INT32",
               "int64": "NCCL_INT64", "float16": "NCCL_FLOAT16", "float32": "NCCL_FLOAT32",
               "float64": "NCCL_FLOAT64", "bfloat16": "NCCL_BFLOAT16", "bool": "NCCL_UINT8"}
NCCL_OPS = {"SUM": "NCCL_SUM", "AVG": "NCCL_AVG", "PRODUCT": "NCCL_PROD", "MIN": "NCCL_MIN",
            "MAX": "NCCL_MAX"}
BOOL_OPS = {"SUM": "NCCL_MAX", "AVG": "NCCL_MAX", "PRODUCT": "NCCL_MIN", "MIN": "NCCL_MIN",
            "MAX": "NCCL_MAX"}


def _mpi_world():
    """``MPI.COMM_WORLD`` when mpi4py imports, else None."""
    try:
        from mpi4py import MPI
    except ImportError:
        return None
    return MPI.COMM_WORLD


class NcclBackend:
    """The ``nccl`` ProcessGroupBackend; ``cupy`` / ``nccl`` / ``mpi_world`` are injected
    by the tests (default: the real modules, imported by ``new_group``)."""

    name = "nccl"
    device_types = ("cuda",)

    def __init__(self, cupy=None, nccl=None, mpi_world=_mpi_world):
        self._cupy, self._nccl, self._mpi_world = cupy, nccl, mpi_world

    def new_group(self, rank: int, world_size: int, timeout: timedelta) -> NcclGroup:
        cupy, nccl = self._cupy, self._nccl
        if cupy is None:
            import cupy
            from cupy.cuda import nccl
        if not getattr(nccl, "available", True):
            raise DistBackendError("nccl: CuPy cannot load the NCCL library; pip install "
                                   "nvidia-nccl-cu13 (or -cu12, as your CuPy)")
        world = self._mpi_world() if callable(self._mpi_world) else self._mpi_world
        if world is not None and (world.Get_size() > 1 or world_size in (-1, 1)):
            rank, world_size = world.Get_rank(), world.Get_size()
            uid = world.bcast(nccl.get_unique_id() if rank == 0 else None, root=0)
            path = None
        else:
            if rank == -1 or world_size == -1:
                raise ValueError("nccl: rank and world size are unknown; start the ranks with "
                                 "`ember run -n N` (mpi4py installed) or set RANK and "
                                 "WORLD_SIZE")
            path = _file_path()
            uid = _exchange_by_file(path, rank, world_size, nccl, timeout.total_seconds())
        comm = nccl.NcclCommunicator(world_size, uid, rank)
        return NcclGroup(cupy, nccl, comm, rank, world_size, world,
                         path if rank == 0 else None)

    def __repr__(self) -> str:
        return "NcclBackend(name='nccl', device_types=('cuda',))"


def _file_path() -> str | None:
    method = state.init_method
    return method[len("file://"):] if method and method.startswith("file://") else None


def _exchange_by_file(path, rank: int, size: int, nccl, timeout: float) -> bytes:
    """Rank 0's unique id through the file ``path`` (world size 1: no file needed)."""
    if size == 1:
        return nccl.get_unique_id()
    if path is None:
        raise DistBackendError("nccl: the ranks need rank 0's unique id; run under `ember "
                               "run` with mpi4py installed, or pass init_method='file:///"
                               "shared/path' (a fresh path every rank sees)")
    if rank == 0:
        uid = nccl.get_unique_id()
        with open(path + ".tmp", "wb") as f:
            f.write(uid)
        os.replace(path + ".tmp", path)     # NOTE: atomic: a reader never sees half an id
        return uid
    end = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > end:
            raise DistBackendError(f"nccl: rank {rank} waited {timeout:g} s for rank 0's "
                                   f"unique id in {path}; is rank 0 running, with the same "
                                   f"init_method?")
        time.sleep(0.01)
    with open(path, "rb") as f:
        return f.read()


class _Event:
    """A Request: a CUDA event recorded on the stream after the operation."""

    __slots__ = ("event",)

    def __init__(self, cupy, stream):
        self.event = cupy.cuda.Event(disable_timing=True)
        self.event.record(stream)

    def test(self) -> bool:
        return self.event.done


def _ptr(arr) -> int:
    return arr.data.ptr


class NcclGroup:
    """One NCCL communicator as an ember ProcessGroup (see the module docstring)."""

    dtypes = None
    reduce_dtypes = frozenset(NCCL_DTYPES)

    def __init__(self, cupy, nccl, comm, rank, size, mpi_world=None, uid_file=None):
        self.cupy, self.nccl, self.comm = cupy, nccl, comm
        self.rank, self.size = rank, size
        self.mpi_world, self.uid_file = mpi_world, uid_file

    def _stream(self):
        return self.cupy.cuda.get_current_stream()

    def _done(self, stream):
        return _Event(self.cupy, stream)

    def _reduction(self, arr, op):
        name = arr.dtype.name
        dtype = getattr(self.nccl, NCCL_DTYPES[name])
        table = BOOL_OPS if name == "bool" else NCCL_OPS
        return dtype, getattr(self.nccl, table[op.name])

    def allreduce(self, arr, op):
        dtype, nop = self._reduction(arr, op)
        s = self._stream()
        self.comm.allReduce(_ptr(arr), _ptr(arr), arr.size, dtype, nop, s.ptr)
        return self._done(s)

    def broadcast(self, arr, src):
        s = self._stream()
        self.comm.broadcast(_ptr(arr), _ptr(arr), arr.nbytes, self.nccl.NCCL_UINT8, src, s.ptr)
        return self._done(s)

    def reduce(self, arr, dst, op):
        dtype, nop = self._reduction(arr, op)
        s = self._stream()
        self.comm.reduce(_ptr(arr), _ptr(arr), arr.size, dtype, nop, dst, s.ptr)
        return self._done(s)

    def allgather(self, out, inp):
        s = self._stream()
        self.comm.allGather(_ptr(inp), _ptr(out), inp.nbytes, self.nccl.NCCL_UINT8, s.ptr)
        return self._done(s)

    def reduce_scatter(self, out, inp, op):
        dtype, nop = self._reduction(out, op)
        s = self._stream()
        self.comm.reduceScatter(_ptr(inp), _ptr(out), out.size, dtype, nop, s.ptr)
        return self._done(s)

    def _exchange(self, mine, sends, recvs, s):
        """One NCCL group of byte sends ``(array, peer)`` and receives."""
        u8 = self.nccl.NCCL_UINT8
        mine()
        self.nccl.groupStart()
        for arr, peer in sends:
            self.comm.send(_ptr(arr), arr.nbytes, u8, peer, s.ptr)
        for arr, peer in recvs:
            self.comm.recv(_ptr(arr), arr.nbytes, u8, peer, s.ptr)
        self.nccl.groupEnd()
        return self._done(s)

    def gather(self, out, inp, dst):
        s = self._stream()
        if self.rank != dst:
            return self._exchange(lambda: None, [(inp, dst)], [], s)
        blocks = out.reshape(self.size, -1)

        def mine():
            blocks[self.rank][...] = inp
        return self._exchange(mine, [], [(blocks[r], r) for r in range(self.size)
                                          if r != dst], s)

    def scatter(self, out, inp, src):
        s = self._stream()
        if self.rank != src:
            return self._exchange(lambda: None, [], [(out, src)], s)
        blocks = inp.reshape(self.size, -1)

        def mine():
            out[...] = blocks[self.rank]
        return self._exchange(mine, [(blocks[r], r) for r in range(self.size) if r != src],
                              [], s)

    def send(self, arr, dst, tag):
        s = self._stream()
        self.comm.send(_ptr(arr), arr.nbytes, self.nccl.NCCL_UINT8, dst, s.ptr)
        return self._done(s)

    def recv(self, arr, src, tag):
        if src is None:
            raise DistBackendError("nccl: recv needs src (NCCL has no receive from any "
                                   "source); pass the sender's rank")
        s = self._stream()
        self.comm.recv(_ptr(arr), arr.nbytes, self.nccl.NCCL_UINT8, src, s.ptr)
        return self._done(s)

    def barrier(self):
        one = self.cupy.zeros(1, np.float32)
        s = self._stream()
        self.comm.allReduce(_ptr(one), _ptr(one), 1, self.nccl.NCCL_FLOAT32,
                            self.nccl.NCCL_SUM, s.ptr)
        return self._done(s)

    def to_device(self, host_array):
        return self.cupy.asarray(host_array)

    def to_host(self, arr):
        return self.cupy.asnumpy(arr)

    def abort(self, message: str) -> None:
        """End the job: through MPI when the ranks run under mpiexec, else abort the
        communicator (unblocking the GPU) and exit this process."""
        if self.mpi_world is not None and self.mpi_world.Get_size() > 1:
            self.mpi_world.Abort(1)
        self.comm.abort()
        os._exit(1)

    def close(self) -> None:
        self.comm.destroy()
        if self.uid_file is not None and os.path.exists(self.uid_file):
            os.remove(self.uid_file)

    def __repr__(self) -> str:
        return f"NcclGroup(rank={self.rank}, size={self.size})"
