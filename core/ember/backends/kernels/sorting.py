"""Sorting and selection kernels: sort, argsort, topk, one_hot, and the order statistics
kthvalue, median/nanmedian along a dim and mode.

Sorts are always stable (a valid answer for ``stable=False`` too), so ties keep their
input order in both directions. NaN sorts as the largest value: last ascending, first
descending, and first among ``topk(largest=True)``, as in PyTorch. ``dim`` arrives wrapped.
"""
from __future__ import annotations

from ...errors import DtypeError
from ...types import bool_
from .reduction import BFLOAT16, reducer
from .selection import selection_kernels


def kernels(xp) -> dict:
    add_reduce, _ = reducer(xp, "add", "sum")
    max_reduce, _ = reducer(xp, "maximum", "max")

    def keys_of(a):
        # ml_dtypes' bfloat16 sorts wrongly around NaN; float32 keys order it exactly
        return a.astype(xp.float32) if a.dtype == BFLOAT16 else a

    def argsort_last(a, descending):
        """Stable argsort along the last axis. Negating breaks unsigned ints, bools and NaN:
        descending sorts the reversed input stably and reverses back, which keeps ties in
        input order. (Slices, not ``xp.flip``: a view for ~0.1 us, not ~5.)"""
        if not descending:
            return a.argsort(axis=-1, kind="stable")
        return (a.shape[-1] - 1) - a[..., ::-1].argsort(axis=-1, kind="stable")[..., ::-1]

    def argsort_stable(a, dim, descending):
        a = keys_of(a)
        last = a.ndim - 1
        if dim == last:
            return argsort_last(a, descending)
        return xp.moveaxis(argsort_last(xp.moveaxis(a, dim, -1), descending), -1, dim)

    def sort(a, dim, descending, stable):
        if a.ndim == 0:
            return a.copy(), xp.zeros((), xp.int64)
        idx = argsort_stable(a, dim, descending)
        return xp.take_along_axis(a, idx, axis=dim), idx.astype(xp.int64, copy=False)

    def argsort(a, dim, descending, stable):
        if a.ndim == 0:
            return xp.zeros((), xp.int64)
        return argsort_stable(a, dim, descending).astype(xp.int64, copy=False)

    def winners(keys, k, largest):
        """Flat positions (m * k,) of the k best of each row of keys (m, n), row by row
        in input order, from a partition of the values (~3x faster than
        ``argpartition``): all at least as good as the k-th best, its ties beyond k
        dropped from the right. None when keys hold NaN."""
        if keys.dtype.kind == "f":
            top = max_reduce(keys, None)
            if top != top:  # noqa: PLR0124 - NaN: its order needs argpartition's rules
                return None
        m, n = keys.shape
        part = keys.copy()
        kth = n - k if largest else k - 1
        part.partition(kth, axis=-1)
        v = part[:, kth:kth + 1]
        # NOTE: flat positions: 2-d nonzero unravels its indices, ~30x slower
        mask = keys >= v if largest else keys <= v
        at = xp.flatnonzero(mask)
        if at.size != m * k:  # ties of the k-th best beyond k: keep those from the left
            ties = keys == v
            need = k - add_reduce(mask & ~ties, -1, xp.int64, keepdims=True)
            mask &= ~ties | (ties.cumsum(axis=-1, dtype=xp.int64) <= need)
            at = xp.flatnonzero(mask)
        return at

    def topk_last(x, k, largest):
        """(values, indices) of the k best along the last axis, best first, ties in input
        order."""
        keys, n = keys_of(x), x.shape[-1]
        shape = x.shape[:-1] + (k,)
        rows = keys.reshape(-1, n)
        # Select first (O(n)), then sort only the k winners, taken in input order so that
        # the stable sort keeps their ties in it; flat 1-d indexing throughout (2-d fancy
        # indexing and take_along_axis cost ~10 us each at small sizes).
        at = winners(rows, k, largest) if 0 < k and 8 * k < n else None
        if at is None:
            if 0 < k and 8 * k < n:  # NaN: argpartition orders it
                part = rows.argpartition(n - k if largest else k - 1, axis=-1)
                part = part[:, n - k:] if largest else part[:, :k]
                part.sort(axis=-1)
                at = (part + xp.arange(0, rows.size, n)[:, None]).reshape(-1)
            else:
                idx = argsort_last(keys, largest)[..., :k]
                return xp.take_along_axis(x, idx, axis=-1), idx
        m = rows.shape[0]
        order = argsort_last(rows.reshape(-1)[at].reshape(m, k), largest)
        at = at[(order + xp.arange(0, m * k, k)[:, None]).reshape(-1)]
        return x.reshape(-1)[at].reshape(shape), (at % n).reshape(shape)

    def topk(a, k, dim, largest, sorted_):
        n = a.shape[dim] if a.ndim else 1
        if not 0 <= k <= n:
            raise IndexError(f"topk(): k={k} is out of range for dimension {dim} of size {n} "
                             f"(input shape {list(a.shape)}); expected 0 <= k <= {n}")
        if a.ndim == 0:
            return a.copy(), xp.zeros((), xp.int64)
        # NOTE: the result is always sorted; sorted=False only allows any order.
        x = a if dim == a.ndim - 1 else xp.moveaxis(a, dim, -1)
        values, idx = topk_last(x, k, largest)
        if x is not a:
            values, idx = xp.moveaxis(values, -1, dim), xp.moveaxis(idx, -1, dim)
        return values, idx.astype(xp.int64, copy=False)

    def one_hot(a, num_classes):
        if a.dtype != xp.int64:
            raise DtypeError(f"one_hot(): expected an index tensor of dtype int64, got "
                             f"{a.dtype.name}; convert it with .long()")
        if a.size and int(a.min()) < 0:
            raise IndexError(f"one_hot(): class values must be non-negative, got "
                             f"{int(a.min())}")
        if num_classes < -1:
            raise ValueError(f"one_hot(): num_classes must be -1 (infer) or non-negative, "
                             f"got {num_classes}")
        if num_classes == -1:
            if a.size == 0:
                raise ValueError("one_hot(): cannot infer the number of classes from an empty "
                                 "tensor; pass num_classes")
            num_classes = int(a.max()) + 1
        elif a.size and int(a.max()) >= num_classes:
            raise IndexError(f"one_hot(): class values must be smaller than num_classes="
                             f"{num_classes}, got {int(a.max())}")
        # NOTE: zeros plus one write per row: no (..., C) compare and int64 conversion
        out = xp.zeros((a.size, num_classes), dtype=xp.int64)
        out[xp.arange(a.size), a.reshape(-1)] = 1
        return out.reshape(a.shape + (num_classes,))

    table = {"sort": sort, "argsort": argsort, "topk": topk, "one_hot": one_hot}
    table.update(selection_kernels(xp))
    return table


# PyTorch has no topk for bools ("topk_cpu" not implemented for 'Bool'), nor median,
# nanmedian or kthvalue ("not implemented for 'Bool'").
UNSUPPORTED = {op: frozenset({bool_})
               for op in ("topk", "kthvalue", "median.dim", "nanmedian.dim")}
