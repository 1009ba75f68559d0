"""pixel_shuffle, pixel_unshuffle and channel_shuffle against per-element numpy loops
written from their index formulas, round trips, gradients and errors."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import ShapeError
from helpers import assert_close, make, to_np


def shuffle_ref(x, r):
    """out[..., c, h r + i, w r + j] = x[..., c r^2 + i r + j, h, w]."""
    *lead, cr2, h, w = x.shape
    c = cr2 // (r * r)
    out = np.empty((*lead, c, h * r, w * r))
    for ci, hi, wi, i, j in itertools.product(range(c), range(h), range(w), range(r), range(r)):
        out[..., ci, hi * r + i, wi * r + j] = x[..., ci * r * r + i * r + j, hi, wi]
    return out


def channel_shuffle_ref(x, g):
    c = x.shape[1]
    out = np.empty_like(x)
    for i, j in itertools.product(range(g), range(c // g)):
        out[:, j * g + i] = x[:, i * (c // g) + j]
    return out


@pytest.mark.parametrize("shape, r", [((1, 4, 2, 3), 2), ((2, 18, 1, 2), 3), ((8, 3, 2), 2),
                                      ((2, 2, 4, 1, 1), 2), ((3, 1, 1), 1)])
def test_pixel_shuffle_matches_the_formula_and_round_trips(shape, r):
    x, xn = make(shape, E.float64)
    out = F.pixel_shuffle(x, r)
    assert_close(out, shuffle_ref(xn, r))
    assert_close(F.pixel_unshuffle(out, r), xn)


def test_pixel_unshuffle_matches_numpy_reshape_transpose():
    x, xn = make((2, 3, 4, 6), E.float32)
    ref = xn.reshape(2, 3, 2, 2, 3, 2).transpose(0, 1, 3, 5, 2, 4).reshape(2, 12, 2, 3)
    assert_close(F.pixel_unshuffle(x, 2), ref)


def test_integer_dtypes_are_kept():
    x = E.arange(16).reshape(1, 4, 2, 2)
    out = F.pixel_shuffle(x, 2)
    assert out.dtype is E.int64
    np.testing.assert_array_equal(to_np(out), shuffle_ref(to_np(x), 2))


@pytest.mark.parametrize("shape, g", [((2, 6, 3), 3), ((1, 4, 2, 2), 2), ((2, 6, 1, 1, 2), 6),
                                      ((1, 5, 2), 1)])
def test_channel_shuffle_matches_the_formula(shape, g):
    x, xn = make(shape, E.float64)
    assert_close(F.channel_shuffle(x, g), channel_shuffle_ref(xn, g))


@pytest.mark.parametrize("fn", [lambda x: F.pixel_shuffle(x, 2),
                                lambda x: F.pixel_unshuffle(x, 2),
                                lambda x: F.channel_shuffle(x, 2)])
def test_gradcheck_and_gradgradcheck(fn):
    x = make((1, 4, 2, 2), E.float64)[0].requires_grad_()
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("call, match", [
    (lambda: F.pixel_shuffle(E.zeros(4, 2), 2), "at least 3 dimensions"),
    (lambda: F.pixel_shuffle(E.zeros(4, 2, 2), 0), "positive upscale_factor, but got 0"),
    (lambda: F.pixel_shuffle(E.zeros(5, 2, 2), 2), r"input.size\(-3\)=5 is not divisible by 4"),
    (lambda: F.pixel_unshuffle(E.zeros(4, 3, 2), 2), r"height .* input.size\(-2\)=3"),
    (lambda: F.pixel_unshuffle(E.zeros(4, 2, 3), 2), r"width .* input.size\(-1\)=3"),
    (lambda: F.pixel_unshuffle(E.zeros(4, 2, 2), -1), "positive downscale_factor"),
    (lambda: F.channel_shuffle(E.zeros(2, 4), 2), "> 2 dims"),
    (lambda: F.channel_shuffle(E.zeros(2, 4, 1), 0), "must be positive"),
    (lambda: F.channel_shuffle(E.zeros(2, 5, 1), 2), "Got 5 channels and 2 groups"),
])
def test_errors(call, match):
    with pytest.raises(ShapeError, match=match):
        call()
