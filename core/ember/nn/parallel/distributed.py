"""``DistributedDataParallel``: one model replica per rank, gradients averaged in backward.

Each rank runs the wrapped module on its share of the batch; at construction the
parameters and buffers are broadcast from rank 0 so that the replicas start equal, and
during ``backward`` the Reducer (``reducer.py``) all-reduces the gradients bucket by
bucket, overlapped with the rest of backward, so that after ``backward`` every rank holds
the gradient averaged over the ranks and one optimizer step keeps the replicas equal.
With equal per-rank batches that average is the gradient of the mean loss over the global
batch: training matches one process on the concatenated batch.

ember runs on CPUs first: ``device_ids`` must be None (or name the one device the module
lives on), and the collectives go to whichever process-group backend ``ember.distributed``
was initialised with (``mpi`` on CPUs).

Reference: torch.nn.parallel.DistributedDataParallel and PyTorch's DDP design note.
"""
from __future__ import annotations

import contextlib

from ... import distributed as dist
from ...autograd.grad_mode import is_grad_enabled, no_grad
from ...tensor import Tensor
from ..modules.module import Module
from .reducer import Reducer

__all__ = ["DistributedDataParallel"]


def _find_tensors(obj) -> list:
    """The tensors in a forward output (a Tensor, or lists, tuples and dicts of them)."""
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _find_tensors(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _find_tensors(o)]
    return []


class DistributedDataParallel(Module):
    """Data parallelism across the ranks of a process group.

    Args:
        module: the model (an ``nn.Module`` or an ``ember.jit.trace``d one); its
            parameters and buffers are broadcast from rank 0 here.
        device_ids: None for a CPU module, or a list holding the module's one device.
        output_device: None or that device (outputs stay where the module puts them).
        dim: the batch dimension (kept for PyTorch's signature; each rank feeds its own
            batch, nothing is scattered).
        broadcast_buffers: broadcast the buffers from rank 0 at the start of each
            forward that follows a synchronised one (running statistics stay rank 0's).
        init_sync: broadcast parameters and buffers at construction (default True; False
            when the replicas are known to be equal already).
        process_group: the group to reduce over (None: the default one).
        bucket_cap_mb: bucket size in MiB (default 25; the first bucket holds 1 MiB).
        find_unused_parameters: walk the output's graph after each forward and mark the
            parameters it does not reach ready, so that backward finishes (a parameter
            unused on every rank keeps its ``.grad``).
        check_reduction: ignored (deprecated in PyTorch too).
        gradient_as_bucket_view: must be False (gradients are copied out of the buckets).
    Forward: the module's forward on this rank's inputs. After ``backward`` each
    parameter's ``.grad`` is the average over the ranks.

    Raises RuntimeError when no process group is initialised, for GPU ``device_ids`` on a
    module of another device, and (PyTorch's message) at the forward after a backward that
    did not reach every parameter without ``find_unused_parameters``; ValueError for a
    module without parameters that require grad.
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, init_sync: bool = True, process_group=None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False):
        super().__init__()
        if not dist.is_initialized():
            raise RuntimeError("DistributedDataParallel: expected an initialised default "
                               "process group, got none; call "
                               "ember.distributed.init_process_group() first")
        params = list(dict.fromkeys(p for p in module.parameters() if p.requires_grad))
        if not params:
            raise ValueError("DistributedDataParallel is not needed when a module doesn't "
                             "have any parameter that requires a gradient.")
        devices = {str(p.device) for p in params}
        if device_ids is not None and (len(device_ids) != 1 or len(devices) != 1):
            raise RuntimeError(f"DistributedDataParallel device_ids and output_device "
                               f"arguments only work with single-device modules, but got "
                               f"device_ids {device_ids}, output_device {output_device}, "
                               f"and module parameters {sorted(devices)}; pass "
                               f"device_ids=None")
        if gradient_as_bucket_view:
            raise NotImplementedError("DistributedDataParallel: gradient_as_bucket_view=True "
                                      "is not supported; gradients are copied out of the "
                                      "buckets (pass False)")
        self.module = module
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.process_group = process_group
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb)
                                    * 1024 * 1024)
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        if init_sync:
            self._sync_module_states()
        # NOTE: a plain attribute would register nothing (it is not a Module), but keep it
        # out of __setattr__'s registries explicitly
        object.__setattr__(self, "reducer", Reducer(params, self.bucket_bytes_cap,
                                                    find_unused_parameters, process_group))

    def _sync_module_states(self) -> None:
        """Broadcast every parameter and buffer from rank 0 (in place)."""
        with no_grad():
            for t in list(self.module.parameters()) + list(self.module.buffers()):
                dist.broadcast(t, src=0, group=self.process_group)

    def _sync_buffers(self) -> None:
        with no_grad():
            for b in self.module.buffers():
                dist.broadcast(b, src=0, group=self.process_group)

    def forward(self, *inputs, **kwargs):
        sync = is_grad_enabled() and self.require_backward_grad_sync
        if sync:
            self.reducer.ensure_prior_reduction_finished()
        if self.require_forward_param_sync and self.broadcast_buffers:
            self._sync_buffers()
        output = self.module(*inputs, **kwargs)
        if sync:
            self.require_forward_param_sync = True
            self.reducer.prepare_for_backward(
                _find_tensors(output) if self.find_unused_parameters else [])
        else:
            self.require_forward_param_sync = False
        return output

    @contextlib.contextmanager
    def no_sync(self):
        """Within this context, backward accumulates gradients locally without reducing
        them; the first synchronised forward-backward after it reduces the accumulated
        sum. The forward must run inside the context. Reference:
        torch.nn.parallel.DistributedDataParallel.no_sync."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    @property
    def comm_stats(self):
        """``ReducerStats`` of the last synchronised backward (seconds): ``span_s`` from
        the first gradient hook to the end of the reduction, ``launch_s`` in the calls
        starting the all-reduces, ``wait_s`` blocked waiting for them, ``buckets``."""
        return self.reducer.stats
