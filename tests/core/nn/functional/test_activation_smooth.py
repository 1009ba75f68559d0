"""ember.nn.functional's smooth activations (softplus, mish, logsigmoid, softsign,
tanhshrink, glu, softmin) against numpy float64 references: values over dtypes, large
inputs without overflow, gradcheck and gradgradcheck, errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import ShapeError
from helpers import FLOAT_DTYPES, assert_close, make, to_np


def _np_softplus(x, beta=1.0, threshold=20.0):
    # logaddexp(0, z) = log(1 + exp(z)) exactly, without overflow
    return np.where(beta * x > threshold, x, np.logaddexp(0, beta * x) / beta)


def _np_softmax(x, dim):
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def _np_glu(x, dim):
    a, b = np.split(x, 2, axis=dim)
    return a / (1 + np.exp(-b))


REFERENCES = {
    "softplus": (F.softplus, _np_softplus),
    "softplus_beta2_th3": (lambda x: F.softplus(x, beta=2.0, threshold=3.0),
                           lambda x: _np_softplus(x, 2.0, 3.0)),
    "mish": (F.mish, lambda x: x * np.tanh(np.logaddexp(0, x))),
    "logsigmoid": (F.logsigmoid, lambda x: -np.logaddexp(0, -x)),
    "softsign": (F.softsign, lambda x: x / (1 + np.abs(x))),
    "tanhshrink": (F.tanhshrink, lambda x: x - np.tanh(x)),
    "glu": (F.glu, lambda x: _np_glu(x, -1)),
    "glu_dim0": (lambda x: F.glu(x, 0), lambda x: _np_glu(x, 0)),
    "softmin": (lambda x: F.softmin(x, dim=1), lambda x: _np_softmax(-x, 1)),
}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_values(name, dtype):
    fn, ref = REFERENCES[name]
    x, xn = make((4, 6), dtype, low=-8, high=8)
    assert_close(fn(x), ref(xn), rtol=1e-5 if dtype is E.float32 else 1e-12, atol=1e-6)


@pytest.mark.parametrize("name", ["softplus", "mish", "logsigmoid", "softsign", "glu"])
def test_float16(name):
    fn, ref = REFERENCES[name]
    x, xn = make((4, 6), E.float16, low=-6, high=6)
    assert_close(fn(x), ref(xn), rtol=1e-2, atol=2e-3)


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_gradcheck_and_gradgradcheck(name):
    fn = REFERENCES[name][0]
    # softplus_beta2_th3 switches branch at x = 1.5: the points stay away from it
    x = E.tensor([[-7.3, -1.7, -0.6, -0.2], [0.3, 0.8, 1.2, 6.6]], dtype=E.float64,
                 requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


BIG = np.array([-1000.0, -50.0, 0.0, 50.0, 1000.0])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name, dref", [
    ("softplus", lambda x: 1 / (1 + np.exp(-x))),
    ("logsigmoid", lambda x: 1 / (1 + np.exp(x))),
    ("mish", None),
])
def test_large_inputs_stay_finite_and_exact(name, dref, dtype):
    fn, ref = REFERENCES[name]
    x = E.tensor(BIG.astype(dtype.numpy), requires_grad=True)
    with np.errstate(over="ignore"):
        expected = ref(BIG)
        # logsigmoid(50) = -1.93e-22 and softplus(-50) = 1.93e-22, not 0: log1p, not log
        assert_close(fn(x).detach(), expected, rtol=1e-6, atol=0)
        (g,) = E.autograd.grad(fn(x).sum(), x)
        assert np.isfinite(to_np(g)).all()
        if dref is not None:
            np.testing.assert_allclose(to_np(g), dref(BIG), rtol=1e-6, atol=0)


def test_logsigmoid_and_softplus_gradient_is_exactly_half_at_zero():
    x = E.tensor([0.0], dtype=E.float64, requires_grad=True)
    for fn in (F.logsigmoid, F.softplus):
        (g,) = E.autograd.grad(fn(x).sum(), x)
        assert g.tolist() == [0.5]


def test_mish_inplace():
    x = E.tensor([-2.0, -0.3, 0.4, 7.0], dtype=E.float64, requires_grad=True)
    y = x * 1
    expected = F.mish(x)
    assert F.mish(y, inplace=True) is y
    assert_close(y, to_np(expected))
    (g,) = E.autograd.grad(y.sum(), x)
    (g_ref,) = E.autograd.grad(expected.sum(), x)
    assert_close(g, to_np(g_ref))


def test_softsign_and_tanhshrink_of_integers_are_float():
    x = E.tensor([-2, 0, 3])
    assert_close(F.softsign(x), np.array([-2 / 3, 0, 0.75]), dtype=E.float32)
    assert_close(F.tanhshrink(x), np.array([-2, 0, 3]) - np.tanh([-2, 0, 3]),
                 dtype=E.float32)


def test_softmin_dtype_argument():
    x = E.tensor([[1, 2, 3]])
    assert_close(F.softmin(x, 1, dtype=E.float64), _np_softmax(-np.array([[1.0, 2, 3]]), 1))
    assert F.softmin(x.float(), -1, 3, E.float64).dtype is E.float64  # PyTorch's positions


@pytest.mark.parametrize("call, error, match", [
    (lambda: F.softplus(E.tensor([1, 2])), NotImplementedError, "floating"),
    (lambda: F.mish(E.tensor([1, 2])), NotImplementedError, "floating"),
    (lambda: F.logsigmoid(E.tensor([1, 2])), NotImplementedError, "floating"),
    (lambda: F.softsign(E.tensor([True])), NotImplementedError, "bool"),
    (lambda: F.tanhshrink(E.tensor([True])), NotImplementedError, "bool"),
    (lambda: F.glu(E.zeros(2, 5)), ShapeError, "dimension 1 is size 5"),
    (lambda: F.glu(E.tensor(1.0)), ShapeError, "0-d"),
    (lambda: F.glu(E.zeros(2, 4), dim=2), IndexError, "out of range"),
    (lambda: F.glu(E.zeros(2, 4, dtype=E.int64)), NotImplementedError, "floating"),
    (lambda: F.softmin(E.zeros(2, 3)), TypeError, "dim is required"),
    (lambda: F.softmin(E.tensor([1, 2]), 0), NotImplementedError, "dtype="),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("dtype", [E.float16, E.bfloat16])
def test_half_softplus_and_mish_compute_in_float32(dtype):
    # float16's exp overflows from 11.1: computed in the half dtype, softplus(12) was inf
    x = np.array([5.0, 11.5, 12.0, 15.0, 19.0, -20.0])
    z = np.minimum(x, 20.0)
    softplus = np.where(x > 20.0, x, np.log1p(np.exp(z)))
    got = F.softplus(E.tensor(x, dtype=dtype))
    assert got.dtype == dtype
    assert_close(got, softplus.astype(np.float32).astype(dtype.numpy))
    assert_close(F.mish(E.tensor(x, dtype=dtype)),
                 (x * np.tanh(softplus)).astype(np.float32).astype(dtype.numpy),
                 rtol=1e-2, atol=1e-7)
