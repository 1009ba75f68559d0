"""Reductions (kernels/reduction.py) against numpy float64: sum, mean, prod, max/min and
their overloads, amax/amin, argmax/argmin, var/std, norm, any/all, cumsum/cumprod."""
import math
import warnings

import numpy as np
import pytest
from helpers import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, LOW_FLOAT_DTYPES, assert_close, make

import ember as E

FLOATS = LOW_FLOAT_DTYPES + FLOAT_DTYPES
# (shape, dim) pairs: positive, negative, tuple, all, the empty list, 0-d
CASES = [((5,), None), ((5,), 0), ((3, 4), 1), ((3, 4), -1), ((2, 3, 4), (0, 2)),
         ((2, 3, 4), (-1, 0)), ((2, 3, 4), None), ((3, 4), ()), ((), None), ((), 0)]


def np_axis(shape, dim):
    """The numpy axis for a torch dim: all dims for None / [], nothing for a 0-d tensor."""
    if dim is None or dim == () or len(shape) == 0:
        return None
    return tuple(d % len(shape) for d in ((dim,) if isinstance(dim, int) else dim))


def int_result(dtype):
    return E.int64 if not dtype.is_floating_point else dtype


# --- sum / prod / mean ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape,dim", CASES)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum(dtype, shape, dim, keepdim):
    x, ref = make(shape, dtype)
    expected = np.sum(ref, axis=np_axis(shape, dim), keepdims=keepdim)
    assert_close(x.sum(dim, keepdim), expected, int_result(dtype))
    assert_close(E.sum(x, dim=dim, keepdim=keepdim), expected, int_result(dtype))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape,dim", [((3, 4), 1), ((3, 4), -2), ((5,), None), ((), 0)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_prod(dtype, shape, dim, keepdim):
    x, ref = make(shape, dtype, low=-2, high=2)
    expected = np.prod(ref, axis=np_axis(shape, dim), keepdims=keepdim)
    assert_close(x.prod(dim, keepdim), expected, int_result(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,dim", CASES)
@pytest.mark.parametrize("keepdim", [False, True])
def test_mean(dtype, shape, dim, keepdim):
    x, ref = make(shape, dtype)
    expected = np.mean(ref, axis=np_axis(shape, dim), keepdims=keepdim)
    assert_close(x.mean(dim, keepdim), expected, dtype, atol=3e-2 if dtype in
                 LOW_FLOAT_DTYPES else None)


def test_sum_and_prod_dtype_argument_casts_the_input_first():
    x, ref = make((3, 4), E.float64, low=0.2, high=2.9)
    assert_close(x.sum(1, dtype=E.int32), np.trunc(ref).sum(1), E.int32)
    assert_close(x.int().sum(dtype=E.float16), np.trunc(ref).sum(), E.float16)
    assert_close(x.prod(0, dtype=E.float32), ref.prod(0), E.float32)


def test_bfloat16_sum_accumulates_in_float32():
    # 4096 ones summed in bfloat16 would stall at 256; PyTorch accumulates in float32.
    x = E.ones(4096, dtype=E.bfloat16)
    assert x.sum().item() == 4096.0
    assert x.mean().item() == 1.0


def test_empty_reductions_have_identities():
    x = E.zeros((0, 3))
    assert_close(x.sum(), np.float32(0))
    assert_close(x.sum(0), np.zeros(3, np.float32))
    assert_close(x.prod(0), np.ones(3, np.float32))
    assert math.isnan(x.mean().item())
    assert_close(x.mean(1), np.zeros(0, np.float32))


@pytest.mark.parametrize("dtype", INT_DTYPES + [E.bool_])
def test_mean_of_integers_raises_like_torch(dtype):
    x, _ = make((3,), dtype)
    with pytest.raises(RuntimeError, match=r"mean\(\): could not infer output dtype.*"
                                           + dtype.name):
        x.mean()
    with pytest.raises(TypeError, match="Optional dtype must be a floating point"):
        x.mean(dtype=E.int64)
    assert_close(x.mean(dtype=E.float64), make((3,), dtype)[1].mean(), E.float64)


def test_sum_rejects_bad_dims():
    x = E.zeros((2, 3))
    with pytest.raises(IndexError, match=r"range of \[-2, 1\], but got 2"):
        x.sum(2)
    with pytest.raises(ValueError, match="appears multiple times"):
        x.sum((0, -2))


# --- max / min and their overloads ---------------------------------------------------------

@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_max_min_full_reduction(op, dtype):
    x, ref = make((3, 5), dtype)
    assert_close(getattr(x, op)(), getattr(np, op)(ref), dtype)
    assert_close(getattr(E, op)(x), getattr(np, op)(ref), dtype)


@pytest.mark.parametrize("op,argop", [("max", "argmax"), ("min", "argmin")])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_dim_returns_values_and_indices(op, argop, dtype, dim, keepdim):
    x, ref = make((4, 5), dtype, low=-2, high=2)  # few distinct values: many ties
    r = getattr(x, op)(dim, keepdim)
    assert r.values is r[0] and r.indices is r[1]
    assert type(r).__name__ == op
    assert_close(r.values, getattr(np, op)(ref, axis=dim, keepdims=keepdim), dtype)
    assert_close(r.indices, getattr(np, argop)(ref, axis=dim, keepdims=keepdim), E.int64)


def test_max_overload_dispatch():
    x, ref = make((3, 4), E.float32)
    y, yref = make((3, 4), E.float64, seed=1)
    assert x.max().shape == ()                                   # max(Tensor self)
    assert x.max(0).values.shape == (4,)                         # max.dim
    assert x.max(dim=1, keepdim=True).indices.shape == (3, 1)    # max.dim by keyword
    assert E.max(x, 1, True).values.shape == (3, 1)
    assert_close(x.max(y), np.maximum(ref, yref), E.float64)     # max.other promotes
    assert_close(E.min(x, other=y), np.minimum(ref, yref), E.float64)
    with pytest.raises(TypeError, match=r"max\(\) received an invalid combination"):
        x.max("a")


def test_max_other_broadcasts_propagates_nan_and_writes_out():
    x = E.tensor([[1.0, float("nan"), 3.0]])
    y = E.tensor([[2.0], [0.0]])
    r = E.max(x, y)
    np.testing.assert_array_equal(r.numpy(), [[2, np.nan, 3], [1, np.nan, 3]])
    out = E.empty((2, 3))
    assert E.max(x, y, out=out) is out
    np.testing.assert_array_equal(out.numpy(), r.numpy())


def test_max_of_nan_and_ties_follow_torch():
    x = E.tensor([1.0, float("nan"), 3.0, float("nan")])
    assert math.isnan(x.max().item()) and math.isnan(x.min().item())
    assert x.max(0).indices.item() == 1 and x.argmax().item() == 1
    assert x.argmin().item() == 1
    t = E.tensor([[1, 3, 3, 0], [2, 2, 2, 2]])
    np.testing.assert_array_equal(t.argmax(1).numpy(), [1, 0])
    np.testing.assert_array_equal(t.max(1).indices.numpy(), [1, 0])
    np.testing.assert_array_equal(t.argmin(1).numpy(), [3, 0])


def test_max_of_zero_dim_and_empty():
    s = E.tensor(5.0)
    assert s.max().item() == 5.0
    r = s.max(0, keepdim=True)
    assert r.values.shape == () and r.indices.item() == 0
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified"):
        E.zeros((0, 3)).max()
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 0 to have non-zero"):
        E.zeros((0, 3)).max(0)
    r = E.zeros((0, 3)).max(1)
    assert r.values.shape == (0,) and r.indices.dtype is E.int64


@pytest.mark.parametrize("op", ["amax", "amin"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape,dim", [((3, 4), 1), ((2, 3, 4), (0, -1)), ((3, 4), ()),
                                       ((), 0)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_amax_amin(op, dtype, shape, dim, keepdim):
    x, ref = make(shape, dtype)
    expected = getattr(np, op)(ref, axis=np_axis(shape, dim), keepdims=keepdim)
    assert_close(getattr(x, op)(dim, keepdim), expected, dtype)


def test_amax_defaults_to_all_dims_and_rejects_empty():
    x, ref = make((3, 4), E.float32)
    assert_close(x.amax(), ref.max())
    with pytest.raises(RuntimeError, match=r"amax\(\): Expected reduction dim to be spec"):
        E.zeros((0, 3)).amax()
    with pytest.raises(IndexError, match="dim 0 to have non-zero size"):
        E.zeros((0, 3)).amax(0)
    assert E.zeros((0, 3)).amax(1).shape == (0,)


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", INT_DTYPES + FLOATS)
@pytest.mark.parametrize("dim", [None, 0, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_argmax_argmin(op, dtype, dim, keepdim):
    x, ref = make((4, 5), dtype, low=-2, high=2)
    expected = getattr(np, op)(ref, axis=dim, keepdims=keepdim)
    assert_close(getattr(x, op)(dim, keepdim), expected, E.int64)


def test_argmax_edge_cases():
    assert E.tensor(3.0).argmax().item() == 0
    assert E.tensor(3.0).argmax(0, keepdim=True).shape == ()
    with pytest.raises(NotImplementedError, match="argmax: no kernel for CPUBoolType"):
        E.tensor([True, False]).argmax()
    with pytest.raises(RuntimeError, match=r"argmax\(\): Expected reduction dim"):
        E.zeros(0).argmax()
    assert E.zeros((0, 3)).argmax(1).shape == (0,)


# --- var / std -----------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,dim", [((5,), None), ((3, 4), 1), ((2, 3, 4), (0, -1)),
                                       ((3, 4), ())])
@pytest.mark.parametrize("correction", [None, 0, 2, 0.5])
def test_var_std(op, dtype, shape, dim, correction):
    x, ref = make(shape, dtype)
    axis = np_axis(shape, dim)
    n = ref.size if axis is None else math.prod(shape[d] for d in axis)
    expected = np.sum((ref - ref.mean(axis, keepdims=True)) ** 2, axis, keepdims=True) / \
        (n - (1 if correction is None else correction))
    expected = np.sqrt(expected) if op == "std" else expected
    r = getattr(x, op)(dim, keepdim=True, correction=correction)
    assert_close(r, expected, dtype)
    assert_close(getattr(E, op)(x, dim, correction=correction), np.squeeze(expected, axis),
                 dtype)


def test_var_unbiased_spellings():
    x, ref = make((3, 4), E.float64)
    assert_close(x.var(unbiased=False), ref.var())
    assert_close(x.var(0, False), ref.var(0))           # torch's var.dim: unbiased positional
    assert_close(x.var(0, True, True), ref.var(0, ddof=1, keepdims=True))
    assert_close(x.std(1, correction=0), ref.std(1))
    with pytest.raises(TypeError, match="either 'unbiased' or 'correction'"):
        x.var(unbiased=True, correction=1)


def test_var_degenerate_cases():
    assert math.isnan(E.tensor(3.0).var().item())           # 1 element, correction 1
    assert E.tensor([1.0, 2.0]).var(correction=2).item() == math.inf
    assert math.isnan(E.zeros(0).var().item())
    with pytest.raises(RuntimeError, match="only floating point inputs.*int64"):
        E.tensor([1, 2]).var()


def test_var_is_stable_for_large_means():
    x = E.tensor(np.array([1e8 + 1.0, 1e8 + 2.0, 1e8 + 3.0]))
    assert x.var().item() == pytest.approx(1.0)


# --- norm ----------------------------------------------------------------------------------

def np_norm(ref, p, axis, keepdim):
    a = np.abs(ref)
    if p == math.inf:
        return a.max(axis, keepdims=keepdim)
    if p == -math.inf:
        return a.min(axis, keepdims=keepdim)
    if p == 0:
        return (a != 0).sum(axis, keepdims=keepdim).astype(np.float64)
    with np.errstate(divide="ignore"):
        return (a ** p).sum(axis, keepdims=keepdim) ** (1 / p)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("p", [2, 1, math.inf, -math.inf, 0, 3.5, 0.5, -1.5])
@pytest.mark.parametrize("shape,dim", [((5,), None), ((3, 4), 1), ((2, 3, 4), (0, 2))])
@pytest.mark.parametrize("keepdim", [False, True])
def test_norm(dtype, p, shape, dim, keepdim):
    x, ref = make(shape, dtype)
    expected = np_norm(ref, p, np_axis(shape, dim), keepdim)
    assert_close(x.norm(p, dim, keepdim), expected, dtype)


def test_norm_spellings_and_dtype():
    x, ref = make((3, 4), E.float32)
    assert_close(x.norm(), np.linalg.norm(ref))
    assert_close(x.norm(p=None, dim=1), np.linalg.norm(ref, axis=1))
    assert_close(x.norm("fro"), np.linalg.norm(ref))
    assert_close(E.norm(x, p="fro", dim=1, keepdim=True), np.linalg.norm(ref, axis=1,
                                                                         keepdims=True))
    assert_close(x.norm("nuc"), np.linalg.norm(ref, "nuc"))
    assert_close(x.norm(dtype=E.float64), np.linalg.norm(ref), E.float64)
    assert_close(x.half().norm(dtype=E.float32), np.linalg.norm(
        ref.astype(np.float16).astype(np.float64)), E.float32)


def test_norm_errors():
    x = E.zeros((2, 3))
    with pytest.raises(RuntimeError, match="norm.*floating point input, got int64"):
        E.tensor([1, 2]).norm()
    with pytest.raises(RuntimeError, match="without narrowing to the specified dtype float16"):
        x.norm(dtype=E.float16)
    with pytest.raises(ValueError, match="p='bad' is not a known matrix norm"):
        x.norm("bad")
    with pytest.raises(ValueError, match="nuclear norm needs exactly 2 dims"):
        x.norm("nuc", dim=0)
    with pytest.raises(RuntimeError, match="cannot compute the inf norm over an empty"):
        E.zeros(0).norm(math.inf)
    assert E.zeros(0).norm().item() == 0.0


# --- any / all -----------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["any", "all"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape,dim", [((5,), None), ((3, 4), 1), ((2, 3, 4), (0, 2)),
                                       ((), 0), ((0, 3), None), ((0, 3), 0)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_any_all(op, dtype, shape, dim, keepdim):
    x, ref = make(shape, dtype, low=-1, high=1)
    expected = getattr(np, op)(ref, axis=np_axis(shape, dim), keepdims=keepdim)
    out_dtype = E.uint8 if dtype is E.uint8 else E.bool_
    assert_close(getattr(x, op)(dim, keepdim), expected, out_dtype)


def test_any_all_corner_cases():
    assert E.tensor([0.0, float("nan")]).any().item() is True
    x = E.tensor([[0, 1], [2, 3]])
    np.testing.assert_array_equal(x.any(dim=()).numpy(), [[False, True], [True, True]])


# --- cumsum / cumprod ----------------------------------------------------------------------

@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape,dim", [((5,), 0), ((3, 4), 1), ((3, 4), -2), ((), 0),
                                       ((0, 2), 0)])
def test_cumulative(op, dtype, shape, dim):
    x, ref = make(shape, dtype, low=-2, high=2)
    axis = dim % len(shape) if shape else None
    expected = getattr(np, op)(ref, axis=axis).reshape(shape)
    assert_close(getattr(x, op)(dim), expected, int_result(dtype))


def test_cumulative_dtype_inplace_and_out():
    x, ref = make((2, 3), E.int32)
    assert_close(x.cumsum(1, dtype=E.float32), ref.cumsum(1), E.float32)
    assert_close(x.cumsum(0, dtype=E.int8), ref.cumsum(0), E.int8)
    y = E.tensor(x.numpy().copy())
    assert y.cumsum_(1) is y
    assert_close(y, ref.cumsum(1), E.int32)
    out = E.empty(0, dtype=E.int64)
    E.cumprod(x, 0, out=out)
    assert_close(out, ref.cumprod(0), E.int64)


def test_reduction_out_argument():
    x, ref = make((3, 4), E.float32)
    out = E.empty(4)
    assert E.mean(x, 0, out=out) is out
    assert_close(out, ref.mean(0))
    with pytest.raises(TypeError, match="can't be cast to the desired output type int64"):
        E.amax(x, 1, out=E.empty(3, dtype=E.int64))


# --- numpy's ufunc.reduce path against the array methods (what CuPy runs) -----------------

def _reduction_inputs(dtype):
    """1-d (with NaN for floats), 2-d, a strided 3-d view, 0-d and an empty array."""
    base = np.array([0.5, -1.5, 2.25, -0.0, 3.0, np.nan, -7.0, 1e3, 0.1, 2.0, 4.0, -2.0])
    if not dtype.is_floating_point:
        base = np.where(np.isnan(base), 1.0, np.round(base)) % 5
    a = base.astype(dtype.numpy)
    return [a, a.reshape(3, 4), np.tile(a, 2).reshape(2, 3, 4)[:, ::2], a[2:3].reshape(()),
            a[:0].reshape(0, 3)]


def _outcome(kernel, *args):
    try:
        return kernel(*args)
    except Exception as e:  # noqa: BLE001 - both paths must fail alike
        return (type(e), str(e))


def _reduction_cases(ndim: int, floating: bool):
    """(op, args) pairs with dims as the wrappers pass them (wrapped, non-negative)."""
    last = max(ndim - 1, 0)
    cases = [("max", ()), ("min", ())]
    for dim in (None, 0, last, (0, last) if ndim > 1 else (0,), ()):
        for keepdim in (False, True):
            for acc in (None, np.dtype(np.float64), np.dtype(np.int64)):
                cases += [("sum", (dim, keepdim, acc)), ("prod", (dim, keepdim, acc))]
                if floating and acc is not np.dtype(np.int64):
                    cases.append(("mean", (dim, keepdim, acc)))
            cases += [("amax", (dim, keepdim)), ("amin", (dim, keepdim))]
            if dim.__class__ is int:
                cases += [("max.dim", (dim, keepdim)), ("min.dim", (dim, keepdim))]
    return cases


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_ufunc_reduce_path_matches_the_array_methods(numpy_kernels, generic_kernels,
                                                     array_out_none_kernels, assert_same,
                                                     dtype):
    for a in _reduction_inputs(dtype):
        for op, args in _reduction_cases(a.ndim, dtype.is_floating_point):
            got = _outcome(numpy_kernels[op], a, *args)
            for other in (generic_kernels, array_out_none_kernels):
                with warnings.catch_warnings():
                    # numpy's _methods warn about NaN in max (bfloat16) where the ufunc
                    # called from the kernel module is covered by ember's filter
                    warnings.simplefilter("ignore", RuntimeWarning)
                    want = _outcome(other[op], a, *args)
                if isinstance(want, tuple) and isinstance(want[0], type):  # an error
                    assert got == want, (op, args)
                elif isinstance(want, tuple):  # max.dim: (values, indices)
                    for g, w in zip(got, want):
                        assert_same(g, w)
                else:
                    assert_same(got, want)


def test_full_reductions_return_0d_arrays_on_numpy(numpy_kernels):
    from ember.backends.kernels.reduction import ARRAY_OUT
    if ARRAY_OUT is None:
        pytest.skip("numpy < 2.3 has no out=...: dispatch.wrap converts the scalar")
    a = np.arange(5, dtype=np.float32)
    for op, args in [("sum", (None, False, None)), ("prod", (None, False, None)),
                     ("max", ()), ("amin", (None, False))]:
        r = numpy_kernels[op](a, *args)
        assert r.__class__ is np.ndarray and r.shape == ()


def test_reducer_on_other_namespaces_calls_the_array_methods():
    import types

    from ember.backends.kernels.reduction import reducer
    reduce, out = reducer(types.SimpleNamespace(**vars(np)), "maximum", "max")
    assert out is None
    a = np.array([[1.0, 5.0], [3.0, 2.0]])
    np.testing.assert_array_equal(reduce(a, 1, keepdims=True), [[5.0], [3.0]])
    assert reduce(a, None) == 5.0
    add, _ = reducer(types.SimpleNamespace(**vars(np)), "add", "sum")
    r = add(np.array([True, True, False]), None, np.dtype(np.int64))
    assert r == 2 and r.dtype == np.int64
