"""Regression and distribution losses with PyTorch's signatures (``torch.nn.functional``):
huber_loss (robust regression), poisson_nll_loss and gaussian_nll_loss (negative
log-likelihoods) and kl_div (a divergence between distributions).

Each is a composite op (``native_functions.yaml``, section ``nn: losses``) built from
ember ops, so autograd differentiates it to any order; the ``F`` functions add PyTorch's
deprecated ``size_average`` / ``reduce`` where PyTorch has them, and kl_div's
'batchmean'. huber_loss without weight runs as smooth_l1's fused kernel pair
(``backends/kernels/loss_fused.py``). Reductions are 'none', 'mean' (over all elements) or 'sum'.

Choices where PyTorch leaves room: ``gaussian_nll_loss`` accepts an int ``var`` as well
as a float; ``poisson_nll_loss(full=True)`` gives targets <= 1 a zero gradient through
the Stirling term (PyTorch's is NaN at target 0).
"""
from __future__ import annotations

import math
import warnings

from ember.ops import namespace as E
from ember.errors import DtypeError, ShapeError
from ember.backends.kernels.loss_fused import smooth_l1_backward, smooth_l1_forward
from ember.ops.composite import composite

from ember.autograd import kernel_pair as _fused
from .distance import _clamp_min_keep_grad
from .loss import (_check_reduction, _reduce, _reduction, _same_floats, _shape,
                   _warn_broadcast)

__all__ = ["huber_loss", "poisson_nll_loss", "gaussian_nll_loss", "kl_div"]


def _check_floating(op: str, **tensors) -> None:
    for name, t in tensors.items():
        if not t.is_floating_point():
            raise DtypeError(f"{op}: expected a floating {name}, got {t.dtype}; convert it "
                             f"first, e.g. {name}.float()")


@composite("huber_loss")
def _huber_loss(self, target, reduction, delta, weight):
    op = "huber_loss"
    _check_reduction(op, reduction)
    _check_floating(op, input=self)
    if delta <= 0:
        raise ValueError(f"{op}: delta must be > 0, got {delta}")
    _warn_broadcast(op, self, target)
    if weight is not None and tuple(weight.shape) != tuple(self.shape):
        raise ShapeError(f"{op}: expected weight of input's shape {_shape(self)}, got "
                         f"{_shape(weight)}")
    if weight is None and _same_floats(self, target):
        return _fused.run(op, _huber_reference, smooth_l1_forward, smooth_l1_backward,
                          (self, target), (reduction, delta, delta))
    return _huber_reference(self, target, reduction, delta, delta, weight)


def _huber_reference(self, target, reduction, delta, scale, weight=None):
    """huber_loss op by op (scale is delta: the fused kernels' signature)."""
    diff = self - target
    dist = diff.abs()
    loss = E.where(dist < delta, diff * diff * 0.5, (dist - 0.5 * delta) * delta)
    # NOTE: PyTorch's weighted huber 'mean' is the plain mean of weight * loss (mse_loss
    # and l1_loss divide by weight.sum() instead).
    return _reduce(loss if weight is None else loss * weight, reduction)


@composite("poisson_nll_loss")
def _poisson_nll_loss(input, target, log_input, full, eps, reduction):
    _check_reduction("poisson_nll_loss", reduction)
    if log_input:
        loss = E.exp(input) - target * input
    else:
        loss = input - target * E.log(input + eps)
    if full:
        # Stirling's approximation of log(target!), counted only for target > 1; the
        # masked targets are replaced first so log sees no 0 (whose NaN gradient would
        # survive the mask)
        big = target > 1
        t = E.where(big, target, 2.0)
        stirling = t * E.log(t) - t + 0.5 * E.log(2 * math.pi * t)
        loss = loss + E.where(big, stirling, 0.0)
    return _reduce(loss, reduction)


def _homoscedastic_var(input, var):
    """var broadcastable to input as PyTorch's gaussian_nll_loss accepts it."""
    if tuple(var.shape) == tuple(input.shape):
        return var
    if tuple(var.shape) == tuple(input.shape[:-1]):
        return var.unsqueeze(-1)
    if var.ndim == input.ndim and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1:
        return var  # one dim of size 1 where input's is not: it broadcasts
    raise ShapeError(f"gaussian_nll_loss: var is of incorrect size: expected input's shape "
                     f"{_shape(input)}, that shape without its last dim, or it with one dim "
                     f"of size 1, got {_shape(var)}")


@composite("gaussian_nll_loss")
def _gaussian_nll_loss(input, target, var, full, eps, reduction):
    op = "gaussian_nll_loss"
    _check_reduction(op, reduction)
    var = _homoscedastic_var(input, var)
    if bool((var < 0).any()):
        raise ValueError(f"{op}: var has negative entries; variances must be >= 0")
    # clamped for stability in value only: PyTorch clamps a clone under no_grad
    var = _clamp_min_keep_grad(var, eps)
    diff = input - target
    loss = (E.log(var) + diff * diff / var) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


@composite("kl_div")
def _kl_div(self, target, reduction, log_target):
    op = "kl_div"
    _check_reduction(op, reduction)
    _check_floating(op, input=self, target=target)
    if log_target:
        loss = E.exp(target) * (target - self)
    else:
        # xlogy(target, target) - target * input: 0 where target == 0, as PyTorch; log
        # sees 1 there, so its gradient stays finite
        zero = target == 0
        xlogx = E.where(zero, 0.0, target * E.log(E.where(zero, 1.0, target)))
        loss = xlogx - target * self
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where d = |input - target| < delta, else delta * (d - 0.5 delta); reduced.

    input and target broadcast (a UserWarning when their shapes differ); weight, of
    input's shape, multiplies each term ('mean' then is the plain mean of the products,
    as PyTorch). Floating dtypes. Raises ValueError for delta <= 0 or a bad reduction,
    ShapeError for a weight of another shape, DtypeError for an integral input.
    Reference: torch.nn.functional.huber_loss (Huber, 1964).
    """
    return E.huber_loss(input, target, reduction, delta, weight)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """Poisson negative log-likelihood of target given the rate input, reduced.

    log_input: exp(input) - target * input (input is the log-rate); else input - target *
    log(input + eps). full adds Stirling's term target log target - target + 0.5
    log(2 pi target) where target > 1. input and target broadcast; floating dtypes.
    Raises ValueError for a bad reduction. Reference: torch.nn.functional.poisson_nll_loss.
    """
    reduction = _reduction(size_average, reduce, reduction)
    return E.poisson_nll_loss(input, target, log_input, full, eps, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Gaussian negative log-likelihood 0.5 * (log(v) + (input - target)^2 / v), v =
    max(var, eps) (clamped in value, not in gradient, as PyTorch); full adds 0.5 log(2 pi).

    input (N, *) and target broadcast; var is a number, input's shape, input's shape
    without its last dim, or input's shape with one dim of size 1 (homoscedastic).
    Floating dtypes. Raises ValueError for negative var or a bad reduction, ShapeError for
    another var shape. Reference: torch.nn.functional.gaussian_nll_loss (Nix & Weigend,
    1994).
    """
    if not isinstance(var, E.Tensor):
        if var < 0:
            raise ValueError(f"gaussian_nll_loss: var has negative entries; variances must "
                             f"be >= 0, got {var}")
        var = E.ones_like(input) * var
    return E.gaussian_nll_loss(input, target, var, full, eps, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence pointwise: target * (log(target) - input) (0 where
    target = 0), or exp(target) * (target - input) with log_target; input holds
    log-probabilities. input and target broadcast; floating dtypes.

    reduction 'batchmean' divides the sum by input.shape[0], the KL divergence of a batch;
    'mean' (the default) divides by every element and warns, as PyTorch. Raises
    ValueError for a bad reduction, DtypeError for integral input or target.
    Reference: torch.nn.functional.kl_div.
    """
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn("kl_div: reduction='mean' divides the total loss by both the batch size "
                      "and the support size; 'batchmean' divides only by the batch size and "
                      "matches the KL divergence's definition. PyTorch will make 'mean' "
                      "behave as 'batchmean' in its next major release", UserWarning,
                      stacklevel=2)
    if reduction == "batchmean":
        total = E.kl_div(input, target, "sum", log_target=log_target)
        return total / input.shape[0] if input.ndim else total
    return E.kl_div(input, target, reduction, log_target=log_target)
