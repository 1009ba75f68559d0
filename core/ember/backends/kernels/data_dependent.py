"""Kernels whose output size depends on the input's values: nonzero (and its companion
count_nonzero), unique, unique_dim, unique_consecutive, and repeat_interleave's index.

Indices are int64 (``repeat_interleave`` keeps its int32 ``repeats`` dtype, as PyTorch).
The unique kernels sort, then cut runs of equal entries (rows for ``dim``): NaN never
equals NaN, so every NaN is its own entry, sorted last, as in PyTorch. ``sorted=False``
still gives sorted values (PyTorch leaves the order unspecified). Inverse indices and
counts are computed only when asked for; otherwise they are empty, as ``torch._unique2``
returns them.
"""
from __future__ import annotations

from ...types import bool_, int8, int16, uint8
from .pointwise import FLOATING

# PyTorch's repeat_interleave_cpu takes Int and Long repeats only.
UNSUPPORTED = {"repeat_interleave.Tensor": FLOATING | {bool_, uint8, int8, int16}}


def kernels(xp) -> dict:
    empty_index = xp.zeros((0,), dtype=xp.int64)

    def sort_keys(a):
        # ml_dtypes' bfloat16 sorts wrongly around NaN; its float32 values order it exactly
        if a.dtype.name == "bfloat16":
            return a.astype(xp.float32)
        return a.astype(xp.uint8) if a.dtype == bool else a

    def runs(rows, order, inverse_shape, want_inverse, want_counts):
        """Cut ``rows`` (n, m), already in scan order, into runs of equal rows.

        Returns (mask of each run's first row, inverse, counts); ``order`` maps scan
        position -> input position (None: the identity)."""
        n = rows.shape[0]
        first = xp.ones((n,), dtype=bool)
        if n > 1:
            first[1:] = (rows[1:] != rows[:-1]).any(axis=1)
        inverse = counts = empty_index
        if want_inverse:
            ids = xp.cumsum(first).astype(xp.int64) - 1
            if order is not None:
                inv = xp.empty((n,), dtype=xp.int64)
                inv[order] = ids
                ids = inv
            inverse = ids.reshape(inverse_shape)
        if want_counts:
            starts = xp.nonzero(first)[0]
            counts = xp.diff(xp.concatenate([starts, xp.asarray([n], dtype=starts.dtype)]))
            counts = counts.astype(xp.int64, copy=False)
        return first, inverse, counts

    def as_rows(a, dim):
        if dim is None:
            return a.reshape(-1, 1), a.shape
        if a.ndim == 0:
            raise IndexError("unique: dim given for a 0-d tensor; pass dim=None")
        m = xp.moveaxis(a, dim, 0)
        return m.reshape(m.shape[0], -1), (m.shape[0],)

    def from_rows(rows, a, dim):
        if dim is None:
            return rows.reshape(-1)
        m_shape = (rows.shape[0],) + tuple(s for i, s in enumerate(a.shape) if i != dim)
        return xp.moveaxis(rows.reshape(m_shape), 0, dim)

    def unique_rows(a, dim, want_inverse, want_counts):
        rows, inverse_shape = as_rows(a, dim)
        keys = sort_keys(rows)
        if rows.shape[1] == 1:
            order = xp.argsort(keys[:, 0])
        elif rows.shape[1] == 0:
            order = xp.arange(rows.shape[0])
        else:  # lexsort's last key is the primary one: the first column leads
            order = xp.lexsort(keys.T[::-1])
        rows = rows[order]
        first, inverse, counts = runs(rows, order, inverse_shape, want_inverse, want_counts)
        return from_rows(rows[first], a, dim), inverse, counts

    def unique2(a, sorted_, return_inverse, return_counts):
        return unique_rows(a, None, return_inverse, return_counts)

    def unique_dim(a, dim, sorted_, return_inverse, return_counts):
        return unique_rows(a, dim, return_inverse, return_counts)

    def unique_consecutive(a, return_inverse, return_counts, dim):
        rows, inverse_shape = as_rows(a, dim)
        first, inverse, counts = runs(rows, None, inverse_shape, return_inverse, return_counts)
        return from_rows(rows[first], a, dim), inverse, counts

    def nonzero(a):
        if a.ndim == 0:  # numpy refuses nonzero of a 0-d array; PyTorch gives (1, 0) / (0, 0)
            return xp.zeros((int(bool(a)), 0), dtype=xp.int64)
        return xp.stack(xp.nonzero(a), axis=1).astype(xp.int64, copy=False)

    def count_nonzero(a, dim):
        # [] counts over every dim, as PyTorch; a 0-d tensor's dim 0 (or -1) is the whole
        axis = tuple(dim) if dim and a.ndim else None
        return xp.asarray((a != 0).sum(axis=axis, dtype=xp.int64))

    def repeat_interleave(repeats, output_size):
        if repeats.ndim != 1:
            raise RuntimeError(f"repeat_interleave(): repeats must be a 1-D tensor, got shape "
                               f"{list(repeats.shape)}")
        if repeats.size and int(repeats.min()) < 0:
            raise RuntimeError(f"repeat_interleave(): repeats can not be negative, got "
                               f"{int(repeats.min())}")
        ends = xp.cumsum(repeats, dtype=xp.int64)
        total = int(ends[-1]) if repeats.size else 0
        if output_size is not None and output_size != total:
            raise RuntimeError(f"repeat_interleave(): output_size={output_size} does not "
                               f"match the sum of repeats ({total}); pass output_size=None")
        # index i repeats[i] times: position p belongs to the first i with ends[i] > p
        idx = xp.searchsorted(ends, xp.arange(total, dtype=xp.int64), side="right")
        return idx.astype(repeats.dtype, copy=False)

    return {"nonzero": nonzero, "count_nonzero": count_nonzero, "_unique2": unique2,
            "unique_dim": unique_dim, "unique_consecutive": unique_consecutive,
            "repeat_interleave.Tensor": repeat_interleave}
