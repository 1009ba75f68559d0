"""``SyncBatchNorm``: batch normalization whose statistics span the batches of all ranks.

In data-parallel training each rank normalises its own share of the batch; with small
per-rank batches those statistics are noisy. ``SyncBatchNorm`` all-reduces them instead,
so every rank normalises with the mean and variance of the global batch, exactly as
``BatchNorm`` on the concatenated batch would:

- forward: all-reduce the per-channel sum and count, then (second pass, as stable as
  BatchNorm's) the sum of squared deviations from the global mean; the running
  statistics are updated with the global mean and the unbiased global variance;
- backward (PyTorch's ``SyncBatchNorm`` function): all-reduce ``sum(dy)`` and
  ``sum(dy * xhat)`` per channel; ``grad_input = (dy - mean(dy) - xhat * mean(dy *
  xhat)) * invstd * weight`` with global means. ``grad_weight`` / ``grad_bias`` stay
  local sums: DDP's averaging turns them into the gradient of the global mean loss.

Departure: ember is CPU-first, so any device's input is synchronised (PyTorch raises for
non-GPU input). Outside training, without an initialised process group or with one rank,
it is ``BatchNorm``.
Reference: torch.nn.SyncBatchNorm, torch.nn.modules._functions.SyncBatchNorm.
"""
from __future__ import annotations

from ... import distributed as dist
from ... import factories as _f
from ...autograd.custom import Function, once_differentiable
from .. import functional as F
from .normalization import _BatchNorm

__all__ = ["SyncBatchNorm"]


def _per_channel(t, ndim: int):
    """A (C,) tensor shaped to broadcast against (N, C, *) input of rank ``ndim``."""
    return t.reshape((1, -1) + (1,) * (ndim - 2))


class _SyncBatchNormFunction(Function):
    """Forward and backward of synchronised batch norm (see the module docstring)."""

    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum, group):
        c, nd = input.shape[1], input.ndim
        red = (0,) + tuple(range(2, nd))
        stats = _f.zeros(c + 1, dtype=input.dtype, device=input.device)
        stats[:c].copy_(input.sum(red))
        stats[c].fill_(input.numel() // c)
        dist.all_reduce(stats, group=group)
        n = int(stats[c].item())
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got "
                             f"input size {list(input.shape)} on each rank")
        mean = stats[:c] / n
        xmu = input - _per_channel(mean, nd)
        sq = (xmu * xmu).sum(red)
        dist.all_reduce(sq, group=group)
        var = sq / n
        invstd = (var + eps).rsqrt()
        xhat = xmu * _per_channel(invstd, nd)
        out = xhat if weight is None else xhat * _per_channel(weight, nd)
        if bias is not None:
            out = out + _per_channel(bias, nd)
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype) * momentum)
        if running_var is not None:
            unbiased = var * (n / (n - 1))
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)
        ctx.save_for_backward(xhat, weight, invstd)
        ctx.n, ctx.group = n, group
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        xhat, weight, invstd = ctx.saved_tensors
        nd = xhat.ndim
        c = xhat.shape[1]
        red = (0,) + tuple(range(2, nd))
        sum_dy = grad_output.sum(red)
        sum_dy_xhat = (grad_output * xhat).sum(red)
        grad_input = None
        if ctx.needs_input_grad[0]:
            both = _f.zeros(2 * c, dtype=sum_dy.dtype, device=sum_dy.device)
            both[:c].copy_(sum_dy)
            both[c:].copy_(sum_dy_xhat)
            dist.all_reduce(both, group=ctx.group)
            mean_dy, mean_dy_xhat = both[:c] / ctx.n, both[c:] / ctx.n
            scale = invstd if weight is None else invstd * weight
            grad_input = (grad_output - _per_channel(mean_dy, nd)
                          - xhat * _per_channel(mean_dy_xhat, nd)) * _per_channel(scale, nd)
        grad_weight = sum_dy_xhat if weight is not None and ctx.needs_input_grad[1] else None
        grad_bias = sum_dy if ctx.needs_input_grad[2] else None
        return grad_input, grad_weight, grad_bias, None, None, None, None, None


class SyncBatchNorm(_BatchNorm):
    """Batch normalization over ``(N, C, *)`` input with statistics over every rank's batch.

    Args: as ``BatchNorm2d`` (``num_features`` = C, ``eps``, ``momentum``, ``affine``,
    ``track_running_stats``, ``device``, ``dtype``, keyword ``bias``), plus
    ``process_group`` (None: the default group). Shapes: output = input's shape. Floating dtypes.

    Raises ValueError for input of rank < 2, for zero channels, and for a global batch
    with one value per channel in training. Reference: torch.nn.SyncBatchNorm.
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group=None, device=None, dtype=None, *, bias: bool = True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input) -> None:
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        factor = self._count_batch()
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_running = not self.training or self.track_running_stats
        rm = self.running_mean if use_running else None
        rv = self.running_var if use_running else None
        need_sync = (bn_training and self.training and dist.is_initialized()
                     and dist.get_world_size(self.process_group) > 1)
        if not need_sync:
            return F.batch_norm(input, rm, rv, self.weight, self.bias, bn_training, factor,
                                self.eps)
        return _SyncBatchNormFunction.apply(input, self.weight, self.bias, rm, rv, self.eps,
                                            factor, self.process_group)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every ``BatchNorm*d`` in it replaced by a ``SyncBatchNorm``
        sharing its parameters and buffers (the module itself is returned changed in
        place, or the new layer when ``module`` is a batch norm).

        Reference: torch.nn.SyncBatchNorm.convert_sync_batchnorm.
        """
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group,
                      bias=module.bias is not None or not module.affine)
            if module.affine:
                out.weight, out.bias = module.weight, module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.train(module.training)
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
