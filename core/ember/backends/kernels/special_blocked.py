"""Cache blocking for the pointwise kernels of the special functions.

A special function's kernel chains tens of passes (Clenshaw or Horner steps, a branch's
gathers and scatters) over its array; at 1e6 elements every pass streams the whole array
through memory. Running the same flat kernel on blocks of ``BLOCK_ELEMENTS`` keeps each
block's temporaries in cache, the way the blocked elementwise engine
(``backends/elementwise``) runs a fused program. Each element's result depends only on that
element, so the blocked result is the same, bit for bit.
"""
from __future__ import annotations

import numpy as np

from ..elementwise import BLOCK_ELEMENTS
from ..elementwise.eager import ENGINE_MIN_SIZE


def blocked(xp, fn, compute=None):
    """``fn`` (array -> array of the same shape) run block by block over the flattened
    input when it is a numpy array of at least ``ENGINE_MIN_SIZE`` elements; other
    namespaces (CuPy) and smaller arrays call it once. With ``compute`` (a dtype), each
    block is cast to it before ``fn`` and the result back to the input's dtype (as
    ``pointwise._in_float64``, without the whole-array float64 copies)."""
    def call(x):
        if compute is None or x.dtype == compute:
            return fn(x)
        return fn(x.astype(compute)).astype(x.dtype, copy=False)

    if xp is not np:
        return call

    def run(x):
        n = x.size
        if n < ENGINE_MIN_SIZE:
            return call(x)
        flat = x.reshape(-1)
        out = np.empty(n, dtype=x.dtype)
        for lo in range(0, n, BLOCK_ELEMENTS):
            out[lo:lo + BLOCK_ELEMENTS] = call(flat[lo:lo + BLOCK_ELEMENTS])
        return out.reshape(x.shape)
    return run


def blocked_binary(xp, fn):
    """``fn(a, b, *args)`` of two arrays that broadcast together (elementwise, result of
    the broadcast shape, in a's dtype) run block by block as ``blocked``."""
    if xp is not np:
        return fn

    def run(a, b, *args):
        a, b = np.broadcast_arrays(a, b)
        n = a.size
        if n < ENGINE_MIN_SIZE:
            return fn(a, b, *args)
        fa, fb = a.reshape(-1), b.reshape(-1)
        out = np.empty(n, dtype=a.dtype)
        for lo in range(0, n, BLOCK_ELEMENTS):
            hi = lo + BLOCK_ELEMENTS
            out[lo:hi] = fn(fa[lo:hi], fb[lo:hi], *args)
        return out.reshape(a.shape)
    return run
