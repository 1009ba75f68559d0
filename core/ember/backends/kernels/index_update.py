"""Updates of whole slices picked by an index along one dim: index_add, index_fill.

Both return a new array (``structured: inplace`` stores it into ``self`` for the ``_``
forms, after every check has passed). ``index`` is a 0-d or 1-d int64/int32 tensor;
``dim`` arrives wrapped. A 0-d ``self`` is treated as shape (1,), as PyTorch does.
"""
from __future__ import annotations

from ...errors import DtypeError, ShapeError
from .copying import cast_scalar
from .indexing import add_at_dim, check_bounds, check_index_dtype
from .pointwise import scalar_to


def _vector(op: str, index):
    if index.ndim > 1:
        raise IndexError(f"{op}(): index is supposed to be a vector (0-d or 1-d), got shape "
                         f"{list(index.shape)}; flatten it with .reshape(-1)")
    return index.reshape(-1)


def kernels(xp) -> dict:
    def index_add(a, dim, index, source, alpha):
        check_index_dtype("index_add", index)
        idx = _vector("index_add", index)
        if source.dtype != a.dtype:
            raise DtypeError(f"index_add(): self ({a.dtype}) and source ({source.dtype}) must "
                             f"have the same dtype; convert source with .to(self.dtype)")
        a1 = a.reshape(a.shape or (1,))
        s1 = source.reshape(source.shape or (1,))
        expect = a1.shape[:dim] + (idx.size,) + a1.shape[dim + 1:]
        if s1.shape != expect:
            raise ShapeError(f"index_add(): expected source of shape {list(expect)} (self's "
                             f"shape {list(a.shape)} with dim {dim} of len(index) = "
                             f"{idx.size}), got {list(source.shape)}")
        check_bounds("index_add", idx, dim, a1.shape[dim], allow_negative=False)
        if a.dtype.kind != "b" and not (alpha.__class__ is int and alpha == 1):
            s1 = s1 * scalar_to(alpha, a.dtype)  # PyTorch casts alpha: 0.5 -> 0 for ints
        if a.dtype.kind == "b":  # bool + bool is logical or: count in int64, then test
            acc = a1.astype(xp.int64)
            add_at_dim(xp, acc, dim, idx, s1.astype(xp.int64))
            return (acc != 0).reshape(a.shape)
        out = a1.copy()
        add_at_dim(xp, out, dim, idx, s1)  # repeated indices accumulate
        return out.reshape(a.shape)

    def index_fill(a, dim, index, value):
        check_index_dtype("index_fill", index)
        idx = _vector("index_fill", index)
        a1 = a.reshape(a.shape or (1,))
        n = a1.shape[dim]
        check_bounds("index_fill", idx, dim, n, allow_negative=True)
        v = cast_scalar(value, a.dtype, "index_fill")
        out = a1.copy()
        out[(slice(None),) * dim + (idx % max(n, 1),)] = v
        return out.reshape(a.shape)

    return {"index_add": index_add, "index_fill": index_fill}
