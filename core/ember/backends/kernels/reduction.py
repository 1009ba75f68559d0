"""Reduction kernels: sum, mean, prod, any/all, max/min (and amax, argmax, ...), var/std,
norm, cumsum/cumprod.

``dim`` arrives wrapped (a non-negative int or tuple, or None for all dims). PyTorch's
conventions that differ from numpy's live here: an empty dim list reduces every dim, a 0-d
tensor reduces over its one (virtual) dim to itself, integral sums and products are int64,
and float16/bfloat16 accumulate in float32 and round once at the end, like PyTorch's CPU
kernels. Reductions go through ``reducer``: numpy's ufunc ``reduce`` (``np.add.reduce``),
which skips the Python layers of ``np.sum`` and of ``a.sum`` (numpy's ``_methods``), or
the array methods (``a.sum(...)``) on other namespaces (CuPy).
"""
from __future__ import annotations

import math

import numpy as np

from ...errors import DtypeError, ShapeError
from ...types import bfloat16, bool_, float16, uint8
from .reduction_blocked import PROD_MIN, SCAN_BLOCK, SCAN_MIN, blocked_scan, lanes_product

# NOTE: numpy dtype objects (CuPy arrays carry them too); ``dtype.name`` costs ~1.5us a call.
LOW_FLOATS = frozenset({float16.numpy, bfloat16.numpy})
BFLOAT16, UINT8 = bfloat16.numpy, uint8.numpy
F32, F64, INT64 = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int64)


def _takes_array_out():
    """``...`` if numpy's ufuncs take ``out=...`` (numpy >= 2.3: return a 0-d array, not a
    numpy scalar), else None (the plain default)."""
    try:
        r = np.add.reduce(np.zeros(1), None, out=...)
    except TypeError:
        return None
    return ... if r.__class__ is np.ndarray else None


# NOTE: ``dispatch.wrap`` turns a numpy scalar into a 0-d array again (~0.15us);
# ``out=...`` costs nothing extra.
ARRAY_OUT = _takes_array_out()


def reducer(xp, ufunc: str, method: str):
    """``(reduce, out)`` where ``reduce(a, axis, dtype, out=out, keepdims=k)`` is
    ``a.<method>(axis=axis, dtype=dtype, keepdims=k)`` (``dtype`` None: no dtype argument,
    as ``max`` takes none) and ``out`` is ``ARRAY_OUT`` or None.

    On numpy it is the ufunc's own ``reduce`` (``np.add.reduce``), which ``a.sum`` calls
    after ~0.1us of Python in numpy's ``_methods``. Other namespaces keep the array method:
    CuPy's ufuncs had no ``reduce`` before v13, and none takes ``out=...``.
    """
    if xp is np:
        return getattr(np, ufunc).reduce, ARRAY_OUT

    def reduce(a, axis, dtype=None, out=None, keepdims=False):
        if dtype is None:
            return getattr(a, method)(axis=axis, keepdims=keepdims)
        return getattr(a, method)(axis=axis, dtype=dtype, keepdims=keepdims)
    return reduce, None


# Row sums by einsum: CPU-only (numpy). numpy's add.reduce over the last axis of a 2-d
# float array runs ~7x slower than einsum's unrolled SIMD loop (0.7 ms against 0.1 ms for
# (1000, 1000) float32); einsum adds each row in a few SIMD lanes, not pairwise, so it
# serves rows of at most ROW_SUM_MAX elements, where its error stays that of numpy's
# pairwise sum (whose blocks of 128 are added the same way): measured on (1000, 1000)
# float32 normals, max |error| 4e-7 * sum|x| for both; a row norm (einsum's row dot)
# within 4 ulp of float64 (the pairwise sum of squares: 1.2 ulp, PyTorch: 1.9 ulp).
ROW_SUM_MIN, ROW_SUM_MAX = 32768, 1024


def rows_fit(a, axis) -> bool:
    """Whether a numpy ``a`` reduced over ``axis`` (an int or a 1-tuple) takes the einsum
    row sum."""
    if axis.__class__ is tuple and len(axis) == 1:
        axis = axis[0]
    return (axis.__class__ is int and axis == a.ndim - 1 and a.size >= ROW_SUM_MIN
            and a.shape[-1] <= ROW_SUM_MAX and a.dtype.kind == "f" and a.dtype.itemsize >= 4)


def row_sum(xp):
    """``f(a, axis, keepdim)``: the sum over the last axis of a big float32/float64 array
    with short rows by einsum, or None where that does not apply (numpy.add.reduce's
    domain, and every other namespace)."""
    def f(a, axis, keepdim):
        if not rows_fit(a, axis):
            return None
        r = np.einsum("...i->...", a)
        return r[..., None] if keepdim else r
    return f if xp is np else (lambda a, axis, keepdim: None)


def is_float(dt) -> bool:
    """Floating dtypes, bfloat16 included (ml_dtypes gives it kind 'V')."""
    return dt.kind == "f" or dt == BFLOAT16


def axis_of(a, dim):
    """The numpy ``axis`` for a wrapped torch ``dim``: None, an empty list and any dim of a
    0-d tensor all mean 'reduce everything'."""
    if dim is None or a.ndim == 0:
        return None
    if dim.__class__ is int:
        return dim
    return dim if dim else None


def reduced_count(a, axis) -> int:
    """How many elements each output element reduces over."""
    if axis is None:
        return a.size
    if axis.__class__ is int:
        return a.shape[axis]
    return math.prod(a.shape[d] for d in axis)


def check_nonempty(op: str, a, axis) -> None:
    """Max-like reductions have no identity: an empty reduced dim raises, as in PyTorch."""
    if a.size:
        return
    if axis is None:
        raise ShapeError(f"{op}(): Expected reduction dim to be specified for input.numel() == "
                         f"0; the input of shape {list(a.shape)} is empty. Specify the "
                         f"reduction dim with the 'dim' argument")
    for d in (axis,) if axis.__class__ is int else axis:
        if a.shape[d] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size; the "
                             f"input has shape {list(a.shape)}")


def require_float(op: str, dt, what: str = "Input dtype") -> None:
    if not is_float(dt):
        raise DtypeError(f"{op}(): could not infer output dtype. {what} must be a floating "
                         f"point dtype, got {dt.name}; convert with .float() or pass "
                         f"dtype=ember.float32")


def _sum_like(xp, ufunc: str, method: str):
    """sum and prod: integral and bool inputs give int64 unless ``dtype`` says otherwise."""
    reduce, out = reducer(xp, ufunc, method)
    fast_rows = row_sum(xp) if ufunc == "add" else None

    def kernel(a, dim, keepdim, dtype):
        if dtype is not None:
            if dtype != a.dtype:
                a = a.astype(dtype)  # PyTorch casts the input first, then reduces
        elif a.dtype.kind in "biu":
            dtype = INT64
        axis = None if dim is None else axis_of(a, dim)
        if a.dtype in LOW_FLOATS:
            return reduce(a, axis, F32, out=out, keepdims=keepdim).astype(a.dtype)
        if fast_rows is not None:
            r = fast_rows(a, axis, keepdim)
            if r is not None:
                return r
        return reduce(a, axis, dtype, out=out, keepdims=keepdim)
    return kernel


def _prod(xp):
    """prod: ``_sum_like`` of ``multiply``; on numpy the full product of a big float32
    array in lanes (``reduction_blocked.lanes_product``)."""
    reduce, out = reducer(xp, "multiply", "prod")
    plain = _sum_like(xp, "multiply", "prod")

    def kernel(a, dim, keepdim, dtype):
        if dtype is not None and dtype == a.dtype and dtype.kind in "biu":
            # an integral dtype= equal to the input's keeps it (PyTorch), not int64
            return reduce(a, None if dim is None else axis_of(a, dim), dtype, out=out,
                          keepdims=keepdim)
        if (dim is not None or a.dtype is not F32 or a.size < PROD_MIN or xp is not np
                or (dtype is not None and dtype != a.dtype)):
            return plain(a, dim, keepdim, dtype)
        r = lanes_product(a)
        return r.reshape((1,) * a.ndim) if keepdim else r
    return kernel


def _any_all(method: str):
    def kernel(a, dim, keepdim):
        if dim == ():  # PyTorch: an explicit empty dim list reduces nothing for any/all
            r = a.astype(bool)
        else:
            r = getattr(a, method)(axis=axis_of(a, dim), keepdims=keepdim)
        # NOTE: PyTorch keeps uint8 for uint8 inputs (a legacy of byte masks).
        return r.astype(a.dtype) if a.dtype == UINT8 else r
    return kernel


def _extremum(xp, op: str, ufunc: str, arg: str, elementwise):
    """max/min in their three forms plus amax/amin and argmax/argmin."""
    reduce, out = reducer(xp, ufunc, op)

    def full(a):
        if not a.size:
            check_nonempty(op, a, None)
        return reduce(a, None, out=out)

    def with_dim(a, dim, keepdim):
        if a.ndim == 0:
            return a.copy(), xp.zeros((), xp.int64)
        if not a.size:
            check_nonempty(op, a, dim)
        # NOTE: argmax picks the first of equal values and the first NaN, and max/min
        # propagate NaN, so values[i] == a[indices[i]] holds for ties and NaN alike.
        values = reduce(a, dim, keepdims=keepdim)
        indices = getattr(a, arg)(axis=dim, keepdims=keepdim)
        return values, indices.astype(xp.int64, copy=False)

    def a_reduce(a, dim, keepdim):
        axis = None if dim is None else axis_of(a, dim)
        if not a.size:
            check_nonempty("a" + op, a, axis)
        return reduce(a, axis, out=out, keepdims=keepdim)

    def arg_reduce(a, dim, keepdim):
        if a.ndim == 0:
            return xp.zeros((), xp.int64)
        check_nonempty(arg, a, dim)
        if dim is None:
            r = getattr(a, arg)()
            if keepdim:
                r = xp.reshape(r, (1,) * a.ndim)
        else:
            r = getattr(a, arg)(axis=dim, keepdims=keepdim)
        return r.astype(xp.int64, copy=False)

    return {op: full, f"{op}.dim": with_dim, f"{op}.other": elementwise,
            "a" + op: a_reduce, arg: arg_reduce}


def _cumulative(xp, ufunc: str, method: str):
    """cumsum/cumprod: numpy's ``ufunc.accumulate`` (the array method adds ~0.3 us of
    argument parsing), the array method on other namespaces; big float32/float64 ones
    blocked (``reduction_blocked.blocked_scan``). Integral and bool inputs accumulate in
    int64 (no copy of an int64 input), float16/bfloat16 in float32.

    NOTE: small arrays and dims whose length is no multiple of SCAN_BLOCK stay numpy's
    serial chain. Measured slower than the blocks at 1e3 and 1e6: a complex64 view with
    two chains plus the recombination, Hillis-Steele rounds, pairwise folds, a transposed
    copy, BLAS products with triangular ones matrices.
    """
    if xp is np:
        accumulate = getattr(np, ufunc).accumulate
    else:
        def accumulate(a, axis, dtype):
            return getattr(a, method)(axis=axis, dtype=dtype)
    blocked = xp is np
    identity = -0.0 if ufunc == "add" else 1.0  # -0.0 + x is x, -0.0 included

    def kernel(a, dim, dtype):
        dt = a.dtype
        if dtype is None and (dt is F32 or dt is F64) and a.ndim:
            if blocked and a.size >= SCAN_MIN and a.shape[dim] % SCAN_BLOCK == 0:
                return blocked_scan(getattr(np, ufunc), identity, a, dim)
            return accumulate(a, dim, dt)
        if dtype is not None:  # PyTorch casts the input first; an int32 dtype stays int32
            if dtype != dt:
                a = a.astype(dtype)
        elif dt.kind in "biu":
            a = a.astype(INT64, copy=False)
        if a.ndim == 0:
            return a.copy()
        if a.dtype in LOW_FLOATS:
            return accumulate(a, dim, F32).astype(a.dtype)
        return accumulate(a, dim, a.dtype)  # numpy widens small ints
    return kernel


def _moments(xp):
    def var(a, dim, unbiased, keepdim, correction):
        if not is_float(a.dtype):
            raise DtypeError(f"var()/std(): only floating point inputs are supported, got "
                             f"{a.dtype.name}; convert with .float()")
        if unbiased is not None and correction is not None:
            raise TypeError("var()/std(): pass either 'unbiased' or 'correction', not both "
                            "(unbiased=False is correction=0)")
        if correction is None:
            correction = 0 if unbiased is False else 1
        axis = axis_of(a, dim)
        x = a.astype(xp.float32) if a.dtype in LOW_FLOATS else a
        n = reduced_count(a, axis)
        d = x - x.sum(axis=axis, keepdims=True) / n  # two passes: stable for big means
        d *= d
        r = d.sum(axis=axis, keepdims=keepdim) / max(n - correction, 0)
        return r.astype(a.dtype, copy=False)

    def std(a, dim, unbiased, keepdim, correction):
        return xp.sqrt(var(a, dim, unbiased, keepdim, correction))

    return {"var": var, "std": std}


def _norm_dtype(a, dtype):
    """The dtype norm returns: ``dtype`` if given, which may widen but not narrow the input."""
    if not is_float(a.dtype):
        raise DtypeError(f"norm(): expected a floating point input, got {a.dtype.name}; "
                         f"convert with .float()")
    if dtype is None or dtype == a.dtype:
        return a.dtype
    if not (dtype.kind == "f" and dtype.itemsize > a.dtype.itemsize and dtype.itemsize >= 4):
        raise DtypeError(f"norm(): the input dtype {a.dtype.name} should be convertible "
                         f"without narrowing to the specified dtype {dtype.name}; pass "
                         f"dtype={a.dtype.name} or a wider float")
    return dtype


def _norm_kernels(xp):
    add_reduce, _ = reducer(xp, "add", "sum")

    def vector_norm(x, p, axis, keepdim):
        """sum(|x|**p)**(1/p) over ``axis``, with p in {0, ±inf} meaning count/max/min."""
        if p == 2 and x.dtype.kind == "f":  # no abs: x * x is |x|**2
            if xp is np and rows_fit(x, axis):
                # CPU-only: einsum's row dot, no (n,) temporary (see ROW_SUM_MAX)
                r = np.einsum("...i,...i->...", x, x)
                return xp.sqrt(r[..., None] if keepdim else r)
            if xp is np and axis is None and x.size >= ROW_SUM_MIN and x.flags.c_contiguous:
                # the whole tensor as rows of at most ROW_SUM_MAX: einsum row dots, then
                # numpy's pairwise sum of those
                width = next((w for w in (1024, 1000, 512, 500, 256) if x.size % w == 0), 0)
                if width:
                    rows = x.reshape(-1, width)
                    r = xp.sqrt(add_reduce(np.einsum("ij,ij->i", rows, rows), None))
                    return xp.reshape(r, (1,) * x.ndim) if keepdim else r
            return xp.sqrt(add_reduce(x * x, axis, None, keepdims=keepdim))
        x = xp.abs(x)
        if p == 2:
            x *= x  # in place on abs's fresh result (rebinds a 0-d numpy scalar)
            return xp.sqrt(x.sum(axis=axis, keepdims=keepdim))
        if p == 1:
            return x.sum(axis=axis, keepdims=keepdim)
        if p == math.inf or p == -math.inf:
            if x.size == 0 and (axis is None or reduced_count(x, axis) == 0):
                raise ShapeError(f"norm(): cannot compute the {p} norm over an empty "
                                 f"dimension (input shape {list(x.shape)}) because the "
                                 f"operation has no identity")
            return (x.max if p > 0 else x.min)(axis=axis, keepdims=keepdim)
        if p == 0:
            return (x != 0).sum(axis=axis, dtype=x.dtype, keepdims=keepdim)
        # 0 ** negative p is inf, and inf ** (1/p) is 0, as in PyTorch
        return (x ** p).sum(axis=axis, keepdims=keepdim) ** (1.0 / p)

    def nuclear(x, axis, keepdim):
        """The sum of singular values of the matrices spanned by the two dims in ``axis``."""
        axis = tuple(range(x.ndim)) if axis is None else axis
        if len(axis) != 2 or x.ndim < 2:
            raise ShapeError(f"norm(): the nuclear norm needs exactly 2 dims of a tensor "
                             f"with at least 2 dims, got dim={axis} for shape "
                             f"{list(x.shape)}; pass dim=(row_dim, col_dim)")
        r = xp.linalg.svd(xp.moveaxis(x, axis, (-2, -1)), compute_uv=False).sum(axis=-1)
        if keepdim:
            r = r.reshape(tuple(1 if i in axis else n for i, n in enumerate(x.shape)))
        return r

    def norm(a, p, dim, keepdim, dtype):
        out = _norm_dtype(a, dtype)
        x = a if out is a.dtype else a.astype(xp.float32 if out in LOW_FLOATS else out)
        r = vector_norm(x, 2 if p is None else p, axis_of(a, dim), keepdim)
        return r if r.dtype == out else r.astype(out)

    def norm_str(a, p, dim, keepdim, dtype):
        if p not in ("fro", "nuc"):
            raise ValueError(f"norm(): p={p!r} is not a known matrix norm; expected 'fro', "
                             f"'nuc' or a number")
        out = _norm_dtype(a, dtype)
        x = a.astype(xp.float32 if out in LOW_FLOATS else out, copy=False)
        axis = axis_of(a, dim)
        if p == "fro":
            return vector_norm(x, 2, axis, keepdim).astype(out)
        if axis.__class__ is int:
            axis = (axis,)
        return nuclear(x, axis, keepdim).astype(out)

    return {"norm": norm, "norm.str": norm_str}


def kernels(xp) -> dict:
    add_reduce, _ = reducer(xp, "add", "sum")
    sum_rows = row_sum(xp)

    def mean(a, dim, keepdim, dtype):
        if dtype is None:
            if a.dtype.kind != "f":
                require_float("mean", a.dtype)
        else:
            require_float("mean", dtype, "Optional dtype")
            a = a.astype(dtype, copy=False)
        axis = None if dim is None else axis_of(a, dim)
        n = a.size if axis is None else reduced_count(a, axis)
        # NOTE: no out=... here: a numpy scalar divides by n ~0.4us faster than a 0-d array
        # (the mean of nothing is nan, as in PyTorch)
        if a.dtype in LOW_FLOATS:
            return (add_reduce(a, axis, F32, keepdims=keepdim) / n).astype(a.dtype)
        r = sum_rows(a, axis, keepdim)
        if r is not None:
            r /= n
            return r
        return add_reduce(a, axis, None, keepdims=keepdim) / n

    table = {"sum": _sum_like(xp, "add", "sum"), "prod": _prod(xp),
             "mean": mean, "any": _any_all("any"), "all": _any_all("all"),
             "cumsum": _cumulative(xp, "add", "cumsum"),
             "cumprod": _cumulative(xp, "multiply", "cumprod")}
    table.update(_extremum(xp, "max", "maximum", "argmax", xp.maximum))
    table.update(_extremum(xp, "min", "minimum", "argmin", xp.minimum))
    table.update(_moments(xp))
    table.update(_norm_kernels(xp))
    return table


# argmax of bools is refused by PyTorch ("does not support bool input").
UNSUPPORTED = {"argmax": frozenset({bool_}), "argmin": frozenset({bool_})}
