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


# --- channel-wise and alpha dropout ------------------------------------------------------------

@pytest.mark.parametrize("fn, shape, lead", [(F.dropout1d, (4, 6, 5), 2),
                                             (F.dropout1d, (6, 5), 1),
                                             (F.dropout2d, (4, 6, 3, 2), 2),
                                             (F.dropout3d, (4, 6, 2, 2, 3), 2),
                                             (F.dropout3d, (6, 2, 2, 3), 1)])
def test_channel_dropout_masks_whole_channels(fn, shape, lead):
    E.manual_seed(3)
    x, xn = make(shape, E.float64, low=0.5, high=2.0)
    out = to_np(fn(x, 0.5))
    # each channel ((N, C) batched, C unbatched) is zeroed or scaled by 1 / (1 - p) whole
    ratio = (out / xn).reshape(shape[:lead] + (-1,))
    assert np.all((ratio == ratio[..., :1]))
    assert set(np.unique(ratio)) == {0.0, 2.0}


def test_channel_dropout_rate_and_eval():
    E.manual_seed(0)
    out = to_np(F.dropout2d(E.ones(100, 100, 2, 2), 0.3))
    assert abs((out[:, :, 0, 0] == 0).mean() - 0.3) < 0.03  # 10^4 draws: 6 sigma
    x = E.ones(2, 3, 4)
    np.testing.assert_array_equal(to_np(F.dropout1d(x, 0.5, training=False)), to_np(x))
    assert F.dropout2d(E.ones(2, 3, 4, 4), 0.5, training=False).shape == (2, 3, 4, 4)


def test_channel_dropout_inplace_and_unbatched():
    E.manual_seed(1)
    x = E.ones(8, 5)
    out = F.dropout1d(x, 0.5, inplace=True)
    assert out is x
    rows = to_np(x)
    assert np.all(rows == rows[:, :1]) and set(np.unique(rows)) <= {0.0, 2.0}


def test_dropout2d_warnings_and_dropout1d_rank_error():
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        F.dropout2d(E.ones(2, 3, 4), 0.5)
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):
        F.dropout2d(E.ones(2, 3), 0.5)
    with pytest.warns(UserWarning, match="Received a 3-D input to dropout3d"):
        F.dropout3d(E.ones(2, 3, 4), 0.5)
    with pytest.raises(RuntimeError, match="Expected 2D or 3D input, but received a 4D"):
        F.dropout1d(E.ones(1, 2, 3, 4), 0.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout2d(E.ones(1, 2, 3, 4), 1.5)


@pytest.mark.parametrize("p", [0.2, 0.5])
def test_alpha_dropout_values_and_moments(p):
    alpha = 1.7580993408473766
    a = 1 / np.sqrt((alpha ** 2 * p + 1) * (1 - p))
    E.manual_seed(2)
    xn = np.random.default_rng(4).standard_normal((200, 500))
    out = to_np(F.alpha_dropout(E.tensor(xn), p, training=True))
    dropped = np.isclose(out, -a * alpha * (1 - p))
    np.testing.assert_allclose(out[~dropped], a * (xn[~dropped] + alpha * p))
    assert abs(dropped.mean() - p) < 0.01
    # self-normalizing: a standard normal input keeps mean 0 and variance 1
    assert abs(out.mean()) < 0.02 and abs(out.var() - 1) < 0.03


def test_alpha_dropout_defaults_to_eval_and_p1_gives_zeros():
    x = E.randn(3, 4)
    assert F.alpha_dropout(x, 0.5) is x
    assert F.feature_alpha_dropout(x, 0.5) is x
    assert not to_np(F.alpha_dropout(x, 1.0, training=True)).any()


def test_feature_alpha_dropout_is_per_channel():
    E.manual_seed(5)
    out = to_np(F.feature_alpha_dropout(E.zeros(10, 8, 3, 3), 0.5, training=True))
    flat = out.reshape(10, 8, -1)
    assert np.all(flat == flat[..., :1]) and len(np.unique(flat)) == 2


@pytest.mark.parametrize("fn", [lambda x: F.dropout2d(x[None], 0.4),
                                lambda x: F.dropout1d(x[0], 0.4),
                                lambda x: F.alpha_dropout(x, 0.4, True),
                                lambda x: F.feature_alpha_dropout(x, 0.4, True)])
def test_channel_and_alpha_dropout_gradients(fn):
    x = make((2, 3, 2), E.float64)[0].requires_grad_()

    def seeded(x):  # the same mask on every call gradcheck makes
        E.manual_seed(11)
        return fn(x)
    assert gradcheck(seeded, (x,))
    assert gradgradcheck(seeded, (x,))
