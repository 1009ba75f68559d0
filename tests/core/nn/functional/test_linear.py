"""F.linear and F.bilinear against numpy float64 references, with gradcheck and
gradgradcheck on every path (addmm fast path, matmul + add, no bias, 1-D input)."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import ShapeError
from helpers import FLOAT_DTYPES, assert_close, make


def _leaf(shape, seed):
    return make(shape, E.float64, seed=seed)[0].requires_grad_()


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("x_shape", [(4, 3), (2, 5, 3), (3,), (0, 3)])
@pytest.mark.parametrize("with_bias", [True, False])
def test_linear_values(dtype, x_shape, with_bias):
    x, xn = make(x_shape, dtype, seed=0)
    w, wn = make((5, 3), dtype, seed=1)
    b, bn = make((5,), dtype, seed=2)
    out = F.linear(x, w, b if with_bias else None)
    expected = xn @ wn.T + (bn if with_bias else 0)
    assert_close(out, expected, rtol=1e-5, atol=1e-5)


def test_linear_2d_with_bias_is_one_addmm():
    # the training loops' hot path: one addmm node, nothing else recorded
    x, w, b = _leaf((4, 3), 0), _leaf((5, 3), 1), _leaf((5,), 2)
    assert type(F.linear(x, w, b).grad_fn).__name__.startswith("Addmm")


@pytest.mark.parametrize("x_shape, with_bias", [((3, 2), True), ((2, 2, 2), True),
                                                ((3, 2), False), ((2,), True)])
def test_linear_gradients(x_shape, with_bias):
    inputs = (_leaf(x_shape, 0), _leaf((3, 2), 1)) + ((_leaf((3,), 2),) if with_bias else ())
    assert gradcheck(F.linear, inputs)
    assert gradgradcheck(F.linear, inputs)


def test_linear_is_the_generated_op():
    assert F.linear is E.linear and "Reference: torch.nn.functional.linear" in F.linear.__doc__


@pytest.mark.parametrize("x_shape, w_shape, b_shape, match", [
    ((4, 3), (5, 4), None, r"\(\*, 4\).*got \(4, 3\)"),
    ((4, 3), (3,), None, r"\(out_features, in_features\), got \(3,\)"),
    ((4, 3), (5, 3), (4,), r"bias of shape \(out_features,\) = \(5,\), got \(4,\)"),
    ((), (5, 3), None, r"input of shape"),
])
def test_linear_shape_errors(x_shape, w_shape, b_shape, match):
    with pytest.raises(ShapeError, match=match):
        F.linear(E.zeros(x_shape), E.zeros(w_shape), None if b_shape is None else E.zeros(b_shape))


def _bilinear_ref(x1, x2, w, b):
    return np.einsum("...i,oij,...j->...o", x1, w, x2) + (0 if b is None else b)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("lead", [(4,), (2, 3), ()])
@pytest.mark.parametrize("with_bias", [True, False])
def test_bilinear_values(dtype, lead, with_bias):
    x1, x1n = make(lead + (3,), dtype, seed=0)
    x2, x2n = make(lead + (2,), dtype, seed=1)
    w, wn = make((5, 3, 2), dtype, seed=2)
    b, bn = make((5,), dtype, seed=3)
    out = F.bilinear(x1, x2, w, b if with_bias else None)
    assert_close(out, _bilinear_ref(x1n, x2n, wn, bn if with_bias else None), rtol=1e-5,
                 atol=1e-5)


@pytest.mark.parametrize("with_bias", [True, False])
def test_bilinear_gradients(with_bias):
    inputs = (_leaf((2, 3), 0), _leaf((2, 2), 1), _leaf((2, 3, 2), 2))
    inputs += (_leaf((2,), 3),) if with_bias else ()
    assert gradcheck(F.bilinear, inputs)
    assert gradgradcheck(F.bilinear, inputs)


@pytest.mark.parametrize("s1, s2, w_shape, b_shape, match", [
    ((4, 3), (4, 2), (5, 3), None, r"\(out_features, in1_features, in2_features\)"),
    ((4, 3), (4, 3), (5, 3, 2), None, r"input2 \(\*, 2\).*got input1 \(4, 3\) and input2 \(4, 3\)"),
    ((4, 3), (2, 2), (5, 3, 2), None, r"same leading dims"),
    ((4, 3), (4, 2), (5, 3, 2), (3,), r"bias of shape \(out_features,\) = \(5,\), got \(3,\)"),
])
def test_bilinear_shape_errors(s1, s2, w_shape, b_shape, match):
    with pytest.raises(ShapeError, match=match):
        F.bilinear(E.zeros(s1), E.zeros(s2), E.zeros(w_shape),
                   None if b_shape is None else E.zeros(b_shape))
