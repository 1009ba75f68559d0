"""F.pad against numpy float64 references (np.pad plus crops) in every mode, negative
padding, gradcheck and gradgradcheck per mode, and the errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import ShapeError
from helpers import FLOAT_DTYPES, assert_close, make, to_np

NP_MODE = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
           "circular": "wrap"}


def _crop(a, dim, left, right):
    return np.take(a, np.arange(max(-left, 0), a.shape[dim] - max(-right, 0)), axis=dim)


def pad_ref(a, pad, mode, value=0.0):
    """PyTorch's semantics from np.pad: constant and circular crop first and pad what
    remains; reflect and replicate pad the whole dim and crop after."""
    for i in range(len(pad) // 2):
        dim = a.ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        widths = [(0, 0)] * a.ndim
        widths[dim] = (max(left, 0), max(right, 0))
        kw = {"constant_values": value} if mode == "constant" else {}
        if mode in ("constant", "circular"):
            a = np.pad(_crop(a, dim, left, right), widths, NP_MODE[mode], **kw)
        else:
            a = _crop(np.pad(a, widths, NP_MODE[mode]), dim, left, right)
    return a


CASES = [  # (input shape, pad, mode)
    ((2, 3, 4), (1, 2), "constant"),
    ((2, 3, 4), (1, -2, 0, 3), "constant"),
    ((2, 3, 4), (-1, -1, 2, 0, 1, 1), "constant"),
    ((5,), (2, 1), "constant"),
    ((2, 5), (2, 3), "reflect"),
    ((2, 3, 5), (-1, 4, 2, 1), "reflect"),
    ((1, 2, 3, 4, 5), (1, 2, 3, 0, 1, 1), "reflect"),
    ((2, 5), (4, -2), "replicate"),
    ((2, 2, 3, 4), (5, 1, 0, 2), "replicate"),
    ((2, 3, 3, 4), (1, 1, -1, 2, 2, 0), "replicate"),
    ((2, 5), (2, -1), "circular"),
    ((2, 2, 3, 4), (-1, 3, 3, 1), "circular"),
    ((1, 2, 3, 4, 5), (5, 0, 1, 1, 0, 2), "circular"),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape, pad, mode", CASES)
def test_values(dtype, shape, pad, mode):
    x, xn = make(shape, dtype)
    value = 1.5 if mode == "constant" else None
    assert_close(F.pad(x, pad, mode, value), pad_ref(xn, pad, mode, value or 0.0))


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_random_pads_match_numpy(mode):
    rng = np.random.default_rng(0)
    x, xn = make((2, 4, 5), E.float64)
    for _ in range(30):
        pad = tuple(int(v) for v in rng.integers(-1, 3, size=4))
        assert_close(F.pad(x, pad, mode), pad_ref(xn, pad, mode))


@pytest.mark.parametrize("pad, mode", [((1, 2, 2, 1), "constant"), ((-1, 1, 0, 1), "constant"),
                                       ((2, 1, 1, -1), "reflect"), ((2, 2, 1, 0), "replicate"),
                                       ((1, 2, -1, 1), "circular")])
def test_gradcheck_and_gradgradcheck(pad, mode):
    x = make((1, 3, 3), E.float64)[0].requires_grad_()
    fn = lambda x: F.pad(x, pad, mode)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("dtype, value, expected", [(E.int64, 2.5, 2), (E.bool_, 1.0, True),
                                                    (E.int32, None, 0)])
def test_constant_value_takes_input_dtype(dtype, value, expected):
    out = F.pad(E.ones(2, dtype=dtype), (1, 0), value=value)
    assert out.dtype is dtype
    np.testing.assert_array_equal(to_np(out), np.array([expected, 1, 1], to_np(out).dtype))


@pytest.mark.parametrize("pad, mode", [((0, 0), "constant"), ((-1, 0), "constant"),
                                       ((0, 0), "reflect"), ((0, 0, 0, 0), "circular")])
def test_result_is_a_new_tensor(pad, mode):
    x = E.zeros(2, 3, 4)
    out = F.pad(x, pad, mode)
    out.fill_(1.0)
    assert to_np(x).sum() == 0


def test_constant_allows_empty_results_and_inputs():
    assert F.pad(E.zeros(2, 3), (-3, 0)).shape == (2, 0)
    assert F.pad(E.zeros(0, 3), (1, 1)).shape == (0, 5)


def test_reflect_accepts_zero_value():
    assert F.pad(E.zeros(1, 3), (1, 1), "reflect", 0.0).shape == (1, 5)


@pytest.mark.parametrize("shape, pad, mode, error, match", [
    ((2, 3), (1,), "constant", ValueError, r"divisible by 2.*got 1"),
    ((2, 3), (1, 1, 1, 1, 1, 1), "constant", ShapeError, r"padding length 6 .* \(2, 3\)"),
    ((2, 3), (-2, -2), "constant", ShapeError, r"crops more than the size 3"),
    ((2, 3), (1, 1), "symmetric", ValueError, r"unknown padding mode 'symmetric'"),
    ((2, 3), (3, 0), "reflect", ShapeError, r"less than .* size 3, got padding \(3, 0\)"),
    ((2, 3), (1, 4), "circular", ShapeError, r"wraps around more than once"),
    ((2, 3), (-2, 2), "circular", ShapeError, r"wraps around more than once"),
    ((2, 3), (-4, 1), "replicate", ShapeError, r"too small .* size 0"),
    ((2, 0), (1, 1), "replicate", ShapeError, r"cannot pad an empty dim"),
    ((5,), (1, 1), "reflect", NotImplementedError, r"padding length 2 .* 1-D input"),
    ((1, 2, 3, 4, 5), (1, 1), "circular", NotImplementedError, r"5-D input"),
    ((2, 3), (1, 1, 1, 1), "replicate", NotImplementedError, r"padding length 4"),
])
def test_errors(shape, pad, mode, error, match):
    with pytest.raises(error, match=match):
        F.pad(E.zeros(shape), pad, mode)


def test_value_with_non_constant_mode_raises():
    with pytest.raises(ValueError, match=r"mode 'reflect' takes no value argument"):
        F.pad(E.zeros(1, 3), (1, 1), "reflect", 2.0)
