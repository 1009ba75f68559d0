"""Kernel pairs of two composite activations: glu and prelu (``autograd/kernel_pair.py``).

Both were op chains (glu: chunk, sigmoid, mul; prelu: gt, mul, where) that read and wrote
their arrays once per op and recorded one autograd node per op; here each is one forward
and one backward kernel, as PyTorch's ``glu`` / ``glu_backward`` and ``_prelu_kernel`` /
``_prelu_kernel_backward``. The composites in ``nn/functional`` stay the reference for
double backward and tracing.

Written once against ``xp`` (numpy or CuPy). float16/bfloat16 compute in float32 and round
once (PyTorch's opmath).

Errors against float64 (float32, measured on 2e6 points of [-20, 20]; the tests check
them with special values): prelu and its d/dx are exact (one correctly rounded product,
or a selection), d/dw a float32 sum; glu within 3.2 ulp (numpy's exp is within ~2.5),
d/da within 3.7 ulp, d/db within 5.4 eps |g a s| (1 - s cancels for s near 1, as in
PyTorch's float32 formula).
"""
from __future__ import annotations

import math

import numpy as np

from .reduction import LOW_FLOATS
from .row_blocks import blocked_rows, run_rows

__all__ = ["glu_forward", "glu_backward", "prelu_forward", "prelu_backward"]


def _compute(xp, a):
    """a in its compute dtype: float32 for float16/bfloat16, else itself."""
    return a.astype(xp.float32) if a.dtype in LOW_FLOATS else a


def _halves(a, dim: int):
    """The two halves of ``a`` along ``dim`` (views)."""
    n = a.shape[dim] // 2
    if dim == a.ndim - 1:
        return a[..., :n], a[..., n:]
    lead = (slice(None),) * dim
    return a[lead + (slice(None, n),)], a[lead + (slice(n, None),)]


# ---- glu: a * sigmoid(b), a and b the halves of x along dim ---------------------------------

def glu_forward(xp, arrays, args):
    """(a / t, t) with t = 1 + exp(-b), a / t = a * sigmoid(b): exp(-b) overflows to inf for
    b < -88.7 (float32), giving 0, as PyTorch's vectorized sigmoid. args: (dim,).

    NOTE: plain ufuncs, not row blocks: exp is ~3/4 of the time and the halves (2 MB at
    1e6 float32) stay in L3; blocks of rows measured 1.2 x slower than the whole arrays."""
    x, = arrays
    a, b = _halves(x, args[0])
    if x.dtype in LOW_FLOATS:
        t = xp.negative(b.astype(xp.float32))
        xp.exp(t, out=t)
        t += 1
        return xp.divide(a, t, dtype=t.dtype).astype(x.dtype), t
    t = xp.negative(b)
    xp.exp(t, out=t)
    t += 1
    return xp.divide(a, t), t


def glu_backward(xp, grad, arrays, t, args, needs):
    """d/da = g s and d/db = g a s (1 - s), s = sigmoid(b) = 1 / t (PyTorch's
    glu_backward), written into the two halves of one array of x's shape."""
    x, = arrays
    dim = args[0]
    g = _compute(xp, grad)
    a, _ = _halves(x, dim)
    gx = xp.empty(x.shape, dtype=t.dtype)
    ga, gb = _halves(gx, dim)
    s = xp.reciprocal(t)
    xp.multiply(g, s, out=ga)
    xp.subtract(1, s, out=gb)
    xp.multiply(gb, a, out=gb)
    gb *= ga
    return (gx.astype(x.dtype, copy=False),)


# ---- prelu: x where x > 0, else w x; w one element or one per channel (dim 1) ---------------
# NOTE: a select (where, copyto with a mask) over a sign pattern of random inputs costs
# ~5 ns an element (branch misses), 10 x a ufunc pass; the kernels below select by
# max/min instead wherever that is exact, and keep the select for the rare other weights.

def _weight(xp, w, ndim: int):
    """w shaped to broadcast against an input of ``ndim`` dims (channels on dim 1)."""
    if w.size == 1:
        return w.reshape(())
    return w.reshape((w.size,) + (1,) * (ndim - 2))


def _rows(xp, x, w):
    """(x as (rows, row_size), w as a (rows, 1) column): one row per (n, c) pair."""
    if w.size == 1:
        return x.reshape(-1, x.shape[-1] if x.ndim and x.shape[-1] else 1), None
    x2 = x.reshape(x.shape[0] * x.shape[1], -1)
    return x2, xp.tile(w, x.shape[0]).reshape(-1, 1)


def _bounds(w):
    """(min, max) of w as Python floats, both NaN if w holds a NaN."""
    if w.size <= 64:  # the usual weights: Python floats cost less than two reductions
        v = w.reshape(-1).tolist()
        total = sum(v)  # NaN iff a NaN (or both infinities: the select takes those too)
        return (min(v), max(v)) if total == total else (math.nan, math.nan)
    return float(w.min()), float(w.max())


def prelu_forward(xp, arrays, args):
    """x where x > 0, else w x. With every w in (0, 1] (PyTorch's default is 0.25) or
    every w < 0 that is max(x, w x), with every w >= 1 min(x, w x), exactly: rounding
    keeps w x on x's side, and numpy's maximum/minimum return their second argument on
    ties, so w x's sign of zero for x = +-0 (as PyTorch). Other weights (a 0, where
    0 * inf would give NaN for x = inf; NaN; mixed signs) take the select."""
    x, w = arrays
    wb = _weight(xp, w, x.ndim)
    if x.dtype in LOW_FLOATS:  # one product, exact in float32: rounding once is the same
        xc, wc = x.astype(xp.float32), wb.astype(xp.float32)
        return xp.where(xc > 0, xc, xc * wc).astype(x.dtype), None
    lo, hi = _bounds(w)
    pick = xp.maximum if (0 < lo and hi <= 1) or hi < 0 else xp.minimum if lo >= 1 else None
    if pick is None:
        return xp.where(x > 0, x, x * wb), None
    if blocked_rows(xp, x):
        x2, wcol = _rows(xp, x, w)
        out = np.empty_like(x)
        o2 = out.reshape(x2.shape)
        wk = wb if wcol is None else None

        def block(a, b):
            xb, ob = x2[a:b], o2[a:b]
            np.multiply(xb, wk if wcol is None else wcol[a:b], out=ob)
            pick(xb, ob, out=ob)
        run_rows(block, x2.shape[0], x2.shape[1])
        return out, None
    return pick(x, x * wb), None


def prelu_backward(xp, grad, arrays, state, args, needs):
    """d/dx = g where x > 0, else g w; d/dw = the sum of g x where x <= 0 (NaN x included)
    over every dim but the channel dim (all of them for one w), as PyTorch's
    _prelu_kernel_backward. With 0 <= w <= 1, g max(x > 0, w) and g min(x, 0) (exact; a
    non-finite d/dw, where an inf/NaN g meets x > 0, is recomputed with the select)."""
    x, w = arrays
    lo, hi = (math.nan, math.nan) if x.dtype in LOW_FLOATS else _bounds(w)
    if not 0 <= lo <= hi <= 1:
        return _prelu_backward_select(xp, grad, x, w, needs)
    gx = xp.empty(x.shape, x.dtype) if needs[0] else None
    g = xp.broadcast_to(grad, x.shape)
    x2, wcol = _rows(xp, x, w)
    g2, gx2 = g.reshape(x2.shape), None if gx is None else gx.reshape(x2.shape)
    partial = xp.empty(x2.shape[0], x.dtype) if needs[1] else None
    wk = _weight(xp, w, 2) if wcol is None else None

    def block(a, b):
        xb, gb = x2[a:b], g2[a:b]
        if gx2 is not None:
            xp.multiply(gb, xp.maximum(xb > 0, wk if wcol is None else wcol[a:b]), out=gx2[a:b])
        if partial is not None:
            t = xp.minimum(xb, 0)
            t *= gb
            partial[a:b] = t.sum(axis=1)
    if blocked_rows(xp, x):
        run_rows(block, x2.shape[0], x2.shape[1])
    else:
        block(0, x2.shape[0])
    gw = None
    if partial is not None:
        gw = partial.sum() if wcol is None else partial.reshape(x.shape[0], -1).sum(axis=0)
        gw = xp.asarray(gw).reshape(w.shape)
        if not bool(xp.isfinite(gw).all()):
            gw = _prelu_backward_select(xp, grad, x, w, (False, True))[1]
    return gx, gw


def _prelu_backward_select(xp, grad, x, w, needs):
    """prelu_backward by selection: any w, float16/bfloat16 in float32."""
    pos = x > 0
    gx = gw = None
    g = _compute(xp, grad)
    if needs[0]:
        gx = xp.where(pos, g, g * _compute(xp, _weight(xp, w, x.ndim)))
        gx = gx.astype(x.dtype, copy=False)
    if needs[1]:
        t = xp.where(pos, 0, _compute(xp, x) * g)
        if w.size == 1 or x.ndim < 2:
            gw = t.sum().reshape(w.shape)
        else:
            gw = t.reshape(t.shape[0], t.shape[1], -1).sum(axis=2).sum(axis=0).reshape(w.shape)
        gw = gw.astype(w.dtype, copy=False)
    return gx, gw
