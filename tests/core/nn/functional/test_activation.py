"""ember.nn.functional activations against numpy float64 references: values, PyTorch's
gradients at the kinks, gradcheck and gradgradcheck, in-place semantics and errors."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError, ShapeError
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

# SELU's constants as printed in Klambauer et al. (2017)
_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

REFERENCES.update({
    "selu": (F.selu, lambda x: _SELU_SCALE * np.where(x > 0, x, _SELU_ALPHA * np.expm1(x))),
    "celu_2": (lambda x: F.celu(x, 2.0),
               lambda x: np.maximum(x, 0) + np.minimum(0, 2 * np.expm1(x / 2))),
    "threshold": (lambda x: F.threshold(x, 1.0, -2.0), lambda x: np.where(x > 1, x, -2.0)),
    "prelu": (lambda x: F.prelu(x, E.tensor([0.2], dtype=x.dtype)),
              lambda x: np.where(x > 0, x, 0.2 * x)),
    "prelu_channels": (lambda x: F.prelu(x, E.linspace(0.1, 0.4, x.shape[1], dtype=x.dtype)),
                       lambda x: np.where(x > 0, x, np.linspace(0.1, 0.4, x.shape[1]) * x)),
    "hardswish": (F.hardswish, lambda x: x * np.minimum(np.maximum(x + 3, 0), 6) / 6),
    "hardsigmoid": (F.hardsigmoid, lambda x: np.minimum(np.maximum(x + 3, 0), 6) / 6),
    "softshrink": (F.softshrink,
                   lambda x: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0.0))),
    "hardshrink_1": (lambda x: F.hardshrink(x, 1.0), lambda x: np.where(np.abs(x) > 1, x, 0.0)),
})


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
INPLACE.update({
    "selu": (lambda x, inplace: F.selu(x, inplace=inplace)),
    "celu": (lambda x, inplace: F.celu(x, 0.5, inplace=inplace)),
    "threshold": (lambda x, inplace: F.threshold(x, 0.1, 5.0, inplace=inplace)),
    "hardswish": (lambda x, inplace: F.hardswish(x, inplace=inplace)),
    "hardsigmoid": (lambda x, inplace: F.hardsigmoid(x, inplace=inplace)),
})


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


@pytest.mark.parametrize("fn", [F.leaky_relu, F.elu, F.selu, F.celu, F.hardswish,
                                F.hardsigmoid, F.softshrink, F.hardshrink,
                                lambda x: F.prelu(x, E.tensor([1]))])
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


@pytest.mark.parametrize("fn, x, expected", [
    # PyTorch's backward formulas at their edges (torch 2.x, checked by hand)
    (F.hardswish, [-3.0, 0.0, 3.0], [0.0, 0.5, 1.0]),
    (F.hardsigmoid, [-3.0, 0.0, 3.0], [0.0, 1 / 6, 0.0]),
    (F.softshrink, [-0.5, 0.0, 0.5], [0.0, 0.0, 0.0]),
    (F.hardshrink, [-0.5, 0.0, 0.5], [0.0, 0.0, 0.0]),
    (lambda x: F.threshold(x, 0.5, 3.0), [0.5, 0.0, 0.6], [0.0, 0.0, 1.0]),
    (lambda x: F.prelu(x, E.tensor([0.25], dtype=E.float64)), [0.0, -1.0, 1.0],
     [0.25, 0.25, 1.0]),
    (F.selu, [0.0], [_SELU_ALPHA * _SELU_SCALE]),
])
def test_new_gradients_at_kinks_follow_pytorch(fn, x, expected):
    x = E.tensor(x, dtype=E.float64, requires_grad=True)
    (g,) = E.autograd.grad(fn(x).sum(), x)
    np.testing.assert_allclose(to_np(g), expected, rtol=1e-12)


def test_prelu_weight_gradient_and_shapes():
    xn = np.arange(-5.5, 6.0).reshape(2, 3, 2)   # away from the kink at 0
    x = E.tensor(xn, requires_grad=True)
    w = E.tensor([0.1, 0.2, 0.3], dtype=E.float64, requires_grad=True)
    assert gradcheck(F.prelu, (x, w))
    assert gradgradcheck(F.prelu, (x, w))
    (gw,) = E.autograd.grad(F.prelu(x, w).sum(), w)
    assert_close(gw, np.minimum(xn, 0).sum(axis=(0, 2)))
    # one shared slope: any rank, 0-d included; a 1-D input has one channel
    assert F.prelu(E.tensor(-2.0), E.tensor(0.5)).item() == -1.0
    assert F.prelu(E.tensor([-2.0, 3.0]), E.tensor([0.5])).tolist() == [-1.0, 3.0]


def test_threshold_keeps_dtype_and_nan():
    assert F.threshold(E.tensor([1, 5]), 2.5, 300).tolist() == [300, 5]
    out = F.threshold(E.tensor([1, 2, 3], dtype=E.uint8), 1, -1)
    assert out.dtype is E.uint8 and out.tolist() == [255, 2, 3]     # value cast as PyTorch
    nan = F.threshold(E.tensor([float("nan"), 0.0]), 0.5, 7.0)
    assert math.isnan(nan[0].item()) and nan[1].item() == 7.0
    assert math.isnan(F.softshrink(E.tensor([float("nan")])).item())
    assert F.hardshrink(E.tensor([-2.0, 0.25]), -1.0).tolist() == [-2.0, 0.25]  # identity


@pytest.mark.parametrize("dtype", [E.float16])
@pytest.mark.parametrize("name", ["selu", "celu_2", "hardswish", "hardsigmoid", "softshrink"])
def test_new_activations_float16(name, dtype):
    fn, ref = REFERENCES[name]
    x, xn = make((4, 5), dtype, low=-5, high=5)
    assert_close(fn(x), ref(xn))


@pytest.mark.parametrize("call, error, match", [
    (lambda: F.celu(E.tensor([1.0]), 0.0), ValueError, "alpha cannot be 0"),
    (lambda: F.softshrink(E.tensor([1.0]), -1.0), ValueError, "lambd must be >= 0"),
    (lambda: F.threshold(E.tensor([True]), 0, 1), NotImplementedError, "bool"),
    (lambda: F.prelu(E.zeros(2, 3, 4), E.zeros(4)), ShapeError,
     r"one per channel \(input.shape\[1\] = 3"),
    (lambda: F.prelu(E.zeros(3), E.zeros(3)), ShapeError, "got 3 elements"),
    (lambda: F.prelu(E.zeros(2, 3), E.zeros(3, 1)), ShapeError, "scalar or 1-D"),
    (lambda: F.prelu(E.zeros(2, 3), E.zeros(3, dtype=E.float64)), DtypeError,
     "weight of input's dtype"),
])
def test_new_activation_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
