"""Pooling layers: forward against numpy, defaults (stride = kernel), repr."""
import numpy as np
import pytest
from helpers import assert_close, make

import ember as E
from ember import nn


def np_pool2d(x, k, s, reduce):
    N, C, H, W = x.shape
    oh, ow = (H - k) // s + 1, (W - k) // s + 1
    out = np.empty((N, C, oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = reduce(x[:, :, i * s:i * s + k, j * s:j * s + k], axis=(2, 3))
    return out


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


def test_avg_pool_forward():
    x, xn = make((2, 3, 6, 6), E.float64)
    assert_close(nn.AvgPool2d(3)(x), np_pool2d(xn, 3, 3, np.mean))
    x1, xn1 = make((2, 3, 9), E.float64)
    m = nn.AvgPool1d(3)
    assert m.kernel_size == (3,) and m.stride == (3,) and m.padding == (0,)
    assert_close(m(x1), xn1.reshape(2, 3, 3, 3).mean(-1))


def test_adaptive_avg_pool():
    x, xn = make((2, 3, 4, 6), E.float64)
    assert_close(nn.AdaptiveAvgPool2d(1)(x), xn.mean((2, 3), keepdims=True))
    assert_close(nn.AdaptiveAvgPool2d((2, 3))(x), np_pool2d(xn, 2, 2, np.mean))
    x1, xn1 = make((2, 3, 6), E.float64)
    assert_close(nn.AdaptiveAvgPool1d(3)(x1), xn1.reshape(2, 3, 3, 2).mean(-1))


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


def test_adaptive_max_pool_modules():
    x, xn = make((2, 3, 4, 6), E.float64)
    v, i = nn.AdaptiveMaxPool2d((2, 3), return_indices=True)(x)
    assert_close(v, xn.reshape(2, 3, 2, 2, 3, 2).max((3, 5)))
    assert i.shape == (2, 3, 2, 3)
    assert_close(nn.AdaptiveMaxPool1d(2)(x[0]), xn[0].reshape(3, 4, 2, 3).max(-1))
    assert repr(nn.AdaptiveMaxPool2d((2, None))) == "AdaptiveMaxPool2d(output_size=(2, None))"


def test_lp_pool_modules():
    x, xn = make((1, 2, 4, 4), E.float64, low=0.1, high=2.0)
    ref = np.sqrt((xn ** 2).reshape(1, 2, 2, 2, 2, 2).sum((3, 5)))
    assert_close(nn.LPPool2d(2, 2)(x), ref)
    assert_close(nn.LPPool1d(1, 2)(x[0]), xn[0].reshape(2, 4, 2, 2).sum(-1))
    assert repr(nn.LPPool2d(2, 3)) == \
        "LPPool2d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)"
