"""Activation layers: forward against numpy references, inplace, repr."""
import math

import numpy as np
import pytest
from helpers import assert_close, make

import ember as E
from ember import nn

_erf = np.vectorize(math.erf)


@pytest.mark.parametrize("module,ref", [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.LeakyReLU(0.2), lambda x: np.where(x >= 0, x, 0.2 * x)),
    (nn.ELU(0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    (nn.GELU(), lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2)))),
    (nn.GELU("tanh"), lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi)
                                                       * (x + 0.044715 * x ** 3)))),
    (nn.SiLU(), lambda x: x / (1 + np.exp(-x))),
    (nn.Tanh(), np.tanh),
    (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    (nn.Hardtanh(-0.5, 2.0), lambda x: np.clip(x, -0.5, 2.0)),
    (nn.ReLU6(), lambda x: np.clip(x, 0, 6)),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "")
def test_pointwise_forward(module, ref):
    x, xn = make((3, 4), E.float64, low=-8, high=8)
    assert_close(module(x), ref(xn))


def test_softmax_log_softmax():
    x, xn = make((2, 5), E.float64)
    e = np.exp(xn - xn.max(1, keepdims=True))
    sm = e / e.sum(1, keepdims=True)
    assert_close(nn.Softmax(dim=1)(x), sm)
    assert_close(nn.LogSoftmax(dim=1)(x), np.log(sm))
    assert_close(nn.Softmax(dim=0)(x), np.exp(xn) / np.exp(xn).sum(0))


def test_inplace():
    x = E.tensor([-1.0, 2.0])
    out = nn.ReLU(inplace=True)(x)
    assert x.tolist() == [0.0, 2.0] and out.tolist() == [0.0, 2.0]


def test_hardtanh_errors():
    with pytest.raises(ValueError, match="max_val > min_val"):
        nn.Hardtanh(1.0, 0.0)


def test_gradient_through_activation_stack():
    model = nn.Sequential(nn.Linear(3, 4, dtype=E.float64), nn.GELU(), nn.Tanh(),
                          nn.Linear(4, 2, dtype=E.float64), nn.LogSoftmax(dim=1))
    x, _ = make((2, 3), E.float64)
    model(x).sum().backward()
    assert all(p.grad is not None for p in model.parameters())


def test_repr():
    got = [repr(m) for m in (nn.ReLU(), nn.ReLU(inplace=True), nn.LeakyReLU(), nn.ELU(),
                             nn.GELU(), nn.GELU("tanh"), nn.SiLU(), nn.Tanh(), nn.Sigmoid(),
                             nn.Hardtanh(), nn.ReLU6(), nn.Softmax(1), nn.LogSoftmax(dim=1),
                             nn.Softmax(), nn.LeakyReLU(0.1, inplace=True))]
    assert got == ["ReLU()", "ReLU(inplace=True)", "LeakyReLU(negative_slope=0.01)",
                   "ELU(alpha=1.0)", "GELU(approximate='none')", "GELU(approximate='tanh')",
                   "SiLU()", "Tanh()", "Sigmoid()", "Hardtanh(min_val=-1.0, max_val=1.0)",
                   "ReLU6()", "Softmax(dim=1)", "LogSoftmax(dim=1)", "Softmax(dim=None)",
                   "LeakyReLU(negative_slope=0.1, inplace=True)"]


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


@pytest.mark.parametrize("module,ref", [
    (nn.SELU(), lambda x: _SELU_SCALE * np.where(x > 0, x, _SELU_ALPHA * np.expm1(x))),
    (nn.CELU(0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x / 0.5))),
    (nn.Threshold(0.5, -1.0), lambda x: np.where(x > 0.5, x, -1.0)),
    (nn.Hardswish(), lambda x: x * np.clip(x + 3, 0, 6) / 6),
    (nn.Hardsigmoid(), lambda x: np.clip(x + 3, 0, 6) / 6),
    (nn.Softshrink(1.0), lambda x: np.sign(x) * np.maximum(np.abs(x) - 1.0, 0)),
    (nn.Hardshrink(1.0), lambda x: np.where(np.abs(x) > 1.0, x, 0)),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "")
def test_new_pointwise_forward(module, ref):
    x, xn = make((3, 4), E.float64, low=-5, high=5)
    assert_close(module(x), ref(xn))


def test_prelu_parameter_forward_and_gradient():
    m = nn.PReLU(3, init=0.1, dtype=E.float64)
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    assert m.weight.shape == (3,) and m.weight.tolist() == [0.1, 0.1, 0.1]
    x, xn = make((2, 3, 4), E.float64)
    assert_close(m(x), np.where(xn > 0, xn, 0.1 * xn))
    m(x).sum().backward()
    assert_close(m.weight.grad, np.minimum(xn, 0).sum(axis=(0, 2)))
    with E.no_grad():
        m.weight.fill_(2.0)
    m.reset_parameters()
    assert m.weight.tolist() == [0.1, 0.1, 0.1]
    assert nn.PReLU()(E.tensor([-4.0])).tolist() == [-1.0]
    with pytest.raises(ValueError, match="num_parameters"):
        nn.PReLU(0)


def test_new_inplace_modules():
    for m in (nn.SELU(True), nn.CELU(inplace=True), nn.Threshold(0, 1, True),
              nn.Hardswish(True), nn.Hardsigmoid(True)):
        x = E.tensor([-1.0, 2.0])
        assert m(x) is x and x.tolist() != [-1.0, 2.0]


def test_new_repr():
    got = [repr(m) for m in (nn.SELU(), nn.SELU(inplace=True), nn.CELU(), nn.CELU(2.0, True),
                             nn.Threshold(0.1, 20), nn.Threshold(1, 2, True), nn.PReLU(),
                             nn.PReLU(3), nn.Hardswish(True), nn.Hardsigmoid(),
                             nn.Softshrink(), nn.Hardshrink(0.3))]
    assert got == ["SELU()", "SELU(inplace=True)", "CELU(alpha=1.0)",
                   "CELU(alpha=2.0, inplace=True)", "Threshold(threshold=0.1, value=20)",
                   "Threshold(threshold=1, value=2, inplace=True)",
                   "PReLU(num_parameters=1)", "PReLU(num_parameters=3)", "Hardswish()",
                   "Hardsigmoid()", "Softshrink(0.5)", "Hardshrink(0.3)"]


def test_softmax2d():
    x, xn = make((2, 3, 4, 5), E.float64)
    e = np.exp(xn - xn.max(1, keepdims=True))
    assert_close(nn.Softmax2d()(x), e / e.sum(1, keepdims=True))
    assert_close(nn.Softmax2d()(x[0]), (e / e.sum(1, keepdims=True))[0])   # (C, H, W)
    assert repr(nn.Softmax2d()) == "Softmax2d()"
    with pytest.raises(ValueError, match="3D .* or 4D"):
        nn.Softmax2d()(E.zeros(3, 4))
