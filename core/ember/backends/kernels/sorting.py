"""Sorting and selection kernels: sort, argsort, topk, one_hot.

Sorts are always stable (a valid answer for ``stable=False`` too), so ties keep their
input order in both directions. NaN sorts as the largest value: last ascending, first
descending, and first among ``topk(largest=True)``, as in PyTorch. ``dim`` arrives wrapped.
"""
from __future__ import annotations

from ...errors import DtypeError
from ...types import bool_


def kernels(xp) -> dict:
    def argsort_stable(a, dim, descending):
        if a.dtype.name == "bfloat16":
            # ml_dtypes' bfloat16 sorts wrongly around NaN; float32 keys order it exactly
            a = a.astype(xp.float32)
        if not descending:
            return a.argsort(axis=dim, kind="stable")
        # Negating breaks unsigned ints, bools and NaN; instead sort the reversed input
        # stably and reverse back, which keeps ties in input order.
        last = a.shape[dim] - 1
        r = xp.flip(a, axis=dim).argsort(axis=dim, kind="stable")
        return last - xp.flip(r, axis=dim)

    def sort(a, dim, descending, stable):
        if a.ndim == 0:
            return a.copy(), xp.zeros((), xp.int64)
        idx = argsort_stable(a, dim, descending)
        return xp.take_along_axis(a, idx, axis=dim), idx.astype(xp.int64, copy=False)

    def argsort(a, dim, descending, stable):
        if a.ndim == 0:
            return xp.zeros((), xp.int64)
        return argsort_stable(a, dim, descending).astype(xp.int64, copy=False)

    def topk_indices(a, k, dim, largest):
        n = a.shape[dim]
        if 0 < k and 8 * k < n:
            # Partition first (O(n)), then sort only the k winners.
            part = a.argpartition(n - k if largest else k - 1, axis=dim)
            keep = (slice(None),) * dim + (slice(n - k, None) if largest else slice(0, k),)
            idx = part[keep]
            order = argsort_stable(xp.take_along_axis(a, idx, axis=dim), dim, largest)
            return xp.take_along_axis(idx, order, axis=dim)
        return argsort_stable(a, dim, largest)[(slice(None),) * dim + (slice(0, k),)]

    def topk(a, k, dim, largest, sorted_):
        n = a.shape[dim] if a.ndim else 1
        if not 0 <= k <= n:
            raise IndexError(f"topk(): k={k} is out of range for dimension {dim} of size {n} "
                             f"(input shape {list(a.shape)}); expected 0 <= k <= {n}")
        if a.ndim == 0:
            return a.copy(), xp.zeros((), xp.int64)
        # NOTE: the result is always sorted; sorted=False only allows any order.
        idx = topk_indices(a, k, dim, largest)
        return xp.take_along_axis(a, idx, axis=dim), idx.astype(xp.int64, copy=False)

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

    return {"sort": sort, "argsort": argsort, "topk": topk, "one_hot": one_hot}


# PyTorch has no topk for bools ("topk_cpu" not implemented for 'Bool').
UNSUPPORTED = {"topk": frozenset({bool_})}
