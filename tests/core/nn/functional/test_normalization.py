"""ember.nn.functional batch_norm, layer_norm, group_norm, rms_norm, instance_norm and
local_response_norm against numpy float64: values, running statistics, gradcheck and
gradgradcheck, and PyTorch's shape errors."""
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
    def fn(x, w, b):
        return F.batch_norm(x, rm, rv, w, b, training, 0.1, 1e-3)
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
    def fn(x, w, b):
        return F.layer_norm(x, (3,), w, b)
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


@pytest.mark.parametrize("affine", ["none", "weight", "bias"])
@pytest.mark.parametrize("shape,normalized", [((2, 3, 2), (3, 2)), ((3, 4), (4,))])
def test_layer_norm_gradgradcheck_without_affine_and_several_dims(affine, shape, normalized):
    x = leaf(shape, 0)
    w = leaf(normalized, 1) if affine == "weight" else None
    b = leaf(normalized, 2) if affine == "bias" else None
    inputs = tuple(t for t in (x, w, b) if t is not None)

    def fn(*ts):
        it = iter(ts[1:])
        return F.layer_norm(ts[0], normalized, next(it) if w is not None else None,
                            next(it) if b is not None else None)
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_layer_norm_and_group_norm_record_one_fused_node():
    x, w, b = leaf((2, 3), 0), leaf((3,), 1), leaf((3,), 2)
    assert type(F.layer_norm(x, (3,), w, b).grad_fn).__name__ == "LayerNormBackward0"
    x, w, b = leaf((2, 4, 3), 0), leaf((4,), 1), leaf((4,), 2)
    assert type(F.group_norm(x, 2, w, b).grad_fn).__name__ == "GroupNormBackward0"


def test_layer_norm_half_computes_in_float32_and_rounds_once():
    x64 = np.random.default_rng(4).normal(3, 2, (4, 64))
    for dtype in (E.float16, E.bfloat16):
        x = E.tensor(x64).to(dtype)
        y = F.layer_norm(x, (64,))
        assert y.dtype is dtype
        exact = np_normalize(to_np(x).astype(np.float64), (-1,), 1e-5)
        # one rounding of the float32 result: within half an ulp of the exact value
        assert_close(y, E.tensor(exact).to(dtype).float().numpy(), E.float32, rtol=0,
                     atol=float(E.finfo(dtype).eps) * 4, check_dtype=False)


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
    def fn(x, w, b):
        return F.group_norm(x, 2, w, b)
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_group_norm_gradgradcheck_without_affine():
    x = leaf((2, 6, 2), 0)
    def fn(x):
        return F.group_norm(x, 3)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_group_norm_errors():
    with pytest.raises(ShapeError, match=r"Expected number of channels in input to be "
                                         r"divisible by num_groups, but got input of shape "
                                         r"\[2, 3, 4\] and num_groups=2"):
        F.group_norm(E.zeros(2, 3, 4), 2)
    with pytest.raises(ShapeError, match="weight of shape \\[4\\]"):
        F.group_norm(E.zeros(2, 4, 4), 2, E.ones(2))


# --- rms_norm ------------------------------------------------------------------------------

def np_rms(x, axes, eps):
    return x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + eps)


@pytest.mark.parametrize("dtype", [E.float32, E.float64])
def test_rms_norm(dtype):
    x, ref = make((2, 3, 4), dtype)
    w, w_ref = make((3, 4), dtype, seed=1)
    assert_close(F.rms_norm(x, (3, 4), w, eps=1e-3), np_rms(ref, (-2, -1), 1e-3) * w_ref,
                 dtype, rtol=1e-5, atol=1e-5)
    eps = float(np.finfo(dtype.numpy).eps)  # the default
    assert_close(F.rms_norm(x, [4]), np_rms(ref, (-1,), eps), dtype, rtol=1e-5, atol=1e-5)
    assert_close(F.rms_norm(x, 4), np_rms(ref, (-1,), eps), dtype, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [E.float16, E.bfloat16])
def test_rms_norm_half_computes_in_float32(dtype):
    # float32's eps (not float16's 1e-3), which decides the result for tiny inputs
    x = E.tensor([[1e-3, 2e-3]]).to(dtype)
    w = E.tensor([1.5, -2.0])  # float32 weight: still the input's dtype out
    ref = to_np(x).astype(np.float64)
    out = F.rms_norm(x, [2], w)
    assert out.dtype is dtype
    assert_close(out, np_rms(ref, (-1,), np.finfo(np.float32).eps) * [1.5, -2.0], dtype)


def test_rms_norm_gradcheck_and_gradgradcheck():
    x, w = leaf((2, 2, 3), 0), leaf((2, 3), 1)
    def fn(x, w):
        return F.rms_norm(x, (2, 3), w, 1e-3)
    assert gradcheck(fn, (x, w))
    assert gradgradcheck(fn, (x, w))


def test_rms_norm_errors():
    with pytest.raises(ShapeError, match=r"rms_norm\(\): Given normalized_shape=\[5\], "
                                         r"expected input with shape \[\*, 5\]"):
        F.rms_norm(E.zeros(2, 4), [5])
    with pytest.raises(ShapeError, match=r"weight of shape \[4\], got \[3\]"):
        F.rms_norm(E.zeros(2, 4), [4], E.ones(3))
    with pytest.raises(ShapeError, match="non-empty"):
        F.rms_norm(E.zeros(2, 4), [])
    with pytest.raises(TypeError, match="an int or a sequence of ints, got \\[4.0\\]"):
        F.rms_norm(E.zeros(2, 4), [4.0])
    with pytest.raises(NotImplementedError, match="floating"):
        F.rms_norm(E.zeros(2, 4, dtype=E.int64), [4])


# --- instance_norm -------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 2, 4), (1, 3, 2, 2, 3)])
def test_instance_norm_training_normalizes_and_updates_running_stats(shape):
    x, ref = make(shape, E.float64)
    w, w_ref = make((3,), E.float64, seed=1)
    b, b_ref = make((3,), E.float64, seed=2)
    rm, rm_ref = make((3,), E.float64, seed=3)
    rv, rv_ref = make((3,), E.float64, low=0.5, high=2, seed=4)
    out = F.instance_norm(x, rm, rv, w, b, use_input_stats=True, momentum=0.3, eps=1e-3)
    axes = tuple(range(2, len(shape)))
    nd = len(shape)
    assert_close(out, np_normalize(ref, axes, 1e-3) * channel(w_ref, nd) + channel(b_ref, nd))
    m = int(np.prod(shape[2:]))
    # the mean over N of each instance's statistics (the variance unbiased)
    assert_close(rm, 0.7 * rm_ref + 0.3 * ref.mean(axis=axes).mean(0))
    assert_close(rv, 0.7 * rv_ref + 0.3 * (ref.var(axis=axes) * m / (m - 1)).mean(0))


def test_instance_norm_without_stats_and_eval_mode():
    x, ref = make((2, 3, 4), E.float64)
    assert_close(F.instance_norm(x), np_normalize(ref, (2,), 1e-5))
    rm, rm_ref = make((3,), E.float64, seed=3)
    rv, rv_ref = make((3,), E.float64, low=0.5, high=2, seed=4)
    out = F.instance_norm(x, rm, rv, use_input_stats=False, eps=1e-3)
    assert_close(out, (ref - channel(rm_ref, 3)) / np.sqrt(channel(rv_ref, 3) + 1e-3))
    np.testing.assert_array_equal(to_np(rm), rm_ref)  # eval leaves them
    # one spatial element is fine with running statistics
    assert F.instance_norm(E.zeros(2, 3), rm, rv, use_input_stats=False).shape == (2, 3)


def test_instance_norm_half_input_keeps_its_dtype():
    x, ref = make((2, 3, 4), E.float16)
    rm, rv, w = E.zeros(3), E.ones(3), E.full((3,), 2.0)
    out = F.instance_norm(x, rm, rv, w)
    assert out.dtype is E.float16 and rm.dtype is E.float32
    assert_close(out, np_normalize(ref, (2,), 1e-5) * 2)
    assert F.instance_norm(x, rm, rv, w, use_input_stats=False).dtype is E.float16


@pytest.mark.parametrize("use_input_stats", [True, False])
def test_instance_norm_gradcheck_and_gradgradcheck(use_input_stats):
    x, w, b = leaf((2, 2, 3), 0), leaf((2,), 1), leaf((2,), 2)
    rm = E.tensor(np.array([0.1, -0.2]))
    rv = E.tensor(np.array([0.5, 1.5]))
    def fn(x, w, b):
        return F.instance_norm(x, rm, rv, w, b, use_input_stats, 0.0, 1e-3)
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_instance_norm_errors():
    with pytest.raises(ValueError, match=r"Expected more than 1 spatial element when "
                                         r"training, got input size \[2, 3, 1\]"):
        F.instance_norm(E.zeros(2, 3, 1))
    with pytest.raises(ValueError, match="1 spatial element"):
        F.instance_norm(E.zeros(2, 3))
    with pytest.raises(ShapeError, match="at least 2 dims"):
        F.instance_norm(E.zeros(3))
    with pytest.raises(RuntimeError, match="Expected running_mean and running_var to be "
                                           "defined when use_input_stats is false"):
        F.instance_norm(E.zeros(2, 3, 4), use_input_stats=False)
    with pytest.raises(ShapeError, match=r"running_mean of shape \[3\], got \[4\]"):
        F.instance_norm(E.zeros(2, 3, 4), E.zeros(4), E.ones(4))
    with pytest.raises(ShapeError, match=r"weight of shape \[3\]"):
        F.instance_norm(E.zeros(2, 3, 4), weight=E.ones(4))
    with pytest.raises(NotImplementedError, match="floating"):
        F.instance_norm(E.zeros(2, 3, 4, dtype=E.int64))


# --- local_response_norm -------------------------------------------------------------------

def np_lrn(x, size, alpha, beta, k):
    c = x.shape[1]
    out = np.empty_like(x)
    for i in range(c):
        lo, hi = max(i - size // 2, 0), min(i + (size - 1) // 2, c - 1)
        s = (x[:, lo:hi + 1] ** 2).sum(axis=1)
        out[:, i] = x[:, i] / (k + alpha / size * s) ** beta
    return out


@pytest.mark.parametrize("shape", [(2, 5, 3), (2, 6, 3, 2), (1, 4, 2, 2, 3)])
@pytest.mark.parametrize("size", [1, 2, 3, 4, 9])
def test_local_response_norm(shape, size):
    x, ref = make(shape, E.float64)
    assert_close(F.local_response_norm(x, size, alpha=0.5, beta=0.75, k=2.0),
                 np_lrn(ref, size, 0.5, 0.75, 2.0))
    assert_close(F.local_response_norm(x, size), np_lrn(ref, size, 1e-4, 0.75, 1.0))


def test_local_response_norm_dtypes_and_empty():
    x, ref = make((2, 5, 3), E.float32)
    assert_close(F.local_response_norm(x, 3, 0.5), np_lrn(ref, 3, 0.5, 0.75, 1.0), E.float32)
    assert F.local_response_norm(x.half(), 3).dtype is E.float16
    assert F.local_response_norm(E.zeros(2, 5, 0), 3).shape == (2, 5, 0)


def test_local_response_norm_gradcheck_and_gradgradcheck():
    x = leaf((2, 4, 3), 0)
    def fn(x):
        return F.local_response_norm(x, 3, alpha=0.5, beta=0.75, k=2.0)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_local_response_norm_errors():
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality input"):
        F.local_response_norm(E.zeros(2, 5), 3)
    with pytest.raises(ValueError, match="size must be a positive int, got 0"):
        F.local_response_norm(E.zeros(2, 5, 3), 0)
    with pytest.raises(NotImplementedError, match="floating"):
        F.local_response_norm(E.zeros(2, 5, 3, dtype=E.int64), 3)
