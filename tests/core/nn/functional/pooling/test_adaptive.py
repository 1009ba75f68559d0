"""ember.nn.functional adaptive pooling (nn/functional/pooling/adaptive.py) against the
direct numpy float64 loops of reference.py: adaptive_avg_pool1d/2d/3d and
adaptive_max_pool1d/2d/3d (sizes that do not divide, upsampling, None sizes, indices and
ties), the ``*_with_indices`` forms, gradcheck and gradgradcheck, and the errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from core.nn.functional.pooling.reference import (np_adaptive, np_adaptive_avg_pool2d,
                                                  np_adaptive_max_pool2d, small)
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import ShapeError
from helpers import assert_close, make, to_np


@pytest.mark.parametrize("shape,size,expected", [
    ((2, 3, 8, 6), (4, 3), (4, 3)),          # divides: reshape and mean
    ((2, 3, 7, 6), (3, 4), (3, 4)),          # overlapping windows of unequal size
    ((3, 5, 5), 2, (2, 2)),
    ((3, 5, 5), (None, 3), (5, 3)),
    ((1, 2, 3, 3), (5, 7), (5, 7)),          # upsampling: windows repeat cells
])
def test_adaptive_avg_pool2d(shape, size, expected):
    x, ref = make(shape, E.float32)
    out = F.adaptive_avg_pool2d(x, size)
    assert out.dtype is E.float32
    assert_close(out, np_adaptive_avg_pool2d(ref, expected))


def test_adaptive_avg_pool2d_gradcheck_and_errors():
    x = small((1, 2, 5, 4))
    for size in ((3, 2), (2, 2)):
        assert gradcheck(lambda t: F.adaptive_avg_pool2d(t, size), (x,))
        assert gradgradcheck(lambda t: F.adaptive_avg_pool2d(t, size), (x,))
    with pytest.raises(ShapeError, match="3-D"):
        F.adaptive_avg_pool2d(E.zeros(4, 4), 2)
    with pytest.raises(ShapeError, match="non-negative"):
        F.adaptive_avg_pool2d(E.zeros(1, 4, 4), (-1, 2))


@pytest.mark.parametrize("shape, size", [((2, 3, 5, 7), (2, 3)), ((2, 3, 5, 7), (5, 7)),
                                         ((1, 2, 4, 4), (3, 5)), ((3, 6, 5), (1, 1)),
                                         ((1, 1, 7, 3), (4, None)), ((2, 1, 6, 6), 4)])
def test_adaptive_max_pool2d_values_and_indices(shape, size):
    x, xn = make(shape, E.float64)
    v, i = F.adaptive_max_pool2d(x, size, return_indices=True)
    pair = size if isinstance(size, tuple) else (size, size)
    pair = tuple(shape[-2 + k] if s is None else s for k, s in enumerate(pair))
    rv, ri = np_adaptive_max_pool2d(xn, *pair)
    assert_close(v, rv)
    np.testing.assert_array_equal(to_np(i), ri)
    assert i.dtype is E.int64
    assert_close(F.adaptive_max_pool2d(x, size), rv)


def test_adaptive_max_pool_ties_pick_the_first():
    x = E.tensor([[[1.0, 5.0, 5.0, 2.0], [5.0, 0.0, 1.0, 5.0]]])
    v, i = F.adaptive_max_pool2d(x, (1, 2), return_indices=True)
    np.testing.assert_array_equal(to_np(i), [[[1, 2]]])
    np.testing.assert_array_equal(to_np(v), [[[5.0, 5.0]]])


def test_adaptive_max_pool1d():
    x, xn = make((2, 3, 7), E.float64)
    v, i = F.adaptive_max_pool1d(x, 3, return_indices=True)
    rv, ri = np_adaptive_max_pool2d(xn[..., None, :], 1, 3)
    assert_close(v, rv[..., 0, :])
    np.testing.assert_array_equal(to_np(i), ri[..., 0, :])
    assert_close(F.adaptive_max_pool1d(x[0], (3,)), rv[0, :, 0, :])


@pytest.mark.parametrize("fn", [lambda x: F.adaptive_max_pool2d(x, (2, 3)),
                                lambda x: F.adaptive_max_pool1d(x.reshape(1, 2, 6), 4)])
def test_adaptive_max_pool_gradients(fn):
    x = make((1, 3, 4), E.float64, seed=5)[0].requires_grad_()  # distinct values: no ties
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("call, err, match", [
    (lambda: F.adaptive_max_pool2d(E.zeros(3, 4), 2), ShapeError, "3-D"),
    (lambda: F.adaptive_max_pool2d(E.zeros(1, 2, 0, 4), 2), ShapeError, "non-zero"),
    (lambda: F.adaptive_max_pool2d(E.zeros(1, 2, 3, 4), (-1, 2)), ShapeError, "non-negative"),
    (lambda: F.adaptive_max_pool2d(E.zeros(1, 2, 3, 4), (1, 2, 3)), ShapeError, "2 ints"),
    (lambda: F.adaptive_max_pool2d(E.zeros(1, 2, 3, dtype=E.int64), 2), NotImplementedError,
     "floating"),
    (lambda: F.adaptive_max_pool1d(E.zeros(3, 4, 5, 6), 1), ShapeError, "2-D"),
    (lambda: F.adaptive_max_pool1d(E.zeros(3, 4), (1, 2)), ShapeError, "one int"),
])
def test_adaptive_max_pool_errors(call, err, match):
    with pytest.raises(err, match=match):
        call()


# --- 1-D average, 3-D -----------------------------------------------------------------------

@pytest.mark.parametrize("shape, size", [((2, 3, 7), 3), ((3, 8), (4,)), ((2, 1, 3), 5)])
def test_adaptive_avg_pool1d(shape, size):
    x, ref = make(shape, E.float32)
    n = size[0] if isinstance(size, tuple) else size
    exp = np_adaptive(ref, (n,), "avg")
    assert_close(F.adaptive_avg_pool1d(x, size), exp, E.float32)
    assert_close(E.adaptive_avg_pool1d(x, (n,)), exp, E.float32)     # torch.adaptive_avg_pool1d


@pytest.mark.parametrize("shape, size, expected", [
    ((2, 3, 4, 6, 8), (2, 3, 4), (2, 3, 4)),      # divides: reshape and mean
    ((2, 2, 5, 7, 6), (3, 4, 4), (3, 4, 4)),      # overlapping windows of unequal size
    ((3, 5, 4, 3), 2, (2, 2, 2)),
    ((1, 2, 3, 5, 4), (None, 2, None), (3, 2, 4)),
    ((1, 1, 2, 3, 3), (3, 5, 4), (3, 5, 4)),      # upsampling: windows repeat cells
])
def test_adaptive_pool3d(shape, size, expected):
    x, ref = make(shape, E.float64)
    assert_close(F.adaptive_avg_pool3d(x, size), np_adaptive(ref, expected, "avg"))
    v, i = F.adaptive_max_pool3d(x, size, return_indices=True)
    rv, ri = np_adaptive(ref, expected, "max")
    assert_close(v, rv)
    assert i.dtype is E.int64
    np.testing.assert_array_equal(to_np(i), ri)
    assert_close(F.adaptive_max_pool3d(x, size), rv)


def test_adaptive_max_pool3d_ties_pick_the_first_and_empty_output():
    x = E.tensor(np.array([[[[1.0, 5.0], [5.0, 0.0]], [[5.0, 5.0], [2.0, 5.0]]]]))
    v, i = F.adaptive_max_pool3d(x, (1, 1, 2), return_indices=True)
    np.testing.assert_array_equal(to_np(i), [[[[2, 1]]]])     # (t, h, w) = (0, 1, 0), (0, 0, 1)
    np.testing.assert_array_equal(to_np(v), [[[[5.0, 5.0]]]])
    v, i = F.adaptive_max_pool3d(x, (0, 1, 1), return_indices=True)
    assert tuple(v.shape) == (1, 0, 1, 1) and i.dtype is E.int64


def test_adaptive_max_with_indices_forms():
    x, _ = make((2, 3, 4, 5, 6), E.float64)
    for fn, with_idx, t in ((F.adaptive_max_pool1d, F.adaptive_max_pool1d_with_indices,
                             x[0, 0]),
                            (F.adaptive_max_pool2d, F.adaptive_max_pool2d_with_indices, x[0]),
                            (F.adaptive_max_pool3d, F.adaptive_max_pool3d_with_indices, x)):
        v, i = with_idx(t, 3)
        v2, i2 = fn(t, 3, return_indices=True)
        np.testing.assert_array_equal(to_np(v), to_np(v2))
        np.testing.assert_array_equal(to_np(i), to_np(i2))


@pytest.mark.parametrize("fn", [lambda x: F.adaptive_avg_pool3d(x, (2, 2, 3)),
                                lambda x: F.adaptive_avg_pool3d(x, (1, 3, 2)),
                                lambda x: F.adaptive_max_pool3d(x, (2, 2, 3)),
                                lambda x: F.adaptive_avg_pool1d(x.flatten(-3)[0], 5)])
def test_adaptive_3d_and_1d_gradients(fn):
    x = small((1, 1, 2, 3, 4))
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("call, err, match", [
    (lambda: F.adaptive_avg_pool3d(E.zeros(3, 4, 5), 2), ShapeError, "4-D .C, D, H, W."),
    (lambda: F.adaptive_max_pool3d(E.zeros(1, 2, 3, 0, 4), 2), ShapeError, "non-zero"),
    (lambda: F.adaptive_avg_pool3d(E.zeros(1, 2, 3, 4, 4), (-1, 2, 2)), ShapeError,
     "non-negative"),
    (lambda: F.adaptive_max_pool3d(E.zeros(1, 2, 3, 4, 4), (1, 2)), ShapeError, "3 ints"),
    (lambda: F.adaptive_avg_pool3d(E.zeros(1, 2, 3, 4, 4, dtype=E.int64), 2),
     NotImplementedError, "floating"),
    (lambda: F.adaptive_avg_pool1d(E.zeros(3, 4, 5, 6), 1), ShapeError, "2-D .C, L."),
    (lambda: F.adaptive_avg_pool1d(E.zeros(3, 4), (1, 2)), ShapeError, "one int"),
])
def test_adaptive_3d_and_1d_errors(call, err, match):
    with pytest.raises(err, match=match):
        call()
