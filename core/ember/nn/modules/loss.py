"""Loss layers: modules holding a loss's options and calling ``ember.nn.functional``.

``reduction`` is ``'mean'`` (default), ``'sum'`` or ``'none'``; the deprecated
``size_average``/``reduce`` pair is translated (with a warning) as PyTorch does. Class
weights and ``pos_weight`` are buffers, so ``to()`` moves and converts them and they stay
out of ``parameters()``.
Reference: torch.nn.modules.loss.
"""
from __future__ import annotations

import warnings

from .. import functional as F
from .module import Module

__all__ = ["CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "BCELoss",
           "BCEWithLogitsLoss"]


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            warnings.warn("size_average and reduce args will be deprecated, please use "
                          "reduction='mean', 'sum' or 'none' instead", UserWarning, stacklevel=3)
            size_average = True if size_average is None else size_average
            reduce = True if reduce is None else reduce
            reduction = ("mean" if size_average else "sum") if reduce else "none"
        self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy between logits ``(N, C)`` / ``(N, C, d1, ...)`` / ``(C,)`` and class
    indices (int64, ``(N)`` / ``(N, d1, ...)``) or class probabilities (input's shape).

    Args: ``weight`` (per-class, ``(C,)``), ``ignore_index`` (-100), ``reduction``,
    ``label_smoothing`` in [0, 1]. Reference: torch.nn.CrossEntropyLoss.
    """

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of log-probabilities ``(N, C, ...)`` at class indices
    ``(N, ...)``. Args: ``weight``, ``ignore_index``, ``reduction``.
    Reference: torch.nn.NLLLoss."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class MSELoss(_Loss):
    """Mean squared error ``(x - y)^2`` over same-shaped input and target.
    Reference: torch.nn.MSELoss."""

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error ``|x - y|``. Reference: torch.nn.L1Loss."""

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Huber-like loss: ``0.5 (x - y)^2 / beta`` where ``|x - y| < beta``, else
    ``|x - y| - 0.5 beta``. Reference: torch.nn.SmoothL1Loss."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 beta: float = 1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities in [0, 1] against same-shaped targets;
    ``weight`` rescales each element (broadcast). Reference: torch.nn.BCELoss."""

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Sigmoid + binary cross entropy in one stable op, on logits.

    Args: ``weight`` (per element, broadcast), ``reduction``, ``pos_weight`` (per class,
    weights positive examples). Reference: torch.nn.BCEWithLogitsLoss.
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)
