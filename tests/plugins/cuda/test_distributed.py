"""The ``nccl`` process group (``ember_cuda/distributed.py``) on the fake ``cupy.cuda.nccl``
of ``_fake_nccl.py``, ranks as threads: every operation against numpy, the unique-id
exchange (a file; MPI), the calls NCCL gets (stream, datatype, counts), the errors. The
real NCCL runs only on GPUs (not in CI)."""
from __future__ import annotations

import threading
import types
from datetime import timedelta

import numpy as np
import pytest

from ._fake_nccl import SIGNATURES, DevArray, fake_cupy_for_nccl, fake_nccl, signature_of


@pytest.fixture
def world(tmp_path, monkeypatch):
    """``run(n, fn)``: ``fn(group)`` on n thread ranks of one nccl world (unique id through
    a file); returns the results by rank, re-raising the first rank's error."""
    from ember.distributed.process_group import state
    from ember_cuda.distributed import NcclBackend
    monkeypatch.setattr(state, "init_method", f"file://{tmp_path / 'nccl_id'}")
    nccl, cupy = fake_nccl(), fake_cupy_for_nccl()

    def run(n, fn, mpi=None):
        results, errors = [None] * n, [None] * n

        def rank(r):
            try:
                world = (lambda: mpi(r)) if mpi else None
                g = NcclBackend(cupy, nccl, world).new_group(r, n, timedelta(seconds=10))
                results[r] = fn(g)
            except BaseException as e:  # noqa: BLE001 - handed to the test thread
                errors[r] = e
        threads = [threading.Thread(target=rank, args=(r,)) for r in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        for e in errors:
            if e is not None:
                raise e
        return results
    run.nccl, run.path = nccl, tmp_path / "nccl_id"
    return run


def dev(a):
    return np.ascontiguousarray(a).view(DevArray)


def data(r, shape=(3, 4), dtype=np.float32):
    return (np.random.default_rng(r).standard_normal(shape) * 4).astype(dtype)


def test_fake_has_cupy_14_signatures():
    fake = fake_nccl().NcclCommunicator
    assert {m: signature_of(getattr(fake, m)) for m in SIGNATURES} == SIGNATURES
    try:   # CuPy imports without NCCL, its NCCL binding does not: an ImportError, which
        from cupy_backends.cuda.libs import nccl   # importorskip skips no more (pytest 9.1)
    except ImportError as e:
        pytest.skip(f"CuPy's NCCL binding needs CuPy and libnccl.so.2 ({str(e).strip()})")
    real = nccl.NcclCommunicator
    assert {m: signature_of(getattr(real, m)) for m in SIGNATURES} == SIGNATURES


@pytest.mark.parametrize("n", [2, 3])
def test_collectives_against_numpy(world, n):
    from ember.distributed import ReduceOp
    every = np.stack([data(r) for r in range(n)])

    def script(g):
        out = {}
        for op, ref in [(ReduceOp.SUM, np.sum), (ReduceOp.AVG, np.mean),
                        (ReduceOp.MAX, np.max), (ReduceOp.PRODUCT, np.prod)]:
            a = dev(data(g.rank))
            assert g.allreduce(a, op).test()
            np.testing.assert_allclose(a, ref(every, axis=0), rtol=1e-5)
        b = dev(np.array([g.rank == 1, True, False]))
        g.allreduce(b, ReduceOp.SUM)
        assert b.tolist() == [True, True, False]
        a = dev(data(g.rank))
        g.broadcast(a, n - 1)
        np.testing.assert_array_equal(a, data(n - 1))
        a = dev(data(g.rank))
        g.reduce(a, 1, ReduceOp.MIN)
        np.testing.assert_array_equal(a, every.min(0) if g.rank == 1 else data(g.rank))
        big = dev(np.zeros((n, 3, 4), np.float32))
        g.allgather(big.reshape(-1), dev(data(g.rank)).reshape(-1))
        np.testing.assert_array_equal(big, every)
        out_rs = dev(np.zeros(4, np.float32))
        g.reduce_scatter(out_rs, dev(np.arange(4.0 * n, dtype=np.float32) + g.rank),
                         ReduceOp.SUM)
        np.testing.assert_array_equal(out_rs, (np.arange(4.0 * n) * n + sum(range(n)))[
            4 * g.rank:4 * g.rank + 4])
        gathered = dev(np.zeros(n * 12, np.float32)) if g.rank == 0 else None
        g.gather(gathered, dev(data(g.rank)).reshape(-1), 0)
        if g.rank == 0:
            np.testing.assert_array_equal(gathered.reshape(n, 3, 4), every)
        mine = dev(np.zeros(12, np.float32))
        src = dev(every.reshape(-1)) if g.rank == 1 else None
        g.scatter(mine, src, 1)
        np.testing.assert_array_equal(mine.reshape(3, 4), every[g.rank])
        if g.rank == 0:
            g.send(dev(np.arange(5, dtype=np.int64)), 1, 0)
        elif g.rank == 1:
            got = dev(np.zeros(5, np.int64))
            g.recv(got, 0, 0)
            out["recv"] = got.tolist()
        assert g.barrier().test()
        g.close()
        return out
    results = world(n, script)
    assert results[1]["recv"] == [0, 1, 2, 3, 4]
    assert not world.path.exists()          # rank 0 removed the unique id at close


def test_nccl_gets_the_current_stream_counts_and_types(world):
    from ember.distributed import ReduceOp

    def script(g):
        g.allreduce(dev(np.ones(6, np.float64)), ReduceOp.AVG)
        g.broadcast(dev(np.ones(3, np.int32)), 0)
        return g
    world(2, script)
    nccl = world.nccl
    calls = [c for c in nccl.log if c[1] == 0]
    assert calls[0] == ("allReduce", 0, 6, nccl.NCCL_FLOAT64, nccl.NCCL_AVG, 0xC0FFEE)
    assert calls[1] == ("broadcast", 0, 12, nccl.NCCL_UINT8, 0, 0xC0FFEE)   # bytes
    assert ("groupStart",) not in nccl.log


def test_gather_is_a_group_of_sends_and_receives(world):
    def script(g):
        out = dev(np.zeros(4, np.float32)) if g.rank == 0 else None
        g.gather(out, dev(np.full(2, g.rank, np.float32)), 0)
        return None if out is None else out.tolist()
    assert world(2, script)[0] == [0, 0, 1, 1]
    kinds = [c[0] for c in world.nccl.log]
    assert kinds.count("groupStart") == 2 and kinds.count("groupEnd") == 2


def test_unique_id_through_mpi(world):
    shared = {}
    ready = threading.Barrier(2)

    def mpi(rank):
        def bcast(obj, root=0):
            if rank == root:
                shared["uid"] = obj
            ready.wait()
            return shared["uid"]
        return types.SimpleNamespace(Get_rank=lambda: rank, Get_size=lambda: 2, bcast=bcast,
                                     Abort=lambda code: shared.setdefault("abort", code))

    def script(g):
        return g.rank, g.size
    assert world(2, script, mpi=mpi) == [(0, 2), (1, 2)]      # -1s came from MPI
    assert not world.path.exists() and len(world.nccl.worlds) == 1


def test_errors(world, monkeypatch):
    from ember.distributed import DistBackendError
    from ember.distributed.process_group import state
    from ember_cuda.distributed import NcclBackend
    nccl, cupy = fake_nccl(), fake_cupy_for_nccl()
    b = NcclBackend(cupy, nccl, None)
    with pytest.raises(ValueError, match="rank and world size are unknown"):
        b.new_group(-1, -1, timedelta(seconds=1))
    monkeypatch.setattr(state, "init_method", None)
    with pytest.raises(DistBackendError, match="init_method='file:///shared/path'"):
        b.new_group(1, 2, timedelta(seconds=1))
    monkeypatch.setattr(state, "init_method", f"file://{world.path}")
    with pytest.raises(DistBackendError, match=r"rank 1 waited 0.05 s for rank 0's unique id"):
        b.new_group(1, 2, timedelta(seconds=0.05))
    g = b.new_group(0, 1, timedelta(seconds=1))      # one rank: no exchange
    with pytest.raises(DistBackendError, match="recv needs src"):
        g.recv(dev(np.zeros(2)), None, 0)
    nccl.available = False
    with pytest.raises(DistBackendError, match="cannot load the NCCL library"):
        b.new_group(0, 1, timedelta(seconds=1))


def test_the_cuda_plugin_registers_nccl():
    from ember_cuda import plugin
    [b] = plugin.ember_process_group_backends()
    assert (b.name, b.device_types) == ("nccl", ("cuda",))
    from ember.plugins.validation import validate_process_group_backend
    assert validate_process_group_backend(b) == "process group backend nccl (cuda)"
