"""ember.nn.functional average pooling (nn/functional/pooling/avg_pool.py) against the
direct numpy float64 loops of reference.py: avg_pool1d/2d/3d with padding, ceil_mode,
count_include_pad and divisor_override; gradcheck and gradgradcheck, and the errors."""
from __future__ import annotations

import pytest

import ember as E
import ember.nn.functional as F
from core.nn.functional.pooling.reference import np_avg_pool, np_avg_pool2d, small
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import ShapeError
from helpers import assert_close, make


AVG_CASES = [  # kernel, stride, padding, ceil_mode
    (2, None, 0, False), (2, None, 0, True), (3, 2, 1, False), (3, 2, 1, True),
    ((2, 3), (1, 2), (1, 1), True), ((3, 2), 3, (1, 0), False),
]


@pytest.mark.parametrize("dtype", [E.float32, E.float64])
@pytest.mark.parametrize("case", AVG_CASES)
@pytest.mark.parametrize("include_pad", [True, False])
def test_avg_pool2d(dtype, case, include_pad):
    k, s, p, ceil_mode = case
    x, ref = make((2, 3, 7, 6), dtype)
    pair = lambda v: (v, v) if isinstance(v, int) else v
    exp = np_avg_pool2d(ref, pair(k), pair(s or k), pair(p), ceil_mode, include_pad)
    assert_close(F.avg_pool2d(x, k, s, p, ceil_mode, include_pad), exp, dtype)
    exp = np_avg_pool2d(ref, pair(k), pair(s or k), pair(p), ceil_mode, include_pad, 5)
    assert_close(F.avg_pool2d(x, k, s, p, ceil_mode, include_pad, divisor_override=5), exp,
                 dtype)


def test_avg_pool2d_unbatched_and_1d():
    x, ref = make((3, 5, 5), E.float64)
    assert_close(F.avg_pool2d(x, 2), np_avg_pool2d(ref, (2, 2), (2, 2), (0, 0), False, True))
    x, ref = make((2, 3, 9), E.float64)
    exp = np_avg_pool2d(ref[:, :, None], (1, 3), (1, 2), (0, 1), True, False)[:, :, 0]
    assert_close(F.avg_pool1d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), exp)
    assert_close(F.avg_pool1d(x[0], 2), ref[0, :, :8].reshape(3, 4, 2).mean(-1))


@pytest.mark.parametrize("fn", [
    lambda x: F.avg_pool2d(x, 2),
    lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    lambda x: F.avg_pool1d(x.flatten(-2), 3, 2, 1, ceil_mode=True),
])
def test_avg_pool_gradcheck_and_gradgradcheck(fn):
    x = small((1, 2, 4, 4))
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_avg_pool_errors():
    x = E.zeros(1, 1, 4, 4)
    with pytest.raises(ValueError, match="divisor_override must be non-zero"):
        F.avg_pool2d(x, 2, divisor_override=0)
    with pytest.raises(NotImplementedError, match="floating"):
        F.avg_pool2d(E.zeros(1, 1, 4, 4, dtype=E.int64), 2)
    with pytest.raises(ShapeError, match="at most half of kernel size"):
        F.avg_pool2d(x, 3, padding=2)
    with pytest.raises(ShapeError, match="2-D .C, L. or 3-D"):
        F.avg_pool1d(x, 2)
    with pytest.raises(ShapeError, match="tuple of one int"):
        F.max_pool1d(x[0], (2, 2))


# --- 3-D ------------------------------------------------------------------------------------

AVG3D_CASES = [  # kernel, stride, padding, ceil_mode
    (2, None, 0, False),                                   # tiles: one reshape and sum
    (2, None, 0, True), (3, 2, 1, False), (3, 2, 1, True),
    ((2, 3, 2), (1, 2, 3), (1, 1, 0), True), ((3, 2, 1), 2, (1, 0, 0), False),
]


def _triple(v):
    return v if isinstance(v, tuple) else (v,) * 3


@pytest.mark.parametrize("dtype", [E.float32, E.float64])
@pytest.mark.parametrize("case", AVG3D_CASES)
@pytest.mark.parametrize("include_pad", [True, False])
@pytest.mark.parametrize("divisor", [None, 5])
def test_avg_pool3d(dtype, case, include_pad, divisor):
    k, s, p, ceil_mode = case
    x, ref = make((2, 2, 5, 4, 6), dtype)
    exp = np_avg_pool(ref, _triple(k), _triple(s or k), _triple(p), ceil_mode, include_pad,
                      divisor)
    out = F.avg_pool3d(x, k, s, p, ceil_mode, include_pad, divisor)
    assert out.dtype is dtype
    assert_close(out, exp, dtype)


def test_avg_pool3d_unbatched_and_top_level():
    x, ref = make((3, 4, 5, 5), E.float64)
    exp = np_avg_pool(ref, (2, 2, 2), (2, 2, 2), (0, 0, 0), False, True)
    assert_close(F.avg_pool3d(x, 2), exp)
    assert_close(E.avg_pool3d(x, (2, 2, 2)), exp)


@pytest.mark.parametrize("fn", [
    lambda x: F.avg_pool3d(x, 2),
    lambda x: F.avg_pool3d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    lambda x: F.avg_pool3d(x, (1, 2, 3), 1, (0, 1, 1), divisor_override=4),
])
def test_avg_pool3d_gradcheck_and_gradgradcheck(fn):
    x = small((1, 1, 2, 3, 4))
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("call, err, match", [
    (lambda: F.avg_pool3d(E.zeros(1, 1, 4, 4, 4), 2, divisor_override=0), ValueError,
     "avg_pool3d.*divisor_override must be non-zero"),
    (lambda: F.avg_pool3d(E.zeros(1, 1, 4, 4, 4, dtype=E.int64), 2), NotImplementedError,
     "floating"),
    (lambda: F.avg_pool3d(E.zeros(1, 1, 4, 4, 4), 2, padding=(0, 0, 2)), ShapeError,
     "at most half of kernel size"),
    (lambda: F.avg_pool3d(E.zeros(4, 4, 4), 2), ShapeError, "4-D .C, D, H, W."),
    (lambda: F.avg_pool3d(E.zeros(1, 1, 4, 4, 4), (2, 2, 2, 2)), ShapeError, "three ints"),
    (lambda: F.avg_pool3d(E.zeros(1, 1, 2, 4, 4), 3), ShapeError, "Output size is too small"),
])
def test_avg_pool3d_errors(call, err, match):
    with pytest.raises(err, match=match):
        call()
