"""AvgPool1d/2d/3d layers: forward against numpy, stored arguments, repr."""
import numpy as np
from helpers import assert_close, make

import ember as E
from core.nn.functional.pooling.reference import np_avg_pool, np_pool2d
from ember import nn


def test_avg_pool_forward():
    x, xn = make((2, 3, 6, 6), E.float64)
    assert_close(nn.AvgPool2d(3)(x), np_pool2d(xn, 3, 3, np.mean))
    x1, xn1 = make((2, 3, 9), E.float64)
    m = nn.AvgPool1d(3)
    assert m.kernel_size == (3,) and m.stride == (3,) and m.padding == (0,)
    assert_close(m(x1), xn1.reshape(2, 3, 3, 3).mean(-1))


def test_avg_pool3d():
    x, xn = make((2, 3, 4, 5, 6), E.float64)
    m = nn.AvgPool3d(3, 2, 1, ceil_mode=True, count_include_pad=False, divisor_override=None)
    assert_close(m(x), np_avg_pool(xn, (3,) * 3, (2,) * 3, (1,) * 3, True, False))
    assert_close(nn.AvgPool3d(2, divisor_override=3)(x),
                 np_avg_pool(xn, (2,) * 3, (2,) * 3, (0,) * 3, False, True, 3))
    assert nn.AvgPool3d(2).stride == 2
    assert repr(nn.AvgPool3d(3, 2, 1, True, False, 2)) == \
        "AvgPool3d(kernel_size=3, stride=2, padding=1)"
