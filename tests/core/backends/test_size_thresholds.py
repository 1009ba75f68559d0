"""Every size-dependent fast path, on both sides of its threshold (issue 35, class 8).

Kernels switch algorithms at a size (a branch-free select from BLEND_MIN_SIZE elements,
the blocked engine from ENGINE_MIN_SIZE, row blocks from ROW_MIN_SIZE, ...). A fast path
that breaks a case the small path handles (``where`` with a (2048, 1) condition used to
raise) is found only by running both: each test here takes the threshold from the module
that owns it and checks the op just below, at and above it, with broadcast and strided
operands, against numpy (float64 where it computes). Backward is checked where the
threshold sits on a backward path (``F.normalize`` runs ``where`` there).
"""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
from ember.backends.elementwise.eager import ENGINE_MIN_SIZE
from ember.backends.kernels import activation as k_activation
from ember.backends.kernels import pointwise as k_pointwise
from ember.backends.kernels import pointwise_binary as k_binary
from ember.backends.kernels import row_blocks
from ember.nn.functional.pooling import adaptive as adaptive_pool
from ember.nn.functional.pooling import avg_pool
from ember.ops import composite

F = E.nn.functional


def around(n: int) -> list[int]:
    return [max(n - 1, 1), n, n + 1]


def rng(seed=0):
    return np.random.default_rng(seed)


def t(a):
    return E.tensor(a)


# --- where: the branch-free select ----------------------------------------------------------

@pytest.mark.parametrize("n", around(k_pointwise.BLEND_MIN_SIZE) + around(
    k_pointwise.BLEND_MIN_SIZE // 2))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_])
def test_where_broadcasts_on_both_sides_of_the_blend_threshold(n, dtype):
    r = rng(n)
    cond = r.random((n, 1)) > 0.5
    x = (r.standard_normal((n, 2)) * 10).astype(dtype)
    y = (r.standard_normal((1, 2)) * 10).astype(dtype)
    np.testing.assert_array_equal(E.where(t(cond), t(x), t(y)).numpy(), np.where(cond, x, y))
    zero = dtype(0)
    np.testing.assert_array_equal(E.where(t(cond), zero.item(), t(x)).numpy(),
                                  np.where(cond, zero, x))
    xs = t(np.stack([x, x], 2))[..., 0]  # a strided view
    np.testing.assert_array_equal(E.where(t(cond), xs.flip(1), t(y)).numpy(),
                                  np.where(cond, x[:, ::-1], y))


@pytest.mark.parametrize("n", around(k_pointwise.BLEND_MIN_SIZE))
def test_normalize_backward_on_both_sides_of_the_blend_threshold(n):
    a = rng(1).standard_normal((n, 2))
    a[::7] = 0.0  # rows of zeros take where's other branch
    x = E.tensor(a, requires_grad=True)
    F.normalize(x, dim=1).sum().backward()
    norm = np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    y = a / norm
    ref = (1 - y * y.sum(1, keepdims=True)) / norm  # d/dx sum(x / |x|), |x| > eps
    ref[np.linalg.norm(a, axis=1) <= 1e-12] = 1e12
    np.testing.assert_allclose(x.grad.numpy(), ref, rtol=1e-10)


# --- relu and clip: a flat zero buffer and numpy's clip -------------------------------------

@pytest.mark.parametrize("n", around(k_pointwise.WIDE_ZERO_MIN_SIZE) +
                         around(k_activation._CLIP_MIN_SIZE))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_and_clamps_on_both_sides_of_their_thresholds(n, dtype):
    x = rng(n).standard_normal(n).astype(dtype)
    for ex in (t(x), t(np.stack([x, x], 1))[:, 0]):  # contiguous and strided
        np.testing.assert_array_equal(E.relu(ex).numpy(), np.maximum(x, 0))
        np.testing.assert_array_equal(F.hardtanh(ex, -0.5, 0.5).numpy(), np.clip(x, -0.5, 0.5))
        np.testing.assert_array_equal(F.relu6(ex * 10).numpy(), np.clip(x * 10, 0, 6))
        np.testing.assert_array_equal(ex.clamp(-0.25, 0.75).numpy(), np.clip(x, -0.25, 0.75))


# --- fmod / remainder / floor_divide: narrow float32 blocks ---------------------------------

@pytest.mark.parametrize("n", around(k_binary._NARROW_MIN_SIZE) + around(k_binary._BLOCK))
def test_float32_fmod_family_on_both_sides_of_its_thresholds(n):
    r = rng(n)
    a = (r.standard_normal(n) * 100).astype(np.float32)
    a[::97] = np.inf
    a[1::89] = 1e30
    b = (r.standard_normal(n) * 3).astype(np.float32)
    b[::53] = 0.0
    with np.errstate(all="ignore"):
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        want_fmod = np.fmod(a64, b64).astype(np.float32)
        want_rem = np.remainder(a64, b64).astype(np.float32)
    np.testing.assert_array_equal(E.fmod(t(a), t(b)).numpy(), want_fmod)
    np.testing.assert_array_equal(E.remainder(t(a), t(b)).numpy(), want_rem)
    got = E.fmod(t(a.reshape(-1, 1)), t(b[:1].reshape(1, 1))).numpy().reshape(-1)  # broadcast
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got, np.fmod(a64, b64[0]).astype(np.float32))


# --- the blocked elementwise engine ---------------------------------------------------------

UNARY = {
    "sigmoid": (E.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "silu": (F.silu, lambda x: x / (1 + np.exp(-x))),
    "exp": (E.exp, np.exp),
    "tanh": (E.tanh, np.tanh),
    "softplus": (F.softplus, lambda x: np.logaddexp(0, x)),
}


@pytest.mark.parametrize("n", around(ENGINE_MIN_SIZE))
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ops_on_both_sides_of_the_engine_threshold(n, name):
    ours, ref = UNARY[name]
    x = (rng(n).standard_normal(n) * 4).astype(np.float32)
    want = ref(x.astype(np.float64))
    for arr in (t(x), t(x.reshape(-1, 1)), t(np.stack([x, x], 1))[:, 0]):  # and strided
        np.testing.assert_allclose(ours(arr).numpy().reshape(-1), want, rtol=2e-6,
                                   atol=1e-30)


@pytest.mark.parametrize("n", around(ENGINE_MIN_SIZE // 8))
def test_broadcast_binary_ops_on_both_sides_of_the_engine_threshold(n):
    r = rng(n)
    a = r.standard_normal((n, 1)).astype(np.float32)
    b = r.standard_normal((1, 8)).astype(np.float32)
    np.testing.assert_allclose((t(a) * t(b) + t(a)).numpy(), a * b + a, rtol=1e-6)
    np.testing.assert_allclose(E.atan2(t(a), t(b)).numpy(),
                               np.arctan2(a.astype(np.float64), b).astype(np.float32),
                               rtol=1e-6, atol=1e-7)


# --- row blocks: log_softmax and prelu ------------------------------------------------------

@pytest.mark.parametrize("rows", [row_blocks.ROW_MIN_SIZE // 64 - 1, row_blocks.ROW_MIN_SIZE // 64,
                                  row_blocks.ROW_MIN_SIZE // 64 + 1])
def test_row_blocked_ops_on_both_sides_of_their_threshold(rows):
    x = rng(rows).standard_normal((rows, 64)).astype(np.float32)
    x[0] = -np.inf
    x[1, :3] = np.inf
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        m = x64.max(1, keepdims=True)
        ref = x64 - m - np.log(np.exp(x64 - m).sum(1, keepdims=True))
    np.testing.assert_allclose(F.log_softmax(t(x), dim=-1).numpy(), ref.astype(np.float32),
                               rtol=1e-6, atol=1e-6)
    w = np.float32(0.25)
    np.testing.assert_array_equal(F.prelu(t(x), t(np.array([w]))).numpy(),
                                  np.where(x > 0, x, x * w))


# --- pooling: tile sums and one GEMM --------------------------------------------------------

def avg_pool_ref(x, k):
    n, c, h, w = x.shape
    return x[:, :, :h // k * k, :w // k * k].reshape(n, c, h // k, k, w // k, k).mean((3, 5))


@pytest.mark.parametrize("numel", around(avg_pool._TILE_SUM_MAX) +
                         around(adaptive_pool._ONE_GEMM_MIN))
def test_pooling_on_both_sides_of_its_thresholds(numel):
    c = max(numel // 256, 1)
    x = rng(numel).standard_normal((1, c, 16, 16)).astype(np.float64)
    np.testing.assert_allclose(F.avg_pool2d(t(x), 2).numpy(), avg_pool_ref(x, 2), rtol=1e-12)
    np.testing.assert_allclose(F.adaptive_avg_pool2d(t(x), 4).numpy(), avg_pool_ref(x, 4),
                               rtol=1e-12)
    xt = t(x).transpose(2, 3)  # strided
    np.testing.assert_allclose(F.avg_pool2d(xt, 2).numpy(),
                               avg_pool_ref(x.transpose(0, 1, 3, 2), 2), rtol=1e-12)


# --- equal: the first block before the rest -------------------------------------------------

@pytest.mark.parametrize("n", around(composite._EQUAL_FIRST_BLOCK))
def test_equal_on_both_sides_of_its_first_block(n):
    a = np.arange(n, dtype=np.float32)
    assert E.equal(t(a), t(a.copy()))
    for i in (0, n // 2, n - 1):
        b = a.copy()
        b[i] += 1
        assert not E.equal(t(a), t(b))
    c = a.copy()
    c[-1] = np.nan
    assert not E.equal(t(c), t(c.copy()))  # NaN is unequal to itself, as in torch
