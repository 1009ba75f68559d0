"""Symbolics of the losses: nll_loss, cross_entropy_loss, mse_loss, l1_loss, smooth_l1_loss,
binary_cross_entropy and binary_cross_entropy_with_logits (ember's composite loss ops,
``ember/nn/functional/loss.py``; the ``nn`` loss Modules trace to the same nodes).

ONNX ops: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 13 versions) for
class-index targets, with ``weight``, ``ignore_index`` and the three reductions; the rest
are compositions of Sub / Mul / Abs / Where / Log / Exp / Max / LogSoftmax and
ReduceSum / ReduceMean.

Matching ember:

* Class-index targets arrive as int64 (or int32) tensors; other integral dtypes are cast
  to int64. A ``(C,)`` input with a ``()`` target is unsqueezed to ``(1, C)`` / ``(1,)``
  for the ONNX ops, which need a batch dim.
* ``label_smoothing`` (SoftmaxCrossEntropyLoss has none): the op's second output, the
  log-probabilities, gives the smoothing term -sum_c weight_c * logp_c of each target
  that is not ignored, normalised as the nll term ('mean': by the summed weights of those
  targets), and the two are mixed as (1 - eps) * nll + eps / C * smooth, as ember.
* Class-probability targets (a floating target of input's shape) are composed:
  -sum_c weight_c * target_c * LogSoftmax(input)_c, 'mean' over the N * d1 * ... samples.
* binary_cross_entropy clamps each log at -100 (Max), as ember; ember's check that the
  input lies in [0, 1] is a run-time validation the graph does not repeat.
* binary_cross_entropy_with_logits computes log_sigmoid(x) as ember does, -(max(-x, 0) +
  log(1 + exp(-|x|))): stable both ways, and in float64 too (onnxruntime's Softplus is
  float32 only).
* Dtypes follow ember's arithmetic: the nll term runs in self's dtype (ember casts its
  weights to it); the smoothing term, probability targets and the other losses run in
  the node's result dtype (operands cast to it, as ember's type promotion does).

References: the ONNX operator specs (https://onnx.ai/onnx/operators/:
NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss), PyTorch's
``torch/onnx/symbolic_opset12.py`` (nll_loss, cross_entropy_loss,
binary_cross_entropy_with_logits) and ``symbolic_opset9.py`` (mse_loss, l1 losses) for
the reference mapping.
"""
from __future__ import annotations


from ... import types as _t
from ..registry import builtin

_REDUCTIONS = ("none", "mean", "sum")


# ---- helpers ----------------------------------------------------------------------------

def _check_reduction(g, reduction):
    if reduction not in _REDUCTIONS:
        g.fail(f"reduction must be 'none', 'mean' or 'sum', got {reduction!r}")


def _reduce(g, loss, reduction):
    """ember's ``_reduce``: mean or sum of every element, or the loss itself."""
    if reduction == "mean":
        return g.reduce("ReduceMean", loss, None, False)
    if reduction == "sum":
        return g.reduce("ReduceSum", loss, None, False)
    return loss


def _op(g, op_type, *inputs):
    """An element-wise op whose result has the dtype of its first input."""
    return g.op(op_type, *inputs, dtype=inputs[0].dtype)


def _class_target(g, target):
    """Class indices as the ONNX losses take them (int32 or int64)."""
    return target if target.dtype in (_t.int64, _t.int32) else g.cast(target, _t.int64)


def _batched(g, x, target):
    """A (C,) input and () target as (1, C) and (1,); returns (x, target, was_batched)."""
    if x.rank != 1:
        return x, target, True
    return _unsqueezed(g, x), _unsqueezed(g, target), False


def _unsqueezed(g, v):
    """``v`` with a leading dim of size 1 (sizes kept for later helpers)."""
    out = g.op("Unsqueeze", v, g.ints([0]), dtype=v.dtype)
    if v.sizes is not None:
        out.sizes = (1,) + v.sizes
        out.dynamic = (False,) + (v.dynamic or (False,) * len(v.sizes))
    return out


def _unbatched(g, loss, batched, reduction):
    if batched or reduction != "none":
        return loss
    return g.op("Squeeze", loss, g.ints([0]), dtype=loss.dtype)


def _n_classes(g, x, class_dim, dtype):
    """C as a ``dtype`` scalar (read at run time if it follows a dynamic axis)."""
    if not x.is_dynamic(class_dim):
        return g.scalar(x.sizes[class_dim], dtype=dtype)
    c = g.op("Squeeze", g.shape_of(x, class_dim, class_dim + 1), g.ints([0]), dtype=_t.int64)
    return g.cast(c, dtype)


def _per_class(g, weight, rank, class_dim):
    """weight (C,) shaped to broadcast along the class dim of a rank-``rank`` tensor."""
    trailing = rank - 1 - class_dim
    if not trailing:
        return weight
    return g.op("Unsqueeze", weight, g.ints(list(range(1, 1 + trailing))), dtype=weight.dtype)


# ---- class-index losses -----------------------------------------------------------------

@builtin("ember::nll_loss")
def nll_loss(g, x, target, weight, reduction, ignore_index):
    """NegativeLogLikelihoodLoss: 'mean' divides by the summed weights of the targets that
    are not ignore_index, as ember (nan when all are ignored)."""
    _check_reduction(g, reduction)
    dt = x.dtype
    x, target, batched = _batched(g, x, _class_target(g, target))
    w = None if weight is None else g.cast(weight, dt)
    loss = g.op("NegativeLogLikelihoodLoss", x, target, w, reduction=reduction,
                ignore_index=int(ignore_index), dtype=dt)
    return _unbatched(g, loss, batched, reduction)


def _smoothing(g, logp, target, weight, reduction, ignore_index):
    """ember's smoothing term before its factor eps / C: -sum_c weight_c * logp_c of each
    target that is not ignored, reduced and normalised as the nll term. ``logp`` and
    ``weight`` are in the result dtype (ember promotes logp * weight)."""
    dt = logp.dtype
    if weight is not None:
        logp = _op(g, "Mul", logp, _per_class(g, weight, logp.rank, 1))
    smooth = _op(g, "Neg", g.reduce("ReduceSum", logp, [1], False))
    keep = g.op("Not", g.op("Equal", target, g.scalar(ignore_index, dtype=target.dtype),
                            dtype=_t.bool_), dtype=_t.bool_)
    kept = g.cast(keep, dt)
    smooth = _op(g, "Mul", smooth, kept)       # times the mask, as ember (inf * 0 is nan)
    if reduction == "none":
        return smooth
    total = g.reduce("ReduceSum", smooth, None, False)
    if reduction == "sum":
        return total
    if weight is not None:
        safe = g.op("Where", keep, target, g.scalar(0, dtype=target.dtype), dtype=target.dtype)
        kept = _op(g, "Mul", g.op("Gather", weight, safe, axis=0, dtype=dt), kept)
    return _op(g, "Div", total, g.reduce("ReduceSum", kept, None, False))


def _index_cross_entropy(g, x, target, weight, reduction, ignore_index, label_smoothing):
    """SoftmaxCrossEntropyLoss in self's dtype (ember casts the nll term's weights to it);
    with label smoothing its log-probabilities output gives the smoothing term, computed
    in the result dtype as ember's logp * weight."""
    w = None if weight is None else g.cast(weight, x.dtype)
    if not label_smoothing:
        return g.op("SoftmaxCrossEntropyLoss", x, target, w, reduction=reduction,
                    ignore_index=int(ignore_index), dtype=x.dtype)
    nll, logp = g.op("SoftmaxCrossEntropyLoss", x, target, w, reduction=reduction,
                     ignore_index=int(ignore_index), outputs=2, dtype=x.dtype)
    dt = g.out(0).dtype
    logp.sizes = x.sizes
    logp = g.cast(logp, dt)
    w = None if weight is None else g.cast(weight, dt)
    smooth = _smoothing(g, logp, target, w, reduction, ignore_index)
    eps = float(label_smoothing)
    factor = _op(g, "Div", g.scalar(eps, dtype=dt), _n_classes(g, x, 1, dt))
    nll = _op(g, "Mul", g.cast(nll, dt), g.scalar(1 - eps, dtype=dt))
    return _op(g, "Add", nll, _op(g, "Mul", smooth, factor))


def _prob_cross_entropy(g, x, target, weight, reduction, label_smoothing):
    """-sum_c weight_c * target_c * logp_c per sample; 'mean' over the samples. Operands
    in the result dtype."""
    class_dim = 0 if x.rank == 1 else 1
    dt = g.out(0).dtype
    logp = g.cast(g.op("LogSoftmax", x, axis=class_dim, dtype=x.dtype), dt)
    target = g.cast(target, dt)
    if label_smoothing:
        eps = float(label_smoothing)
        uniform = _op(g, "Div", g.scalar(eps, dtype=dt), _n_classes(g, x, class_dim, dt))
        target = _op(g, "Add", _op(g, "Mul", target, g.scalar(1 - eps, dtype=dt)), uniform)
    prod = _op(g, "Mul", logp, target)
    if weight is not None:
        prod = _op(g, "Mul", prod, _per_class(g, g.cast(weight, dt), x.rank, class_dim))
    if reduction == "sum":
        return _op(g, "Neg", g.reduce("ReduceSum", prod, None, False))
    per_sample = _op(g, "Neg", g.reduce("ReduceSum", prod, [class_dim], False))
    return _reduce(g, per_sample, reduction)


@builtin("ember::cross_entropy_loss")
def cross_entropy_loss(g, x, target, weight, reduction, ignore_index, label_smoothing):
    """Class indices: SoftmaxCrossEntropyLoss (+ a composed label-smoothing term); class
    probabilities (a floating target): LogSoftmax composition."""
    _check_reduction(g, reduction)
    if target.dtype is not None and target.dtype.is_floating_point:
        return _prob_cross_entropy(g, x, target, weight, reduction, label_smoothing)
    x, target, batched = _batched(g, x, _class_target(g, target))
    loss = _index_cross_entropy(g, x, target, weight, reduction, ignore_index, label_smoothing)
    return _unbatched(g, loss, batched, reduction)


# ---- regression losses ------------------------------------------------------------------

def _difference(g, x, target):
    """self - target in the output dtype (they broadcast, as in ember)."""
    dt = g.out(0).dtype
    return _op(g, "Sub", g.cast(x, dt), g.cast(target, dt))


def _weighted(g, loss, weight, reduction):
    """ember's ``_weighted``: loss * weight; 'mean' divides by weight.sum()."""
    if weight is None:
        return _reduce(g, loss, reduction)
    w = g.cast(weight, loss.dtype)
    loss = _op(g, "Mul", loss, w)
    if reduction != "mean":
        return _reduce(g, loss, reduction)
    return _op(g, "Div", g.reduce("ReduceSum", loss, None, False),
               g.reduce("ReduceSum", w, None, False))


@builtin("ember::mse_loss")
def mse_loss(g, x, target, reduction, weight):
    _check_reduction(g, reduction)
    d = _difference(g, x, target)
    return _weighted(g, _op(g, "Mul", d, d), weight, reduction)


@builtin("ember::l1_loss")
def l1_loss(g, x, target, reduction, weight):
    _check_reduction(g, reduction)
    return _weighted(g, _op(g, "Abs", _difference(g, x, target)), weight, reduction)


@builtin("ember::smooth_l1_loss")
def smooth_l1_loss(g, x, target, reduction, beta):
    """Where(|d| < beta, 0.5 d^2 / beta, |d| - 0.5 beta); beta = 0 is the l1 loss."""
    _check_reduction(g, reduction)
    if beta < 0:
        g.fail(f"smooth_l1_loss: beta must be >= 0, got {beta}")
    d = _difference(g, x, target)
    dist = _op(g, "Abs", d)
    if beta == 0:
        return _reduce(g, dist, reduction)
    dt = d.dtype
    quadratic = _op(g, "Mul", _op(g, "Mul", d, d), g.scalar(0.5 / beta, dtype=dt))
    linear = _op(g, "Sub", dist, g.scalar(0.5 * beta, dtype=dt))
    near = g.op("Less", dist, g.scalar(beta, dtype=dt), dtype=_t.bool_)
    return _reduce(g, g.op("Where", near, quadratic, linear, dtype=dt), reduction)


# ---- binary losses ----------------------------------------------------------------------

def _log_clamped(g, p):
    """log(p) clamped to >= -100, as ember (log(0) = -inf becomes -100)."""
    return _op(g, "Max", _op(g, "Log", p), g.scalar(-100.0, dtype=p.dtype))


def _times_weight(g, loss, weight):
    return loss if weight is None else _op(g, "Mul", loss, g.cast(weight, loss.dtype))


@builtin("ember::binary_cross_entropy")
def binary_cross_entropy(g, x, target, weight, reduction):
    """-(t log p + (1 - t) log(1 - p)) with the logs clamped at -100."""
    _check_reduction(g, reduction)
    dt = g.out(0).dtype
    p, t = g.cast(x, dt), g.cast(target, dt)
    one = g.scalar(1.0, dtype=dt)
    pos = _op(g, "Mul", t, _log_clamped(g, p))
    neg = _op(g, "Mul", _op(g, "Sub", one, t), _log_clamped(g, _op(g, "Sub", one, p)))
    loss = _op(g, "Neg", _op(g, "Add", pos, neg))
    return _reduce(g, _times_weight(g, loss, weight), reduction)


def _log_sigmoid(g, x):
    """log(sigmoid(x)) = -(max(-x, 0) + log(1 + exp(-|x|))): ember's -logsumexp([0, -x]),
    the same arithmetic, stable both ways (onnxruntime has Softplus for float32 only)."""
    one = g.scalar(1.0, dtype=x.dtype)
    tail = _op(g, "Log", _op(g, "Add", one, _op(g, "Exp", _op(g, "Neg", _op(g, "Abs", x)))))
    shift = _op(g, "Max", _op(g, "Neg", x), g.scalar(0.0, dtype=x.dtype))
    return _op(g, "Neg", _op(g, "Add", tail, shift))


@builtin("ember::binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(g, x, target, weight, pos_weight, reduction):
    """(1 - t) x - (1 + (pos_weight - 1) t) log_sigmoid(x), times weight."""
    _check_reduction(g, reduction)
    dt = g.out(0).dtype
    x, t = g.cast(x, dt), g.cast(target, dt)
    one = g.scalar(1.0, dtype=dt)
    log_sigmoid = _log_sigmoid(g, x)
    if pos_weight is not None:
        pw = _op(g, "Sub", g.cast(pos_weight, dt), one)
        log_sigmoid = _op(g, "Mul", _op(g, "Add", one, _op(g, "Mul", pw, t)), log_sigmoid)
    loss = _op(g, "Sub", _op(g, "Mul", _op(g, "Sub", one, t), x), log_sigmoid)
    return _reduce(g, _times_weight(g, loss, weight), reduction)
