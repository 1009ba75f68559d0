"""A host stand-in for ``cupy.cuda.nccl`` (CuPy 14.2) and the few CuPy calls the ``nccl``
process group makes, for device-free tests of ``ember_cuda/distributed.py``.

Signatures are CuPy 14.2's, as its compiled module embeds them (``NcclCommunicator(int
ndev, bytes commId, int rank, NcclConfig config=None)``, ``allReduce(self, intptr_t
sendbuf, intptr_t recvbuf, size_t count, int datatype, int op, intptr_t stream)``, ...;
``SIGNATURES`` below, checked against the real module by ``test_distributed.py`` where
``cupy_backends.cuda.libs.nccl`` imports, i.e. with libnccl.so.2 present);
``get_unique_id()`` returns 128 bytes (a tuple of ints before CuPy 14).

Ranks are threads: the communicators made with one ``commId`` form a world; a collective
deposits each rank's bytes, meets the others at a barrier, computes its result with numpy
and writes it to ``recvbuf``'s address (``ctypes``); ``send`` queues the bytes and
``recv`` takes them (so a group of sends and receives cannot deadlock, as in
``groupStart()``/``groupEnd()``). Arrays are ``DevArray``: numpy arrays with CuPy's
``.data.ptr``. Everything completes at the call, so events are done at once.
"""
from __future__ import annotations

import ctypes
import inspect
import os
import queue
import threading
import types

import numpy as np

SIGNATURES = {
    "allReduce": "(self, sendbuf, recvbuf, count, datatype, op, stream)",
    "bcast": "(self, buff, count, datatype, root, stream)",
    "broadcast": "(self, sendbuff, recvbuff, count, datatype, root, stream)",
    "reduce": "(self, sendbuf, recvbuf, count, datatype, op, root, stream)",
    "allGather": "(self, sendbuf, recvbuf, count, datatype, stream)",
    "reduceScatter": "(self, sendbuf, recvbuf, recvcount, datatype, op, stream)",
    "send": "(self, sendbuf, count, datatype, peer, stream)",
    "recv": "(self, recvbuf, count, datatype, peer, stream)",
    "abort": "(self)", "destroy": "(self)", "size": "(self)", "rank_id": "(self)",
}
DTYPES = {"NCCL_INT8": np.int8, "NCCL_UINT8": np.uint8, "NCCL_INT32": np.int32,
          "NCCL_UINT32": np.uint32, "NCCL_INT64": np.int64, "NCCL_UINT64": np.uint64,
          "NCCL_FLOAT16": np.float16, "NCCL_FLOAT32": np.float32, "NCCL_FLOAT64": np.float64,
          "NCCL_BFLOAT16": None}
OPS = {"NCCL_SUM": np.sum, "NCCL_PROD": np.prod, "NCCL_MAX": np.max, "NCCL_MIN": np.min,
       "NCCL_AVG": np.mean}


def memory(ptr: int, nbytes: int) -> np.ndarray:
    """The ``nbytes`` bytes at address ``ptr`` as a writable uint8 array."""
    return np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(ptr))


class DevArray(np.ndarray):
    """A numpy array with CuPy's ``arr.data.ptr``."""

    @property
    def data(self):
        return types.SimpleNamespace(ptr=self.ctypes.data)


class World:
    def __init__(self, ndev):
        self.barrier = threading.Barrier(ndev, timeout=10)
        self.slots = [None] * ndev
        self.queues = {}
        self.lock = threading.Lock()

    def queue(self, src, dst):
        with self.lock:
            return self.queues.setdefault((src, dst), queue.Queue())


def fake_nccl(version: int = 22703):
    """A fresh ``cupy.cuda.nccl`` stand-in (its worlds and call log are its own)."""
    nccl = types.SimpleNamespace(available=True, worlds={}, log=[], lock=threading.Lock())
    for i, name in enumerate([*DTYPES, *OPS]):
        setattr(nccl, name, 100 + i)
    dtype_of = {getattr(nccl, k): v for k, v in DTYPES.items()}
    op_of = {getattr(nccl, k): v for k, v in OPS.items()}

    def get_unique_id():
        return os.urandom(128)

    class NcclCommunicator:
        def __init__(self, ndev, commId, rank, config=None):  # noqa: N803 - CuPy's name
            if not isinstance(commId, bytes) or len(commId) != 128:
                raise TypeError(f"commId: expected the 128 bytes of get_unique_id(), got "
                                f"{type(commId).__name__}")
            with nccl.lock:
                self.world = nccl.worlds.setdefault(commId, World(ndev))
            self.ndev, self.rank = ndev, rank
            self.world.barrier.wait()        # ncclCommInitRank blocks until all joined

        def _meet(self, mine):
            """Deposit ``mine``, wait for all, return every rank's deposit."""
            w = self.world
            w.slots[self.rank] = mine
            w.barrier.wait()
            got = list(w.slots)
            w.barrier.wait()
            return got

        def _read(self, ptr, count, datatype):
            dt = np.dtype(dtype_of[datatype])
            return memory(ptr, count * dt.itemsize).view(dt).copy()

        def _write(self, ptr, values):
            memory(ptr, values.nbytes)[...] = values.view(np.uint8).reshape(-1)

        def allReduce(self, sendbuf, recvbuf, count, datatype, op, stream):  # noqa: N802
            nccl.log.append(("allReduce", self.rank, count, datatype, op, stream))
            got = self._meet(self._read(sendbuf, count, datatype))
            out = op_of[op](np.stack(got), axis=0).astype(got[0].dtype)
            self._write(recvbuf, out)

        def bcast(self, buff, count, datatype, root, stream):
            self.broadcast(buff, buff, count, datatype, root, stream)

        def broadcast(self, sendbuff, recvbuff, count, datatype, root, stream):
            nccl.log.append(("broadcast", self.rank, count, datatype, root, stream))
            mine = self._read(sendbuff, count, datatype) if self.rank == root else None
            self._write(recvbuff, self._meet(mine)[root])

        def reduce(self, sendbuf, recvbuf, count, datatype, op, root, stream):
            nccl.log.append(("reduce", self.rank, count, datatype, op, root, stream))
            got = self._meet(self._read(sendbuf, count, datatype))
            if self.rank == root:
                self._write(recvbuf, op_of[op](np.stack(got), axis=0).astype(got[0].dtype))

        def allGather(self, sendbuf, recvbuf, count, datatype, stream):  # noqa: N802
            nccl.log.append(("allGather", self.rank, count, datatype, stream))
            got = self._meet(self._read(sendbuf, count, datatype))
            self._write(recvbuf, np.concatenate(got))

        def reduceScatter(self, sendbuf, recvbuf, recvcount, datatype, op,  # noqa: N802
                          stream):
            nccl.log.append(("reduceScatter", self.rank, recvcount, datatype, op, stream))
            got = self._meet(self._read(sendbuf, recvcount * self.ndev, datatype))
            total = op_of[op](np.stack(got), axis=0).astype(got[0].dtype)
            self._write(recvbuf, total[self.rank * recvcount:(self.rank + 1) * recvcount])

        def send(self, sendbuf, count, datatype, peer, stream):
            nccl.log.append(("send", self.rank, count, datatype, peer, stream))
            self.world.queue(self.rank, peer).put(self._read(sendbuf, count, datatype))

        def recv(self, recvbuf, count, datatype, peer, stream):
            nccl.log.append(("recv", self.rank, count, datatype, peer, stream))
            self._write(recvbuf, self.world.queue(peer, self.rank).get(timeout=10))

        def abort(self):
            nccl.log.append(("abort", self.rank))

        def destroy(self):
            nccl.log.append(("destroy", self.rank))

        def size(self):
            return self.ndev

        def rank_id(self):
            return self.rank

    nccl.get_unique_id = get_unique_id
    nccl.NcclCommunicator = NcclCommunicator
    nccl.groupStart = lambda: nccl.log.append(("groupStart",))
    nccl.groupEnd = lambda: nccl.log.append(("groupEnd",))
    nccl.get_version = lambda: version
    return nccl


def fake_cupy_for_nccl():
    """The CuPy calls of the nccl group: streams, events, zeros/asarray/asnumpy."""
    stream = types.SimpleNamespace(ptr=0xC0FFEE)

    class Event:
        def __init__(self, block=False, disable_timing=False, interprocess=False):
            self.recorded = None

        def record(self, stream=None):
            self.recorded = stream

        @property
        def done(self):
            return self.recorded is not None

    def asarray(a, dtype=None, order=None, *, blocking=False):
        return np.array(a, dtype=dtype, order=order).view(DevArray)

    cuda = types.SimpleNamespace(get_current_stream=lambda device=None: stream, Event=Event)
    return types.SimpleNamespace(
        cuda=cuda, asarray=asarray, asnumpy=lambda a, stream=None, order="C",
        out=None, blocking=True: np.asarray(a).view(np.ndarray),
        zeros=lambda shape, dtype=float, order="C": np.zeros(shape, dtype, order).view(
            DevArray))


def signature_of(method) -> str:
    """``(self, sendbuf, ...)`` from a fake method or a CuPy docstring's first line."""
    doc = (method.__doc__ or "").splitlines()
    if doc and "(" in doc[0] and not inspect.isfunction(method):
        inner = doc[0][doc[0].index("(") + 1:doc[0].rindex(")")]
        return "(" + ", ".join(p.split()[-1] for p in inner.split(", ")) + ")"
    return str(inspect.signature(method))
