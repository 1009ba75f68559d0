"""Margin and embedding losses with PyTorch's signatures (``torch.nn.functional``):
margin_ranking_loss, hinge_embedding_loss, soft_margin_loss, cosine_embedding_loss and
triplet_margin_loss.

Each is a composite op (``native_functions.yaml``, section ``nn: losses``) built from
ember ops, so autograd differentiates it to any order; the ``F`` functions add PyTorch's
deprecated ``size_average`` / ``reduce``. soft_margin_loss runs as a fused kernel pair
(``backends/kernels/loss_fused.py``) whose op-by-op form is its create_graph reference.
Targets are +1 / -1 labels (floating or integral); inputs and targets broadcast as in
PyTorch. Reductions are 'none', 'mean' (over all elements) or 'sum'. Hinges are
``clamp_min(., 0)``, whose gradient at 0 is the one PyTorch's clamp_min gives.

Choices where PyTorch leaves room: ``soft_margin_loss`` is log(1 + exp(-y x)) computed
without overflow (PyTorch's float32 gives inf from y x < -89 on).
"""
from __future__ import annotations

from ember.ops import namespace as E
from ember.errors import ShapeError
from ember.backends.kernels.loss_fused import (soft_margin_backward, soft_margin_forward,
                                               triplet_backward, triplet_forward)
from ember.ops.composite import composite

from ember.autograd import kernel_pair as _fused
from .distance import _pairwise_distance
from .loss import _check_reduction, _reduce, _reduction, _same_floats, _shape

__all__ = ["margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
           "cosine_embedding_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss"]


@composite("margin_ranking_loss")
def _margin_ranking_loss(input1, input2, target, margin, reduction):
    op = "margin_ranking_loss"
    _check_reduction(op, reduction)
    if not input1.ndim == input2.ndim == target.ndim:
        raise ShapeError(f"{op}: expected input1, input2 and target with the same number of "
                         f"dims, got shapes {_shape(input1)}, {_shape(input2)} and "
                         f"{_shape(target)}")
    return _reduce(E.clamp_min(-target * (input1 - input2) + margin, 0), reduction)


@composite("hinge_embedding_loss")
def _hinge_embedding_loss(self, target, margin, reduction):
    _check_reduction("hinge_embedding_loss", reduction)
    # as ATen: the margin term where target != 1, the input where target != -1 (so a
    # target that is neither gets both)
    hinge = E.where(target != 1, E.clamp_min(margin - self, 0), 0.0)
    return _reduce(hinge + E.where(target != -1, self, 0.0), reduction)


@composite("soft_margin_loss")
def _soft_margin_loss(self, target, reduction):
    _check_reduction("soft_margin_loss", reduction)
    if _same_floats(self, target) and not target.requires_grad:
        return _fused.run("soft_margin_loss", _soft_margin_reference, soft_margin_forward,
                          soft_margin_backward, (self, target), (reduction,))
    return _soft_margin_reference(self, target, reduction)


def _soft_margin_reference(self, target, reduction):
    """soft_margin_loss op by op: log(1 + exp(z)) = -log_sigmoid(-z), no overflow."""
    return _reduce(-E.log_sigmoid(target * self), reduction)


_COSINE_EPS = 1e-12   # ATen's EPSILON in cosine_embedding_loss


@composite("cosine_embedding_loss")
def _cosine_embedding_loss(input1, input2, target, margin, reduction):
    op = "cosine_embedding_loss"
    _check_reduction(op, reduction)
    if target.ndim > 1:
        raise ShapeError(f"{op}: expected a 0-d or 1-D target (one +1/-1 label per pair), "
                         f"got shape {_shape(target)}; multi-target is not supported")
    want = target.ndim + 1
    if input1.ndim != want or input2.ndim != want:
        raise ShapeError(f"{op}: a {target.ndim}-D target expects {want}-D inputs, got "
                         f"input1 {_shape(input1)} and input2 {_shape(input2)}")
    dim = target.ndim
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + _COSINE_EPS
    mag2 = (input2 * input2).sum(dim) + _COSINE_EPS
    cos = prod / E.sqrt(mag1 * mag2)
    loss = E.where(target == 1, 1 - cos, 0.0) + \
        E.where(target == -1, E.clamp_min(cos - margin, 0), 0.0)
    return _reduce(loss, reduction)


@composite("triplet_margin_loss")
def _triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction):
    op = "triplet_margin_loss"
    _check_reduction(op, reduction)
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise ShapeError(f"{op}: expected anchor, positive and negative with the same number "
                         f"of dims, got {anchor.ndim}-D {_shape(anchor)}, {positive.ndim}-D "
                         f"{_shape(positive)} and {negative.ndim}-D {_shape(negative)}")
    if p == 2 and not swap and anchor.ndim == 2 and \
            _same_floats(anchor, positive) and _same_floats(anchor, negative):
        return _fused.run(op, _triplet_p2_reference, triplet_forward, triplet_backward,
                          (anchor, positive, negative), (margin, eps, reduction))
    return _triplet_reference(anchor, positive, negative, margin, p, eps, swap, reduction)


def _triplet_p2_reference(anchor, positive, negative, margin, eps, reduction):
    """The fused kernels' reference: p = 2, no swap."""
    return _triplet_reference(anchor, positive, negative, margin, 2, eps, False, reduction)


def _triplet_reference(anchor, positive, negative, margin, p, eps, swap, reduction):
    """triplet_margin_loss op by op."""
    d_pos = _pairwise_distance(anchor, positive, p, eps, False)
    d_neg = _pairwise_distance(anchor, negative, p, eps, False)
    if swap:  # the harder of the two negatives (Balntas et al., 2016)
        d_neg = E.minimum(d_neg, _pairwise_distance(positive, negative, p, eps, False))
    return _reduce(E.clamp_min(d_pos - d_neg + margin, 0), reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, -target * (input1 - input2) + margin): target 1 ranks input1 higher, -1
    input2. input1, input2 and target (e.g. (N,)) need the same number of dims and
    broadcast. Raises ShapeError for differing ranks, ValueError for a bad reduction.
    Reference: torch.nn.functional.margin_ranking_loss.
    """
    reduction = _reduction(size_average, reduce, reduction)
    return E.margin_ranking_loss(input1, input2, target, margin, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """input where target == 1, max(0, margin - input) where target == -1 (input is
    usually a distance); any shape, target broadcast to it. Raises ValueError for a bad
    reduction. Reference: torch.nn.functional.hinge_embedding_loss.
    """
    reduction = _reduction(size_average, reduce, reduction)
    return E.hinge_embedding_loss(input, target, margin, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input)), the logistic loss of +1/-1 labels, computed without
    overflow; any shape, target broadcast to it; floating dtypes. Raises ValueError for a
    bad reduction. Reference: torch.nn.functional.soft_margin_loss.
    """
    reduction = _reduction(size_average, reduce, reduction)
    return E.soft_margin_loss(input, target, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(input1, input2) where target == 1, max(0, cos - margin) where target == -1
    (0 otherwise); cos along the last dim with 1e-12 added to each squared norm.

    input1, input2: (N, D) with target (N,), or (D,) with a 0-d target; they broadcast.
    Raises ShapeError for other ranks, ValueError for a bad reduction.
    Reference: torch.nn.functional.cosine_embedding_loss.
    """
    reduction = _reduction(size_average, reduce, reduction)
    return E.cosine_embedding_loss(input1, input2, target, margin, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(0, d(a, p) - d(a, n) + margin), d = pairwise_distance(., ., p, eps) over the
    last dim; swap uses min(d(a, n), d(p, n)). anchor, positive, negative: (N, D) or (D,)
    (same rank, broadcast) -> (N,) or () before reduction.

    Raises ValueError for margin <= 0 or a bad reduction, ShapeError for differing ranks.
    Reference: torch.nn.functional.triplet_margin_loss (Balntas et al., 2016).
    """
    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"triplet_margin_loss: margin must be greater than 0, got {margin}")
    return E.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """max(0, d(a, p) - d(a, n) + margin) for any distance ``d(x1, x2) -> Tensor`` (default
    ``pairwise_distance``, the 2-norm over the last dim); swap uses min(d(a, n), d(p, n)).

    anchor, positive, negative: tensors of the same rank that ``distance_function`` takes,
    e.g. (N, D) -> (N,) before reduction. A Python function over ember ops, so it
    differentiates through any differentiable distance_function.
    Raises ValueError for margin <= 0 or a bad reduction, ShapeError for differing ranks.
    Reference: torch.nn.functional.triplet_margin_with_distance_loss.
    """
    op = "triplet_margin_with_distance_loss"
    _check_reduction(op, reduction)
    if margin <= 0:
        raise ValueError(f"{op}: margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise ShapeError(f"{op}: the anchor, positive and negative tensors are expected to "
                         f"have the same number of dimensions, got anchor {anchor.ndim}-D, "
                         f"positive {positive.ndim}-D and negative {negative.ndim}-D")
    distance = E.pairwise_distance if distance_function is None else distance_function
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = E.minimum(d_neg, distance(positive, negative))
    return _reduce(E.clamp_min(d_pos - d_neg + margin, 0), reduction)
