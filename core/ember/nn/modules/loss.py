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
           "BCEWithLogitsLoss", "HuberLoss", "KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss",
           "MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss", "CosineEmbeddingLoss",
           "TripletMarginLoss", "TripletMarginWithDistanceLoss", "MultiMarginLoss",
           "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "CTCLoss"]


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


class HuberLoss(_Loss):
    """Huber loss ``0.5 d^2`` where ``d = |x - y| < delta``, else ``delta (d - 0.5 delta)``,
    over input and target of the same shape (floating). ValueError for delta <= 0 at
    forward. Reference: torch.nn.HuberLoss (Huber, 1964)."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    """KL divergence of ``target`` from log-probabilities ``input`` (any shape, floating);
    ``log_target=True`` takes target as log-probabilities too. ``reduction='batchmean'``
    divides the sum by the batch size (the KL divergence); 'mean' warns as in PyTorch.
    Reference: torch.nn.KLDivLoss."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 log_target: bool = False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class PoissonNLLLoss(_Loss):
    """Poisson negative log-likelihood of ``target`` given rates ``input`` (log-rates when
    ``log_input``); ``full`` adds Stirling's term. Any shape, floating.
    Reference: torch.nn.PoissonNLLLoss."""

    def __init__(self, log_input: bool = True, full: bool = False, size_average=None,
                 eps: float = 1e-8, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                  eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log-likelihood of ``target`` given means ``input`` ``(N, *)`` and
    variances ``var`` (input's shape, or one dim of size 1 / missing last dim); var is
    clamped to >= eps in value. Raises ValueError for negative var, ShapeError for its
    shape, at forward. Reference: torch.nn.GaussianNLLLoss (Nix & Weigend, 1994)."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
        super().__init__(reduction=reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                   reduction=self.reduction)


class MarginRankingLoss(_Loss):
    """``max(0, -y (x1 - x2) + margin)`` for inputs ``(N,)`` or ``()`` and labels y = +-1
    of the same rank. Reference: torch.nn.MarginRankingLoss."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None,
                 reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                     reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """``x`` where y = 1, ``max(0, margin - x)`` where y = -1; any shape.
    Reference: torch.nn.HingeEmbeddingLoss."""

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None,
                 reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin,
                                      reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """Logistic loss ``log(1 + exp(-y x))`` of labels y = +-1, computed without overflow;
    any shape, floating. Reference: torch.nn.SoftMarginLoss."""

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """``1 - cos(x1, x2)`` where y = 1, ``max(0, cos(x1, x2) - margin)`` where y = -1, for
    inputs ``(N, D)`` with labels ``(N,)`` or ``(D,)`` with a 0-d label.
    Reference: torch.nn.CosineEmbeddingLoss."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None,
                 reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                       reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """``max(0, d(a, p) - d(a, n) + margin)`` with d the p-norm pairwise distance, for
    anchor, positive, negative ``(N, D)`` or ``(D,)``; ``swap`` uses the harder of
    ``d(a, n)`` and ``d(p, n)``. Raises ValueError for margin <= 0 at construction.
    Reference: torch.nn.TripletMarginLoss (Balntas et al., 2016)."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: margin must be greater than 0, got {margin}")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p,
                                     eps=self.eps, swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """``max(0, d(a, p) - d(a, n) + margin)`` for any callable distance ``d`` (default
    ``pairwise_distance``); ``swap`` uses the harder of ``d(a, n)`` and ``d(p, n)``.
    Raises ValueError for margin <= 0 at construction.
    Reference: torch.nn.TripletMarginWithDistanceLoss."""

    def __init__(self, *, distance_function=None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean"):
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin}")
        self.distance_function = distance_function
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge ``sum_{i != y} w[y] max(0, margin - x[y] + x[i])^p / C`` for
    input ``(N, C)`` / ``(C,)`` and class indices ``(N,)`` / ``()``; ``weight`` ``(C,)``
    is a buffer. Raises ValueError for p not 1 or 2, or a weight that is not 1-D, at
    construction. Reference: torch.nn.MultiMarginLoss."""

    def __init__(self, p: int = 1, margin: float = 1.0, weight=None, size_average=None,
                 reduce=None, reduction: str = "mean"):
        if p not in (1, 2):
            raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 are supported, got {p}")
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: expected a 1-D weight (one per class), got "
                             f"shape {tuple(weight.shape)}")
        super().__init__(weight, size_average, reduce, reduction)
        self.p = p
        self.margin = margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                   weight=self.weight, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge between every target class and every other class, for input
    ``(N, C)`` / ``(C,)`` and a target of its shape listing the classes up to the first
    -1. Reference: torch.nn.MultiLabelMarginLoss."""

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """One-versus-all logistic loss averaged over the C classes, for logits ``(N, C)`` and
    0/1 targets of the same shape; ``weight`` ``(C,)`` (a buffer) scales each class.
    Reference: torch.nn.MultiLabelSoftMarginLoss."""

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                             reduction=self.reduction)


class CTCLoss(_Loss):
    """Connectionist temporal classification loss of log-probabilities ``(T, N, C)`` /
    ``(T, C)`` against padded ``(N, S)`` or concatenated targets, with per-sequence
    input and target lengths; ``blank`` is the blank class, ``zero_infinity`` zeroes
    impossible alignments. Reference: torch.nn.CTCLoss (Graves et al., 2006)."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)
