"""Adaptive pooling layers (1-D, 2-D, 3-D): forward against numpy, indices, repr."""
import numpy as np
from helpers import assert_close, make

import ember as E
from core.nn.functional.pooling.reference import np_adaptive, np_pool2d
from ember import nn


def test_adaptive_avg_pool():
    x, xn = make((2, 3, 4, 6), E.float64)
    assert_close(nn.AdaptiveAvgPool2d(1)(x), xn.mean((2, 3), keepdims=True))
    assert_close(nn.AdaptiveAvgPool2d((2, 3))(x), np_pool2d(xn, 2, 2, np.mean))
    x1, xn1 = make((2, 3, 6), E.float64)
    assert_close(nn.AdaptiveAvgPool1d(3)(x1), xn1.reshape(2, 3, 3, 2).mean(-1))


def test_adaptive_max_pool_modules():
    x, xn = make((2, 3, 4, 6), E.float64)
    v, i = nn.AdaptiveMaxPool2d((2, 3), return_indices=True)(x)
    assert_close(v, xn.reshape(2, 3, 2, 2, 3, 2).max((3, 5)))
    assert i.shape == (2, 3, 2, 3)
    assert_close(nn.AdaptiveMaxPool1d(2)(x[0]), xn[0].reshape(3, 4, 2, 3).max(-1))
    assert repr(nn.AdaptiveMaxPool2d((2, None))) == "AdaptiveMaxPool2d(output_size=(2, None))"


def test_adaptive_pool3d_modules():
    x, xn = make((2, 3, 4, 5, 6), E.float64)
    assert_close(nn.AdaptiveAvgPool3d((2, None, 4))(x), np_adaptive(xn, (2, 5, 4), "avg"))
    assert_close(nn.AdaptiveAvgPool3d(1)(x), xn.mean((2, 3, 4), keepdims=True))
    v, i = nn.AdaptiveMaxPool3d(3, return_indices=True)(x)
    rv, ri = np_adaptive(xn, (3, 3, 3), "max")
    assert_close(v, rv)
    np.testing.assert_array_equal(i.numpy(), ri)
    assert_close(nn.AdaptiveAvgPool1d((4,))(x[0, 0]), np_adaptive(xn[0, 0], (4,), "avg"))
    assert repr(nn.AdaptiveAvgPool3d(2)) == "AdaptiveAvgPool3d(output_size=2)"
    assert repr(nn.AdaptiveMaxPool3d((2, None, 3))) == \
        "AdaptiveMaxPool3d(output_size=(2, None, 3))"
