"""logcumsumexp: the running log(sum(exp(x))) along a dim, without overflow.

A prefix scan of ``logaddexp`` (Hillis & Steele 1986): log2(n) rounds, round k combining
each element with the one 2^k before it. Each round is one vectorized ``xp.logaddexp``,
so numpy and CuPy run the same code and no element is ever exponentiated on its own
(``exp(x - max(x)).cumsum()`` would underflow the prefixes far below the total's max:
logcumsumexp([-1000, 0]) must start with -1000, not -inf). Rounding grows with log2(n)
rounds rather than with n additions. Inputs arrive floating (the yaml's ``promote:
float``); float16/bfloat16 compute in float32, as PyTorch accumulates them.
"""
from __future__ import annotations

from .reduction import F32, LOW_FLOATS


def kernels(xp) -> dict:
    def logcumsumexp(a, dim):
        if a.ndim == 0:
            return a.copy()
        x = xp.moveaxis(a.astype(F32) if a.dtype in LOW_FLOATS else a, dim, -1)
        out = xp.array(x, copy=True)
        n, k = x.shape[-1], 1
        while k < n:
            nxt = out.copy()
            nxt[..., k:] = xp.logaddexp(out[..., k:], out[..., :-k])
            out, k = nxt, 2 * k
        return xp.moveaxis(out, -1, dim).astype(a.dtype, copy=False)

    return {"logcumsumexp": logcumsumexp}
