"""Order statistics along a dim by selection, not sorting: kthvalue, median.dim,
nanmedian.dim (``xp.partition``, O(n) per slice) and mode (one value sort).

Results equal those of a stable sort with NaN last (PyTorch's order): the value is the
k-th of the sorted slice, and the index is that of the r-th equal element in input
order, where r counts the equal values the stable sort put before it. ``partition``
places the k-th value but scrambles ties, so the index is found afterwards: r is k + 1
minus the count of smaller values (those left of k in the partition), and the r-th
match is the first column where the running count of ``x == v`` reaches r (the first
match, ``argmax``, when r is 1, as it is for distinct values).

Slices are moved to rows of a 2-D ``(m, n)`` array; ``dim`` arrives wrapped. bfloat16
and float16 select in float32 (exact both ways; ml_dtypes' bfloat16 orders NaN wrongly).
Written once against ``xp``: CuPy has ``partition``, ``sort`` and ``take_along_axis``.
"""
from __future__ import annotations

from collections import namedtuple

from .reduction import F32, LOW_FLOATS, reducer

Rows = namedtuple("Rows", ["x", "shape"])  # (m, n) slices, and the output shape


def selection_kernels(xp) -> dict:
    add_reduce, _ = reducer(xp, "add", "sum")
    max_reduce, _ = reducer(xp, "maximum", "max")
    min_reduce, _ = reducer(xp, "minimum", "min")

    def rows(a, dim):
        n = a.shape[dim]
        if dim != a.ndim - 1:
            a = xp.moveaxis(a, dim, -1)
        shape = a.shape[:-1]
        x = a.reshape(-1, n)
        return Rows(x.astype(F32) if x.dtype in LOW_FLOATS else x, shape)

    def finish(a, values, indices, r, dim, keepdim):
        values = values.reshape(r.shape).astype(a.dtype, copy=False)
        indices = indices.reshape(r.shape)
        if keepdim:
            values, indices = xp.expand_dims(values, dim), xp.expand_dims(indices, dim)
        return values, indices.astype(xp.int64, copy=False)

    def holds_nan(x) -> bool:
        """Whether float x holds a NaN: one max pass (max propagates NaN)."""
        if x.dtype.kind != "f" or not x.size:
            return False
        m = max_reduce(x, None)
        return bool(m != m)  # noqa: PLR0124 - isnan

    def nth_equal(x, v, r, nan):
        """Per row of x (m, n), the column of the r-th (from 1) element equal to v (m, 1);
        NaN equals NaN when ``nan`` (x may hold NaN). r is (m, 1) ints, or None for 1."""
        eq = x == v
        if nan:
            v_nan = v != v  # noqa: PLR0124
            eq |= (x != x) & v_nan  # noqa: PLR0124
        if r is None:
            return eq.argmax(axis=-1)
        # NOTE: an int64 count: rows longer than 2**31 would wrap an int32 one
        return (eq.cumsum(axis=-1, dtype=xp.int64) == r).argmax(axis=-1)

    def select(x, k, nan):
        """(values (m, 1), columns (m,)) of the k-th (from 0) of each sorted row of x;
        ``nan``: x may hold NaN."""
        part = x.copy()
        part.partition(k, axis=-1)
        v = part[:, k:k + 1]
        lt = add_reduce(part[:, :k] < v, -1, xp.int64, keepdims=True)
        if nan:
            v_nan = v != v  # noqa: PLR0124
            numbers = add_reduce(x == x, -1, xp.int64, keepdims=True)  # noqa: PLR0124
            lt = xp.where(v_nan, numbers, lt)  # every number sorts before NaN
        # r = k + 1 - lt is 1 for every row unless some value ties with smaller columns
        r = None if k == 0 or not lt.size or int(min_reduce(lt, None)) == k else k + 1 - lt
        return v, nth_equal(x, v, r, nan)

    def check_dim(op, a, dim):
        if a.shape[dim] == 0:
            raise IndexError(f"{op}(): expected reduction dim {dim} to have non-zero size; "
                             f"the input has shape {list(a.shape)}")

    def kthvalue(a, k, dim, keepdim):
        n = a.shape[dim] if a.ndim else 1
        if not 1 <= k <= n:
            raise IndexError(f"kthvalue(): k={k} is out of range for dimension {dim} of size "
                             f"{n} (input shape {list(a.shape)}); expected 1 <= k <= {n}")
        if a.ndim == 0:
            return a.copy(), xp.zeros((), xp.int64)
        r = rows(a, dim)
        v, idx = select(r.x, k - 1, holds_nan(r.x))
        return finish(a, v, idx, r, dim, keepdim)

    def median(ignore_nan):
        op = "nanmedian" if ignore_nan else "median"

        def kernel(a, dim, keepdim):
            if a.ndim == 0:
                return a.copy(), xp.zeros((), xp.int64)
            check_dim(op, a, dim)
            r = rows(a, dim)
            x, n = r.x, r.x.shape[1]
            nan = holds_nan(x)
            v, idx = select(x, (n - 1) // 2, nan)
            if nan:
                m = max_reduce(x, -1)
                has = m != m  # noqa: PLR0124 - the rows holding NaN
                sub = x[has]
                if ignore_nan:  # the lower median of the numbers: a sort of these rows only
                    numbers = add_reduce(sub == sub, -1, xp.int64, keepdims=True)  # noqa: PLR0124
                    k = xp.maximum((numbers - 1) // 2, 0)  # an all-NaN row: its first NaN
                    sv = xp.take_along_axis(xp.sort(sub, axis=-1), k, axis=-1)
                    lt = add_reduce(sub < sv, -1, xp.int64, keepdims=True)
                    v[has], idx[has] = sv, nth_equal(sub, sv, k + 1 - lt, True)
                else:  # a row holding NaN: its first NaN
                    v[has], idx[has] = xp.nan, (sub != sub).argmax(axis=-1)  # noqa: PLR0124
            return finish(a, v, idx, r, dim, keepdim)
        return kernel

    def mode(a, dim, keepdim):
        if a.ndim == 0:
            return a.copy(), xp.zeros((), xp.int64)
        check_dim("mode", a, dim)
        r = rows(a, dim)
        x, n = r.x, r.x.shape[1]
        s = xp.sort(x, axis=-1)
        starts = xp.empty(s.shape, dtype=bool)
        starts[:, 0] = True
        xp.not_equal(s[:, 1:], s[:, :-1], out=starts[:, 1:])  # NaNs: runs of one
        pos = xp.arange(n, dtype=xp.int64)
        run = pos - xp.maximum.accumulate(starts * pos, axis=-1)  # position in its run
        # NOTE: flat indexing: take_along_axis costs ~10 us of checks at small sizes
        row_start = xp.arange(0, s.size, n, dtype=xp.int64)
        # the first longest run ends at the first argmax: the smallest most frequent value
        v = s.reshape(-1)[run.argmax(axis=-1) + row_start][:, None]
        # its last index in input order (PyTorch's choice); an all-NaN row (the one way
        # NaN wins) takes index 0, where the stable sort put it
        idx = (n - 1) - (x[:, ::-1] == v).argmax(axis=-1)
        if x.dtype.kind == "f":
            idx = xp.where(v[:, 0] != v[:, 0], 0, idx)  # noqa: PLR0124
        # NOTE: gathered from x: of equal values -0.0 and 0.0, the one at that index
        v = xp.ascontiguousarray(x).reshape(-1)[idx + row_start]
        return finish(a, v, idx, r, dim, keepdim)

    return {"kthvalue": kthvalue, "median.dim": median(False),
            "nanmedian.dim": median(True), "mode": mode}
