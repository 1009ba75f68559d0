"""Fused kernel pairs of multi_margin_loss and multilabel_margin_loss (``_fused.run``).

multi_margin_loss, for x (N, C) and targets y (N,): loss_i = sum_{j != y_i} w_{y_i}
max(0, margin - x[i, y_i] + x[i, j])^p / C. multilabel_margin_loss, for x (N, C) and
targets (N, C) listing each row's classes before its first -1: loss_i = sum over listed
k and unlisted j of max(0, 1 - x[i, k] + x[i, j]) / C, over an (N, K, C) hinge with K the
longest list (not (N, C, C)). Both gradients are the derivatives of the composite forms
in ``nn/functional/multilabel_loss.py`` (a hinge at exactly 0 passes its gradient, as
clamp_min's does); the per-target sums go through one batched matmul, not a scatter-add.
float16/bfloat16 compute in float32 and round once; errors are those of a sum of C terms
(a few ulp). Written against ``xp``.
"""
from __future__ import annotations

import numpy as np

from .reduction import LOW_FLOATS

_UNSIGNED = {n: np.dtype(f"u{n}") for n in (1, 2, 4, 8)}


def _compute(xp, a):
    return a.astype(xp.float32) if a.dtype in LOW_FLOATS else a


def _reduce(loss, reduction: str):
    if reduction == "mean":
        return loss.mean() if loss.size else loss.sum() * float("nan")
    return loss.sum() if reduction == "sum" else loss


def _coef(xp, grad, reduction: str, n: int, ct):
    g = grad.astype(ct, copy=False)
    if reduction == "mean":
        g = g / n
    return xp.broadcast_to(g, (n,)) if g.ndim == 0 else g


def multi_margin_forward(xp, arrays, args):
    """x (N, C), y (N,) int64 (checked in range), weight (C,) or None; args (p, margin,
    reduction, squeeze): squeeze drops the batch dim of an unbatched 'none' result."""
    x, y, w = arrays
    p, margin, reduction, squeeze = args
    xc = _compute(xp, x)
    n, c = xc.shape
    rows = xp.arange(n)
    z = xc - xc[rows, y][:, None] + margin
    z[rows, y] = -1.0                       # the target class does not count
    keep = z >= 0
    h = xp.maximum(z, 0)                    # NOTE: NaN propagates, as clamp_min's
    if p == 2:
        h = h * h
    wy = None if w is None else _compute(xp, w)[y]
    loss = h.sum(1) / c
    if wy is not None:
        loss = loss * wy
    out = _reduce(loss, reduction)
    if squeeze and reduction == "none":
        out = out.reshape(())
    return out.astype(x.dtype, copy=False), (z, keep, wy)


def multi_margin_backward(xp, grad, arrays, state, args, needs):
    x, y, _ = arrays
    p, _, reduction, _ = args
    z, keep, wy = state
    n, c = z.shape
    g = _coef(xp, grad.reshape(-1) if grad.ndim else grad, reduction, n, z.dtype) / c
    if wy is not None:
        g = g * wy
    d = xp.where(keep, 2 * z if p == 2 else 1, 0) * g[:, None]
    rows = xp.arange(n)
    d[rows, y] = -d.sum(1)
    return (d.astype(x.dtype, copy=False), None, None)


def multilabel_targets(xp, op: str, t, n_classes: int):
    """(safe (N, K), onehot (N, K, C) bool, is_target (N, C)): the listed classes (before
    each row's first -1) of targets t (N, C), K the longest list, and their one-hot rows
    (all False for unlisted slots). Raises IndexError for a listed class outside [0, C).
    NOTE: seen as unsigned, a negative target is huge: one compare checks the range."""
    valid = xp.cumsum(t == -1, axis=1) == 0
    unsigned = t.view(_UNSIGNED[t.dtype.itemsize])
    if bool((valid & (unsigned >= n_classes)).any()):
        raise IndexError(f"{op}: target out of range: the class indices before the first "
                         f"-1 must be in [0, {n_classes})")
    k = int(valid.sum(1).max()) if t.shape[0] else 0
    valid = valid[:, :k]
    safe = xp.where(valid, t[:, :k], 0)
    onehot = (safe[:, :, None] == xp.arange(n_classes)[None, None, :]) & valid[:, :, None]
    return safe, onehot, onehot.any(1)


def multilabel_margin_forward(xp, arrays, args):
    """x (N, C), targets (N, C); args (reduction, squeeze)."""
    x, t = arrays
    reduction, squeeze = args
    xc = _compute(xp, x)
    n, c = xc.shape
    safe, onehot, is_target = multilabel_targets(xp, "multilabel_margin_loss", t, c)
    xt = xc[xp.arange(n)[:, None], safe]                            # (N, K)
    hinge = 1 - xt[:, :, None] + xc[:, None, :]                     # (N, K, C)
    counted = onehot.any(2)[:, :, None] & ~is_target[:, None, :]
    loss = xp.where(counted, xp.maximum(hinge, 0), 0).sum((1, 2)) / c
    keep = counted & (hinge >= 0)
    out = _reduce(loss, reduction)
    if squeeze and reduction == "none":
        out = out.reshape(())
    return out.astype(x.dtype, copy=False), (onehot, keep)


def multilabel_margin_backward(xp, grad, arrays, state, args, needs):
    x, _ = arrays
    reduction, _ = args
    onehot, keep = state
    n, k, c = keep.shape
    ct = xp.float32 if x.dtype in LOW_FLOATS else x.dtype
    g = _coef(xp, grad.reshape(-1) if grad.ndim else grad, reduction, n, ct) / c
    m = keep.astype(ct)
    d = m.sum(1) * g[:, None]                                       # + for each class j
    per_target = (m.sum(2) * g[:, None])[:, None, :]                # (N, 1, K)
    d -= xp.matmul(per_target, onehot.astype(ct))[:, 0, :]                     # - for each listed k
    return (d.astype(x.dtype, copy=False), None)
