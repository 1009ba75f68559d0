"""ember.nn.functional batch_norm, layer_norm and group_norm against numpy float64:
values, running statistics, gradcheck and gradgradcheck, and PyTorch's shape errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import ShapeError
from helpers import assert_close, make, to_np


def np_normalize(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)


def channel(v, ndim):
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def leaf(shape, seed):
    return E.tensor(np.random.default_rng(seed).uniform(-2, 2, shape), requires_grad=True)


# --- batch_norm ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [E.float32, E.float64])
@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 6), (2, 3, 4, 5)])
def test_batch_norm_training_normalizes_and_updates_running_stats(dtype, shape):
    x, ref = make(shape, dtype)
    w, w_ref = make((3,), dtype, seed=1)
    b, b_ref = make((3,), dtype, seed=2)
    rm, rm_ref = make((3,), dtype, seed=3)
    rv, rv_ref = make((3,), dtype, low=0.5, high=2, seed=4)
    out = F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3, eps=1e-3)
    axes = (0,) + tuple(range(2, len(shape)))
    exp = np_normalize(ref, axes, 1e-3) * channel(w_ref, len(shape)) + channel(b_ref,
                                                                                len(shape))
    assert out.dtype is dtype
    assert_close(out, exp, dtype, rtol=1e-5, atol=1e-5)
    n = ref.size // 3
    assert_close(rm, 0.7 * rm_ref + 0.3 * ref.mean(axis=axes), dtype)
    assert_close(rv, 0.7 * rv_ref + 0.3 * ref.var(axis=axes) * n / (n - 1), dtype)


def test_batch_norm_eval_uses_running_stats_and_leaves_them():
    x, ref = make((4, 3, 2), E.float64)
    rm, rm_ref = make((3,), E.float64, seed=3)
    rv, rv_ref = make((3,), E.float64, low=0.5, high=2, seed=4)
    w, w_ref = make((3,), E.float64, seed=1)
    out = F.batch_norm(x, rm, rv, w, None, eps=1e-5)
    exp = (ref - channel(rm_ref, 3)) / np.sqrt(channel(rv_ref, 3) + 1e-5) * channel(w_ref, 3)
    assert_close(out, exp)
    np.testing.assert_array_equal(to_np(rm), rm_ref)
    np.testing.assert_array_equal(to_np(rv), rv_ref)
    # float64 statistics do not promote a float16 input
    assert F.batch_norm(x.half(), rm, rv, w.half(), None).dtype is E.float16


def test_batch_norm_training_without_running_stats_and_stats_not_tracked():
    x, ref = make((4, 2), E.float64)
    x.requires_grad_()
    assert_close(F.batch_norm(x, None, None, training=True), np_normalize(ref, (0,), 1e-5))
    rm, rv = E.zeros(2, dtype=E.float64), E.ones(2, dtype=E.float64)
    F.batch_norm(x, rm, rv, training=True).sum().backward()
    assert rm.grad_fn is None and not rm.requires_grad and rv.grad_fn is None


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_gradcheck_and_gradgradcheck(training):
    x, w, b = leaf((3, 2, 2), 0), leaf((2,), 1), leaf((2,), 2)
    rm = E.tensor(np.array([0.1, -0.2]))
    rv = E.tensor(np.array([0.5, 1.5]))
    fn = lambda x, w, b: F.batch_norm(x, rm, rv, w, b, training, 0.1, 1e-3)
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_batch_norm_errors():
    with pytest.raises(ShapeError, match="Expected more than 1 value per channel when "
                                         "training, got input size \\[1, 3\\]"):
        F.batch_norm(E.zeros(1, 3), None, None, training=True)
    with pytest.raises(ShapeError, match="at least 2 dims"):
        F.batch_norm(E.zeros(3), None, None, training=True)
    with pytest.raises(ShapeError, match="running_mean of shape \\[3\\], got \\[2\\]"):
        F.batch_norm(E.zeros(2, 3), E.zeros(2), E.ones(3))
    with pytest.raises(ShapeError, match="weight of shape \\[3\\]"):
        F.batch_norm(E.zeros(2, 3), None, None, E.ones(3, 1), training=True)
    with pytest.raises(ValueError, match="evaluation mode"):
        F.batch_norm(E.zeros(2, 3), None, None)
    with pytest.raises(NotImplementedError, match="floating"):
        F.batch_norm(E.zeros(2, 3, dtype=E.int64), None, None, training=True)


# --- layer_norm ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [E.float32, E.float64])
def test_layer_norm(dtype):
    x, ref = make((2, 3, 4), dtype)
    w, w_ref = make((3, 4), dtype, seed=1)
    b, b_ref = make((3, 4), dtype, seed=2)
    assert_close(F.layer_norm(x, (3, 4), w, b, eps=1e-3),
                 np_normalize(ref, (-2, -1), 1e-3) * w_ref + b_ref, dtype, rtol=1e-5,
                 atol=1e-5)
    out = F.layer_norm(x, 4)
    assert out.dtype is dtype
    assert_close(out, np_normalize(ref, (-1,), 1e-5), dtype, rtol=1e-5, atol=1e-5)


def test_layer_norm_gradcheck_and_gradgradcheck():
    x, w, b = leaf((2, 2, 3), 0), leaf((3,), 1), leaf((3,), 2)
    fn = lambda x, w, b: F.layer_norm(x, (3,), w, b)
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_layer_norm_errors():
    with pytest.raises(ShapeError, match=r"Given normalized_shape=\[4\], expected input with "
                                         r"shape \[\*, 4\], but got input of size \[2, 3\]"):
        F.layer_norm(E.zeros(2, 3), (4,))
    with pytest.raises(ShapeError, match="weight of shape \\[3\\]"):
        F.layer_norm(E.zeros(2, 3), 3, E.ones(2))


# --- group_norm ----------------------------------------------------------------------------

@pytest.mark.parametrize("shape,groups", [((2, 6, 5), 3), ((2, 4, 2, 3), 1), ((3, 4), 4)])
def test_group_norm(shape, groups):
    x, ref = make(shape, E.float64)
    w, w_ref = make((shape[1],), E.float64, seed=1)
    b, b_ref = make((shape[1],), E.float64, seed=2)
    grouped = ref.reshape(shape[0], groups, -1)
    exp = np_normalize(grouped, (-1,), 1e-5).reshape(shape)
    assert_close(F.group_norm(x, groups), exp)
    assert_close(F.group_norm(x, groups, w, b),
                 exp * channel(w_ref, len(shape)) + channel(b_ref, len(shape)))


def test_group_norm_gradcheck_and_gradgradcheck():
    x, w, b = leaf((2, 4, 2), 0), leaf((4,), 1), leaf((4,), 2)
    fn = lambda x, w, b: F.group_norm(x, 2, w, b)
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_group_norm_errors():
    with pytest.raises(ShapeError, match=r"Expected number of channels in input to be "
                                         r"divisible by num_groups, but got input of shape "
                                         r"\[2, 3, 4\] and num_groups=2"):
        F.group_norm(E.zeros(2, 3, 4), 2)
    with pytest.raises(ShapeError, match="weight of shape \\[4\\]"):
        F.group_norm(E.zeros(2, 4, 4), 2, E.ones(2))
