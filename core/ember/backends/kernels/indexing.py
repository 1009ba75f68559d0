"""Indexing kernels: ``t[...]`` (``index``, ``index_put_``), index_select, gather,
scatter, scatter_add, take_along_dim.

``index`` and ``index_put_`` are not declared ops: ``ember._indexing`` calls them with a
tuple that it already normalized: Python ints (in range), slices (step > 0), None, Python
bools, and backend arrays (integer, or bool masks whose shape it checked). PyTorch applies
ints and slices first (basic indexing, a view) and the arrays after, so ``x[0, :, [0, 1]]``
has shape (3, 2) for x of shape (2, 3, 4), where numpy would give (2, 3); ``split_index``
does the same two steps. Integer arrays are bounds-checked here because CuPy wraps
out-of-range indices silently.

Index tensors of gather/scatter/index_select/take_along_dim may be int32 or int64.
"""
from __future__ import annotations

import functools

import numpy as np  # dtype facts only; arrays go through xp

from ...errors import DtypeError, ShapeError
from .copying import cast_scalar
from .shape import check_broadcast_to


_ELLIPSIS = (Ellipsis,)


def _is_array(it) -> bool:
    return hasattr(it, "dtype")


def split_index(xp, idx):
    """(basic, advanced or None): ``a[basic]`` is a view, then ``view[advanced]`` applies
    the array indices to what is left (each ``...`` keeps results arrays, not scalars)."""
    basic, adv, has_adv = [], [], False
    for it in idx:
        if it is None or it is True or it is False:
            basic.append(None)  # a new dim of size 1; a bool then keeps it or empties it
            adv.append(slice(None) if it is None else xp.asarray([it]))
            has_adv = has_adv or it is not None
        elif it.__class__ is int:
            basic.append(it)
        elif it.__class__ is slice:
            basic.append(it)
            adv.append(slice(None))
        else:  # an array covers one dim, a bool mask covers mask.ndim dims
            basic += [slice(None)] * (it.ndim if it.dtype == bool else 1)
            adv.append(it)
            has_adv = True
    return tuple(basic) + (Ellipsis,), (tuple(adv) + (Ellipsis,) if has_adv else None)


def whole_mask(adv, ndim: int):
    """``adv``, or its bool mask alone when that covers all ``ndim`` dims: numpy's
    single-mask path is 2x faster than the same mask followed by ``...`` (and the result
    is 1-d either way)."""
    first = adv[0]
    if len(adv) == 2 and first.__class__ is not slice and _is_array(first) and \
            first.dtype == bool and first.ndim == ndim:
        return first
    return adv


def check_index_arrays(op: str, shape, adv) -> None:
    """IndexError for an integer array entry outside [-size, size) of the dim it indexes."""
    d = 0
    for it in adv:
        if it is Ellipsis:
            break
        if _is_array(it) and it.dtype != bool:
            check_bounds(op, it, d, shape[d], allow_negative=True)
        d += it.ndim if _is_array(it) and it.dtype == bool else 1


def check_bounds(op: str, idx, dim: int, size: int, allow_negative: bool) -> None:
    """Raise IndexError naming the first-found index outside the valid range of ``dim``."""
    if idx.size == 0:
        return
    if not allow_negative and idx.dtype.kind == "i" and idx.dtype.itemsize >= 4 and \
            size < 2 ** 31:
        # one pass, not min and max: negatives read as unsigned are >= 2 ** 31 > size
        if int(idx.view(_UNSIGNED[idx.dtype.itemsize]).max()) < size:
            return
    lo, hi = int(idx.min()), int(idx.max())
    if lo < (-size if allow_negative else 0) or hi >= size:
        bad = lo if lo < (-size if allow_negative else 0) else hi
        raise IndexError(f"{op}(): index {bad} is out of bounds for dimension {dim} with "
                         f"size {size}")


_UNSIGNED = {4: np.uint32, 8: np.uint64}


_INDEX_DTYPES = (np.dtype(np.int64), np.dtype(np.int32))

# NOTE: up to this many repeats of one index, add_at_dim adds one round of distinct
# indices at a time (a buffered fancy add, exactly np.add.at's order); beyond it, runs of
# equal indices are summed by np.add.reduceat first (another rounding order, within
# dtype tolerance), which costs less than a Python round per repeat.
_MAX_ROUNDS = 16
_MAX_SLICES = 256  # up to this many indices on an inner dim, add slice by slice ...
_MIN_SLICE = 256  # ... when each slice has at least this many elements
_SMALL = 8192  # fewer source elements: np.add.at itself (the sort costs ~50 us)


def add_at_dim(xp, out, dim: int, idx, src) -> None:
    """``out[(:,) * dim + (idx,)] += src`` in place, repeated indices accumulating, as
    ``xp.add.at``; ``idx`` 1-d integer in [0, out.shape[dim]), ``src`` of out's shape
    with ``len(idx)`` at ``dim``, out's dtype.

    np.add.at is an unbuffered loop that is slow for anything but a 1-d array with a 1-d
    index (20-40 ms per 1e6 rows-of-floats); CuPy's add.at is an atomic scatter_add,
    fast on the GPU, so non-numpy namespaces keep it. numpy: sort the index stably, then
    add each round of distinct indices with a buffered ``out[u] += src[k]``.
    """
    if idx.size == 0:
        return
    if xp is not np or src.size < _SMALL:  # below ~8e3 elements add.at's loop is cheaper
        xp.add.at(out, (slice(None),) * dim + (idx,), src)
        return
    if out.size == out.shape[dim]:  # rows of one element: numpy's 1-d fast path
        np.add.at(out.reshape(-1), idx, src.reshape(-1))  # dropping 1s keeps a view
        return
    lead = (slice(None),) * dim
    if dim and idx.size <= _MAX_SLICES and src.size >= _MIN_SLICE * idx.size:
        # NOTE: a fancy index on an inner dim gathers strided elements one by one; a few
        # slice adds (pad's and interpolate's backward) are ~1.5x faster, in add.at's order
        for j, i in enumerate(idx.tolist()):
            out[lead + (i,)] += src[lead + (j,)]
        return
    order = np.argsort(idx, kind="stable")
    s = idx[order]
    first = np.empty(s.size, dtype=bool)
    first[0] = True
    np.not_equal(s[1:], s[:-1], out=first[1:])
    if first.all():  # distinct indices: one buffered add
        out[lead + (idx,)] += src
        return
    pos = np.arange(s.size)
    rank = pos - np.maximum.accumulate(np.where(first, pos, 0))  # repeat number in its run
    rounds = int(rank.max()) + 1
    if rounds <= _MAX_ROUNDS:
        for r in range(rounds):
            sel = first if r == 0 else rank == r
            out[lead + (s[sel],)] += np.take(src, order[sel], axis=dim)
        return
    starts = np.flatnonzero(first)
    sums = np.add.reduceat(np.take(src, order, axis=dim), starts, axis=dim)
    out[lead + (s[starts],)] += sums.astype(out.dtype, copy=False)


def add_at_flat(xp, out, where, src) -> None:
    """``xp.add.at(out, where, src)`` for an advanced-index tuple ``where`` of broadcast
    integer arrays (src of their broadcast shape). numpy: one flat index into the
    C-contiguous ``out``, which takes np.add.at's 1-d fast path (4x faster than the
    multi-array loop); other namespaces and layouts keep ``xp.add.at``."""
    if xp is not np or not out.flags.c_contiguous:
        xp.add.at(out, where, src)
        return
    flat = np.broadcast_to(flat_index(out.shape, where), src.shape)
    np.add.at(out.reshape(-1), flat.reshape(-1), src.reshape(-1))


def flat_index(shape, where):
    """The positions in a C-contiguous array of ``shape`` that the advanced-index tuple
    ``where`` (one non-negative integer array per dim, broadcasting) picks."""
    # NOTE: the small broadcast terms (aranges) are summed first, so the full-size
    # index costs one pass (two when its dim is not the last)
    steps = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        steps[d] = steps[d + 1] * shape[d + 1]
    order = sorted(range(len(shape)), key=lambda d: where[d].size)
    flat = 0
    for d in order:
        w = where[d].astype(np.int64, copy=False)  # int32 may overflow
        flat = flat + (w if steps[d] == 1 else w * steps[d])
    return flat


def flat_along(shape, dim: int, index):
    """numpy: the positions in a C-contiguous array of ``shape`` that ``index`` (integer, in
    range, same ndim, no larger than shape apart from ``dim``) points to along ``dim``:
    ``index * step[dim]`` plus the small broadcast offsets of the other dims, int64, of
    index's shape (gather / scatter as one flat take / write); callers only read it."""
    offsets, dim_step = _offsets(shape, dim, index.shape)
    if dim_step != 1:
        flat = index * np.int64(dim_step)
        flat += offsets  # index's shape: offsets only spread over it
        return flat
    if offsets is None:
        return index.astype(np.int64, copy=False)  # NOTE: may be index itself: read only
    return np.add(index, offsets, dtype=np.int64)


@functools.lru_cache(maxsize=256)
def _offsets(shape: tuple, dim: int, index_shape: tuple):
    """(offsets or None, step of dim): the flat offsets of the dims other than ``dim`` over
    index_shape (1 at dim; read-only, cached: gather at 1e3 elements is ~5 us in all)."""
    offsets, step, dim_step = None, 1, 1
    for d in range(len(shape) - 1, -1, -1):
        if d != dim and index_shape[d] > 1:
            view = [1] * len(shape)
            view[d] = index_shape[d]
            term = np.arange(0, index_shape[d] * step, step).reshape(view)
            offsets = term if offsets is None else offsets + term
        if d == dim:
            dim_step = step
        step *= shape[d]
    if offsets is not None:
        offsets.flags.writeable = False
    return offsets, dim_step


def check_index_dtype(op: str, index) -> None:
    # NOTE: ``dtype.name`` (which numpy computes in Python, ~2 us) only for other byte orders
    if index.dtype not in _INDEX_DTYPES and index.dtype.name not in ("int64", "int32"):
        raise DtypeError(f"{op}(): expected dtype int64 or int32 for index, but got "
                         f"{index.dtype}; convert it with .long()")


def kernels(xp) -> dict:
    def index(a, idx):
        if len(idx) == 1 and idx[0].__class__ is slice:  # x[i:j], the commonest: a view
            return a[idx]
        for it in idx:
            if it.__class__ is not slice and it.__class__ is not int and it is not None:
                break
        else:  # basic indexing only: a view
            return a[idx + _ELLIPSIS]
        basic, adv = split_index(xp, idx)
        v = a[basic]
        if adv is None:
            return v
        check_index_arrays("index", v.shape, adv)
        r = v[whole_mask(adv, v.ndim)]
        # numpy treats a 0-d integer array like an int (a view); tensor indices copy
        return r.copy() if xp.may_share_memory(r, a) else r

    def index_put_(a, idx, value, accumulate=False):
        basic, adv = split_index(xp, idx)
        v = a[basic]  # a view: writing it writes a
        if adv is not None:
            check_index_arrays("index_put_", v.shape, adv)
        if not _is_array(value):
            value = cast_scalar(value, a.dtype, "index_put_")
        if adv is None:
            if _is_array(value):
                check_broadcast_to("index_put_", value.shape, v.shape, "value")
            if accumulate:
                v[...] += value
            else:
                v[...] = value
            return a
        try:
            if accumulate:  # repeated indices add up (plain v[adv] += value keeps one)
                sel_shape = v[adv].shape
                value = xp.broadcast_to(xp.asarray(value, dtype=a.dtype), sel_shape)
                put_accumulate(v, adv, value)
            else:
                # numpy/CuPy check the shapes before writing anything
                v[whole_mask(adv, v.ndim)] = value
        except ValueError as e:
            raise ShapeError(f"index_put_(): shape mismatch: value tensor of shape "
                             f"{list(getattr(value, 'shape', ()))} cannot be expanded to the "
                             f"indexing result ({e})") from None
        return a

    def put_accumulate(v, adv, value):
        """``xp.add.at(v, adv, value)``, faster on numpy for one array index: an integer
        one (the commonest, ``x[idx] += y``) adds along its dim; a bool mask picks each
        element at most once, so a buffered add is exact."""
        arrays = [d for d, it in enumerate(adv) if _is_array(it)]
        if len(arrays) != 1:
            xp.add.at(v, adv, value)
            return
        d = arrays[0]
        it = adv[d]
        if it.dtype == bool:
            v[whole_mask(adv, v.ndim)] += value
            return
        n = v.shape[d]
        idx = it.reshape(-1)
        if idx.size and int(idx.min()) < 0:
            idx = idx % n
        rows = value.reshape(v.shape[:d] + (idx.size,) + v.shape[d + 1:])
        add_at_dim(xp, v, d, idx, rows)

    def index_select(a, dim, index):
        check_index_dtype("index_select", index)
        if index.ndim > 1:
            raise IndexError(f"index_select(): index is supposed to be a vector, got shape "
                             f"{list(index.shape)}")
        idx = index.reshape(-1)
        if a.ndim == 0:
            if idx.size != 1:
                raise IndexError(f"index_select(): index to a 0-dim tensor can have only 1 "
                                 f"value, got {idx.size}")
            check_bounds("index_select", idx, 0, 1, allow_negative=False)
            return a.copy()
        check_bounds("index_select", idx, dim, a.shape[dim], allow_negative=False)
        return xp.take(a, idx, axis=dim)

    def gather(a, dim, index, sparse_grad):
        check_index_dtype("gather", index)
        a1, i1 = a.reshape(a.shape or (1,)), index.reshape(index.shape or (1,))
        check_scatter_shapes("gather", a1, dim, i1, None)
        if xp is np and a1.flags.c_contiguous:
            # one flat take: 2-3x faster than numpy's multi-array fancy index (and ~10x
            # than take_along_axis, which builds that index with Python checks)
            return np.take(a1.reshape(-1), flat_along(a1.shape, dim, i1)).reshape(index.shape)
        r = a1[fit(a1, dim, i1)][coords(i1, dim)]
        return r.reshape(index.shape)

    def scatter_into(op, a, dim, index, src, write):
        check_index_dtype(op, index)
        if src is not None and src.dtype != a.dtype:
            raise DtypeError(f"{op}(): expected self.dtype to be equal to src.dtype, got "
                             f"{a.dtype} and {src.dtype}; convert src with .to(self.dtype)")
        a1, i1 = a.reshape(a.shape or (1,)), index.reshape(index.shape or (1,))
        s1 = None if src is None else src.reshape(src.shape or (1,))
        check_scatter_shapes(op, a1, dim, i1, s1)
        out = a1.copy()
        values = None if s1 is None else \
            s1 if s1.shape == i1.shape else s1[tuple(slice(0, n) for n in i1.shape)]
        write(out, dim, i1, values)
        return out.reshape(a.shape)

    def put(out, dim, index, values):
        vector = expanded_vector(index, dim)
        if vector is not None:  # index_copy: whole slices along dim, one fancy write
            where = (slice(None),) * dim + (vector,)
            out[fit(out, dim, index)][where] = values
        elif xp is np:  # one flat write: ~3x faster than a multi-array fancy write
            out.reshape(-1)[flat_along(out.shape, dim, index)] = values
        else:
            out[coords(index, dim)] = values

    def scatter(a, dim, index, src):
        return scatter_into("scatter", a, dim, index, src, put)

    def scatter_value(a, dim, index, value):
        v = cast_scalar(value, a.dtype, "scatter")
        return scatter_into("scatter", a, dim, index, None,
                            lambda out, d, i, _: put(out, d, i, v))

    def scatter_add(a, dim, index, src):
        def write(out, dim, index, values):
            vector = expanded_vector(index, dim)
            if vector is not None:  # index_select's backward: a vector expanded along dim
                add_at_dim(xp, out[fit(out, dim, index)], dim, vector, values)
            elif xp is np:  # np.add.at's 1-d fast path, 4x faster than its multi-array loop
                np.add.at(out.reshape(-1), flat_along(out.shape, dim, index).reshape(-1),
                          values.reshape(-1))
            else:
                xp.add.at(out, coords(index, dim), values)
        return scatter_into("scatter_add", a, dim, index, src, write)

    def coords(index, dim):
        """Advanced-index tuple that sends index[i0..in] to position i_dim = index[...]."""
        out = []
        for d, n in enumerate(index.shape):
            shape = [1] * index.ndim
            shape[d] = n
            out.append(index if d == dim else xp.arange(n).reshape(shape))
        return tuple(out)

    def take_along_dim(a, indices, dim):
        check_index_dtype("take_along_dim", indices)
        if dim is None:
            flat = a.reshape(-1)
            check_bounds("take_along_dim", indices, 0, flat.size, allow_negative=True)
            return xp.take(flat, indices.reshape(-1) % max(flat.size, 1))
        if a.ndim != indices.ndim:
            raise ShapeError(f"take_along_dim(): input and indices should have the same "
                             f"number of dimensions, but got {a.ndim} dimensions for input, "
                             f"and {indices.ndim} dimensions for indices")
        a1, i1 = a.reshape(a.shape or (1,)), indices.reshape(indices.shape or (1,))
        common = broadcast_except(a1.shape, i1.shape, dim)
        n = a1.shape[dim]
        check_bounds("take_along_dim", i1, dim, n, allow_negative=True)
        a_b = xp.broadcast_to(a1, common[:dim] + (n,) + common[dim + 1:])
        i_b = xp.broadcast_to(i1, common[:dim] + (i1.shape[dim],) + common[dim + 1:])
        r = xp.take_along_axis(a_b, i_b % max(n, 1), axis=dim)
        return r.reshape(()) if a.ndim == 0 else r

    return {"index": index, "index_put_": index_put_, "index_select": index_select,
            "gather": gather, "scatter": scatter, "scatter.value": scatter_value,
            "scatter_add": scatter_add, "take_along_dim": take_along_dim}


def expanded_vector(index, dim: int):
    """The 1-d index along ``dim`` when ``index`` repeats it over every other dim (size 1
    or stride 0, as ``expand`` makes), else None."""
    if index.ndim == 1:
        return index
    if index.size and all(index.strides[d] == 0 or index.shape[d] == 1  # (empty: no vector)
                          for d in range(index.ndim) if d != dim):
        return index[tuple(slice(None) if d == dim else 0 for d in range(index.ndim))]
    return None


def fit(a, dim, index) -> tuple:
    """Slices of ``a`` down to ``index``'s sizes in every dim but ``dim`` (PyTorch's gather
    allows a smaller index there)."""
    return tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(index.shape))


def check_scatter_shapes(op: str, a, dim: int, index, src) -> None:
    """PyTorch's gather/scatter shape rules: same ndim; index no larger than self apart
    from ``dim`` and no larger than src anywhere; entries within [0, self.size(dim))."""
    if index.ndim != a.ndim or (src is not None and src.ndim != a.ndim):
        got = f"{index.ndim}" + ("" if src is None else f" and src has {src.ndim}")
        raise ShapeError(f"{op}(): index tensor must have the same number of dimensions as "
                         f"self ({a.ndim}), but index has {got}")
    for d in range(a.ndim):
        if (d != dim and index.shape[d] > a.shape[d]) or \
                (src is not None and index.shape[d] > src.shape[d]):
            vs_src = "" if src is None else f" and to be no larger than src {list(src.shape)}"
            raise ShapeError(f"{op}(): size does not match at dimension {d}: expected index "
                             f"{list(index.shape)} to be no larger than self "
                             f"{list(a.shape)} apart from dimension {dim}{vs_src}")
    check_bounds(op, index, dim, a.shape[dim], allow_negative=False)


def broadcast_except(a, b, dim: int) -> tuple:
    """The broadcast of shapes ``a`` and ``b`` (same length) ignoring ``dim`` (set to 1)."""
    out = []
    for d, (x, y) in enumerate(zip(a, b)):
        if d == dim:
            out.append(1)
        elif x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ShapeError(f"take_along_dim(): shapes of input {list(a)} and indices "
                             f"{list(b)} do not match at dimension {d} (they must be equal or "
                             f"1 apart from dim {dim})")
    return tuple(out)
