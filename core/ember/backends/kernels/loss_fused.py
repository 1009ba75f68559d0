"""Fused kernel pairs of the common losses, for ``autograd/kernel_pair.py``.

Each loss is one forward kernel and one backward kernel over arrays of namespace ``xp``
(numpy or CuPy), as PyTorch's native loss kernels, instead of a chain of ember ops and
their autograd nodes. The signatures are those ``_fused.run`` calls:
``forward(xp, arrays, args) -> (out, state)`` and
``backward(xp, grad, arrays, state, args, needs) -> grads``.

Dtypes: float32 and float64 compute in their own dtype; float16 and bfloat16 in float32,
rounded once. Errors against a float64 reference (measured on 1e6 random inputs, normal
logits, and on +-inf, nan, -0.0, huge, tiny and subnormal entries): cross entropy's loss
within 2 ulp of the per-sample mean magnitude and its gradient within 1 ulp of 1/N; the
pointwise losses within 2 ulp elementwise (1e-6 relative on their means). They follow
PyTorch's formulas: log_softmax = (x - max) - log(sum(exp(x - max))); softplus(z) =
max(z, 0) + log1p(exp(-|z|)).
"""
from __future__ import annotations

import numpy as np

from . import loss_programs as _blocked
from .loss import class_targets
from .reduction import LOW_FLOATS



def _compute(xp, a):
    """a in its compute dtype: float32 for float16/bfloat16, else itself."""
    return a.astype(xp.float32) if a.dtype in LOW_FLOATS else a


def _reduce(xp, loss, reduction: str, dtype):
    if reduction == "mean":
        loss = loss.mean() if loss.size else xp.asarray(float("nan"), dtype=loss.dtype)
    elif reduction == "sum":
        loss = loss.sum()
    return loss.astype(dtype, copy=False)


def _finish_sum(xp, total, n: int, reduction: str, dtype):
    """A blocked kernel's sum as the 'sum' or 'mean' result (or its elementwise loss)."""
    if reduction == "mean":
        total = total / n
    return total.astype(dtype, copy=False)


def _grad_array(xp, grad, reduction: str, n: int, dtype):
    """The output gradient as an array of dtype for a blocked kernel (0-d for mean/sum)."""
    g = grad.astype(dtype, copy=False)
    return g / dtype.type(n) if reduction == "mean" else g


def _grad_scale(xp, grad, reduction: str, n: int, ct):
    """The output gradient spread over n elements: scalar for mean/sum, else elementwise."""
    g = grad.astype(ct, copy=False)
    return g / n if reduction == "mean" else g


# ---- class-index targets ----------------------------------------------------------------

def _offsets(xp, n: int, c: int):
    """The flat position of row i's first element in a contiguous (N, C) array."""
    return xp.arange(0, n * c, c)


def _reduce_picked(xp, loss, reduction: str, n: int, wt, keep) -> tuple:
    """(reduced loss, total weight or None) of per-row losses (N,) picked at class targets:
    'mean' divides by the summed weights of the rows that count (``n`` when every row
    counts with weight 1; NaN when none counts), as PyTorch's nll_loss."""
    if reduction != "mean":
        return (loss.sum() if reduction == "sum" else loss), None
    if wt is None and keep is None:
        return (loss.sum() / n if n else loss.sum() * float("nan")), n
    total = (wt if keep is None else xp.where(keep, 1 if wt is None else wt, 0)).sum()
    with np.errstate(invalid="ignore", divide="ignore"):    # nothing counts: nan
        return loss.sum() / total, total



def nll_forward(xp, arrays, args):
    """nll_loss of log-probabilities x (N, C), class indices t (N,), weight (C,) or None:
    -w[t] x[i, t], PyTorch's reductions. State: targets, weights, total."""
    x, t, w = arrays
    reduction, ignore_index = args
    n, c = x.shape
    safe, keep = class_targets(xp, "nll_loss", t, c, ignore_index)
    loss = -_compute(xp, x).reshape(-1).take(_offsets(xp, n, c) + safe)
    wt = None if w is None else _compute(xp, w)[safe]
    if wt is not None:
        loss = loss * wt
    if keep is not None:
        loss = xp.where(keep, loss, 0)
    out, total = _reduce_picked(xp, loss, reduction, n, wt, keep)
    return out.astype(x.dtype, copy=False), (safe, keep, wt, total)


def nll_backward(xp, grad, arrays, state, args, needs):
    """d/dx: -coef_i w[t_i] at (i, t_i), zeros elsewhere (each written once)."""
    x = arrays[0]
    reduction, _ = args
    safe, keep, wt, total = state
    n, c = x.shape
    ct = xp.float32 if x.dtype in LOW_FLOATS else x.dtype
    g = grad.astype(ct, copy=False)
    if reduction == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):
            g = g / total if total.__class__ is int else g / total.astype(ct)
    coef = -g if wt is None else -g * wt
    if keep is not None:
        coef = xp.where(keep, coef, 0)
    out = xp.zeros(x.shape, dtype=x.dtype)
    out.reshape(-1)[_offsets(xp, n, c) + safe] = coef
    return (out, None, None)


def cross_entropy_forward(xp, arrays, args):
    """Cross entropy of logits x (N, C) with class indices t (N,) (weight (C,) or None):
    log_softmax and nll_loss in one pass, PyTorch's label smoothing included. State:
    exp(x - max) and its row sums (the softmax, unnormalized), targets, weights, total."""
    x, t, w = arrays
    reduction, ignore_index, smoothing = args
    xc = _compute(xp, x)
    n, c = xc.shape
    safe, keep = class_targets(xp, "cross_entropy", t, c, ignore_index)
    z = xc - xc.max(1, keepdims=True) if c else xc
    picked = z.reshape(-1).take(_offsets(xp, n, c) + safe)
    wc = None if w is None else _compute(xp, w)
    if smoothing:  # sum_c w_c z_c, before exp overwrites z
        zw = z.sum(1) if w is None else z @ wc
    e = xp.exp(z, out=z) if c else z                            # NOTE: z is a new array
    s = e.sum(1)
    lse = xp.log(s)
    loss = lse - picked                                         # -log_softmax[t]
    wt = None if w is None else wc[safe]
    if wt is not None:
        loss = loss * wt
    if smoothing:
        # -sum_c w_c log_softmax_c = lse * sum(w) - z @ w
        smooth = lse * (c if w is None else wc.sum()) - zw
        loss = loss * (1 - smoothing) + smooth * (smoothing / c)
    if keep is not None:
        loss = xp.where(keep, loss, 0)
    out, total = _reduce_picked(xp, loss, reduction, n, wt, keep)
    return out.astype(x.dtype, copy=False), (e, s, safe, keep, wt, total)


def cross_entropy_backward(xp, grad, arrays, state, args, needs):
    """d/dx: coef_i (p ((1 - ls) w_t + ls W / C) - (1 - ls) w_t onehot(t) - ls w / C),
    p = softmax(x), W = sum(w) (C without weight), coef_i the output gradient (over the
    total for 'mean'), 0 for ignored targets."""
    x, t, w = arrays
    reduction, ignore_index, smoothing = args
    e, s, safe, keep, wt, total = state
    n, c = e.shape
    ct = e.dtype
    g = grad.astype(ct, copy=False)
    if reduction == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):
            g = g / total if total.__class__ is int else g / total.astype(ct)
    coef = g if keep is None else xp.where(keep, g, 0)
    a = coef if wt is None else coef * wt                      # (N,) or scalar
    b = a * (1 - smoothing) if smoothing else a
    if smoothing:
        big_w = c if w is None else _compute(xp, w).sum()
        a = b + coef * (smoothing * big_w / c)
    a = xp.broadcast_to(xp.asarray(a, dtype=ct), (n,))
    out = e * (a / s)[:, None]
    out.reshape(-1)[_offsets(xp, n, c) + safe] -= b
    if smoothing:
        coef = xp.broadcast_to(xp.asarray(coef, dtype=ct), (n,))
        out -= (coef * (smoothing / c))[:, None] * (1 if w is None else _compute(xp, w))
    return (out.astype(x.dtype, copy=False), None, None)


def prob_cross_entropy_forward(xp, arrays, args):
    """Cross entropy of logits x (N, C) with class probabilities p (N, C): -sum_c w_c p'_c
    log_softmax(x)_c, p' = p (1 - ls) + ls / C; 'mean' over N."""
    x, p, w = arrays
    reduction, smoothing = args
    xc, pc = _compute(xp, x), _compute(xp, p)
    n, c = xc.shape
    if smoothing:
        pc = pc * (1 - smoothing) + smoothing / c
    if w is not None:
        pc = pc * _compute(xp, w)
    z = xc - xc.max(1, keepdims=True) if c else xc
    e = xp.exp(z)
    s = e.sum(1)
    q = pc.sum(1)
    loss = xp.log(s) * q - (pc * z).sum(1)
    out = loss if reduction == "none" else loss.sum()
    if reduction == "mean":
        out = out / n if n else xp.asarray(float("nan"), dtype=out.dtype)
    return out.astype(x.dtype, copy=False), (e, s, q, pc)


def prob_cross_entropy_backward(xp, grad, arrays, state, args, needs):
    """d/dx_c = coef_i (softmax_c sum_k w_k p'_k - w_c p'_c)."""
    x = arrays[0]
    reduction, _ = args
    e, s, q, pc = state
    g = _grad_scale(xp, grad, reduction, e.shape[0], e.dtype)
    g = xp.broadcast_to(xp.asarray(g, dtype=e.dtype), q.shape)
    out = e * (g * q / s)[:, None]
    out -= pc * g[:, None]
    return (out.astype(x.dtype, copy=False), None, None)


# ---- pointwise losses (input and target of one shape) ------------------------------------

def smooth_l1_forward(xp, arrays, args):
    """Huber (delta) or smooth L1 (beta) elementwise: 0.5 d^2 / beta where |d| < beta,
    else |d| - 0.5 beta; huber is beta = delta times delta. args: (reduction, beta,
    scale), scale = delta for huber, 1 for smooth_l1."""
    x, y = arrays
    reduction, beta, scale = args
    if _blocked.blocked(xp, x):
        out = _blocked.smooth_l1(x, y, reduction, beta, scale)
        return _finish_sum(xp, out, x.size, reduction, x.dtype), None
    d = _compute(xp, x) - _compute(xp, y)
    a = xp.abs(d)
    quad = a < beta
    loss = xp.where(quad, d * d * (0.5 * scale / beta), (a - 0.5 * beta) * scale)
    return _reduce(xp, loss, reduction, x.dtype), (d, quad)


def smooth_l1_backward(xp, grad, arrays, state, args, needs):
    """d/dx = scale * (d / beta where |d| < beta, else sign(d)); d/dy = -d/dx."""
    x, y = arrays
    reduction, beta, scale = args
    if state is None:   # the blocked forward: recompute d = x - y in the same pass
        gx = _blocked.smooth_l1_grad(x, y, _grad_array(xp, grad, reduction, x.size, x.dtype),
                                     beta, scale)
        return (gx if needs[0] else None, -gx if needs[1] else None)
    d, quad = state
    g = _grad_scale(xp, grad, reduction, d.size, d.dtype)
    gx = xp.where(quad, d * (scale / beta), xp.sign(d) * scale) * g
    return (gx.astype(x.dtype, copy=False) if needs[0] else None,
            (-gx).astype(y.dtype, copy=False) if needs[1] else None)


def bce_with_logits_forward(xp, arrays, args):
    """(1 - y) x + softplus(-x), with pos_weight: (1 - y) x + (1 + (pw - 1) y)
    softplus(-x); softplus(-x) = max(-x, 0) + log1p(exp(-|x|))."""
    x, y, pw = arrays
    reduction, = args
    if pw is None and _blocked.blocked(xp, x):
        out, e = _blocked.bce_logits(x, y, reduction)
        return _finish_sum(xp, out, x.size, reduction, x.dtype), (e, None, True)
    xc, yc = _compute(xp, x), _compute(xp, y)
    e = xp.exp(-xp.abs(xc))
    sp = xp.maximum(-xc, 0) + xp.log1p(e)                    # -log sigmoid(x)
    if pw is None:
        loss = (1 - yc) * xc + sp
        lw = None
    else:
        lw = 1 + (_compute(xp, pw) - 1) * yc
        loss = (1 - yc) * xc + lw * sp
    return _reduce(xp, loss, reduction, x.dtype), (e, lw, False)


def bce_with_logits_backward(xp, grad, arrays, state, args, needs):
    """d/dx = sigmoid(x) - y (no pos_weight), else (1 - y) - lw sigmoid(-x)."""
    x, y, _ = arrays
    reduction, = args
    e, lw, blocked = state
    if blocked:
        g = _grad_array(xp, grad, reduction, x.size, x.dtype)
        return (_blocked.bce_logits_grad(x, y, e, xp.broadcast_to(g, x.shape)), None, None)
    xc, yc = _compute(xp, x), _compute(xp, y)
    g = _grad_scale(xp, grad, reduction, e.size, e.dtype)
    # sigmoid(-x) from e = exp(-|x|): 1/(1+e) where x < 0, e/(1+e) where x >= 0
    sig_neg = xp.where(xc < 0, 1, e) / (1 + e)
    gx = (1 - yc) - sig_neg if lw is None else (1 - yc) - lw * sig_neg
    gx = gx * g
    return (gx.astype(x.dtype, copy=False), None, None)


def bce_forward(xp, arrays, args):
    """-(y log(p) + (1 - y) log(1 - p)), each log clamped to >= -100 (PyTorch)."""
    p, y, w = arrays
    reduction, = args
    if w is None and _blocked.blocked(xp, p):
        out = _blocked.bce(p, y, reduction)
        return _finish_sum(xp, out, p.size, reduction, p.dtype), None
    pc, yc = _compute(xp, p), _compute(xp, y)
    with np.errstate(divide="ignore"):
        lp = xp.maximum(xp.log(pc), -100)
        l1p = xp.maximum(xp.log1p(-pc), -100)
    loss = -(yc * (lp - l1p) + l1p)
    if w is not None:
        loss = loss * _compute(xp, w)
    return _reduce(xp, loss, reduction, p.dtype), None


def bce_backward(xp, grad, arrays, state, args, needs):
    """d/dp = -y / p + (1 - y) / (1 - p), each term 0 where its log was clamped (p = 0 or
    1, or within e^-100 of them): the derivative of the clamped forward."""
    p, y, w = arrays
    reduction, = args
    if w is None and _blocked.blocked(xp, p):
        g = _grad_array(xp, grad, reduction, p.size, p.dtype)
        return (_blocked.bce_grad(p, y, g, _TINY[p.dtype.char]), None, None)
    pc, yc = _compute(xp, p), _compute(xp, y)
    g = _grad_scale(xp, grad, reduction, pc.size, pc.dtype)
    q = 1 - pc
    with np.errstate(divide="ignore", invalid="ignore"):
        gx = xp.where(pc >= _TINY[pc.dtype.char], -yc / pc, 0) + \
            xp.where(q >= _TINY[pc.dtype.char], (1 - yc) / q, 0)
    gx = gx * g
    if w is not None:
        gx = gx * _compute(xp, w)
    return (gx.astype(p.dtype, copy=False), None, None)


# e^-100, below which the clamped logs of bce are flat (their gradient 0)
_TINY = {"f": np.float32(np.exp(np.float64(-100))), "d": np.exp(-100.0)}


def soft_margin_forward(xp, arrays, args):
    """softplus(-y x) = max(-y x, 0) + log1p(exp(-|y x|)), no overflow."""
    x, y = arrays
    reduction, = args
    if _blocked.blocked(xp, x):
        out, e = _blocked.soft_margin(x, y, reduction)
        return _finish_sum(xp, out, x.size, reduction, x.dtype), (None, e)
    z = -_compute(xp, y) * _compute(xp, x)
    e = xp.exp(-xp.abs(z))
    loss = xp.maximum(z, 0) + xp.log1p(e)
    return _reduce(xp, loss, reduction, x.dtype), (z, e)


def soft_margin_backward(xp, grad, arrays, state, args, needs):
    """d/dx = -y sigmoid(-y x)."""
    x, y = arrays
    reduction, = args
    z, e = state
    if z is None:
        g = _grad_array(xp, grad, reduction, x.size, x.dtype)
        return (_blocked.soft_margin_grad(x, y, e, xp.broadcast_to(g, x.shape)), None)
    g = _grad_scale(xp, grad, reduction, z.size, z.dtype)
    sig = xp.where(z >= 0, 1, e) / (1 + e)                 # sigmoid(z)
    gx = -_compute(xp, y) * sig * g
    return (gx.astype(x.dtype, copy=False), None)


# ---- triplet_margin_loss (p = 2, no swap) ------------------------------------------------

def triplet_forward(xp, arrays, args):
    """max(0, ||a - p + eps|| - ||a - n + eps|| + margin) over the last dim of (N, D)
    anchor, positive and negative; args (margin, eps, reduction)."""
    a, p, n = arrays
    margin, eps, reduction = args
    ac = _compute(xp, a)
    u = ac - _compute(xp, p) + eps
    v = ac - _compute(xp, n) + eps
    dp = xp.sqrt((u * u).sum(-1))
    dn = xp.sqrt((v * v).sum(-1))
    h = dp - dn + margin
    return _reduce(xp, xp.maximum(h, 0), reduction, a.dtype), (u, v, dp, dn, h >= 0)


def triplet_backward(xp, grad, arrays, state, args, needs):
    """With m = [h >= 0] g: d/da = m (u / |u| - v / |v|), d/dp = -m u / |u|,
    d/dn = m v / |v|; a zero distance passes no gradient (as norm's)."""
    a = arrays[0]
    reduction = args[2]
    u, v, dp, dn, keep = state
    g = _grad_scale(xp, grad, reduction, dp.size, dp.dtype)
    m = xp.where(keep, g, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        su = u * xp.where(dp > 0, m / dp, 0)[..., None]
        sv = v * xp.where(dn > 0, m / dn, 0)[..., None]
    dt = a.dtype
    return ((su - sv).astype(dt, copy=False) if needs[0] else None,
            (-su).astype(dt, copy=False) if needs[1] else None,
            sv.astype(dt, copy=False) if needs[2] else None)
