"""Running extrema and NaN-skipping sums: cummax, cummin (values with their indices) and
nansum.

``dim`` arrives wrapped. PyTorch's conventions: cummax/cummin report the *last* index of
a tie (a later equal value takes over), and once a NaN is seen the values stay NaN with
the index of the latest NaN; nansum sums as ``sum`` does (integral and bool inputs in
int64, float16/bfloat16 accumulated in float32) with NaN counted as zero.

cummax/cummin are ``ufunc.accumulate`` of ``xp.maximum``/``xp.minimum`` (numpy's loop,
the fastest on the host), for the values and for the indices. CuPy's accumulate is only
cumsum/cumprod (``ufunc.accumulate`` in ``cupy/_core/_kernel.pyx``), so the cuda plugin
hands these kernels a namespace whose maximum/minimum accumulate with a log-step scan
(``ember_cuda/kernels.py``, ``numpy_compatible``).
"""
from __future__ import annotations

from .reduction import F32, INT64, LOW_FLOATS, axis_of, reducer


def kernels(xp) -> dict:
    add_reduce, out = reducer(xp, "add", "sum")

    def running(ufunc):
        def kernel(a, dim):
            if a.ndim == 0:
                return a.copy(), xp.zeros((), xp.int64)
            x = a.astype(xp.float32) if a.dtype in LOW_FLOATS else a
            values = ufunc.accumulate(x, axis=dim)
            # a position takes over where it equals the running extremum (so ties go to
            # the later one) or is NaN; the index is the last such position so far
            takes_over = x == values
            # NOTE: a NaN propagates to the last running value, so only slices whose last
            # value is NaN can hold one: skip the isnan pass otherwise (ints never)
            last = values[(slice(None),) * dim + (slice(-1, None),)]
            if x.dtype.kind in "fc" and bool((last != last).any()):  # noqa: PLR0124
                takes_over |= x != x  # noqa: PLR0124 - x != x is isnan
            shape = [1] * a.ndim
            shape[dim] = a.shape[dim]
            pos = xp.arange(a.shape[dim], dtype=xp.int64).reshape(shape)
            indices = xp.maximum.accumulate(takes_over * pos, axis=dim)  # mul < where
            return values.astype(a.dtype, copy=False), indices
        return kernel

    def nansum(a, dim, keepdim, dtype):
        if dtype is not None and dtype != a.dtype:
            a = a.astype(dtype)
        elif a.dtype.kind in "biu":
            dtype = INT64
        axis = None if dim is None else axis_of(a, dim)
        if a.dtype.kind in "biu":
            return a.sum(axis=axis, dtype=dtype, keepdims=keepdim)
        x = a.astype(F32) if a.dtype in LOW_FLOATS else a
        # A sum without NaN saw no NaN (inf - inf gives one too, and the masked sum below
        # is then taken): one pass for the common case, the same additions in both.
        r = add_reduce(x, axis, None, out=out, keepdims=keepdim)
        total = add_reduce(r, None)  # NaN if any of r is (or holds inf and -inf)
        if total != total:  # noqa: PLR0124
            r = add_reduce(xp.where(x != x, x.dtype.type(0), x),  # noqa: PLR0124
                           axis, None, out=out, keepdims=keepdim)
        return r if x is a else r.astype(a.dtype)

    return {"cummax": running(xp.maximum), "cummin": running(xp.minimum),
            "nansum": nansum}
