"""Loss functions with PyTorch's signatures and reductions (``torch.nn.functional``).

Each loss is a composite op (``native_functions.yaml``, section ``nn: losses``, with
ATen's names: ``cross_entropy_loss``, ``nll_loss``, ``mse_loss``, ...) built from ember
ops, so autograd differentiates it to any order; the ``F`` functions below add PyTorch's
deprecated ``size_average`` / ``reduce`` arguments and call them. As in PyTorch, the
class-index losses end in the ``nll_loss_forward`` kernel (``backends/kernels/loss.py``),
one autograd node instead of gather, mean and neg; only a ``weight`` that requires grad
takes the op-by-op form, which differentiates it.

The common losses run as fused kernel pairs (``backends/kernels/loss_fused.py``, through
``_fused.run``: one forward kernel, one backward node, as PyTorch's native loss kernels):
cross_entropy on (N, C) inputs (log_softmax and nll_loss together, label smoothing and
probability targets included), smooth_l1_loss, binary_cross_entropy and
binary_cross_entropy_with_logits on a target of input's shape and dtype. Their op-by-op
forms (``_ce_reference``...) stay the source of truth: create_graph differentiates them,
and they run while tracing.

Reductions follow PyTorch exactly: 'mean' of a class-index loss divides by the summed
weights of the targets that are not ``ignore_index`` (nan when there are none); 'mean' of
a probability-target cross entropy divides by the number of samples N * d1 * ... .

Choices where PyTorch leaves room: class-index targets may be any integral dtype (PyTorch
takes int64 and uint8 only); ``weight`` of nll_loss / cross_entropy is differentiable
(PyTorch raises when asked for its gradient).
"""
from __future__ import annotations

import warnings

from ember.ops import namespace as E
from ember.errors import DtypeError, ShapeError
from ember.backends.kernels.loss_fused import (bce_backward, bce_forward,
                                               bce_with_logits_backward,
                                               bce_with_logits_forward,
                                               cross_entropy_backward, cross_entropy_forward,
                                               nll_backward, nll_forward,
                                               prob_cross_entropy_backward,
                                               prob_cross_entropy_forward, smooth_l1_backward,
                                               smooth_l1_forward)
from ember.ops.composite import composite

from ember.autograd import kernel_pair as _fused

__all__ = ["cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss",
           "binary_cross_entropy", "binary_cross_entropy_with_logits"]

_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(op: str, reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{op}: reduction must be 'none', 'mean' or 'sum', got {reduction!r}")


def _reduce(loss, reduction: str):
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def _reduction(size_average, reduce, reduction: str) -> str:
    """reduction, or the one PyTorch's deprecated size_average / reduce stand for."""
    if size_average is None and reduce is None:
        return reduction
    # torch.nn._reduction.legacy_get_string, with its warning
    warnings.warn("size_average and reduce are deprecated; use reduction='none', 'mean' or "
                  "'sum' instead", UserWarning, stacklevel=3)
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return ("mean" if size_average else "sum") if reduce else "none"


def _shape(t) -> str:
    return str(tuple(t.shape))


# ---- class-index losses -----------------------------------------------------------------

def _class_dim(op: str, input, weight) -> int:
    """Check a classification input (N, C, ...) or (C,) and its per-class weight; return
    the class dim (1, or 0 for (C,))."""
    if input.ndim == 0:
        raise ShapeError(f"{op}: expected input of shape (N, C), (C,) or (N, C, d1, ...), "
                         f"got a 0-d tensor")
    if not input.is_floating_point():
        raise DtypeError(f"{op}: expected a floating input, got {input.dtype}; convert it "
                         f"first, e.g. input.float()")
    class_dim = 0 if input.ndim == 1 else 1
    n_classes = input.shape[class_dim]
    if weight is not None and tuple(weight.shape) != (n_classes,):
        raise ShapeError(f"{op}: expected weight of shape ({n_classes},) (one per class), got "
                         f"{_shape(weight)}")
    return class_dim


def _check_class_target(op: str, input, target, weight):
    """Validate a class-index loss's arguments; return (class_dim, target), the target as
    int64 unless it is int32 (gather's index dtypes)."""
    class_dim = _class_dim(op, input, weight)
    if target.is_floating_point() or target.dtype is E.bool_:
        raise DtypeError(f"{op}: class-index targets must be integral (int64), got "
                         f"{target.dtype}; use target.long(), or for class probabilities "
                         f"pass a floating target of input's shape to cross_entropy")
    expected = input.shape[:class_dim] + input.shape[class_dim + 1:]
    if tuple(target.shape) != tuple(expected):
        if input.ndim == 2 and target.ndim == 1:
            raise ShapeError(f"{op}: expected input batch_size ({input.shape[0]}) to match "
                             f"target batch_size ({target.shape[0]})")
        raise ShapeError(f"{op}: expected target of shape {tuple(expected)} for input of "
                         f"shape {_shape(input)} (input without its class dim {class_dim}), "
                         f"got {_shape(target)}")
    if target.dtype is not E.int64 and target.dtype is not E.int32:
        target = target.to(E.int64)
    return class_dim, target


def _per_class(weight, ndim: int, class_dim: int):
    """weight (C,) viewed to broadcast along the class dim of an ndim-d input."""
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return weight.view(shape)


def _out_of_bounds(op: str, target, n_classes: int, ignore_index: int):
    """The IndexError naming the first target out of range (None if there is none)."""
    bad = next((v for v in target.flatten().tolist()
                if v != ignore_index and not 0 <= v < n_classes), None)
    if bad is None:
        return None
    return IndexError(f"{op}: Target {bad} is out of bounds: class indices must be in "
                      f"[0, {n_classes}) or equal ignore_index ({ignore_index})")


def _picked(op, logp, target, class_dim, ignore_index):
    """logp at each target's class, with ignored targets masked to class 0.

    Returns (picked, keep): picked has target's shape with a class dim of size 1; keep is
    None when nothing is ignored, else a bool mask of the targets that count.
    """
    n_classes = logp.shape[class_dim]
    if not 0 <= ignore_index < n_classes:
        # NOTE: gather raises IndexError for a target outside [0, C), ignore_index
        # included, so the common case (nothing ignored) costs no mask and no range check.
        try:
            return E.gather(logp, class_dim, target.unsqueeze(class_dim)), None
        except IndexError:
            pass
    keep = target != ignore_index
    safe = target.masked_fill(~keep, 0)
    try:
        picked = E.gather(logp, class_dim, safe.unsqueeze(class_dim))
    except IndexError as e:
        raise _out_of_bounds(op, target, n_classes, ignore_index) or e from None
    return picked, keep


def _target_weights(weight, target, keep):
    """weight[target] with ignored targets at 0 (keep itself, a bool mask, if no weight)."""
    if weight is None:
        return keep
    safe = target if keep is None else target.masked_fill(~keep, 0)
    w = E.take_along_dim(weight, safe.flatten()).view(target.shape)
    return w if keep is None else w * keep


def _nll(op, logp, target, weight, reduction, ignore_index, class_dim):
    if weight is None or not weight.requires_grad:   # one kernel node each way
        try:
            return E.nll_loss_forward(logp, target, weight, reduction, ignore_index)[0]
        except IndexError as e:
            raise IndexError(f"{op}: {str(e).removeprefix('nll_loss_forward(): ')}") from None
    # a weight that requires grad: ops autograd differentiates w.r.t. it too
    picked, keep = _picked(op, logp, target, class_dim, ignore_index)
    picked = picked.squeeze(class_dim)
    w = _target_weights(weight, target, keep).to(picked.dtype)
    loss = picked * w
    if reduction == "none":
        return -loss
    if reduction == "sum":
        return -loss.sum()
    return -loss.sum() / w.sum()


@composite("nll_loss")
def _nll_loss(self, target, weight, reduction, ignore_index):
    _check_reduction("nll_loss", reduction)
    class_dim, target = _check_class_target("nll_loss", self, target, weight)
    if _fusable(self, weight) and self.is_contiguous():
        return _fused.run("nll_loss", _nll_reference, nll_forward, nll_backward,
                          (self, target, weight), (reduction, ignore_index))
    return _nll("nll_loss", self, target, weight, reduction, ignore_index, class_dim)


def _nll_reference(self, target, weight, reduction, ignore_index):
    """nll_loss through the nll_loss_forward kernel pair (differentiable to any order)."""
    return _nll("nll_loss", self, target, weight, reduction, ignore_index, 1)


def _smoothing(logp, target, weight, reduction, ignore_index, class_dim):
    """The label-smoothing term of cross entropy, before its factor eps / C (PyTorch's
    cross_entropy_loss_label_smoothing: normalized by the nll term's weights)."""
    if weight is not None:
        logp = logp * _per_class(weight, logp.ndim, class_dim)
    smooth = -logp.sum(class_dim)
    keep = target != ignore_index
    smooth = smooth * keep
    if reduction == "none":
        return smooth
    if reduction == "sum":
        return smooth.sum()
    if weight is None:
        return smooth.sum() / keep.sum()
    return smooth.sum() / _target_weights(weight, target, keep).sum()


def _prob_cross_entropy(logp, target, weight, reduction, label_smoothing, class_dim):
    n_classes = logp.shape[class_dim]
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    prod = logp * target
    if weight is not None:
        prod = prod * _per_class(weight, logp.ndim, class_dim)
    if reduction == "none":
        return -prod.sum(class_dim)
    total = -prod.sum()
    if reduction == "sum":
        return total
    # N * d1 * ...: the number of samples (nan for none, as PyTorch)
    return total / (logp.numel() // n_classes if logp.numel() else float("nan"))


def _ce_reference(self, target, weight, reduction, ignore_index, label_smoothing):
    """Cross entropy with class-index targets, op by op (log_softmax, then nll_loss and
    the smoothing term): differentiable to any order; the fused kernels' reference."""
    class_dim = 0 if self.ndim == 1 else 1
    logp = E.log_softmax(self, class_dim)
    nll = _nll("cross_entropy", logp, target, weight, reduction, ignore_index, class_dim)
    if label_smoothing == 0:
        return nll
    smooth = _smoothing(logp, target, weight, reduction, ignore_index, class_dim)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / self.shape[class_dim])


def _prob_ce_reference(self, target, weight, reduction, label_smoothing):
    """Cross entropy with class-probability targets, op by op."""
    class_dim = 0 if self.ndim == 1 else 1
    logp = E.log_softmax(self, class_dim)
    return _prob_cross_entropy(logp, target, weight, reduction, label_smoothing, class_dim)


def _fusable(input, *others) -> bool:
    """True when the fused kernels apply: a 2-D (N, C) input, and the other Tensors
    (weight, probabilities) of its dtype (no promotion) and not requiring grad (the op-by-op
    form differentiates those)."""
    return input.ndim == 2 and all(t is None or (t.dtype is input.dtype and not t.requires_grad)
                                   for t in others)


@composite("cross_entropy_loss")
def _cross_entropy_loss(self, target, weight, reduction, ignore_index, label_smoothing):
    op = "cross_entropy"
    _check_reduction(op, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{op}: label_smoothing must be in [0, 1], got {label_smoothing}")
    if target.is_floating_point() and tuple(target.shape) == tuple(self.shape):
        if ignore_index >= 0:
            raise ValueError(f"{op}: ignore_index ({ignore_index}) is not supported for "
                             f"class-probability (floating) targets; leave it at -100")
        _class_dim(op, self, weight)
        if _fusable(self, target, weight):
            return _fused.run("cross_entropy_loss", _prob_ce_reference,
                              prob_cross_entropy_forward, prob_cross_entropy_backward,
                              (self, target, weight), (reduction, label_smoothing))
        return _prob_ce_reference(self, target, weight, reduction, label_smoothing)
    if target.is_floating_point():
        raise ShapeError(f"{op}: a floating target holds class probabilities and must have "
                         f"input's shape {_shape(self)}, got {_shape(target)}; for class "
                         f"indices pass an integral target (target.long())")
    _, target = _check_class_target(op, self, target, weight)
    if _fusable(self, weight):
        return _fused.run("cross_entropy_loss", _ce_reference, cross_entropy_forward,
                          cross_entropy_backward, (self, target, weight),
                          (reduction, ignore_index, label_smoothing))
    return _ce_reference(self, target, weight, reduction, ignore_index, label_smoothing)


# ---- regression losses ------------------------------------------------------------------

def _warn_broadcast(op: str, input, target) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"{op}: target shape {_shape(target)} differs from input shape "
                      f"{_shape(input)}; they broadcast, which is likely not what you want. "
                      f"Make their shapes equal", UserWarning, stacklevel=5)


def _weighted(op, loss, input, weight, reduction):
    if weight is None:
        return _reduce(loss, reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise ShapeError(f"{op}: expected weight of input's shape {_shape(input)}, got "
                         f"{_shape(weight)}")
    loss = loss * weight
    return loss.sum() / weight.sum() if reduction == "mean" else _reduce(loss, reduction)


@composite("mse_loss")
def _mse_loss(self, target, reduction, weight):
    _check_reduction("mse_loss", reduction)
    _warn_broadcast("mse_loss", self, target)
    diff = self - target
    return _weighted("mse_loss", diff * diff, self, weight, reduction)


@composite("l1_loss")
def _l1_loss(self, target, reduction, weight):
    _check_reduction("l1_loss", reduction)
    _warn_broadcast("l1_loss", self, target)
    return _weighted("l1_loss", (self - target).abs(), self, weight, reduction)


@composite("smooth_l1_loss")
def _smooth_l1_loss(self, target, reduction, beta):
    _check_reduction("smooth_l1_loss", reduction)
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be >= 0, got {beta}")
    _warn_broadcast("smooth_l1_loss", self, target)
    if beta == 0:  # the quadratic zone is empty (and 0.5 / beta would divide by zero)
        return _reduce((self - target).abs(), reduction)
    if _same_floats(self, target):
        return _fused.run("smooth_l1_loss", _smooth_l1_reference, smooth_l1_forward,
                          smooth_l1_backward, (self, target), (reduction, beta, 1.0))
    return _smooth_l1_reference(self, target, reduction, beta, 1.0)


def _smooth_l1_reference(self, target, reduction, beta, scale):
    """smooth_l1_loss (scale 1) or huber_loss (beta = delta = scale), op by op."""
    diff = self - target
    dist = diff.abs()
    if scale == 1:
        loss = E.where(dist < beta, diff * diff * (0.5 / beta), dist - 0.5 * beta)
    else:
        loss = E.where(dist < beta, diff * diff * 0.5, (dist - 0.5 * beta) * scale)
    return _reduce(loss, reduction)


def _broadcasts_to(t, input) -> bool:
    """True when t broadcasts to input's shape without enlarging it."""
    return t.ndim <= input.ndim and all(
        a in (1, b) for a, b in zip(reversed(tuple(t.shape)), reversed(tuple(input.shape))))


def _same_floats(input, target) -> bool:
    """True when a pointwise fused kernel applies: one shape, one floating dtype."""
    return input.dtype is target.dtype and input.is_floating_point() and \
        tuple(input.shape) == tuple(target.shape)


# ---- binary losses ----------------------------------------------------------------------

def _check_same_shape(op: str, input, target) -> None:
    if tuple(target.shape) != tuple(input.shape):
        raise ShapeError(f"{op}: expected target of input's shape {_shape(input)}, got "
                         f"{_shape(target)}; reshape it (e.g. target.view_as(input))")


def _log_clamped(p):
    # log(p) clamped to >= -100 as PyTorch; where(p > 0, p, 1) keeps log's gradient (1/p)
    # finite at p = 0, where the clamp zeroes it anyway.
    pos = p > 0
    return E.where(pos, E.log(E.where(pos, p, 1.0)), -100.0).clamp_min(-100.0)


@composite("binary_cross_entropy")
def _binary_cross_entropy(self, target, weight, reduction):
    op = "binary_cross_entropy"
    _check_reduction(op, reduction)
    _check_same_shape(op, self, target)
    data = self._data
    if not bool(((data >= 0) & (data <= 1)).all()):
        raise ValueError(f"{op}: all elements of input must be probabilities in [0, 1]; "
                         f"for logits use binary_cross_entropy_with_logits")
    if _same_floats(self, target) and not target.requires_grad and (
            weight is None or (not weight.requires_grad and weight.dtype is self.dtype and
                               _broadcasts_to(weight, self))):
        return _fused.run(op, _bce_reference, bce_forward, bce_backward,
                          (self, target, weight), (reduction,))
    return _bce_reference(self, target, weight, reduction)


def _bce_reference(self, target, weight, reduction):
    """binary_cross_entropy op by op."""
    loss = -(target * _log_clamped(self) + (1 - target) * _log_clamped(1 - self))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@composite("binary_cross_entropy_with_logits")
def _binary_cross_entropy_with_logits(self, target, weight, pos_weight, reduction):
    op = "binary_cross_entropy_with_logits"
    _check_reduction(op, reduction)
    _check_same_shape(op, self, target)
    if weight is None and _same_floats(self, target) and not target.requires_grad and (
            pos_weight is None or (not pos_weight.requires_grad and
                                   pos_weight.dtype is self.dtype and
                                   _broadcasts_to(pos_weight, self))):
        return _fused.run(op, _bce_logits_unweighted, bce_with_logits_forward,
                          bce_with_logits_backward, (self, target, pos_weight), (reduction,))
    return _bce_logits_reference(self, target, weight, pos_weight, reduction)


def _bce_logits_unweighted(self, target, pos_weight, reduction):
    """The fused kernels' reference: no weight."""
    return _bce_logits_reference(self, target, None, pos_weight, reduction)


def _bce_logits_reference(self, target, weight, pos_weight, reduction):
    """binary_cross_entropy_with_logits op by op."""
    # log(sigmoid(x)) = -log(exp(0) + exp(-x)): stable for any x, with the exact gradient
    # sigmoid(-x) at x = 0 (min(x, 0) - log1p(exp(-|x|)) gets 0 there from its kinks).
    log_sigmoid = -E.logsumexp(E.stack([E.zeros_like(self), -self]), 0)
    if pos_weight is None:
        loss = (1 - target) * self - log_sigmoid
    else:
        loss = (1 - target) * self - (1 + (pos_weight - 1) * target) * log_sigmoid
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# ---- torch.nn.functional fronts ---------------------------------------------------------

def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """Cross entropy between logits ``input`` and class indices or class probabilities.

    input: (N, C), (C,) or (N, C, d1, ...) floating logits. target: class indices of
    shape (N,), () or (N, d1, ...) (integral, in [0, C) or ignore_index), or class
    probabilities of input's shape (floating). weight: (C,) per-class rescaling or None.
    Equals nll_loss(log_softmax(input, class_dim), target, ...) for indices and
    -sum_c weight_c * target_c * log_softmax(input)_c for probabilities; label_smoothing
    in [0, 1] mixes targets with the uniform distribution. reduction: 'none' (target's
    shape without the class dim), 'mean' (weighted mean over non-ignored targets; per
    sample for probabilities) or 'sum'. size_average / reduce are deprecated.

    Raises ShapeError for shapes that do not fit, DtypeError for a non-integral index
    target or a non-floating input, IndexError for a class index out of range, ValueError
    for a bad reduction or label_smoothing. Reference: torch.nn.functional.cross_entropy.
    """
    reduction = _reduction(size_average, reduce, reduction)
    return E.cross_entropy_loss(input, target, weight, reduction, ignore_index,
                                label_smoothing)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log-likelihood: -weight[t] * input[i, t] for log-probabilities ``input``.

    Shapes, dtypes, reductions and errors as cross_entropy with class-index targets.
    Reference: torch.nn.functional.nll_loss.
    """
    reduction = _reduction(size_average, reduce, reduction)
    return E.nll_loss(input, target, weight, reduction, ignore_index)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """(input - target)^2 elementwise, reduced; input and target broadcast (with a
    UserWarning if their shapes differ). weight, of input's shape, multiplies each term;
    'mean' then divides by weight.sum(). Floating dtypes.

    Raises ShapeError for shapes that do not broadcast or a weight of another shape,
    ValueError for a bad reduction. Reference: torch.nn.functional.mse_loss.
    """
    reduction = _reduction(size_average, reduce, reduction)
    return E.mse_loss(input, target, reduction, weight)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """|input - target| elementwise, reduced; shapes, weight and errors as mse_loss.

    Reference: torch.nn.functional.l1_loss.
    """
    reduction = _reduction(size_average, reduce, reduction)
    return E.l1_loss(input, target, reduction, weight)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean",
                   beta=1.0):
    """0.5 d^2 / beta where d = |input - target| < beta, else d - 0.5 beta; reduced.

    Shapes as mse_loss; beta = 0 gives l1_loss. Raises ValueError for beta < 0 or a bad
    reduction. Reference: torch.nn.functional.smooth_l1_loss.
    """
    reduction = _reduction(size_average, reduce, reduction)
    return E.smooth_l1_loss(input, target, reduction, beta)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-weight * (target * log(input) + (1 - target) * log(1 - input)), logs clamped to
    >= -100. input: probabilities in [0, 1], any shape (floating); target: input's shape;
    weight broadcasts to it.

    Raises ShapeError for a target of another shape, ValueError for input outside [0, 1]
    or a bad reduction. Reference: torch.nn.functional.binary_cross_entropy.
    """
    reduction = _reduction(size_average, reduce, reduction)
    return E.binary_cross_entropy(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    """binary_cross_entropy(sigmoid(input), target) computed stably from logits.

    input: logits of any shape (floating); target: input's shape, in [0, 1]; weight
    broadcasts to it; pos_weight (e.g. (C,) for (N, C) inputs) multiplies the positive
    term target * log(sigmoid(input)). Raises ShapeError for a target of another shape,
    ValueError for a bad reduction.
    Reference: torch.nn.functional.binary_cross_entropy_with_logits.
    """
    reduction = _reduction(size_average, reduce, reduction)
    return E.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)
