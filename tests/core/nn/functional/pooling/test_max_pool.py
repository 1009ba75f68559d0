"""ember.nn.functional max pooling (nn/functional/pooling/max_pool.py) against the direct
numpy float64 loops of reference.py: max_pool1d/2d/3d values and indices (argument
normalization, padding, dilation, ceil_mode), the ``*_with_indices`` forms, gradcheck and
gradgradcheck, and the errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from core.nn.functional.pooling.reference import np_max_pool, np_max_pool1d, small
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import ShapeError
from helpers import assert_close, make, to_np


def test_max_pool2d_normalizes_arguments_and_returns_indices():
    x, ref = make((2, 3, 7, 6), E.float32)
    out, idx = F.max_pool2d(x, 3, padding=1, return_indices=True)  # stride None -> 3
    assert isinstance(F.max_pool2d(x, 3, padding=1), E.Tensor)
    exp_v, exp_i = E.max_pool2d_with_indices(x, (3, 3), (3, 3), (1, 1))
    assert out.dtype is E.float32 and tuple(out.shape) == (2, 3, 3, 2)
    np.testing.assert_array_equal(to_np(out), to_np(exp_v))
    np.testing.assert_array_equal(to_np(idx), to_np(exp_i))
    assert_close(F.max_pool2d(x, (2, 3), stride=(1, 2), dilation=(2, 1), ceil_mode=True),
                 to_np(E.max_pool2d_with_indices(x, (2, 3), (1, 2), 0, (2, 1), True)[0]))


@pytest.mark.parametrize("shape", [(2, 3, 9), (3, 9)])
@pytest.mark.parametrize("k,s,p,d,ceil_mode", [(2, None, 0, 1, False), (3, 2, 1, 1, True),
                                               (2, 1, 1, 3, False), (4, 3, 2, 1, True)])
def test_max_pool1d(shape, k, s, p, d, ceil_mode):
    x, ref = make(shape, E.float64)
    exp_v, exp_i = np_max_pool1d(ref, k, s or k, p, d, ceil_mode)
    out, idx = F.max_pool1d(x, k, s, p, d, ceil_mode, return_indices=True)
    assert_close(out, exp_v)
    np.testing.assert_array_equal(to_np(idx), exp_i)
    assert_close(F.max_pool1d(x, k, s, p, d, ceil_mode), exp_v)


@pytest.mark.parametrize("fn", [
    lambda x: F.max_pool2d(x, 2),                                    # tiles
    lambda x: F.max_pool2d(x, 3, stride=1, padding=1),               # overlapping, padded
    lambda x: F.max_pool2d(x, 2, stride=1, dilation=2, ceil_mode=True),
    lambda x: F.max_pool1d(x.flatten(-2), 3, 2, 1, ceil_mode=True),
])
def test_max_pool_gradcheck_and_gradgradcheck(fn):
    x = small((1, 2, 4, 4))
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_max_pool_backward_op_is_differentiable_in_grad_output():
    # the op_samples entry for max_pool2d_with_indices_backward: position 4 gets two grads
    idx = E.tensor(np.array([[[[0, 1], [4, 4]]]]))
    x = E.zeros(1, 1, 3, 3, dtype=E.float64)
    fn = lambda go: E.max_pool2d_with_indices_backward(go, x, (2, 2), (1, 1), (0, 0), (1, 1),
                                                       False, idx)
    go = small((1, 1, 2, 2))
    g = to_np(go).ravel()
    assert_close(fn(go), np.array([[[[g[0], g[1], 0], [0, g[2] + g[3], 0], [0, 0, 0]]]]))
    assert gradcheck(fn, (go,))
    assert gradgradcheck(fn, (go,))


# --- 3-D ------------------------------------------------------------------------------------

MAX3D_CASES = [  # kernel, stride (None: kernel), padding, dilation, ceil_mode
    (2, None, 0, 1, False),                        # tiles
    (2, None, 0, 1, True),                         # a partial last window
    (3, 1, 1, 1, False),                           # overlapping, padded
    ((3, 2, 2), (2, 1, 2), (1, 1, 0), (1, 2, 1), True),
    ((2, 3, 1), (1, 2, 3), (0, 1, 0), (2, 1, 1), False),
]


def _triple(v):
    return v if isinstance(v, tuple) else (v,) * 3


@pytest.mark.parametrize("dtype", [E.float64, E.float32, E.int32])
@pytest.mark.parametrize("case", MAX3D_CASES)
@pytest.mark.parametrize("shape", [(2, 2, 5, 4, 6), (3, 4, 4, 6)])
def test_max_pool3d_matches_reference(dtype, case, shape):
    k, s, p, d, ceil_mode = case
    x, _ = make(shape, dtype, low=-5, high=5)     # ints repeat: ties happen
    ref = to_np(x).astype(np.float64)
    exp_v, exp_i = np_max_pool(ref, _triple(k), _triple(s or k), _triple(p), _triple(d),
                               ceil_mode)
    out, idx = F.max_pool3d(x, k, s, p, d, ceil_mode, return_indices=True)
    assert out.dtype is dtype and idx.dtype is E.int64
    assert_close(out, exp_v, dtype, rtol=0, atol=0)
    np.testing.assert_array_equal(to_np(idx), exp_i)
    assert_close(F.max_pool3d(x, k, s, p, d, ceil_mode), exp_v, dtype, rtol=0, atol=0)


def test_with_indices_forms_always_return_both():
    x, ref = make((2, 3, 4, 5, 6), E.float64)
    for fn, with_idx, n in ((F.max_pool1d, F.max_pool1d_with_indices, 1),
                            (F.max_pool2d, F.max_pool2d_with_indices, 2),
                            (F.max_pool3d, F.max_pool3d_with_indices, 3)):
        t = x.flatten(0, 4 - n - 1) if n < 3 else x
        v, i = with_idx(t, 2, padding=1, return_indices=False)
        v2, i2 = fn(t, 2, padding=1, return_indices=True)
        np.testing.assert_array_equal(to_np(v), to_np(v2))
        np.testing.assert_array_equal(to_np(i), to_np(i2))


@pytest.mark.parametrize("fn", [
    lambda x: F.max_pool3d(x, 2),
    lambda x: F.max_pool3d(x, 2, stride=1, padding=1, ceil_mode=True),
    lambda x: F.max_pool3d(x, (1, 2, 2), stride=1, dilation=(1, 1, 2)),
])
def test_max_pool3d_gradcheck_and_gradgradcheck(fn):
    x = small((1, 1, 2, 3, 4))
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("call, match", [
    (lambda: F.max_pool3d(E.zeros(4, 4, 4), 2), "4-D .C, D, H, W. or 5-D"),
    (lambda: F.max_pool3d(E.zeros(1, 1, 0, 4, 4), 2), "non-zero C, D, H and W"),
    (lambda: F.max_pool3d(E.zeros(1, 1, 4, 4, 4), (2, 2)), "tuple of three ints"),
    (lambda: F.max_pool3d(E.zeros(1, 1, 4, 4, 4), 2, padding=(0, 2, 0)), "at most half"),
    (lambda: F.max_pool3d(E.zeros(1, 1, 4, 4, 4), 2, stride=0), "stride must be positive"),
    (lambda: F.max_pool3d(E.zeros(1, 2, 4, 5, 6), 5), r"Given input size: \(2x4x5x6\)"),
])
def test_max_pool3d_errors(call, match):
    with pytest.raises(ShapeError, match=match):
        call()
