"""The multi-rank half of ``test_distributed.py``: run under ``mpiexec -n N`` (N >= 2),
each check runs on every rank and rank 0 writes ``{check: "ok" | error text}`` as JSON to
``argv[1]``.

Every reference is one process training on the concatenated global batch (float64), which
each rank computes on its own from the same seed, so no rank trusts another's numbers.
"""
from __future__ import annotations

import copy
import json
import sys
import traceback

import numpy as np

import ember as E
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP
from ember.utils.data.distributed import DistributedSampler

F64 = E.float64


def _mlp(seed: int = 0):
    E.manual_seed(seed)
    return nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 6), nn.Tanh(),
                         nn.Linear(6, 3)).to(F64)


def _batches(steps: int, n: int, seed: int = 1):
    g = E.Generator().manual_seed(seed)
    return [(E.randn(n, 5, dtype=F64, generator=g), E.randn(n, 3, dtype=F64, generator=g))
            for _ in range(steps)]


def _mine(t, rank, world):
    k = t.shape[0] // world
    return t[rank * k:(rank + 1) * k]


def _close(a, b, tol=1e-12, what=""):
    a = a.detach().numpy() if hasattr(a, "numpy") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "numpy") else np.asarray(b)
    err = float(np.max(np.abs(a - b))) if a.size else 0.0
    if not err <= tol:
        raise AssertionError(f"{what}: max |difference| {err} > {tol}")


def _train(fwd, params, batches, rank, world, local: bool):
    opt = E.optim.SGD(params, lr=0.1, momentum=0.9)
    for x, y in batches:
        if local:
            x, y = _mine(x, rank, world), _mine(y, rank, world)
        loss = ((fwd(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


def check_equal_to_one_process(rank, world):
    """Several SGD-with-momentum steps: DDP on slices == one process on the whole batch,
    with one bucket (25 MiB) and with a bucket per parameter or two (tiny cap)."""
    batches = _batches(4, 4 * world)
    ref = _mlp()
    _train(ref, ref.parameters(), batches, rank, world, local=False)
    for cap in (25, 0.0001):
        model = _mlp(seed=0 if rank == 0 else 10 + rank)  # construction broadcasts rank 0's
        ddp = DDP(model, bucket_cap_mb=cap)
        if cap < 1 and len(ddp.reducer.buckets) < 3:
            raise AssertionError(f"expected several buckets, got {ddp.reducer.buckets}")
        init = _mlp()
        for p, q in zip(model.parameters(), init.parameters()):
            _close(p, q, 0.0, "broadcast at construction")
        _train(ddp, model.parameters(), batches, rank, world, local=True)
        for (name, p), q in zip(model.named_parameters(), ref.parameters()):
            _close(p, q, 1e-12, f"cap {cap} MiB, {name}")
        if list(ddp.state_dict()) != ["module." + k for k in model.state_dict()]:
            raise AssertionError(f"state_dict keys: {list(ddp.state_dict())}")
        if ddp.comm_stats.buckets != len(ddp.reducer.buckets):
            raise AssertionError(f"comm_stats: {ddp.comm_stats}")


def check_no_sync(rank, world):
    """Two micro-batches under no_sync, one synchronised: the grads are the average over
    ranks of the locally accumulated sums, i.e. the sum of full-batch mean-loss grads."""
    batches = _batches(3, 4 * world, seed=2)
    ref = _mlp()
    for x, y in batches:
        ((ref(x) - y) ** 2).mean().backward()
    model = _mlp()
    ddp = DDP(model)
    with ddp.no_sync():
        for x, y in batches[:2]:
            ((ddp(_mine(x, rank, world)) - _mine(y, rank, world)) ** 2).mean().backward()
    grads_local = [p.grad.clone() for p in model.parameters()]
    x, y = batches[2]
    ((ddp(_mine(x, rank, world)) - _mine(y, rank, world)) ** 2).mean().backward()
    for p, q in zip(model.parameters(), ref.parameters()):
        _close(p.grad, q.grad, 1e-12, "no_sync then sync")
    # under no_sync nothing was reduced: the local sums differ between ranks
    others = [E.zeros_like(grads_local[0]) for _ in range(world)]
    dist.all_gather(others, grads_local[0])
    if float((others[0] - others[1]).abs().max()) == 0.0:
        raise AssertionError("no_sync reduced the gradients")


def check_buffers(rank, world):
    """Buffers broadcast at construction and before each forward after a synchronised
    one; with broadcast_buffers=False they drift apart."""
    for bcast in (True, False):
        E.manual_seed(0)
        model = nn.Sequential(nn.Linear(5, 4), nn.BatchNorm1d(4)).to(F64)
        model[1].running_mean.fill_(float(rank))  # replicas differ before construction
        ddp = DDP(model, broadcast_buffers=bcast)
        _close(model[1].running_mean, E.zeros(4, dtype=F64), 0.0, "buffers at construction")
        seen = []
        model.register_forward_pre_hook(lambda m, a: seen.append(m[1].running_mean.clone()))
        for x, y in _batches(2, 8, seed=3 + rank):  # each rank its own data
            ((ddp(x)[:, :3] - y) ** 2).mean().backward()
        both = [E.zeros(4, dtype=F64) for _ in range(world)]
        dist.all_gather(both, seen[1])
        same = float((both[0] - both[1]).abs().max()) == 0.0
        if same != bcast:
            raise AssertionError(f"broadcast_buffers={bcast}: buffers equal across ranks "
                                 f"at the second forward: {same}")


class _TwoBranches(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(5, 3)
        self.b = nn.Linear(5, 3)

    def forward(self, x, use_b: bool):
        return self.a(x) + (self.b(x) if use_b else 0.0)


def check_unused_found(rank, world):
    """find_unused_parameters=True: a branch unused everywhere keeps grad None; a branch
    used on rank 0 only gets rank 0's grad / world on every rank."""
    x, y = _batches(1, 4 * world, seed=4)[0]
    for use_b_on in ((), (0,)):
        E.manual_seed(0)
        model = _TwoBranches().to(F64)
        ref = copy.deepcopy(model)
        ddp = DDP(model, find_unused_parameters=True)
        for _ in range(2):  # the second iteration would raise if the first never finished
            model.zero_grad()
            out = ddp(_mine(x, rank, world), rank in use_b_on)
            ((out - _mine(y, rank, world)) ** 2).mean().backward()
        if not use_b_on:
            if model.b.weight.grad is not None:
                raise AssertionError("a globally unused parameter got a gradient")
            ((ref(x, False) - y) ** 2).mean().backward()
            _close(model.a.weight.grad, ref.a.weight.grad, 1e-12, "used branch")
        else:
            k = x.shape[0] // world
            ((ref(x[:k], True) - y[:k]) ** 2).mean().backward()
            _close(model.b.weight.grad, ref.b.weight.grad / world, 1e-12,
                   "branch used on rank 0 only")


def check_unused_not_found(rank, world):
    """Without find_unused_parameters an unused parameter gives PyTorch's error at the
    next forward."""
    model = _TwoBranches().to(F64)
    ddp = DDP(model, bucket_cap_mb=0.00001)
    x = E.randn(4, 5, dtype=F64)
    ddp(x, False).sum().backward()
    try:
        ddp(x, False)
    except RuntimeError as e:
        if "Expected to have finished reduction in the prior iteration" not in str(e):
            raise
        if "find_unused_parameters=True" not in str(e):
            raise
        return
    raise AssertionError("no error for an unused parameter")


def check_sampler(rank, world):
    """Default num_replicas / rank from the group; the ranks' shares partition the set."""
    s = DistributedSampler(list(range(11)), shuffle=True, seed=3)
    s.set_epoch(2)
    mine = list(s)
    everyone = [None] * world
    dist.all_gather_object(everyone, mine)
    share = -(-11 // world)
    if s.num_replicas != world or s.rank != rank or len(mine) != share:
        raise AssertionError(f"sampler: {s.num_replicas}, {s.rank}, {len(mine)}")
    flat = [i for part in everyone for i in part]
    if sorted(set(flat)) != list(range(11)) or len(flat) != share * world:
        raise AssertionError(f"shares do not cover the set: {everyone}")


def check_sync_batchnorm(rank, world):
    """SyncBatchNorm on slices == BatchNorm2d on the full batch: output, running stats,
    input grads; the weight/bias grads summed over ranks == the full-batch ones."""
    g = E.Generator().manual_seed(5)
    x = E.randn(4 * world, 3, 5, 2, dtype=F64, generator=g) * 3 + 1
    w = E.randn(4 * world, 3, 5, 2, dtype=F64, generator=g)
    bn = nn.BatchNorm2d(3).to(F64)
    with E.no_grad():
        bn.weight.copy_(E.tensor([1.5, -0.5, 2.0], dtype=F64))
        bn.bias.copy_(E.tensor([0.1, 0.2, -0.3], dtype=F64))
    sbn = nn.SyncBatchNorm.convert_sync_batchnorm(copy.deepcopy(bn))
    if type(sbn) is not nn.SyncBatchNorm:
        raise AssertionError(f"convert_sync_batchnorm gave {type(sbn).__name__}")
    xf = x.clone().requires_grad_()
    xl = _mine(x, rank, world).clone().requires_grad_()
    for _ in range(2):
        yf = bn(xf)
        (yf * w).sum().backward()
        yl = sbn(xl)
        (yl * _mine(w, rank, world)).sum().backward()
    _close(yl, _mine(yf, rank, world), 1e-12, "output")
    _close(sbn.running_mean, bn.running_mean, 1e-12, "running_mean")
    _close(sbn.running_var, bn.running_var, 1e-12, "running_var")
    _close(xl.grad, _mine(xf.grad, rank, world), 1e-12, "grad input")
    for name in ("weight", "bias"):
        gsum = getattr(sbn, name).grad.clone()
        dist.all_reduce(gsum)
        _close(gsum, getattr(bn, name).grad, 1e-12, f"grad {name} (summed over ranks)")
    if int(sbn.num_batches_tracked) != 2:
        raise AssertionError("num_batches_tracked")
    # no affine parameters, momentum None (a cumulative average), 3D input
    bn = nn.BatchNorm1d(3, affine=False, momentum=None).to(F64)
    sbn = nn.SyncBatchNorm.convert_sync_batchnorm(copy.deepcopy(bn))
    xf = x[:, :, :, 0].clone().requires_grad_()
    xl = _mine(xf.detach(), rank, world).clone().requires_grad_()
    for _ in range(2):
        (bn(xf) * w[:, :, :, 0]).sum().backward()
        (sbn(xl) * _mine(w[:, :, :, 0], rank, world)).sum().backward()
    _close(xl.grad, _mine(xf.grad, rank, world), 1e-12, "grad input, affine=False")
    _close(sbn.running_var, bn.running_var, 1e-12, "running_var, momentum=None")


def check_ddp_with_sync_batchnorm(rank, world):
    """DDP over a model whose BatchNorm became SyncBatchNorm == one process with BatchNorm
    on the full batch: parameters and running statistics after several steps (SyncBatchNorm's
    blocking collectives run in backward between the buckets' asynchronous ones)."""
    def make():
        E.manual_seed(0)
        return nn.Sequential(nn.Linear(5, 6), nn.BatchNorm1d(6), nn.Tanh(),
                             nn.Linear(6, 3)).to(F64)
    batches = _batches(3, 4 * world, seed=7)
    ref = make()
    _train(ref, ref.parameters(), batches, rank, world, local=False)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(make())
    ddp = DDP(model, bucket_cap_mb=0.0001)
    _train(ddp, model.parameters(), batches, rank, world, local=True)
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        _close(p, q, 1e-12, name)
    _close(model[1].running_var, ref[1].running_var, 1e-12, "running_var")


def check_traced_module(rank, world):
    """An ember.jit.trace'd module under DDP trains like one process on the full batch."""
    batches = _batches(3, 4 * world, seed=6)
    ref = _mlp()
    _train(ref, ref.parameters(), batches, rank, world, local=False)
    model = _mlp()
    traced = E.jit.trace(model, (E.zeros(4, 5, dtype=F64),))
    ddp = DDP(traced, bucket_cap_mb=0.0001)
    _train(ddp, model.parameters(), batches, rank, world, local=True)
    for p, q in zip(model.parameters(), ref.parameters()):
        _close(p, q, 1e-12, "traced module")


def check_nodes_after_the_last_hook(rank, world):
    """The input needs a gradient too, so backward goes on past the last parameter's hook:
    the reduction waits for the end of backward (the input's hook still sees it pending),
    the parameters train as one process, the input's gradient is the local one."""
    batches = _batches(2, 4 * world, seed=7)
    ref = _mlp()
    _train(lambda x: ref(x.tanh()), ref.parameters(), batches, rank, world, local=False)
    model, plain = _mlp(), _mlp()
    ddp = DDP(model, bucket_cap_mb=0.0001)
    opt = E.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in batches:
        leaf = _mine(x, rank, world).clone().requires_grad_()
        pending = []
        leaf.register_hook(lambda g: pending.append(ddp.reducer.require_finalize))
        loss = ((ddp(leaf.tanh()) - _mine(y, rank, world)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        if pending != [True]:
            raise AssertionError(f"reduced before the last node ran: {pending}")
        mine = leaf.detach().clone().requires_grad_()
        ((plain(mine.tanh()) - _mine(y, rank, world)) ** 2).mean().backward()
        _close(leaf.grad, mine.grad, 1e-12, "input gradient")
        opt.step()
        for p, q in zip(plain.parameters(), model.parameters()):
            with E.no_grad():
                p.copy_(q)
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        _close(p, q, 1e-12, name)


CHECKS = [check_equal_to_one_process, check_no_sync, check_buffers, check_unused_found,
          check_sampler, check_sync_batchnorm, check_ddp_with_sync_batchnorm,
          check_traced_module, check_nodes_after_the_last_hook,
          check_unused_not_found]  # NOTE: last: it leaves launched buckets unwaited


def main(path: str) -> None:
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    results = {}
    for check in CHECKS:
        try:
            check(rank, world)
            mine = "ok"
        except Exception:
            mine = traceback.format_exc()
        everyone = [None] * world
        dist.all_gather_object(everyone, mine)
        bad = [f"rank {r}: {m}" for r, m in enumerate(everyone) if m != "ok"]
        results[check.__name__] = "ok" if not bad else "\n".join(bad)
    if rank == 0:
        with open(path, "w") as f:
            json.dump(results, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
