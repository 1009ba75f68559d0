"""CTC kernels: the alpha (forward) and beta (backward) recursions of ``ctc_loss``.

Graves et al. (2006), in log space over the extended labels l' (N, L = 2 S + 1) of a
batch: one step per frame t, each step vectorized over the batch and the L states (as
PyTorch's ``ctc_loss_cpu_template`` loops over time only). With ``a_t`` the alpha before
frame t's emission ("pre-emission": ``alpha_t = a_t + emit_t``)::

    a_t(s) = logsumexp(alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2) if skip(s))
    beta_t(s) = emit_t(s) + logsumexp(beta_{t+1}(s), beta_{t+1}(s+1),
                                      beta_{t+1}(s+2) if skip(s+2))

``beta`` starts at frame ``input_length - 1`` with the two final states. The exact
derivative of ``loss = -log P`` w.r.t. ``log_probs[t, n, c]`` is
``-sum_{s: l'_s = c} exp(a_t(s) + beta_t(s) - log P)``: the state occupancies, summed
per class with one batched matmul against the one-hot labels (no scatter-add). An
impossible alignment (P = 0) gets gradient 0, as the composite form gives.

Sequences shorter than T keep their alpha after their last frame (their beta is -inf
there: no gradient).

``ctc_forward`` / ``ctc_backward`` run the recursions in linear space with per-frame
scaling (Rabiner, 1989) in float64: a frame is N * L elements, so the wider dtype costs
no measurable time, and float32/float16/bfloat16 results are rounded once. Measured
against the float64 log-space recursion on (T, N, C, S) = (200, 8, 50, 40) log_softmax
inputs: the float32 loss within 1 ulp of |loss| (~700; tested at 4), the gradient within
3e-8 absolute (tested at 2e-6; entries are occupancies in [0, 1]). Where scaling
underflows (emissions ~700 nats below a frame's best, or an impossible alignment), they
fall back to the log-space kernels ``_log_forward`` / ``_log_backward``, which compute in
the input's dtype (float32 for float16/bfloat16).
Written against ``xp`` (numpy or CuPy).
"""
from __future__ import annotations

import numpy as np

from .reduction import LOW_FLOATS

_NEG_INF = float("-inf")


def ctc_labels(xp, targets, target_lengths: list, blank: int, n_classes: int):
    """(ext, skip): the extended labels l' (N, L = 2 S_max + 1), blanks between and around
    each sequence's labels (positions past its length are blanks), and the bool mask of the
    allowed s - 2 transitions (a label differing from the one two states back).

    targets: padded (N, S) or concatenated (sum(target_lengths),) integral array (shapes
    checked by the caller). Raises IndexError naming a label outside [0, C)."""
    n, s_max = len(target_lengths), max(target_lengths, default=0)
    lens = xp.asarray(target_lengths, dtype=xp.int64)
    j = xp.arange(s_max, dtype=xp.int64)
    inside = j[None, :] < lens[:, None]
    if targets.ndim == 2:
        labels = targets[:, :s_max].astype(xp.int64, copy=False)
    else:  # position (n, j) reads targets[offset_n + j] (clipped: masked below)
        starts = xp.cumsum(lens) - lens
        idx = xp.minimum(starts[:, None] + j[None, :], max(targets.shape[0] - 1, 0))
        labels = targets.astype(xp.int64, copy=False)[idx] if targets.shape[0] else \
            xp.zeros((n, s_max), dtype=xp.int64)
    labels = xp.where(inside, labels, blank)
    bad = (labels < 0) | (labels >= n_classes)
    if bool(bad.any()):
        raise IndexError(f"ctc_loss: target label {int(labels[bad][0])} is out of range: "
                         f"labels must be in [0, {n_classes}) (C = log_probs.shape[-1])")
    ext = xp.full((n, 2 * s_max + 1), blank, dtype=xp.int64)
    ext[:, 1::2] = labels
    skip = xp.zeros(ext.shape, dtype=bool)
    if s_max:
        skip[:, 3::2] = labels[:, 1:] != labels[:, :-1]
        skip[:, 1] = True
        skip[:, 1::2] &= labels != blank
    return ext, skip


def _lse3(xp, a, b, c):
    """logsumexp of three arrays elementwise; -inf (no NaN) where all three are -inf."""
    m = xp.maximum(xp.maximum(a, b), c)
    m = xp.where(m == _NEG_INF, 0, m)
    s = xp.exp(a - m)
    s += xp.exp(b - m)
    s += xp.exp(c - m)
    return xp.log(s) + m


def _log_forward(xp, arrays, args):
    """(losses (N,), state): per-sequence -log P of log_probs (T, N, C) for the extended
    labels ext (N, L) and skip mask (N, L) (bool: the s - 2 transition is allowed);
    args = (input_lengths, target_lengths) as lists of N ints."""
    lp, ext, skip = arrays
    input_lengths, target_lengths = args
    ct = xp.float32 if lp.dtype in LOW_FLOATS else lp.dtype
    t_max = max(input_lengths, default=0)
    n, n_states = ext.shape
    emit = xp.take_along_axis(lp[:t_max], ext[None], axis=2).astype(ct, copy=False)
    skip_add = xp.where(skip, 0.0, _NEG_INF).astype(ct)
    il = xp.asarray(input_lengths, dtype=xp.int64)[:, None]
    pre = xp.empty((t_max, n, n_states), dtype=ct)      # a_t: alpha before emission
    buf = xp.full((n, n_states + 2), _NEG_INF, dtype=ct)  # alpha with two -inf in front
    buf[:, 2] = 0.0                                        # alpha_{-1}: state 0 only
    alpha = buf[:, 2:]
    shortest = min(input_lengths, default=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        for t in range(t_max):
            a = _lse3(xp, alpha, buf[:, 1:-1], buf[:, :-2] + skip_add)
            pre[t] = a
            new = a + emit[t]
            if t >= shortest:  # a sequence past its last frame keeps its alpha
                new = xp.where(il > t, new, alpha)
            alpha[...] = new
        tl = xp.asarray(target_lengths, dtype=xp.int64)[:, None]
        last = xp.take_along_axis(alpha, 2 * tl, axis=1)
        second = xp.where(tl > 0, xp.take_along_axis(alpha, xp.maximum(2 * tl - 1, 0), axis=1),
                          _NEG_INF)
        log_p = xp.logaddexp(last, second)[:, 0]
    loss = -log_p
    return loss.astype(lp.dtype, copy=False), (pre, emit, skip_add, log_p)


def _log_backward(xp, grad, arrays, state, args, needs):
    """The gradient of ctc_forward's losses w.r.t. log_probs, given grad (N,)."""
    lp, ext, _ = arrays
    pre, emit, skip_add, log_p = state
    input_lengths, target_lengths = args
    t_max, n, n_states = pre.shape
    ct = pre.dtype
    il = xp.asarray(input_lengths, dtype=xp.int64)[:, None]
    tl = xp.asarray(target_lengths, dtype=xp.int64)[:, None]
    states = xp.arange(n_states)[None, :]
    final = xp.where((states == 2 * tl) | ((states == 2 * tl - 1) & (tl > 0)), 0.0,
                     _NEG_INF).astype(ct)
    # skip(s + 2) for the s -> s + 2 transition, -inf past the end
    skip_next = xp.full((n, n_states), _NEG_INF, dtype=ct)
    skip_next[:, :n_states - 2] = skip_add[:, 2:]
    buf = xp.full((n, n_states + 2), _NEG_INF, dtype=ct)  # beta_{t+1}, two -inf behind
    beta = buf[:, :n_states]
    occ = xp.empty((t_max, n, n_states), dtype=ct)
    possible = log_p > _NEG_INF
    scale = xp.where(possible, grad.astype(ct, copy=False), 0)   # (N,)
    log_p0 = xp.where(possible, log_p, 0)[:, None]
    last = il - 1
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for t in range(t_max - 1, -1, -1):
            rec = _lse3(xp, beta, buf[:, 1:-1], buf[:, 2:] + skip_next) + emit[t]
            rec = xp.where(last == t, emit[t] + final, rec)
            beta[...] = xp.where(last >= t, rec, _NEG_INF)
            occ[t] = pre[t] + beta
        occ = xp.exp(occ - log_p0)
    occ *= -scale[:, None]
    # sum per class: (N, T, L) @ (N, L, C) one-hot labels
    n_classes = lp.shape[2]
    onehot = (ext[:, :, None] == xp.arange(n_classes)[None, None, :]).astype(ct)
    g = xp.matmul(occ.transpose(1, 0, 2), onehot).transpose(1, 0, 2)
    out = xp.zeros(lp.shape, dtype=lp.dtype)
    out[:t_max] = g
    return (out, None, None)


# ---- the scaled recursion in linear space (Rabiner, 1989), float64 ----------------------

def _emissions(xp, lp, ext, t_max):
    """(y, emax): exp(emit - emax) (T, N, L) in float64 and emax (T, N), the largest
    emission of each frame (0 where all are -inf), so y <= 1 and nothing overflows."""
    rows = xp.arange(ext.shape[0])[:, None]
    emit = lp[:t_max, rows, ext].astype(xp.float64)
    emax = emit.max(2, keepdims=True) if emit.size else xp.zeros(emit.shape[:2] + (1,))
    emax = xp.where(xp.isfinite(emax), emax, 0.0)
    return xp.exp(emit - emax), emax[..., 0]


def ctc_forward(xp, arrays, args):
    """(losses (N,), state): per-sequence -log P of log_probs (T, N, C) for the extended
    labels ext (N, L) and skip mask (N, L) (bool: the s - 2 transition is allowed);
    args = (input_lengths, target_lengths) as lists of N ints.

    Runs the scaled linear-space recursion in float64 (alpha renormalized to sum 1 every
    frame, log P the sum of the log scales): six array ops a frame. Where a frame's alpha
    sums to less than 1e-280 (an impossible alignment, or emissions hundreds of nats below
    the frame's best), it falls back to the log-space recursion above."""
    lp, ext, skip = arrays
    input_lengths, target_lengths = args
    t_max = max(input_lengths, default=0)
    n, n_states = ext.shape
    y, emax = _emissions(xp, lp, ext, t_max)
    skip_f = skip.astype(xp.float64)
    pre = xp.empty((t_max, n, n_states))            # scaled alpha before emission
    scales = xp.ones((t_max, n, 1))
    buf = xp.zeros((n, n_states + 2))                # scaled alpha, two zeros in front
    buf[:, 2] = 1.0                                  # alpha_{-1}: state 0 only
    alpha = buf[:, 2:]
    il = xp.asarray(input_lengths, dtype=xp.int64)[:, None]
    shortest = min(input_lengths, default=0)
    for t in range(t_max):
        a = xp.multiply(buf[:, :-2], skip_f, out=pre[t])
        a += buf[:, 1:-1]
        a += alpha
        new = a * y[t]
        c = new.sum(1, keepdims=True, out=scales[t])
        if t >= shortest:  # a sequence past its last frame keeps its alpha
            live = il > t
            new = xp.where(live, new, alpha)
            c[...] = xp.where(live, c, 1.0)
        xp.divide(new, c, out=alpha)
    tl = xp.asarray(target_lengths, dtype=xp.int64)
    rows = xp.arange(n)
    end = alpha[rows, 2 * tl] + xp.where(tl > 0, alpha[rows, xp.maximum(2 * tl - 1, 0)], 0.0)
    if not bool((end > 1e-280).all() & (scales > 1e-280).all()):   # redo in log space
        loss, state = _log_forward(xp, arrays, args)
        return loss, ("log", state)
    frames = xp.arange(t_max)[:, None] < il[:, 0][None, :]
    log_p = xp.log(scales[:, :, 0]).sum(0) + xp.where(frames, emax, 0.0).sum(0) + xp.log(end)
    return (-log_p).astype(lp.dtype), ("linear", (y, pre))


def ctc_backward(xp, grad, arrays, state, args, needs):
    """The gradient of ctc_forward's losses w.r.t. log_probs, given grad (N,): the state
    occupancies a_t(s) beta_t(s) / P, each frame's normalized to sum 1 (so the scales of
    alpha and beta cancel), summed per class."""
    kind, state = state
    if kind == "log":
        return _log_backward(xp, grad, arrays, state, args, needs)
    lp, ext, skip = arrays
    y, pre = state
    input_lengths, target_lengths = args
    t_max, n, n_states = pre.shape
    il = xp.asarray(input_lengths, dtype=xp.int64)[:, None]
    tl = xp.asarray(target_lengths, dtype=xp.int64)[:, None]
    states = xp.arange(n_states)[None, :]
    final = ((states == 2 * tl) | ((states == 2 * tl - 1) & (tl > 0))).astype(xp.float64)
    skip_next = xp.zeros((n, n_states))          # skip(s + 2) for s -> s + 2
    skip_next[:, :n_states - 2] = skip[:, 2:]
    buf = xp.zeros((n, n_states + 2))            # scaled beta_{t+1}, two zeros behind
    beta = buf[:, :n_states]
    occ = xp.empty_like(pre)
    last = il - 1
    same = min(input_lengths, default=0) == t_max
    for t in range(t_max - 1, -1, -1):
        b = buf[:, 2:] * skip_next
        b += buf[:, 1:-1]
        b += beta
        if same:
            if t == t_max - 1:
                b = final
        else:
            b = xp.where(last == t, final, xp.where(last > t, b, 0.0))
        b *= y[t]
        d = b.sum(1, keepdims=True)
        xp.divide(b, xp.where(d > 0, d, 1.0), out=beta)
        xp.multiply(pre[t], beta, out=occ[t])
    z = occ.sum(2, keepdims=True)
    occ /= xp.where(z > 0, z, 1.0)
    occ *= -grad.astype(xp.float64)[None, :, None]
    n_classes = lp.shape[2]
    onehot = (ext[:, :, None] == xp.arange(n_classes)[None, None, :]).astype(xp.float64)
    g = xp.matmul(occ.transpose(1, 0, 2), onehot).transpose(1, 0, 2)
    out = xp.zeros(lp.shape, dtype=lp.dtype)
    out[:t_max] = g
    return (out, None, None)
