"""LPPool1d/2d/3d layers: forward against numpy window sums, repr."""
import numpy as np
from helpers import assert_close, make

import ember as E
from ember import nn


def test_lp_pool_modules():
    x, xn = make((1, 2, 4, 4), E.float64, low=0.1, high=2.0)
    ref = np.sqrt((xn ** 2).reshape(1, 2, 2, 2, 2, 2).sum((3, 5)))
    assert_close(nn.LPPool2d(2, 2)(x), ref)
    assert_close(nn.LPPool1d(1, 2)(x[0]), xn[0].reshape(2, 4, 2, 2).sum(-1))
    assert repr(nn.LPPool2d(2, 3)) == \
        "LPPool2d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)"


def test_lp_pool3d_module():
    x, xn = make((1, 2, 4, 4, 4), E.float64, low=0.1, high=2.0)
    ref = np.sqrt((xn ** 2).reshape(1, 2, 2, 2, 2, 2, 2, 2).sum((3, 5, 7)))
    assert_close(nn.LPPool3d(2, 2)(x), ref)
    assert repr(nn.LPPool3d(2, 3)) == \
        "LPPool3d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)"
