"""Loss kernels: nll_loss_forward and nll_loss_backward, PyTorch's ATen pair.

As in PyTorch, ``cross_entropy`` with class-index targets is ``log_softmax`` followed by
``nll_loss``, and ``nll_loss`` is one kernel each way instead of a chain of ops (gather,
mean, neg forward; their three backward nodes). Both kernels address the picked
log-probabilities by flat position: for ``self`` (N, C, *D) and target (N, *D) the element
``self[n, t, d]`` is at ``(n * C + t) * D + d``, so the forward is one ``take`` and the
backward one indexed store into zeros (each position is written once: no scatter-add).

Targets are checked in one pass: seen as unsigned integers, a negative target is huge, so
``t >= C`` finds every target outside ``[0, C)``. Only when one is found (or
``ignore_index`` is itself a class) is the mask of targets that count built.

float16/bfloat16 compute in float32 and round once; their ``total_weight`` stays float32
(a float16 count of more than 65504 targets would be inf). Works for numpy and CuPy (whose
IndexError check costs one device-to-host sync, as gather's does).
Reference: ``aten/src/ATen/native/LossNLL.cpp`` (nll_loss_forward_out_cpu_template).
"""
from __future__ import annotations

import math

import numpy as np

from ...errors import DtypeError, ShapeError
from .pointwise import INTEGRAL
from .reduction import LOW_FLOATS

_REDUCTIONS = ("none", "mean", "sum")
_UNSIGNED = {n: np.dtype(f"u{n}") for n in (1, 2, 4, 8)}


def _geometry(op: str, shape, target, weight, reduction: str):
    """Check a call; return (class_axis, C, D): self is (N, C, *D) or (C,)."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{op}(): reduction must be 'none', 'mean' or 'sum', got "
                         f"{reduction!r}")
    if len(shape) == 0:
        raise ShapeError(f"{op}(): expected self of shape (N, C), (C,) or (N, C, d1, ...), "
                         f"got a 0-d array")
    axis = 0 if len(shape) == 1 else 1
    want = tuple(shape[:axis]) + tuple(shape[axis + 1:])
    if tuple(target.shape) != want:
        raise ShapeError(f"{op}(): expected target of shape {want} (self {tuple(shape)} "
                         f"without its class dim {axis}), got {tuple(target.shape)}")
    if target.dtype.kind not in "iu":
        raise DtypeError(f"{op}(): class-index targets must be integral (int64), got "
                         f"{target.dtype}; use target.long()")
    n_classes = shape[axis]
    if weight is not None and tuple(weight.shape) != (n_classes,):
        raise ShapeError(f"{op}(): expected weight of shape ({n_classes},) (one per class), "
                         f"got {tuple(weight.shape)}")
    return axis, n_classes, math.prod(shape[axis + 1:])


def class_targets(xp, op: str, t, n_classes: int, ignore_index: int):
    """(safe, keep): the class targets ``t`` (N, *) with ignored ones replaced by class 0,
    and the bool mask of those that count (None when all do). Raises IndexError naming the
    first target outside [0, C) that is not ignore_index. NOTE: seen as unsigned, a
    negative target is huge, so one compare finds every target out of range."""
    unsigned = t if t.dtype.kind == "u" else t.view(_UNSIGNED[t.dtype.itemsize])
    outside = unsigned >= n_classes
    if not 0 <= ignore_index < n_classes and not bool(outside.any()):
        return t, None          # the common case: one compare, one reduction
    keep = t != ignore_index
    bad = t[outside & keep]
    if bad.size:
        raise IndexError(f"{op}(): Target {int(bad.reshape(-1)[0])} is out of bounds: "
                         f"class indices must be in [0, {n_classes}) or equal "
                         f"ignore_index ({ignore_index})")
    return xp.where(keep, t, 0), keep


def kernels(xp) -> dict:
    """The loss kernels for array namespace ``xp``."""

    def flat_positions(shape, axis, n_classes, depth, t):
        """The flat position in self (N, C, *D) of each target's element, target's shape."""
        if axis == 0:
            return t
        n = shape[0]
        rows = xp.arange(0, n * n_classes * depth, n_classes * depth, dtype=xp.int64)
        if t.ndim == 1:              # (N, C): one target per row
            return rows + t
        pos = rows[:, None] + t.reshape(n, depth) * depth + xp.arange(depth, dtype=xp.int64)
        return pos.reshape(t.shape)

    def counted(values, keep):
        """values with the ignored targets' entries at +0 (never NaN from -inf * 0)."""
        return values if keep is None else xp.where(keep, values, 0)

    def target_weights(weight, safe, ct):
        """weight[t] for each target in the compute dtype (None without a weight)."""
        return None if weight is None else weight.astype(ct, copy=False).take(safe)

    def nll_loss_forward(a, target, weight, reduction, ignore_index):
        op = "nll_loss_forward"
        axis, n_classes, depth = _geometry(op, a.shape, target, weight, reduction)
        ct = xp.float32 if a.dtype in LOW_FLOATS else a.dtype
        safe, keep = class_targets(xp, op, target, n_classes, ignore_index)
        pos = flat_positions(a.shape, axis, n_classes, depth, safe)
        loss = -a.reshape(-1).take(pos.reshape(-1)).reshape(target.shape)
        if loss.dtype != ct:
            loss = loss.astype(ct)
        w = target_weights(weight, safe, ct)
        if w is not None:
            loss = loss * w
        loss = counted(loss, keep)
        if w is not None:       # the summed weights of the targets that count, or their number
            total = counted(w, keep).sum()
        else:
            total = xp.asarray(target.size if keep is None else keep.sum(), dtype=ct)
        if reduction == "sum":
            loss = loss.sum()
        elif reduction == "mean":
            if weight is None and keep is None and target.size:
                loss = loss.sum() / target.size
            else:
                with np.errstate(invalid="ignore", divide="ignore"):  # nothing counts: nan
                    loss = loss.sum() / total
        return loss.astype(a.dtype, copy=False), total

    def nll_loss_backward(grad_output, a, target, weight, reduction, ignore_index,
                          total_weight):
        op = "nll_loss_backward"
        axis, n_classes, depth = _geometry(op, a.shape, target, weight, reduction)
        want = tuple(target.shape) if reduction == "none" else ()
        if tuple(grad_output.shape) != want:
            raise ShapeError(f"{op}(): expected grad_output of shape {want} for reduction "
                             f"{reduction!r}, got {tuple(grad_output.shape)}")
        ct = xp.float32 if a.dtype in LOW_FLOATS else a.dtype
        safe, keep = class_targets(xp, op, target, n_classes, ignore_index)
        coef = -grad_output.astype(ct, copy=False)
        if reduction == "mean":
            if weight is None and keep is None and target.size:
                coef = coef / target.size       # total_weight is the count: never 0
            else:
                with np.errstate(invalid="ignore", divide="ignore"):
                    coef = coef / total_weight.astype(ct, copy=False)
        w = target_weights(weight, safe, ct)
        if w is not None:
            coef = coef * w
        coef = counted(coef, keep)
        grad = xp.zeros(a.shape, dtype=a.dtype)
        grad.reshape(-1)[flat_positions(a.shape, axis, n_classes, depth, safe)] = coef
        return grad

    return {"nll_loss_forward": nll_loss_forward, "nll_loss_backward": nll_loss_backward}


# class-index losses take log-probabilities: floating inputs only
UNSUPPORTED = {"nll_loss_forward": INTEGRAL, "nll_loss_backward": INTEGRAL}
