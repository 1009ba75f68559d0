"""The Reducer: average gradients across ranks in flat buckets, overlapped with backward.

PyTorch's DDP design note, in ember's terms:

1. at construction the parameters are laid out in *buckets*, in reverse registration
   order (roughly the order backward makes their gradients), one dtype a bucket, a bucket
   closed once it holds ``cap`` bytes (the first one ``FIRST_BUCKET_BYTES``, so that
   communication starts early); each bucket owns one flat tensor and a view of it per
   parameter;
2. a post-hook on each parameter's AccumulateGrad (the node that writes ``.grad``) copies
   the gradient into its view and marks the parameter ready; a bucket whose parameters are
   all ready is all-reduced asynchronously (``async_op=True``) at once, while backward goes
   on with the rest of the graph. Buckets are launched in order, so that every rank issues
   the same collectives in the same order;
3. when the last bucket is launched every gradient is known, and the reducer queues its
   finalisation on the engine (``autograd.engine.queue_callback``, as PyTorch does): after
   the last node of the backward pass has run (so the nodes after the last gradient hook
   overlap the all-reduces too) it waits for the all-reduces, divides by the world size and
   copies each view back into ``.grad``; ``loss.backward()`` returns with averaged
   gradients.

Departure: PyTorch puts every parameter in one bucket for the first iteration and then
rebuilds the buckets in the order the gradients really came; ember keeps the
reverse-registration layout throughout (the order matches backward for sequential models).

With ``find_unused_parameters`` the parameters the output's graph does not reach are
marked ready (their gradient zero, or the ``.grad`` they already hold) at the first hook,
and a use map is summed across ranks: a parameter unused on every rank keeps its
``.grad`` untouched. Without it, an unused parameter leaves a bucket unfinished, and the
next forward raises PyTorch's error.

Reference: PyTorch, "Distributed Data Parallel" design note; Li et al., "PyTorch
Distributed: Experiences on Accelerating Data Parallel Training", VLDB 2020;
torch/csrc/distributed/c10d/reducer.cpp.
"""
from __future__ import annotations

import time
import weakref
from typing import NamedTuple

from ... import distributed as dist
from ... import factories as _f
from ...autograd.engine import queue_callback
from ...autograd.function import AccumulateGrad, grad_accumulator
from ...autograd.grad_mode import no_grad

__all__ = ["Reducer", "ReducerStats", "compute_bucket_assignment_by_size",
           "FIRST_BUCKET_BYTES"]

FIRST_BUCKET_BYTES = 1024 * 1024  # PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new "
    "one. This error indicates that your module has parameters that were not used in "
    "producing loss. You can enable unused parameter detection by passing the keyword "
    "argument `find_unused_parameters=True` to `ember.nn.parallel.DistributedDataParallel`, "
    "and by making sure all `forward` function outputs participate in calculating loss. "
    "Parameter indices which did not receive grad for rank {rank}: {missing}")


class ReducerStats(NamedTuple):
    """Seconds of the last synchronised backward, as the bench reads them.

    ``span_s``: from the first gradient hook to the end of the reduction (the part of
    backward the communication could overlap); ``launch_s``: inside the ``all_reduce``
    calls that start the buckets; ``wait_s``: blocked waiting for them at the end (the
    communication the overlap did not hide); ``buckets``: how many were reduced.
    """
    span_s: float
    launch_s: float
    wait_s: float
    buckets: int


def compute_bucket_assignment_by_size(params, cap_bytes: int,
                                      first_cap_bytes: int = FIRST_BUCKET_BYTES) -> list:
    """Bucket the indices of ``params`` (a list of tensors in registration order): walk
    them in reverse, one open bucket per dtype and device, and close a bucket once it holds
    at least its cap (``min(first_cap_bytes, cap_bytes)`` for the first of each dtype,
    then ``cap_bytes``). Returns lists of indices, in the order the buckets were opened.

    Reference: torch.distributed._compute_bucket_assignment_by_size.
    """
    open_: dict = {}  # (dtype, device) -> [indices, bytes, cap]
    done: list = []
    for i in reversed(range(len(params))):
        p = params[i]
        key = (p.dtype, str(p.device))
        b = open_.get(key)
        if b is None:
            first = all(k != key for _, k in done)
            cap = min(first_cap_bytes, cap_bytes) if first else cap_bytes
            b = open_[key] = [[], 0, cap]
            done.append((b, key))
        b[0].append(i)
        b[1] += p.numel() * p.element_size()
        if b[1] >= b[2]:
            del open_[key]
    return [b[0] for b, _ in done]


class _Bucket:
    """One flat tensor, the parameters it holds and a view of it per parameter."""

    __slots__ = ("indices", "flat", "views", "pending", "work")

    def __init__(self, indices: list, params: list):
        self.indices = indices
        p0 = params[indices[0]]
        n = sum(params[i].numel() for i in indices)
        self.flat = _f.zeros(n, dtype=p0.dtype, device=p0.device)
        self.views, off = [], 0
        for i in indices:
            k = params[i].numel()
            self.views.append(self.flat.narrow(0, off, k).view(params[i].shape))
            off += k
        self.pending = len(indices)
        self.work = None


class Reducer:
    """Gradient buckets of ``params`` and the hooks that reduce them (see the module
    docstring). ``process_group`` is passed to the collectives (None: the default group).

    Raises RuntimeError (PyTorch's message) from ``prepare_for_backward`` when the previous
    synchronised backward did not reduce every bucket.
    """

    def __init__(self, params: list, bucket_cap_bytes: int, find_unused_parameters: bool,
                 process_group=None):
        self.params = params
        self.find_unused_parameters = find_unused_parameters
        self.group = process_group
        self.world_size = dist.get_world_size(process_group)
        self.buckets = [_Bucket(ix, params) for ix in
                        compute_bucket_assignment_by_size(params, bucket_cap_bytes)]
        self._where = {}  # param index -> (bucket, position in it)
        for b in self.buckets:
            for pos, i in enumerate(b.indices):
                self._where[i] = (b, pos)
        self._accs = [grad_accumulator(p) for p in params]  # NOTE: hooks live on these
        self._handles = [acc.register_hook(self._hook_for(i)) for i, acc in
                         enumerate(self._accs)]
        self.expect_hooks = False
        self.require_finalize = False
        self._unused: list = []
        self._marked_unused = False
        self._ready: list = [False] * len(params)
        self._next = 0
        self._t0 = self._launch_s = 0.0
        self.stats = ReducerStats(0.0, 0.0, 0.0, 0)

    # -- per iteration ------------------------------------------------------------------
    def prepare_for_backward(self, outputs) -> None:
        """Arm the hooks for the next backward (called after each forward that will be
        synchronised). With ``find_unused_parameters``, find the parameters the graph of
        ``outputs`` (tensors) does not reach."""
        self.ensure_prior_reduction_finished()
        self.expect_hooks = True
        self._ready = [False] * len(self.params)
        for b in self.buckets:
            b.pending, b.work = len(b.indices), None
        self._next = 0
        self._marked_unused = False
        self._unused = []
        if self.find_unused_parameters:
            reached = _reached_accumulators(outputs)
            self._unused = [i for i, acc in enumerate(self._accs) if acc not in reached]

    def ensure_prior_reduction_finished(self) -> None:
        """Raise PyTorch's error when a synchronised backward left buckets unreduced."""
        if self.require_finalize:
            missing = [i for i, r in enumerate(self._ready) if not r]
            raise RuntimeError(_UNFINISHED.format(rank=dist.get_rank(self.group),
                                                  missing=missing))

    def _hook_for(self, index: int):
        # NOTE: the parameters' accumulators outlive the DDP wrapper; a weak reference lets
        # the reducer (and its buckets) go with the wrapper, its hooks then doing nothing
        ref = weakref.ref(self)

        def hook(grad_inputs, grad_outputs):
            reducer = ref()
            if reducer is not None and reducer.expect_hooks:
                reducer._autograd_hook(index)
        return hook

    def _autograd_hook(self, index: int) -> None:
        if not self._marked_unused:
            self._marked_unused = True
            self._t0, self._launch_s = time.perf_counter(), 0.0
            for i in self._unused:
                self._mark_ready(i)
        else:
            # NOTE: an MPI engine without a progress thread moves a non-blocking
            # collective on only inside MPI calls: test the one in flight meanwhile
            for b in self.buckets[max(0, self._next - 1):self._next]:
                b.work.is_completed()
        self._mark_ready(index)

    def _mark_ready(self, index: int) -> None:
        if self._ready[index]:
            raise RuntimeError(f"Expected to mark a variable ready only once. The parameter "
                               f"with index {index} was marked ready twice: it is used in "
                               f"several reentrant backward passes or shared between "
                               f"modules; make each parameter reach the loss once")
        self._ready[index] = True
        self.require_finalize = True
        bucket, pos = self._where[index]
        g = self.params[index].grad
        with no_grad():
            if g is None:
                bucket.views[pos].zero_()
            else:
                bucket.views[pos].copy_(g)
        bucket.pending -= 1
        if bucket.pending == 0:
            self._launch_ready_buckets()

    def _launch_ready_buckets(self) -> None:
        """Launch, in bucket order, every bucket whose gradients are all in; finalise after
        the last one."""
        buckets = self.buckets
        while self._next < len(buckets) and buckets[self._next].pending == 0:
            b = buckets[self._next]
            t = time.perf_counter()
            b.work = dist.all_reduce(b.flat, op=dist.ReduceOp.SUM, group=self.group,
                                     async_op=True)
            self._launch_s += time.perf_counter() - t
            self._next += 1
        if self._next == len(buckets):
            queue_callback(self._finalize)

    def _finalize(self) -> None:
        used = None
        if self.find_unused_parameters:
            used = _f.zeros(len(self.params), dtype=self.buckets[0].flat.dtype)
            with no_grad():
                used.fill_(1.0)
                for i in self._unused:
                    used[i] = 0.0
            dist.all_reduce(used, op=dist.ReduceOp.SUM, group=self.group)
            used = used.tolist()
        t = time.perf_counter()
        for b in self.buckets:
            b.work.wait()
        wait_s = time.perf_counter() - t
        with no_grad():
            for b in self.buckets:
                b.flat.div_(self.world_size)
                for pos, i in enumerate(b.indices):
                    if used is not None and used[i] == 0:
                        continue  # unused on every rank: .grad untouched, as in PyTorch
                    p = self.params[i]
                    if p.grad is None:
                        p.grad = b.views[pos].clone()
                    else:
                        p.grad.copy_(b.views[pos])
        self.expect_hooks = False
        self.require_finalize = False
        self.stats = ReducerStats(time.perf_counter() - self._t0, self._launch_s, wait_s,
                                  len(self.buckets))

    def remove_hooks(self) -> None:
        """Unregister the gradient hooks (the reducer stops reducing)."""
        for h in self._handles:
            h.remove()
        self._handles = []


def _reached_accumulators(outputs) -> set:
    """The AccumulateGrad nodes the autograd graph of the tensors ``outputs`` reaches."""
    seen, found = set(), set()
    stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
    stack += [grad_accumulator(t) for t in outputs if t.grad_fn is None and t.requires_grad]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if isinstance(node, AccumulateGrad):
            found.add(node)
        stack.extend(e[0] for e in node.next_functions if e is not None)
    return found
