"""Run under ``mpiexec -n N`` by test_mpi.py: every collective of ember.distributed on the
``mpi`` backend against numpy on the data of all ranks (each rank regenerates every rank's
data from its seed). Prints ``OK <rank>`` when every check passed."""
import os
import sys
from datetime import timedelta

import ml_dtypes
import numpy as np

import ember
import ember.distributed as dist
from ember.distributed import ReduceOp

dist.init_process_group("mpi", timeout=timedelta(seconds=30))
r, n = dist.get_rank(), dist.get_world_size()
assert dist.is_initialized() and dist.get_backend() == "mpi"
assert int(os.environ["PMI_SIZE"]) == n


def data(rank, dtype=np.float64, shape=(3, 4)):
    x = np.random.default_rng(rank).standard_normal(shape) * 4
    return x.astype(dtype)


def every(dtype=np.float64, shape=(3, 4)):
    return np.stack([data(k, dtype, shape) for k in range(n)])


def check(got, want, what):
    got = np.asarray(got.numpy() if hasattr(got, "numpy") else got)
    tol = 1e-2 if want.dtype == np.float16 else 1e-6
    if got.dtype != want.dtype or got.shape != want.shape or not np.allclose(got, want, tol):
        sys.exit(f"rank {r}: {what}: got {got!r}, want {want!r}")


REF = {ReduceOp.SUM: np.sum, ReduceOp.PRODUCT: np.prod, ReduceOp.MIN: np.min,
       ReduceOp.MAX: np.max, ReduceOp.AVG: np.mean}
for dtype in (np.float64, np.float32, np.int64, np.int32, np.float16):
    for op, ref in REF.items():
        if op is ReduceOp.AVG and dtype not in (np.float64, np.float32, np.float16):
            continue
        t = ember.from_numpy(data(r, dtype))
        v = t._version
        dist.all_reduce(t, op=op)
        check(t, ref(every(dtype), axis=0).astype(dtype), f"all_reduce {op} {dtype}")
        assert t._version == v + 1
for op, want in ((ReduceOp.SUM, n > 1), (ReduceOp.MIN, False), (ReduceOp.MAX, True)):
    b = ember.tensor([r == 1, True, False])
    dist.all_reduce(b, op=op)
    check(b, np.array([want, True, False]), f"all_reduce bool {op}")

try:
    dist.all_reduce(ember.ones(2, dtype=ember.int64), op=ReduceOp.AVG)
    sys.exit("AVG on int64 was accepted")
except TypeError as e:
    assert "floating-point" in str(e)

# a strided view: reduced through a temporary, written back into the base
base = ember.from_numpy(data(r, shape=(4, 3)))
view = base.t()
dist.all_reduce(view)
check(base, every(shape=(4, 3)).sum(0), "all_reduce on a transposed view")
s = ember.tensor(float(r))
dist.all_reduce(s)
check(s, np.array(sum(range(n)), np.float32), "0-d all_reduce")

# async: several in flight, results only after wait
ts = [ember.from_numpy(data(r + 10 * k)) for k in range(4)]
works = [dist.all_reduce(t, async_op=True) for t in ts]
for w in works:
    assert w.wait() is True and w.is_completed()
for k, t in enumerate(ts):
    check(t, np.stack([data(j + 10 * k) for j in range(n)]).sum(0), f"async all_reduce {k}")
assert works[0].result()[0] is ts[0]

# broadcast, bfloat16 included (moved as bytes)
t = ember.from_numpy(data(r))
dist.broadcast(t, src=n - 1)
check(t, data(n - 1), "broadcast")
h = ember.from_numpy(data(r).astype(ml_dtypes.bfloat16))
dist.broadcast(h, src=0, async_op=True).wait()
assert (h.float().numpy() == data(0).astype(ml_dtypes.bfloat16).astype(np.float32)).all()

# reduce: dst gets the sum, the others keep their tensors
t = ember.from_numpy(data(r))
dist.reduce(t, dst=1, op=ReduceOp.MAX)
check(t, every().max(0) if r == 1 else data(r), "reduce")

# gathers
outs = [ember.zeros(3, 4, dtype=ember.float64) for _ in range(n)]
dist.all_gather(outs, ember.from_numpy(data(r)))
check(np.stack([o.numpy() for o in outs]), every(), "all_gather")
cat = ember.zeros(3 * n, 4, dtype=ember.float64)
dist.all_gather_into_tensor(cat, ember.from_numpy(data(r)))
check(cat, every().reshape(3 * n, 4), "all_gather_into_tensor (cat)")
stk = ember.zeros(n, 3, 4, dtype=ember.float64)
dist.all_gather_into_tensor(stk, ember.from_numpy(data(r)), async_op=True).wait()
check(stk, every(), "all_gather_into_tensor (stacked)")

for op in (ReduceOp.SUM, ReduceOp.AVG):
    big = ember.from_numpy(data(r, shape=(2 * n, 3)))
    out = ember.zeros(2, 3, dtype=ember.float64)
    dist.reduce_scatter_tensor(out, big, op=op)
    check(out, REF[op](every(shape=(2 * n, 3)), axis=0)[2 * r:2 * r + 2],
          f"reduce_scatter_tensor {op}")

gl = [ember.zeros(3, 4, dtype=ember.float64) for _ in range(n)] if r == 0 else None
dist.gather(ember.from_numpy(data(r)), gl, dst=0)
if r == 0:
    check(np.stack([g.numpy() for g in gl]), every(), "gather")
sl = [ember.from_numpy(data(100 + k)) for k in range(n)] if r == n - 1 else None
t = ember.zeros(3, 4, dtype=ember.float64)
dist.scatter(t, sl, src=n - 1)
check(t, data(100 + r), "scatter")

# point to point: a ring with isend/irecv, then recv from any source
t = ember.zeros(3, 4, dtype=ember.float64)
works = [dist.isend(ember.from_numpy(data(r)), (r + 1) % n, tag=3),
         dist.irecv(t, (r - 1) % n, tag=3)]
for w in works:
    w.wait()
check(t, data((r - 1) % n), "isend/irecv ring")
if r == 0:
    got = set()
    for _ in range(n - 1):
        t = ember.zeros(1, dtype=ember.int64)
        src = dist.recv(t)
        assert int(t.item()) == src * 7, (src, t)
        got.add(src)
    assert got == set(range(1, n))
else:
    dist.send(ember.tensor([r * 7]), dst=0)

# Work.wait(timeout): a message that is not there yet times out, then arrives
if r == 0:
    t = ember.zeros(2)
    w = dist.irecv(t, src=1, tag=99)
    try:
        w.wait(timeout=0.2)
        sys.exit("wait(timeout=0.2) did not time out")
    except dist.DistTimeoutError as e:
        assert "irecv did not complete within 0.2 s" in str(e), e
    assert not w.is_completed()
dist.barrier()
if r == 1:
    dist.send(ember.ones(2), dst=0, tag=99)
if r == 0:
    w.wait()
    check(t, np.ones(2, np.float32), "irecv after a timeout")
dist.barrier(async_op=True).wait()

# objects
objs = [None] * n
dist.all_gather_object(objs, {"rank": r, "pad": "x" * r})
assert objs == [{"rank": k, "pad": "x" * k} for k in range(n)], objs
lst = [("from", r), r] if r == 1 else [None, None]
dist.broadcast_object_list(lst, src=1)
assert lst == [("from", 1), 1], lst

# EMBER_DISTRIBUTED_DEBUG=DETAIL: a shape mismatch raises on every rank
os.environ["EMBER_DISTRIBUTED_DEBUG"] = "DETAIL"
t = ember.ones(3, 4)
dist.all_reduce(t)
check(t, np.full((3, 4), n, np.float32), "all_reduce under DETAIL")
try:
    dist.all_reduce(ember.ones(2, 3 + (r == 1)))
    sys.exit(f"rank {r}: the mismatch was not detected")
except dist.CollectiveMismatchError as e:
    msg = str(e)
    assert "rank 0: all_reduce(shape=(2, 3), dtype=float32, op=SUM)" in msg, msg
    assert "rank 1: all_reduce(shape=(2, 4), dtype=float32, op=SUM)" in msg, msg
    if r == 0:
        print(msg, flush=True)
try:
    if r == 0:
        dist.broadcast(ember.ones(2), src=0)
    else:
        dist.all_reduce(ember.ones(2))
    sys.exit(f"rank {r}: different collectives were not detected")
except dist.CollectiveMismatchError as e:
    assert "rank 0: broadcast(shape=(2,), dtype=float32, root=0)" in str(e), str(e)
del os.environ["EMBER_DISTRIBUTED_DEBUG"]

dist.destroy_process_group()
assert not dist.is_initialized()
print(f"OK {r}", flush=True)
