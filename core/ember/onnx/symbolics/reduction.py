"""Symbolics of reductions, scans and sorting: sum, mean, prod, max/min (whole tensor and
``.dim``), amax/amin, argmax/argmin, var/std, norm (numbers and 'fro'), logsumexp,
any/all, cumsum, cumprod, sort, argsort and topk.

ONNX ops: ReduceSum, ReduceMean, ReduceProd, ReduceMax, ReduceMin, ReduceL1, ReduceL2,
ArgMax, ArgMin, CumSum, TopK, plus IsNaN / Where / GatherElements / Pow / Exp / Log / Sqrt
compositions. ``g.reduce`` writes the axes as ReduceSum's input (opset 13 on) and as the
other Reduce* ops' input from opset 18 (an attribute before).

Matching ember, not only PyTorch's exporter:

* Dtypes: integral and bool sums, products and cumsums run in int64, float16/bfloat16 in
  float32 (ember accumulates there and rounds once; the exporter casts the result back);
  a ``dtype`` argument casts the input first, as ember does. Comparisons (max, argmax,
  TopK) run in a dtype onnxruntime has kernels for (int32 for bool and small ints,
  float32 for float16/bfloat16), which keeps every value exact.
* NaN: ember's max/min/amax/amin propagate NaN, argmax/argmin pick the first NaN and sort
  / topk order NaN as the largest value. onnxruntime's ReduceMax/ArgMax skip NaN and its
  TopK misplaces it, so floating inputs get an IsNaN term: a NaN-sum that is NaN exactly
  where a slice holds one, and for TopK a second, stable pass that orders by "is NaN".
* Ties: ember returns the first index (ArgMax/ArgMin ``select_last_index=0``) and sorts
  stably in both directions; ONNX TopK breaks ties by the lower index for largest and
  smallest alike, which is exactly a stable sort (``stable=`` therefore needs nothing).
  ``topk(sorted=False)`` is exported sorted, as ember always returns it sorted.
* cumprod has no ONNX op: it is exported exactly as a ReduceProd over a lower-triangular
  Where, out[j] = prod_{k <= j} x[k], costing n^2 elements per slice for a dim of size n.
* Declined (``g.fail``): ``norm(p='nuc')`` (singular values; ONNX has no SVD), and a topk
  ``k`` that follows a dynamic axis other than the full size of ``dim``.
* any/all: an explicit empty ``dim`` list reduces nothing (as ember and PyTorch), so it
  exports as the element-wise "is non-zero"; NaN counts as true (Cast to bool).

References: the ONNX operator specs (https://onnx.ai/onnx/operators/), PyTorch's
``torch/onnx/symbolic_opset11.py`` / ``symbolic_opset13.py`` / ``symbolic_opset18.py``
(reductions, topk, sort, cumsum) for the reference mapping.
"""
from __future__ import annotations

import math

import numpy as np

from ... import types as _t
from ..registry import builtin

_EXACT = (_t.float32, _t.float64, _t.int32, _t.int64)
_LOW_FLOATS = (_t.float16, _t.bfloat16)


# ---- helpers ----------------------------------------------------------------------------

def _is_float(dtype) -> bool:
    return dtype is not None and dtype.is_floating_point


def _compute_dtype(dtype):
    """Where ember's result dtype ``dtype`` is accumulated: float32 for float16/bfloat16."""
    return _t.float32 if dtype in _LOW_FLOATS else dtype


def _accumulated(g, x, dtype):
    """``x`` cast to ember's result dtype (rounding as ember's cast does), then to the
    dtype it accumulates in."""
    return g.cast(g.cast(x, dtype), _compute_dtype(dtype))


def _comparable(g, x):
    """``x`` in a dtype onnxruntime compares in (Max/ArgMax/TopK kernels), values exact:
    int32 for bool and small ints, float32 for float16/bfloat16."""
    if x.dtype in _EXACT or x.dtype is None:
        return x
    return g.cast(x, _t.float32 if _is_float(x.dtype) else _t.int32)


def _dim_list(dim):
    """A dim argument (None, int or list) as a list, or None."""
    if dim is None:
        return None
    return [int(dim)] if isinstance(dim, int) else [int(d) for d in dim]


def _axes(x, dim):
    """Non-negative sorted axes for a dim argument; None (every axis) for None, [] or a
    0-d input, as ember's ``axis_of``."""
    dims = _dim_list(dim)
    if not dims or not x.rank:
        return None
    return sorted({d % x.rank for d in dims})


def _squeezed(g, v, axes):
    """``v`` (reduced with keepdims) without ``axes``."""
    if not axes:
        return v
    return g.op("Squeeze", v, g.ints(axes), dtype=v.dtype)


def _count(g, x, axes, dtype):
    """How many elements each output element reduces over, as a ``dtype`` scalar (read at
    run time when a reduced dim follows a dynamic axis)."""
    dims = range(x.rank) if axes is None else axes
    if not any(x.is_dynamic(d) for d in dims):
        return g.scalar(math.prod(x.sizes[d] for d in dims), dtype=dtype)
    sizes = g.shape_of(x) if axes is None else \
        g.op("Gather", g.shape_of(x), g.ints(axes), axis=0, dtype=_t.int64)
    n = g.op("ReduceProd", sizes, keepdims=0, dtype=_t.int64)
    return g.cast(n, dtype)


def _size_of(g, x, d):
    """The size of dim ``d`` as a 1-D int64 tensor (TopK's K)."""
    if x.is_dynamic(d):
        return g.shape_of(x, d, d + 1)
    return g.ints([x.sizes[d]])


def _nan_sum(g, x, axes, keepdim):
    """(IsNaN mask of ``x``, a reduction that is NaN exactly where the slice holds a NaN).
    Adding only the NaNs keeps it free of inf - inf."""
    mask = g.op("IsNaN", x, dtype=_t.bool_)
    nans = g.op("Where", mask, x, g.scalar(0, like=x), dtype=x.dtype)
    return mask, g.reduce("ReduceSum", nans, axes, keepdim)


def _extremum(g, x, axes, keepdim, largest):
    """ReduceMax/ReduceMin that propagates NaN, as ember."""
    x = _comparable(g, x)
    v = g.reduce("ReduceMax" if largest else "ReduceMin", x, axes, keepdim)
    if not _is_float(x.dtype):
        return v
    _, nan = _nan_sum(g, x, axes, keepdim)
    return g.op("Where", g.op("IsNaN", nan, dtype=_t.bool_), nan, v, dtype=v.dtype)


def _extremum_dim(g, x, axis, keepdim, largest, values=True):
    """(values, int64 indices) along ``axis``: ties give the first index
    (``select_last_index=0``, as ember), a NaN wins over every number (first NaN)."""
    x = _comparable(g, x)
    reduce_op, arg_op = ("ReduceMax", "ArgMax") if largest else ("ReduceMin", "ArgMin")
    v = g.reduce(reduce_op, x, [axis], keepdim) if values else None
    i = g.op(arg_op, x, axis=axis, keepdims=int(keepdim), select_last_index=0,
             dtype=_t.int64)
    if not _is_float(x.dtype):
        return v, i
    mask, nan = _nan_sum(g, x, [axis], keepdim)
    has_nan = g.op("IsNaN", nan, dtype=_t.bool_)
    first_nan = g.op("ArgMax", g.cast(mask, _t.int32), axis=axis, keepdims=int(keepdim),
                     select_last_index=0, dtype=_t.int64)
    i = g.op("Where", has_nan, first_nan, i, dtype=_t.int64)
    if values:
        v = g.op("Where", has_nan, nan, v, dtype=v.dtype)
    return v, i


def _top_k(g, x, k, axis, largest):
    """TopK that sorts as ember: stable (ONNX TopK breaks ties by the lower index), NaN the
    largest value. Floating inputs take two stable passes: all values with NaN as +inf,
    then the k best by "is NaN", so NaNs land after +inf ascending and first descending."""
    x = _comparable(g, x)
    if not _is_float(x.dtype):
        values, indices = g.op("TopK", x, k, axis=axis, largest=int(largest), sorted=1,
                               outputs=2, dtype=_t.int64)
        values.dtype = x.dtype
        return values, indices
    mask = g.op("IsNaN", x, dtype=_t.bool_)
    key = g.op("Where", mask, g.scalar(math.inf, like=x), x, dtype=x.dtype)
    _, order = g.op("TopK", key, _size_of(g, x, axis), axis=axis, largest=int(largest),
                    sorted=1, outputs=2, dtype=_t.int64)
    nan_key = g.op("GatherElements", g.cast(mask, _t.int32), order, axis=axis,
                   dtype=_t.int32)
    _, pick = g.op("TopK", nan_key, k, axis=axis, largest=int(largest), sorted=1, outputs=2,
                   dtype=_t.int64)
    idx = g.op("GatherElements", order, pick, axis=axis, dtype=_t.int64)
    return g.op("GatherElements", x, idx, axis=axis, dtype=x.dtype), idx


def _zero_index(g):
    return g.scalar(0, dtype=_t.int64)


# ---- sum, mean, prod --------------------------------------------------------------------

@builtin("ember::sum")
def sum_(g, x, dim, keepdim, dtype):
    """Integral/bool sums run in int64, a ``dtype`` casts the input first (ember)."""
    return g.reduce("ReduceSum", _accumulated(g, x, g.out(0).dtype), _axes(x, dim), keepdim)


@builtin("ember::mean")
def mean(g, x, dim, keepdim, dtype):
    return g.reduce("ReduceMean", _accumulated(g, x, g.out(0).dtype), _axes(x, dim), keepdim)


@builtin("ember::prod")
def prod(g, x, dim, keepdim, dtype):
    return g.reduce("ReduceProd", _accumulated(g, x, g.out(0).dtype), _axes(x, dim), keepdim)


# ---- max, min, amax, amin, argmax, argmin -----------------------------------------------

@builtin("ember::max")
def max_(g, x):
    return _extremum(g, x, None, False, largest=True)


@builtin("ember::min")
def min_(g, x):
    return _extremum(g, x, None, False, largest=False)


def _reduce_dim(g, x, dim, keepdim, largest):
    if not x.rank:                       # a 0-d input gives (self, 0), as ember
        return x, _zero_index(g)
    return _extremum_dim(g, x, dim % x.rank, keepdim, largest)


@builtin("ember::max.dim")
def max_dim(g, x, dim, keepdim):
    """Values and first indices of the maxima; ArgMax select_last_index=0."""
    return _reduce_dim(g, x, dim, keepdim, largest=True)


@builtin("ember::min.dim")
def min_dim(g, x, dim, keepdim):
    return _reduce_dim(g, x, dim, keepdim, largest=False)


@builtin("ember::amax")
def amax(g, x, dim, keepdim):
    return _extremum(g, x, _axes(x, dim), keepdim, largest=True)


@builtin("ember::amin")
def amin(g, x, dim, keepdim):
    return _extremum(g, x, _axes(x, dim), keepdim, largest=False)


def _arg_reduce(g, x, dim, keepdim, largest):
    """argmax/argmin; dim None indexes the flattened input (all-ones shape with keepdim)."""
    if not x.rank:
        return _zero_index(g)
    if dim is not None:
        return _extremum_dim(g, x, dim % x.rank, keepdim, largest, values=False)[1]
    flat = g.op("Reshape", x, g.ints([-1]), dtype=x.dtype)
    _, i = _extremum_dim(g, flat, 0, False, largest, values=False)
    return g.op("Reshape", i, g.ints([1] * x.rank), dtype=_t.int64) if keepdim else i


@builtin("ember::argmax")
def argmax(g, x, dim, keepdim):
    return _arg_reduce(g, x, dim, keepdim, largest=True)


@builtin("ember::argmin")
def argmin(g, x, dim, keepdim):
    return _arg_reduce(g, x, dim, keepdim, largest=False)


# ---- var, std ---------------------------------------------------------------------------

def _variance(g, x, dim, unbiased, keepdim, correction):
    """Two passes, as ember: sum((x - mean)^2) / max(0, N - correction)."""
    if correction is None:
        correction = 0 if unbiased is False else 1
    axes = _axes(x, dim)
    x = _accumulated(g, x, g.out(0).dtype)
    d = g.op("Sub", x, g.reduce("ReduceMean", x, axes, True), dtype=x.dtype)
    ss = g.reduce("ReduceSum", g.op("Mul", d, d, dtype=x.dtype), axes, keepdim)
    n = _count(g, x, axes, x.dtype)
    dof = g.op("Max", g.op("Sub", n, g.scalar(correction, like=n), dtype=x.dtype),
               g.scalar(0, like=n), dtype=x.dtype)
    return g.op("Div", ss, dof, dtype=x.dtype)


@builtin("ember::var")
def var(g, x, dim, unbiased, keepdim, correction):
    return _variance(g, x, dim, unbiased, keepdim, correction)


@builtin("ember::std")
def std(g, x, dim, unbiased, keepdim, correction):
    v = _variance(g, x, dim, unbiased, keepdim, correction)
    return g.op("Sqrt", v, dtype=v.dtype)


# ---- norm, logsumexp --------------------------------------------------------------------

def _vector_norm(g, x, p, axes, keepdim):
    """sum(|x|^p)^(1/p); 2 and 1 are ReduceL2 / ReduceL1, +-inf max / min of |x| (NaN
    propagating), 0 counts non-zeros (NaN counts)."""
    p = 2.0 if p is None else float(p)
    if p == 2:
        return g.reduce("ReduceL2", x, axes, keepdim)
    if p == 1:
        return g.reduce("ReduceL1", x, axes, keepdim)
    a = g.op("Abs", x, dtype=x.dtype)
    if math.isinf(p):
        return _extremum(g, a, axes, keepdim, largest=p > 0)
    if p == 0:
        nonzero = g.op("Not", g.op("Equal", a, g.scalar(0, like=a), dtype=_t.bool_),
                       dtype=_t.bool_)
        return g.reduce("ReduceSum", g.cast(nonzero, x.dtype), axes, keepdim)
    s = g.reduce("ReduceSum", g.op("Pow", a, g.scalar(p, like=a), dtype=x.dtype), axes,
                 keepdim)
    return g.op("Pow", s, g.scalar(1.0 / p, like=s), dtype=x.dtype)


@builtin("ember::norm")
def norm(g, x, p, dim, keepdim, dtype):
    x = _accumulated(g, x, g.out(0).dtype)
    return _vector_norm(g, x, p, _axes(x, dim), keepdim)


@builtin("ember::norm.str")
def norm_str(g, x, p, dim, keepdim, dtype):
    """'fro' is the 2-norm over ``dim``; 'nuc' needs singular values (no ONNX op)."""
    if p != "fro":
        g.fail(f"norm(p={p!r}) cannot be exported: the nuclear norm needs singular values "
               f"and ONNX has no SVD; compute it outside the model, or register a symbolic "
               f"for ember::norm.str with ember.onnx.register_symbolic")
    x = _accumulated(g, x, g.out(0).dtype)
    return _vector_norm(g, x, 2, _axes(x, dim), keepdim)


@builtin("ember::logsumexp")
def logsumexp(g, x, dim, keepdim):
    """m + log(sum(exp(x - m))) with m the max where finite, else 0 (so all -inf gives
    -inf, as ember); onnxruntime's ReduceLogSumExp is not relied on."""
    x = _accumulated(g, x, g.out(0).dtype)
    axes = _axes(x, dim)
    m = g.reduce("ReduceMax", x, axes, True)
    finite = g.op("Not", g.op("Or", g.op("IsInf", m, dtype=_t.bool_),
                              g.op("IsNaN", m, dtype=_t.bool_), dtype=_t.bool_),
                  dtype=_t.bool_)
    m = g.op("Where", finite, m, g.scalar(0, like=x), dtype=x.dtype)
    e = g.op("Exp", g.op("Sub", x, m, dtype=x.dtype), dtype=x.dtype)
    s = g.op("Log", g.reduce("ReduceSum", e, axes, keepdim), dtype=x.dtype)
    if not keepdim:
        m = _squeezed(g, m, axes if axes is not None else list(range(x.rank)))
    return g.op("Add", s, m, dtype=x.dtype)


# ---- any, all ---------------------------------------------------------------------------

def _any_all(g, x, dim, keepdim, reduce_op):
    """Cast to bool (non-zero, NaN included, is true), reduce as int32, back to bool."""
    truth = g.cast(x, _t.bool_)
    if dim is not None and not _dim_list(dim):   # an explicit [] reduces nothing
        return truth
    r = g.reduce(reduce_op, g.cast(truth, _t.int32), _axes(x, dim), keepdim)
    return g.cast(r, _t.bool_)


@builtin("ember::any")
def any_(g, x, dim, keepdim):
    return _any_all(g, x, dim, keepdim, "ReduceMax")


@builtin("ember::all")
def all_(g, x, dim, keepdim):
    return _any_all(g, x, dim, keepdim, "ReduceMin")


# ---- cumsum, cumprod --------------------------------------------------------------------

@builtin("ember::cumsum")
def cumsum(g, x, dim, dtype):
    x = _accumulated(g, x, g.out(0).dtype)
    if not x.rank:
        return x
    return g.op("CumSum", x, g.scalar(dim % x.rank, dtype=_t.int64), dtype=x.dtype)


def _lower_triangle(g, x, d):
    """The bool mask k <= j, shaped (n, n, 1, ...) to broadcast over the output dim j
    (axis d) and the input dim k (axis d + 1) of ``x`` unsqueezed at d."""
    trailing = x.rank - 1 - d
    if not x.is_dynamic(d):
        n = x.sizes[d]
        return g.constant(np.tril(np.ones((n, n), bool)).reshape((n, n) + (1,) * trailing))
    n = g.op("Squeeze", g.shape_of(x, d, d + 1), g.ints([0]), dtype=_t.int64)
    i = g.op("Range", g.scalar(0, dtype=_t.int64), n, g.scalar(1, dtype=_t.int64),
             dtype=_t.int64)
    mask = g.op("GreaterOrEqual", g.op("Unsqueeze", i, g.ints([1]), dtype=_t.int64),
                g.op("Unsqueeze", i, g.ints([0]), dtype=_t.int64), dtype=_t.bool_)
    if trailing:
        mask = g.op("Unsqueeze", mask, g.ints(list(range(2, 2 + trailing))), dtype=_t.bool_)
    return mask


@builtin("ember::cumprod")
def cumprod(g, x, dim, dtype):
    """No ONNX op: out[j] = ReduceProd over k of Where(k <= j, x[k], 1), exact (every
    product has the same factors), at n^2 elements per slice for a dim of size n."""
    x = _accumulated(g, x, g.out(0).dtype)
    if not x.rank:
        return x
    d = dim % x.rank
    rows = g.op("Unsqueeze", x, g.ints([d]), dtype=x.dtype)
    terms = g.op("Where", _lower_triangle(g, x, d), rows, g.scalar(1, like=x), dtype=x.dtype)
    return g.reduce("ReduceProd", terms, [d + 1], False)


# ---- sort, argsort, topk ----------------------------------------------------------------

def _sort(g, x, dim, descending):
    if not x.rank:
        return x, _zero_index(g)
    d = dim % x.rank
    return _top_k(g, x, _size_of(g, x, d), d, largest=descending)


@builtin("ember::sort")
def sort(g, x, dim, descending, stable):
    """TopK of the whole dim; always stable, as ember (ONNX TopK ties: lower index)."""
    return _sort(g, x, dim, descending)


@builtin("ember::argsort")
def argsort(g, x, dim, descending, stable):
    return _sort(g, x, dim, descending)[1]


@builtin("ember::topk")
def topk(g, x, k, dim, largest, sorted_):
    """TopK with sorted=1 (ember always sorts); k may follow a dynamic axis only as the
    whole size of ``dim``."""
    if not x.rank:
        return x, _zero_index(g)
    d = dim % x.rank
    if g.dynamic(1):
        if not (x.is_dynamic(d) and k == x.sizes[d]):
            g.fail(f"topk's k ({k}) follows a dynamic axis, but is not the size of dim {d}; "
                   f"ONNX would bake the traced value in. Export without that dynamic axis")
        kv = _size_of(g, x, d)
    else:
        kv = g.ints([k])
    return _top_k(g, x, kv, d, largest)
