"""Multi-class and multi-label margin losses with PyTorch's signatures
(``torch.nn.functional``): multi_margin_loss (a multi-class hinge, Weston & Watkins
1999 / Crammer & Singer 2001 style), multilabel_margin_loss (a hinge between every target
class and every non-target class) and multilabel_soft_margin_loss (one logistic loss per
class, averaged over the classes).

``multi_margin_loss`` and ``multilabel_margin_loss`` are composite ops
(``native_functions.yaml``, section ``nn: extra losses``) built from gather, where and
clamp, so autograd differentiates them to any order (PyTorch has no double backward for
either); on the first order they run as fused kernel pairs (``backends/kernels/
loss_margin.py``, through ``_fused.run``); ``multilabel_soft_margin_loss`` is, as in
PyTorch, a Python function over ``log_sigmoid`` (its 'mean' is
binary_cross_entropy_with_logits'). Inputs are ``(N, C)`` or unbatched ``(C,)``; 'mean'
averages over the N samples (nan for N = 0, where PyTorch returns uninitialized memory).
"""
from __future__ import annotations

from ember.ops import namespace as E
from ember.errors import DtypeError, ShapeError
from ember.backends.kernels.loss_margin import (multi_margin_backward, multi_margin_forward,
                                                multilabel_margin_backward,
                                                multilabel_margin_forward)
from ember.ops.composite import composite

from ember.autograd import kernel_pair as _fused
from .loss import _check_reduction, _reduce, _reduction, _shape

__all__ = ["multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss"]


def _check_input(op: str, input) -> None:
    if input.ndim not in (1, 2):
        raise ShapeError(f"{op}: expected input of shape (N, C) or (C,), got "
                         f"{_shape(input)}")
    if not input.is_floating_point():
        raise DtypeError(f"{op}: expected a floating input, got {input.dtype}; convert it "
                         f"first, e.g. input.float()")


def _check_integral(op: str, target) -> None:
    if target.is_floating_point() or target.dtype is E.bool_:
        raise DtypeError(f"{op}: expected integral class-index targets (int64), got "
                         f"{target.dtype}; use target.long()")


@composite("multi_margin_loss")
def _multi_margin_loss(self, target, p, margin, weight, reduction):
    op = "multi_margin_loss"
    _check_reduction(op, reduction)
    _check_input(op, self)
    _check_integral(op, target)
    if p not in (1, 2):
        raise ValueError(f"{op}: only p == 1 and p == 2 are supported, got p = {p}")
    x = self if self.ndim == 2 else self.unsqueeze(0)
    n, c = x.shape
    if target.numel() != n or target.ndim > 1:
        raise ShapeError(f"{op}: target should be 1-D with one class per sample: expected "
                         f"({n},) for input of shape {_shape(self)}, got {_shape(target)}")
    if weight is not None and tuple(weight.shape) != (c,):
        raise ShapeError(f"{op}: expected weight of shape ({c},) (one per class), got "
                         f"{_shape(weight)}")
    y = target.reshape(n, 1).to(E.int64)
    if n and bool(((y._data < 0) | (y._data >= c)).any()):
        raise IndexError(f"{op}: target out of range: class indices must be in [0, {c})")
    if p in (1, 2) and (weight is None or (weight.dtype is self.dtype and
                                           not weight.requires_grad)):
        return _fused.run(op, _multi_margin_reference, multi_margin_forward,
                          multi_margin_backward, (x, y.reshape(n), weight),
                          (p, margin, reduction, self.ndim == 1))
    return _multi_margin_reference(x, y.reshape(n), weight, p, margin, reduction,
                                   self.ndim == 1)


def _multi_margin_reference(x, y, weight, p, margin, reduction, squeeze):
    """multi_margin_loss op by op on x (N, C), y (N,)."""
    c = x.shape[1]
    y = y.unsqueeze(1)
    z = E.clamp_min(x - E.gather(x, 1, y) + margin, 0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * E.take_along_dim(weight, y.reshape(-1)).unsqueeze(1)
    # the target class itself does not count (its term would be max(0, margin)^p)
    not_target = E.arange(c, device=x.device).unsqueeze(0) != y
    loss = E.where(not_target, z, 0.0).sum(1) / c
    return _reduce(loss.squeeze(0) if squeeze else loss, reduction)


@composite("multilabel_margin_loss")
def _multilabel_margin_loss(self, target, reduction):
    op = "multilabel_margin_loss"
    _check_reduction(op, reduction)
    _check_input(op, self)
    _check_integral(op, target)
    if tuple(target.shape) != tuple(self.shape):
        raise ShapeError(f"{op}: inconsistent target size: expected input's shape "
                         f"{_shape(self)} (the target classes, ended by -1), got "
                         f"{_shape(target)}")
    x = self if self.ndim == 2 else self.unsqueeze(0)
    t = target.reshape(tuple(x.shape)).to(E.int64)
    return _fused.run(op, _multilabel_margin_reference, multilabel_margin_forward,
                      multilabel_margin_backward, (x, t), (reduction, self.ndim == 1))


def _multilabel_margin_reference(x, t, reduction, squeeze):
    """multilabel_margin_loss op by op on x (N, C), t (N, C)."""
    op = "multilabel_margin_loss"
    n, c = x.shape
    # the targets of a row are its entries before the first -1
    valid = (t == -1).to(E.int64).cumsum(1) == 0
    if bool((valid & ((t < 0) | (t >= c))).any()):
        raise IndexError(f"{op}: target out of range: the class indices before the first "
                         f"-1 must be in [0, {c})")
    # NOTE: only the first K columns can hold targets (K = the longest list), so the
    # hinge tensor is (N, K, C), not (N, C, C): 1.7 s -> ms at 1000 x 1000 with 4 labels
    k = int(valid.sum(1).max()) if n else 0
    t, valid = t[:, :k], valid[:, :k]
    safe = E.where(valid, t, 0)
    is_target = E.zeros((n, c), dtype=x.dtype, device=x.device) \
        .scatter_add(1, safe, valid.to(x.dtype)) > 0
    x_target = E.gather(x, 1, safe)                                   # (N, K)
    hinge = E.clamp_min(1 - x_target.unsqueeze(2) + x.unsqueeze(1), 0)  # (N, K, C)
    # NOTE: a class listed twice counts twice, as PyTorch
    keep = valid.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = E.where(keep, hinge, 0.0).sum((1, 2)) / c
    return _reduce(loss.squeeze(0) if squeeze else loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """Multi-class hinge loss: for each sample, sum over classes i != y of
    ``weight[y] * max(0, margin - x[y] + x[i])^p``, divided by C.

    input ``(N, C)`` or ``(C,)`` floating; target ``(N,)`` or ``()`` class indices in
    [0, C); weight ``(C,)`` or None. 'none' gives ``(N,)`` (``()`` unbatched).
    Raises ValueError for p not 1 or 2 or a bad reduction, ShapeError for shapes that do
    not fit, DtypeError for floating targets, IndexError for a class out of range.
    Reference: torch.nn.functional.multi_margin_loss.
    """
    reduction = _reduction(size_average, reduce, reduction)
    return E.multi_margin_loss(input, target, p, margin, weight, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss: for each sample, sum over its target classes j and its
    non-target classes i of ``max(0, 1 - (x[j] - x[i]))``, divided by C.

    input ``(N, C)`` or ``(C,)`` floating; target of input's shape, integral: each row
    lists its target classes first and ends the list at the first -1 (what follows is
    ignored). 'none' gives ``(N,)`` (``()`` unbatched). Raises ShapeError for a target of
    another shape, DtypeError for a floating target, IndexError for a listed class
    outside [0, C), ValueError for a bad reduction.
    Reference: torch.nn.functional.multilabel_margin_loss.
    """
    reduction = _reduction(size_average, reduce, reduction)
    return E.multilabel_margin_loss(input, target, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """One-versus-all logistic loss: ``-(y log sigmoid(x) + (1 - y) log sigmoid(-x))``
    per class, times ``weight`` (broadcast, e.g. ``(C,)``), averaged over the C classes.

    input ``(N, C)`` or ``(C,)`` logits; target of input's shape with entries in {0, 1}
    (floating). 'none' gives ``(N,)`` (``()`` unbatched). Raises ShapeError for a target
    of another shape, ValueError for a bad reduction.
    Reference: torch.nn.functional.multilabel_soft_margin_loss.
    """
    op = "multilabel_soft_margin_loss"
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(op, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ShapeError(f"{op}: expected target of input's shape {_shape(input)}, got "
                         f"{_shape(target)}")
    if weight is None and reduction == "mean" and input.ndim and \
            input.dtype is target.dtype and input.is_floating_point():
        # the mean over N of per-sample means over C: the mean of every element, which
        # is binary_cross_entropy_with_logits' (one fused kernel pair)
        return E.binary_cross_entropy_with_logits(input, target, None, None, "mean")
    loss = -(target * E.log_sigmoid(input) + (1 - target) * E.log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss.sum(-1) / input.shape[-1], reduction)
