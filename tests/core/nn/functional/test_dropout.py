"""F.dropout: statistics, exact scaling, seeding, eval/p edge cases, gradients, in-place
and errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError
from helpers import FLOAT_DTYPES, LOW_FLOAT_DTYPES, make, to_np


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_fraction_zeroed_is_near_p(p):
    E.manual_seed(1)
    out = to_np(F.dropout(E.ones(200_000), p))
    # binomial std is at most 0.0012 here: 0.01 is more than 8 sigma
    assert abs((out == 0).mean() - p) < 0.01


@pytest.mark.parametrize("p", [0.2, 0.75])
def test_survivors_are_scaled_exactly(p):
    x, xn = make((40, 50), E.float64, low=0.5, high=2.0)  # no zeros in the input
    out = to_np(F.dropout(x, p))
    kept = out != 0
    assert kept.any() and not kept.all()
    np.testing.assert_array_equal(out[kept], xn[kept] * (1.0 / (1.0 - p)))


def test_seed_repeats_the_mask():
    x = E.ones(1000)
    E.manual_seed(7)
    a = to_np(F.dropout(x, 0.5))
    E.manual_seed(7)
    b = to_np(F.dropout(x, 0.5))
    c = to_np(F.dropout(x, 0.5))  # the generator moved on
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + LOW_FLOAT_DTYPES)
def test_dtype_and_shape_are_kept(dtype):
    x = E.ones(3, 4, dtype=dtype)
    out = F.dropout(x, 0.3)
    assert out.dtype is dtype and out.shape == x.shape
    kept = np.unique(to_np(out)[to_np(out) != 0])
    assert len(kept) == 1 and abs(kept[0] - 1 / 0.7) < 1e-2


def test_eval_and_p0_return_the_input_itself():
    x = E.randn(5, requires_grad=True)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert E.dropout(x, 0.5, False) is x


def test_p1_gives_zeros_and_zero_gradient():
    x = E.tensor([1.0, -2.0, float("nan")], requires_grad=True)
    out = F.dropout(x, 1.0)
    # input * 0, as PyTorch: NaN stays NaN
    np.testing.assert_array_equal(to_np(out), [0.0, 0.0, np.nan])
    out.sum().backward()
    np.testing.assert_array_equal(to_np(x.grad), [0.0, 0.0, 0.0])


def test_gradient_is_the_scaled_mask():
    x = make((30,), E.float64, low=0.5, high=2.0)[0].requires_grad_()
    out = F.dropout(x, 0.4)
    out.backward(E.ones(30, dtype=E.float64))
    mask = (to_np(out) != 0) / 0.6
    np.testing.assert_array_equal(to_np(x.grad), mask)


def test_gradcheck_and_gradgradcheck():
    x = make((3, 4), E.float64)[0].requires_grad_()

    def fn(x):
        E.manual_seed(3)  # one mask for every evaluation
        return F.dropout(x, 0.4)

    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_inplace_writes_into_input():
    x = E.ones(1000)
    E.manual_seed(5)
    out = F.dropout(x, 0.5, inplace=True)
    E.manual_seed(5)
    ref = to_np(F.dropout(E.ones(1000), 0.5))
    assert out is x
    np.testing.assert_array_equal(to_np(x), ref)
    y = E.ones(3)
    assert F.dropout(y, 0.5, training=False, inplace=True) is y


def test_inplace_is_differentiable_on_non_leaves():
    x = E.ones(50, dtype=E.float64, requires_grad=True)
    h = x * 2
    F.dropout(h, 0.5, inplace=True)
    h.sum().backward()
    np.testing.assert_array_equal(to_np(x.grad), (to_np(h) != 0) * 2 / 0.5)


def test_inplace_on_leaf_requiring_grad_raises():
    with pytest.raises(RuntimeError):
        F.dropout(E.ones(3, requires_grad=True), 0.5, inplace=True)


@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_p_out_of_range_raises(p):
    with pytest.raises(ValueError, match=r"between 0 and 1, but got"):
        F.dropout(E.ones(3), p)
    with pytest.raises(ValueError, match=r"between 0 and 1"):
        E.dropout(E.ones(3), p, True)


def test_integer_input_raises_while_training():
    with pytest.raises(DtypeError, match=r"floating-point input, got ember.int64"):
        F.dropout(E.ones(3, dtype=E.int64), 0.5)
