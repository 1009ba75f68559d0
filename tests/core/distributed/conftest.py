"""A fake process-group backend for the single-process tests of ember.distributed.

``fake`` simulates a world of ``size`` ranks seen from ``rank``: rank ``k`` holds this
rank's input plus ``10 * (k - rank)`` (so results are known in closed form), and every
request completes after ``delay`` calls of ``test()`` (``None``: never), which exercises
``Work``'s polling, finishing and timeout without MPI.
"""
from datetime import timedelta

import numpy as np
import pytest

import ember.distributed as dist
from ember.distributed import process_group as group_mod
from ember.plugins import manager


class FakeRequest:
    def __init__(self, delay, then=None):
        self.left, self.then, self.tests = delay, then, 0

    def test(self):
        self.tests += 1
        if self.left is None:
            return False
        if self.left > 0:
            self.left -= 1
            return False
        if self.then is not None:
            self.then()
            self.then = None
        return True


class FakeGroup:
    dtypes = None
    reduce_dtypes = frozenset({"float32", "float64", "int64", "int32"})

    def __init__(self, rank, size, delay):
        self.rank, self.size, self.delay = rank, size, delay
        self.aborted, self.closed, self.calls = None, False, []

    def peers(self, a):
        return [a + 10 * (k - self.rank) for k in range(self.size)]

    def _req(self, then):
        return FakeRequest(self.delay, then)

    def allreduce(self, arr, op):
        self.calls.append(("allreduce", arr))
        fn = {"SUM": np.sum, "MAX": np.max, "MIN": np.min, "PRODUCT": np.prod,
              "AVG": np.mean}[op.name]

        def then():
            arr[...] = fn(np.stack(self.peers(arr.copy())), axis=0)
        return self._req(then)

    def broadcast(self, arr, src):
        def then():
            arr[...] = self.peers(arr.copy())[src]
        return self._req(then)

    def reduce(self, arr, dst, op):
        return self.allreduce(arr, op) if self.rank == dst else self._req(None)

    def allgather(self, out, inp):
        def then():
            out[...] = np.concatenate(self.peers(inp.copy()))
        return self._req(then)

    def reduce_scatter(self, out, inp, op):
        def then():
            total = np.sum(np.stack(self.peers(inp.copy())), axis=0)
            out[...] = total.reshape(self.size, -1)[self.rank]
        return self._req(then)

    def gather(self, out, inp, dst):
        return self.allgather(out, inp) if out is not None else self._req(None)

    def scatter(self, out, inp, src):
        def then():
            if inp is not None:
                out[...] = inp.reshape(self.size, -1)[self.rank].reshape(out.shape)
        return self._req(then)

    def send(self, arr, dst, tag):
        self.calls.append(("send", dst, tag))
        return self._req(None)

    def recv(self, arr, src, tag):
        req = self._req(lambda: arr.fill(7))
        req.source = 1 if src is None else src
        return req

    def barrier(self):
        return self._req(None)

    def to_device(self, a):
        return a

    def to_host(self, a):
        return a

    def abort(self, message):
        self.aborted = message

    def close(self):
        self.closed = True


class FakeBackend:
    name = "fake"
    device_types = ("cpu",)

    def __init__(self, size=2, rank=0, delay=0):
        self.size, self.rank, self.delay = size, rank, delay
        self.asked, self.group = None, None

    def new_group(self, rank, world_size, timeout):
        self.asked = (rank, world_size, timeout)
        self.group = FakeGroup(self.rank, self.size, self.delay)
        return self.group


@pytest.fixture
def register(monkeypatch):
    """Register fake backends through the hook's registry; the default group is destroyed
    after the test."""
    manager.ensure_loaded()
    hook = group_mod.HOOK
    for var in ("RANK", "WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_RANK",
                "OMPI_COMM_WORLD_SIZE", "EMBER_DISTRIBUTED_DEBUG"):
        monkeypatch.delenv(var, raising=False)

    def add(*backends):
        monkeypatch.setitem(manager.registered, hook, [*backends])
        return backends[0] if len(backends) == 1 else backends
    yield add
    if dist.is_initialized():
        dist.destroy_process_group()


@pytest.fixture
def fake(register):
    """An initialized default group on a FakeBackend of 2 ranks (this one rank 0)."""
    b = register(FakeBackend())
    dist.init_process_group("fake", timeout=timedelta(seconds=5))
    return b.group
