"""MaxPool1d/2d/3d layers: forward against numpy, defaults (stride = kernel), indices, repr."""
import numpy as np
import pytest
from helpers import assert_close, make

import ember as E
from core.nn.functional.pooling.reference import np_max_pool, np_pool2d
from ember import nn


def test_max_pool2d_forward():
    x, xn = make((2, 3, 6, 7), E.float64)
    m = nn.MaxPool2d(2)
    assert m.stride == 2
    assert_close(m(x), np_pool2d(xn, 2, 2, np.max))
    assert_close(nn.MaxPool2d(3, stride=1)(x), np_pool2d(xn, 3, 1, np.max))


def test_max_pool_return_indices_and_1d():
    x, xn = make((1, 2, 8), E.float64)
    out = nn.MaxPool1d(2)(x)
    assert_close(out, xn.reshape(1, 2, 4, 2).max(-1))
    vals, idx = nn.MaxPool1d(2, return_indices=True)(x)
    assert_close(vals, out.detach().numpy())
    np.testing.assert_array_equal(idx.numpy(), xn.reshape(1, 2, 4, 2).argmax(-1)
                                  + np.arange(0, 8, 2))


def test_gradient_flows():
    x, _ = make((1, 1, 4, 4), E.float64)
    x.requires_grad_()
    nn.Sequential(nn.MaxPool2d(2), nn.AdaptiveAvgPool2d(1))(x).sum().backward()
    assert x.grad is not None and x.grad.sum().item() == pytest.approx(1.0)


def test_repr():
    assert repr(nn.MaxPool2d(2)) == \
        "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.MaxPool1d(3, 1, 1)) == \
        "MaxPool1d(kernel_size=3, stride=1, padding=1, dilation=1, ceil_mode=False)"
    assert repr(nn.AvgPool2d(2)) == "AvgPool2d(kernel_size=2, stride=2, padding=0)"
    assert repr(nn.AvgPool1d(3)) == "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))"
    assert repr(nn.AdaptiveAvgPool2d((1, 1))) == "AdaptiveAvgPool2d(output_size=(1, 1))"


def test_max_pool3d():
    x, xn = make((2, 3, 4, 5, 6), E.float64)
    m = nn.MaxPool3d((2, 2, 3), stride=1, padding=1, dilation=(1, 2, 1), ceil_mode=True)
    exp_v, exp_i = np_max_pool(xn, (2, 2, 3), (1, 1, 1), (1, 1, 1), (1, 2, 1), True)
    assert_close(m(x), exp_v)
    v, i = nn.MaxPool3d(2, return_indices=True)(x)
    exp_v, exp_i = np_max_pool(xn, (2,) * 3, (2,) * 3, (0,) * 3, (1,) * 3, False)
    assert_close(v, exp_v)
    np.testing.assert_array_equal(i.numpy(), exp_i)
    assert nn.MaxPool3d(2).stride == 2
    assert repr(nn.MaxPool3d(2)) == \
        "MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    with pytest.raises(E.errors.ShapeError, match="4-D"):
        nn.MaxPool3d(2)(E.zeros(3, 4, 4))
