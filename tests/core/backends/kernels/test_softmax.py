"""softmax, log_softmax and logsumexp (kernels/softmax.py) against numpy float64."""
import math

import numpy as np
import pytest
from helpers import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, LOW_FLOAT_DTYPES, assert_close, make

import ember as E

FLOATS = LOW_FLOAT_DTYPES + FLOAT_DTYPES


def np_logsumexp(ref, axis, keepdims=False):
    m = np.max(ref, axis=axis, keepdims=True)
    r = np.log(np.sum(np.exp(ref - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis)


def np_log_softmax(ref, axis):
    return ref - np_logsumexp(ref, axis, keepdims=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,dim", [((5,), 0), ((3, 4), 1), ((3, 4), -2), ((2, 3, 4), 1),
                                       ((), 0), ((0, 3), 1)])
def test_softmax_and_log_softmax(dtype, shape, dim):
    x, ref = make(shape, dtype, low=-5, high=5)
    axis = dim % len(shape) if shape else None
    expected = np_log_softmax(ref, axis) if ref.size else ref
    assert_close(x.log_softmax(dim), expected, dtype)
    assert_close(E.softmax(x, dim), np.exp(expected), dtype)


def test_softmax_is_stable_for_large_inputs():
    x = E.tensor(np.array([1000.0, 1001.0, 1002.0], np.float32))
    ref = np.array([0.0, 1.0, 2.0])
    assert_close(x.softmax(0), np.exp(ref) / np.exp(ref).sum())
    assert_close(x.log_softmax(0), np_log_softmax(ref, 0))
    assert_close(x.logsumexp(0), 1000 + np_logsumexp(ref, 0), rtol=1e-6)


def test_softmax_of_infinities_follows_torch():
    x = E.tensor([[-math.inf, 0.0], [-math.inf, -math.inf]])
    r = x.softmax(1).numpy()
    np.testing.assert_array_equal(r[0], [0.0, 1.0])
    assert np.isnan(r[1]).all()  # a fully masked row is nan, as in PyTorch


@pytest.mark.parametrize("dtype", INT_DTYPES + [E.bool_])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_refuses_ints_unless_dtype_given(dtype, op):
    x, ref = make((2, 3), dtype)
    with pytest.raises(NotImplementedError, match=f"{op}.*not implemented for {dtype.name}"):
        getattr(x, op)(1)
    expected = np_log_softmax(ref, 1)
    assert_close(getattr(x, op)(1, dtype=E.float64), expected if op == "log_softmax" else
                 np.exp(expected), E.float64)


def test_softmax_dtype_argument_computes_in_that_dtype():
    x, ref = make((2, 3), E.float16)
    assert_close(x.softmax(-1, E.float64), np.exp(np_log_softmax(ref, 1)), E.float64)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape,dim", [((5,), 0), ((3, 4), 1), ((2, 3, 4), (0, -1)),
                                       ((3, 4), ()), ((), 0)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_logsumexp(dtype, shape, dim, keepdim):
    x, ref = make(shape, dtype)
    axis = None if dim == () or not shape else tuple(
        d % len(shape) for d in ((dim,) if isinstance(dim, int) else dim))
    expected = np_logsumexp(ref, axis, keepdim)
    out_dtype = dtype if dtype.is_floating_point else E.get_default_dtype()
    assert_close(x.logsumexp(dim, keepdim), expected, out_dtype)


def test_logsumexp_of_infinities_and_empty():
    assert E.tensor([-math.inf, -math.inf]).logsumexp(0).item() == -math.inf
    assert E.tensor([math.inf, 1.0]).logsumexp(0).item() == math.inf
    assert E.zeros((0, 2)).logsumexp(0).tolist() == [-math.inf, -math.inf]
    out = E.empty(3, dtype=E.float64)
    x, ref = make((2, 3), E.float64)
    assert E.logsumexp(x, 0, out=out) is out
    assert_close(out, np_logsumexp(ref, 0))


def test_logsumexp_requires_dim():
    with pytest.raises(TypeError):
        E.logsumexp(E.zeros(3))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_softmax_rows_sum_to_one(dtype):
    x, _ = make((4, 7), dtype, low=-20, high=20, seed=3)
    assert_close(x.softmax(1).sum(1), np.ones(4), dtype)


# --- the numpy path (1-d: 0-d reductions via out=...) against the generic kernels --------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_numpy_paths_match_the_generic_kernels(numpy_kernels, generic_kernels,
                                               array_out_none_kernels, assert_same, op, dtype):
    base = np.array([0.5, -1.5, 2.25, -0.0, 3.0, 80.0, -7.0, 1e3, 0.1, 2.0, -np.inf, 4.0])
    a = base.astype(dtype.numpy)
    inputs = [(a, 0), (a[::3], 0), (a.reshape(3, 4), 1), (a.reshape(3, 4), 0),
              (a.reshape(2, 3, 2)[:, ::2], 2), (a[:1].reshape(()), 0), (a[:0], 0),
              (np.full(4, -np.inf, dtype.numpy), 0), (np.array([np.nan, 1.0], dtype.numpy), 0)]
    for x, dim in inputs:
        for out in (None, np.dtype(np.float64)):
            r = numpy_kernels[op](x, dim, out)
            assert_same(r, generic_kernels[op](x, dim, out))
            assert_same(r, array_out_none_kernels[op](x, dim, out))
            if x.size and x.ndim:
                ref = x.astype(np.float64)
                with np.errstate(invalid="ignore"):
                    expected = np.exp(np_log_softmax(ref, dim)) if op == "softmax" else \
                        np_log_softmax(ref, dim)
                tol = 2e-2 if dtype in LOW_FLOAT_DTYPES and out is None else 1e-5
                np.testing.assert_allclose(r.astype(np.float64), expected, rtol=tol, atol=tol)
