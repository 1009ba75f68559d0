"""logcumsumexp: the running log(sum(exp(x))) along a dim, without overflow.

Fast path, per slice: ``M + log(cumsum(exp(x - M)))`` in float64 with M the slice's max
(PyTorch's CPU kernel also accumulates float32 in double). Every term is at most 1, so
nothing overflows, and float64 keeps full precision for prefixes down to 2**-1000 of the
max: a float32 result is within 1 ulp of an mpmath reference, a float64 one within
~n ulp (the float64 sum's rounding). Slices where that fails (a prefix below 2**-1000
of the max, such as logcumsumexp([-1000, 0]), which must start with -1000, not -inf;
a NaN or infinite max) take the exact path: a prefix scan of ``logaddexp`` (Hillis &
Steele 1986), log2(n) rounds, round k combining each element with the one 2^k before
it, in which no element is exponentiated on its own.

Both paths are vectorized ``xp`` calls, so numpy and CuPy run the same code. Inputs arrive
floating (the yaml's ``promote: float``); float16/bfloat16 compute in float32 (exact path)
or float64 (fast path) and round once.
"""
from __future__ import annotations

from .reduction import F32, LOW_FLOATS, reducer

TINY = 2.0 ** -1000  # the smallest prefix sum (relative to the max) the fast path trusts


def kernels(xp) -> dict:
    max_reduce, _ = reducer(xp, "maximum", "max")

    def hillis_steele(x):
        """The exact scan along the last axis of x (m, n)."""
        out = xp.array(x, copy=True)
        n, k = x.shape[-1], 1
        while k < n:
            nxt = out.copy()
            nxt[..., k:] = xp.logaddexp(out[..., k:], out[..., :-k])
            out, k = nxt, 2 * k
        return out

    def scan_rows(x, dtype):
        """logcumsumexp along the last axis of x (m, n), rounded once to dtype."""
        w = x.astype(xp.float64)
        top = max_reduce(w, -1, keepdims=True)
        w -= top
        xp.exp(w, out=w)
        xp.cumsum(w, axis=-1, out=w)
        # prefixes only grow, so the first is the smallest; NaN fails the test too
        bad = ~(w[:, 0] >= TINY)
        xp.log(w, out=w)
        w += top
        out = w.astype(dtype)
        if bad.any():
            out[bad] = hillis_steele(x[bad]).astype(dtype)
        return out

    def logcumsumexp(a, dim):
        if a.ndim == 0 or a.size == 0:
            return a.copy()
        x = a.astype(F32) if a.dtype in LOW_FLOATS else a
        if dim != a.ndim - 1:
            x = xp.moveaxis(x, dim, -1)
        out = scan_rows(x.reshape(-1, x.shape[-1]), a.dtype).reshape(x.shape)
        return out if dim == a.ndim - 1 else xp.moveaxis(out, -1, dim)

    return {"logcumsumexp": logcumsumexp}
