"""Winograd F(4x4, 3x3) and F(2x2, 3x3) (``ember_nnpack_compat/winograd.py``) against a
float64 direct convolution and ember's native im2col, forward and both gradients."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.backends.convolution import explain
from ember_nnpack_compat import using, winograd

from ._shared import direct

ALGOS = {"nnpack_winograd_f4x4_3x3": winograd.F4x4, "nnpack_winograd_f2x2_3x3": winograd.F2x2}

# (N, C, K, H, W, padding): odd sizes, sizes not divisible by either tile, 1x1 channels,
# a single tile, padding 0 / 1 / 2 and mixed per dim
SHAPES = [
    (1, 1, 1, 3, 3, (0, 0)),
    (2, 3, 4, 9, 7, (1, 1)),
    (3, 5, 2, 8, 8, (0, 0)),
    (1, 2, 3, 3, 5, (0, 2)),
    (5, 4, 6, 13, 17, (2, 1)),
    (4, 8, 8, 4, 4, (1, 1)),
    (2, 16, 5, 10, 6, (1, 0)),
]


def grads_reference(x, w, gy, padding):
    """float64 (grad_input, grad_weight) of ``direct`` for grad_output ``gy``."""
    ph, pw = padding
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    windows = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))
    gw = np.einsum("nchwij,nkhw->kcij", windows, gy)
    gxp = np.zeros_like(xp)
    oh, ow = gy.shape[2:]
    for i in range(3):
        for j in range(3):
            gxp[:, :, i:i + oh, j:j + ow] += np.einsum("nkhw,kc->nchw", gy, w[:, :, i, j])
    return gxp[:, :, ph:ph + h, pw:pw + wd], gw


@pytest.fixture(autouse=True)
def fresh_cache():
    winograd.clear_weight_cache()
    yield
    winograd.clear_weight_cache()


@pytest.mark.parametrize("name", ALGOS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_float64_matches_direct(name, shape):
    n, c, k, h, w, pad = shape
    rng = np.random.default_rng(0)
    x, wt = rng.standard_normal((n, c, h, w)), rng.standard_normal((k, c, 3, 3))
    algo = ALGOS[name]
    y = algo.forward(x, wt, pad)
    ref = direct(x, wt, pad)
    assert y.dtype == np.float64 and y.shape == ref.shape
    np.testing.assert_allclose(y, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())
    gy = rng.standard_normal(ref.shape)
    gx_ref, gw_ref = grads_reference(x, wt, gy, pad)
    gx = algo.grad_input(gy, wt, x.shape, pad)
    gw = algo.grad_weight(gy, x, wt.shape, pad)
    np.testing.assert_allclose(gx, gx_ref, rtol=1e-12, atol=1e-12 * np.abs(gx_ref).max())
    np.testing.assert_allclose(gw, gw_ref, rtol=1e-12, atol=1e-12 * np.abs(gw_ref).max())


@pytest.mark.parametrize("name", ALGOS)
@pytest.mark.parametrize("dist", ["normal", "uniform01"])
@pytest.mark.parametrize("shape", SHAPES[1:], ids=str)
def test_float32_within_documented_bound(name, dist, shape):
    """float32 errors stay below ERROR_BOUND[m] times the largest direct sum of magnitudes
    (|x| * |w|) of the output plane (the bound documented in winograd.py); the weight
    gradient's per element against its own sum of magnitudes."""
    n, c, k, h, w, pad = shape
    rng = np.random.default_rng(1)
    draw = (lambda s: rng.standard_normal(s)) if dist == "normal" else \
        (lambda s: rng.uniform(0, 1, s))
    x, wt = draw((n, c, h, w)), draw((k, c, 3, 3))
    algo = ALGOS[name]
    bound = winograd.ERROR_BOUND[algo.m]

    def plane_max(a):
        return a.max(axis=(2, 3), keepdims=True)
    y = algo.forward(x.astype(np.float32), wt.astype(np.float32), pad)
    assert y.dtype == np.float32
    magnitude = direct(np.abs(x), np.abs(wt), pad)
    assert np.all(np.abs(y - direct(x, wt, pad)) <= bound * plane_max(magnitude))
    gy = draw(y.shape)
    gx_ref, gw_ref = grads_reference(x, wt, gy, pad)
    gx = algo.grad_input(gy.astype(np.float32), wt.astype(np.float32), x.shape, pad)
    gw = algo.grad_weight(gy.astype(np.float32), x.astype(np.float32), wt.shape, pad)
    assert gx.dtype == gw.dtype == np.float32
    gx_mag, gw_mag = grads_reference(np.abs(x), np.abs(wt), np.abs(gy), pad)
    assert np.all(np.abs(gx - gx_ref) <= bound * plane_max(gx_mag))
    assert np.all(np.abs(gw - gw_ref) <= bound * gw_mag)


@pytest.mark.parametrize("name", ALGOS)
def test_f4x4_is_less_accurate_than_f2x2_but_bounded(name):
    """F(4x4)'s float32 error is larger than im2col's (documented), F(2x2)'s close to it."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 32, 20, 20)).astype(np.float32)
    w = rng.standard_normal((8, 32, 3, 3)).astype(np.float32)
    ref = direct(x.astype(np.float64), w.astype(np.float64), (1, 1))
    with using(name):
        y = F.conv2d(E.tensor(x), E.tensor(w), padding=1).numpy()
    with E.backends.nnpack.flags(enabled=False):
        native = F.conv2d(E.tensor(x), E.tensor(w), padding=1).numpy()
    err, native_err = np.abs(y - ref).max(), np.abs(native - ref).max()
    magnitude = direct(np.abs(x).astype(np.float64), np.abs(w).astype(np.float64), (1, 1))
    assert err <= winograd.ERROR_BOUND[ALGOS[name].m] * magnitude.max()
    if name.endswith("f2x2_3x3"):
        assert err < 10 * native_err


@pytest.mark.parametrize("name", ALGOS)
@pytest.mark.parametrize("bias", [False, True])
def test_through_conv2d_matches_native(name, bias):
    """F.conv2d with the algorithm forced: output and all three gradients as im2col's."""
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s) for s in ((3, 4, 11, 6), (5, 4, 3, 3), (5,))]

    def run(context):
        x, w, b = (E.tensor(a, requires_grad=True) for a in arrays)
        with context:
            y = F.conv2d(x, w, b if bias else None, padding=1)
            y.backward(E.tensor(np.cos(np.arange(y.numel())).reshape(y.shape)))
        return [t.detach().numpy() for t in (y, x.grad, w.grad)] + \
            ([b.grad.numpy()] if bias else [])

    got = run(using(name))
    want = run(E.backends.nnpack.flags(enabled=False))
    for g, r in zip(got, want):
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", ALGOS)
def test_explain_names_the_forced_algorithm(name):
    x, w = E.randn(2, 3, 8, 8), E.randn(4, 3, 3, 3)
    with using(name):
        assert explain(x, w, padding=1).chosen == name


@pytest.mark.parametrize("name", ALGOS)
def test_gradcheck_and_gradgradcheck(name):
    rng = np.random.default_rng(4)
    x = E.tensor(rng.standard_normal((2, 2, 5, 6)), requires_grad=True)
    w = E.tensor(rng.standard_normal((3, 2, 3, 3)), requires_grad=True)
    b = E.tensor(rng.standard_normal(3), requires_grad=True)
    with using(name):
        assert gradcheck(lambda x, w, b: F.conv2d(x, w, b, padding=1), (x, w, b))
        assert gradgradcheck(lambda x, w: F.conv2d(x, w, padding=(0, 1)), (x, w))


def test_groups_run_per_group():
    rng = np.random.default_rng(5)
    x = E.tensor(rng.standard_normal((2, 6, 7, 7)))
    w = E.tensor(rng.standard_normal((9, 2, 3, 3)))
    with using("nnpack_winograd_f4x4_3x3"):
        assert explain(x, w, padding=1, groups=3).chosen == "nnpack_winograd_f4x4_3x3"
        y = F.conv2d(x, w, padding=1, groups=3).numpy()
    with E.backends.nnpack.flags(enabled=False):
        ref = F.conv2d(x, w, padding=1, groups=3).numpy()
    np.testing.assert_allclose(y, ref, rtol=1e-10, atol=1e-10)


class TestWeightCache:
    def test_hit_returns_the_same_transform(self):
        w = np.random.default_rng(6).standard_normal((4, 3, 3, 3))
        assert winograd.F4x4.weight_transform(w) is winograd.F4x4.weight_transform(w)

    def test_changed_content_recomputes(self):
        """An in-place update of the weight (an optimizer step) is a new version."""
        rng = np.random.default_rng(7)
        w = rng.standard_normal((4, 3, 3, 3))
        x = rng.standard_normal((1, 3, 6, 6))
        before = winograd.F4x4.forward(x, w, (1, 1))
        w *= 2
        after = winograd.F4x4.forward(x, w, (1, 1))
        np.testing.assert_allclose(after, 2 * before, rtol=1e-12)

    def test_in_place_tensor_update_between_inference_calls(self):
        rng = np.random.default_rng(8)
        conv = E.nn.Conv2d(3, 4, 3, padding=1)
        x = E.tensor(rng.standard_normal((2, 3, 8, 8)).astype(np.float32))
        with E.no_grad(), using("nnpack_winograd_f4x4_3x3"):
            conv(x)
            conv.weight.mul_(0)
            y = conv(x).numpy()
        np.testing.assert_allclose(y, np.broadcast_to(conv.bias.detach().numpy()
                                                       .reshape(1, 4, 1, 1), y.shape))

    def test_rotated_and_plain_transforms_are_separate(self):
        w = np.random.default_rng(9).standard_normal((4, 3, 3, 3))
        plain = winograd.F2x2.weight_transform(w)
        rotated = winograd.F2x2.weight_transform(w, rotated=True)
        assert plain.shape == (16, 4, 3) and rotated.shape == (16, 3, 4)

    def test_cache_is_bounded(self, monkeypatch):
        monkeypatch.setattr(winograd, "_WEIGHT_CACHE_BYTES", 1)
        ws = [np.full((2, 2, 3, 3), float(i)) for i in range(5)]
        for w in ws:
            winograd.F4x4.weight_transform(w)
        assert len(winograd.F4x4._weights) == 1

    def test_dead_weight_is_not_reused(self):
        """A freed weight whose id() is reused by another array is a miss."""
        for i in range(20):
            w = np.full((2, 2, 3, 3), float(i))
            u = winograd.F4x4.weight_transform(w)
            np.testing.assert_allclose(
                u, winograd.F4x4.weight_transform(w.copy()), rtol=1e-12)
            del w
