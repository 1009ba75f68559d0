"""ember.nn.functional fractional max pooling (nn/functional/pooling/fractional.py) with
fixed ``_random_samples`` against a numpy loop of PyTorch's interval rule (in the input's
dtype), output_ratio, drawn samples, indices that max_unpool consumes, gradcheck and
gradgradcheck, and the errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from core.nn.functional.pooling.reference import np_fractional, np_intervals, small
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError, ShapeError
from helpers import assert_close, to_np

FRAC = {2: F.fractional_max_pool2d, 3: F.fractional_max_pool3d}


def _inputs(shape, nd, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    batch = shape[0] if len(shape) == nd + 2 else 1
    return x, rng.random((batch, shape[-nd - 1], nd)).astype(dtype)


def test_intervals_follow_pytorchs_rule():
    # alpha = (10 - 3) / (4 - 1); starts int((i + u) alpha) - int(u alpha), the last 10 - 3
    assert np_intervals(np.float64(0.5), 10, 4, 3) == [0, 2, 4, 7]
    assert np_intervals(np.float64(0.0), 10, 1, 3) == [7]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("nd, shape, k, size", [
    (2, (2, 3, 9, 7), 2, (4, 5)), (2, (3, 9, 7), (3, 2), (7, 6)), (2, (1, 2, 6, 6), 1, 3),
    (3, (2, 2, 6, 7, 5), 2, (3, 4, 2)), (3, (2, 7, 6, 8), (3, 1, 2), (4, 5, 6)),
])
def test_matches_reference_with_fixed_samples(dtype, nd, shape, k, size):
    x, u = _inputs(shape, nd, dtype)
    kk = k if isinstance(k, tuple) else (k,) * nd
    out = size if isinstance(size, tuple) else (size,) * nd
    v, i = FRAC[nd](E.tensor(x), k, size, return_indices=True, _random_samples=E.tensor(u))
    rv, ri = np_fractional(x, kk, out, u)
    assert v.dtype is E.tensor(x).dtype and i.dtype is E.int64
    assert_close(v, rv, rtol=0, atol=0)
    np.testing.assert_array_equal(to_np(i), ri)
    # the values sit at their indices (flat positions in each plane)
    plane = x.reshape(-1, int(np.prod(shape[-nd:])))
    np.testing.assert_array_equal(np.take_along_axis(plane, ri.reshape(len(plane), -1), 1),
                                  rv.reshape(len(plane), -1))


def test_output_ratio_drawn_samples_and_with_indices_forms():
    x, u = _inputs((2, 3, 8, 10), 2, np.float64)
    t, s = E.tensor(x), E.tensor(u)
    by_ratio = F.fractional_max_pool2d(t, 2, output_ratio=0.5, _random_samples=s)
    assert_close(by_ratio, np_fractional(x, (2, 2), (4, 5), u)[0])
    assert_close(F.fractional_max_pool2d(t, 2, output_ratio=(0.5, 0.3), _random_samples=s),
                 np_fractional(x, (2, 2), (4, 3), u)[0])
    v, i = F.fractional_max_pool2d_with_indices(t, 2, (3, 3), _random_samples=s)
    assert_close(v, np_fractional(x, (2, 2), (3, 3), u)[0])
    # drawn samples: any windows, but each value is the max of a 2x2 window it sits in
    v, i = F.fractional_max_pool3d_with_indices(t, (1, 2, 2), (2, 4, 5))   # (C, D, H, W)
    assert tuple(v.shape) == (2, 2, 4, 5)
    np.testing.assert_array_equal(np.take_along_axis(x.reshape(2, -1),
                                                     to_np(i).reshape(2, -1), 1),
                                  to_np(v).reshape(2, -1))


def test_empty_output():
    x, u = _inputs((1, 2, 5, 5), 2, np.float64)
    v, i = F.fractional_max_pool2d(E.tensor(x), 2, (0, 3), return_indices=True,
                                   _random_samples=E.tensor(u))
    assert tuple(v.shape) == (1, 2, 0, 3) and i.dtype is E.int64


@pytest.mark.parametrize("nd", [2, 3])
def test_gradcheck_and_gradgradcheck(nd):
    x = small((1, 1, 5, 4) if nd == 2 else (1, 1, 3, 4, 4))
    u = E.tensor(np.random.default_rng(1).random((1, 1, nd)))
    size = (3, 2) if nd == 2 else (1, 2, 2)
    fn = lambda t: FRAC[nd](t, 2, size, _random_samples=u)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def _x():
    return E.zeros(2, 3, 5, 6)


@pytest.mark.parametrize("call, err, match", [
    (lambda: F.fractional_max_pool2d(_x(), 2), ValueError, "either an output_size or"),
    (lambda: F.fractional_max_pool2d(_x(), 3, (4, 4)), ShapeError,
     "pool height 3 too large relative to input height 5"),
    (lambda: F.fractional_max_pool3d(E.zeros(1, 1, 4, 5, 6), 2, (3, 3, 3)), ShapeError,
     "pool time 2 too large relative to input time 4"),
    (lambda: F.fractional_max_pool2d(_x(), 2, 2, _random_samples=E.rand(1, 3, 2)), ShapeError,
     "_random_samples of shape"),
    (lambda: F.fractional_max_pool2d(_x(), 2, 2, _random_samples=E.rand(2, 4, 2)), ShapeError,
     "C = 3"),
    (lambda: F.fractional_max_pool2d(_x(), 2, 2, _random_samples=E.rand(2, 3, 2).double()),
     DtypeError, "input's dtype"),
    (lambda: F.fractional_max_pool2d(_x().long(), 2, 2), NotImplementedError, "floating"),
    (lambda: F.fractional_max_pool2d(_x(), 0, 2), ShapeError, "kernel_size must be positive"),
    (lambda: F.fractional_max_pool2d(_x()[0, 0], 2, 2), ShapeError, "3-D .C, H, W. or 4-D"),
    (lambda: F.fractional_max_pool2d(_x(), 2, output_ratio=(0.5, 0.5, 0.5)), ShapeError,
     "output_ratio must be a number or a tuple of 2"),
])
def test_errors(call, err, match):
    with pytest.raises(err, match=match):
        call()
