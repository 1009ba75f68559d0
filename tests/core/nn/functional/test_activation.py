"""ember.nn.functional activations against numpy float64 references: values, PyTorch's
gradients at the kinks, gradcheck and gradgradcheck, in-place semantics and errors."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from helpers import FLOAT_DTYPES, assert_close, make, to_np

_erf = np.vectorize(math.erf)


def _np_softmax(x, dim):
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


REFERENCES = {
    "relu": (F.relu, lambda x: np.maximum(x, 0)),
    "leaky_relu": (F.leaky_relu, lambda x: np.where(x > 0, x, 0.01 * x)),
    "leaky_relu_0.2": (lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    "elu": (F.elu, lambda x: np.where(x > 0, x, np.expm1(x))),
    "elu_2": (lambda x: F.elu(x, alpha=2.0), lambda x: np.where(x > 0, x, 2 * np.expm1(x))),
    "hardtanh": (F.hardtanh, lambda x: np.clip(x, -1, 1)),
    "hardtanh_range": (lambda x: F.hardtanh(x, -0.5, 2.0), lambda x: np.clip(x, -0.5, 2.0)),
    "relu6": (F.relu6, lambda x: np.clip(x, 0, 6)),
    "gelu": (F.gelu, lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2)))),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"),
                  lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))),
    "silu": (F.silu, lambda x: x / (1 + np.exp(-x))),
    "tanh": (F.tanh, np.tanh),
    "sigmoid": (F.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "softmax": (lambda x: F.softmax(x, dim=-1), lambda x: _np_softmax(x, -1)),
    "log_softmax": (lambda x: F.log_softmax(x, 0), lambda x: np.log(_np_softmax(x, 0))),
}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_values(name, dtype):
    fn, ref = REFERENCES[name]
    x, xn = make((4, 5), dtype, low=-8, high=8)
    assert_close(fn(x), ref(xn), rtol=1e-5 if dtype is E.float32 else 1e-12, atol=1e-6)


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_gradcheck_and_gradgradcheck(name):
    fn = REFERENCES[name][0]
    # away from the kinks (0, the hardtanh edges) where finite differences straddle them
    x = E.tensor([[-7.3, -1.7, -0.6, -0.2], [0.3, 0.8, 1.6, 6.6]], dtype=E.float64,
                 requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("fn, expected", [
    (F.relu, [0, 0, 0, 1, 1, 1]),
    (F.leaky_relu, [0.01, 0.01, 0.01, 1, 1, 1]),
    (lambda x: F.elu(x, alpha=2.0), [2 * math.exp(-2), 2 * math.exp(-1), 2, 1, 1, 1]),
    (F.hardtanh, [0, 0, 1, 0, 0, 0]),
    (F.relu6, [0, 0, 0, 1, 0, 0]),
])
def test_gradient_at_kinks_follows_pytorch(fn, expected):
    x = E.tensor([-2.0, -1.0, 0.0, 1.0, 6.0, 7.0], dtype=E.float64, requires_grad=True)
    (g,) = E.autograd.grad(fn(x).sum(), x)
    np.testing.assert_allclose(to_np(g), expected, rtol=1e-12)


def test_elu_gradient_finite_for_large_inputs():
    x = E.tensor([100.0, 1000.0, -1000.0], requires_grad=True)
    (g,) = E.autograd.grad(F.elu(x).sum(), x)
    np.testing.assert_allclose(to_np(g), [1, 1, 0])


def test_hardtanh_keeps_integral_dtype_and_nan():
    out = F.relu6(E.tensor([-2, 0, 3, 8]))
    assert out.dtype is E.int64 and out.tolist() == [0, 0, 3, 6]
    assert F.hardtanh(E.tensor([-2, 0, 3], dtype=E.int32)).tolist() == [-1, 0, 1]
    assert math.isnan(F.hardtanh(E.tensor([float("nan")])).item())


INPLACE = {
    "relu": (lambda x, inplace: F.relu(x, inplace=inplace)),
    "leaky_relu": (lambda x, inplace: F.leaky_relu(x, 0.1, inplace=inplace)),
    "elu": (lambda x, inplace: F.elu(x, 1.5, inplace=inplace)),
    "silu": (lambda x, inplace: F.silu(x, inplace=inplace)),
    "hardtanh": (lambda x, inplace: F.hardtanh(x, -0.5, 0.5, inplace=inplace)),
    "relu6": (lambda x, inplace: F.relu6(x, inplace=inplace)),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_writes_input_and_keeps_gradients(name):
    fn = INPLACE[name]
    x = E.tensor([-2.0, -0.3, 0.4, 7.0], dtype=E.float64, requires_grad=True)
    expected = fn(x, False)
    y = x * 1
    version = y._version
    out = fn(y, True)
    assert out is y and y._version > version
    assert_close(y, to_np(expected))
    (g,) = E.autograd.grad(out.sum(), x)
    (g_ref,) = E.autograd.grad(expected.sum(), x)
    assert_close(g, to_np(g_ref))


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_without_grad_and_on_leaf(name):
    fn = INPLACE[name]
    x = E.tensor([-2.0, 0.4])
    assert fn(x, True) is x and x.tolist() == fn(E.tensor([-2.0, 0.4]), False).tolist()
    leaf = E.tensor([-2.0, 0.4], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        fn(leaf, True)


def test_inplace_invalidates_saved_tensors():
    # exp saves its result; changing it in place afterwards must fail at backward
    x = E.tensor([-1.0, 2.0], requires_grad=True)
    y = x.exp()
    F.elu(y, inplace=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("fn", [F.leaky_relu, F.elu])
def test_integral_inputs_raise(fn):
    with pytest.raises(NotImplementedError, match="floating"):
        fn(E.tensor([1, 2]))


def test_hardtanh_bounds_order():
    with pytest.raises(ValueError, match="min_val"):
        F.hardtanh(E.tensor([1.0]), 2.0, 1.0)


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
def test_softmax_requires_dim(fn):
    with pytest.raises(TypeError, match="dim is required"):
        fn(E.tensor([1.0, 2.0]))


def test_softmax_dtype_argument():
    x, xn = make((3, 4), E.float32)
    out = F.softmax(x, 1, dtype=E.float64)
    assert_close(out, _np_softmax(xn, 1))
    assert F.log_softmax(x, -1, 3, E.float64).dtype is E.float64  # PyTorch's positions
