"""ember_nnpack_compat.fft (tiled FFT convolution) against float64 references.

Forward: a numpy float64 direct convolution (einsum over the padded windows). Gradients:
ember's native im2col in float64 (``ember.backends.nnpack.flags(enabled=False)``) and
``gradcheck``. Crossed: batch 1/3, channels 1/5, K 1/4, odd images and images the tile
does not divide (7x9, 17x13, 33x20, 70x90), kernels 2x2 to 16x16 (rectangular too),
padding 0, k - 1 and mixed, stride 1 and 2, float32 and float64; the module functions
directly and ``F.conv2d`` under ``ember_nnpack_compat.using("nnpack_fft")``.

Tolerances. float64: 1e-10 relative to the largest sum of |x| |w| (the error is ~1e-15).
float32: the module's norm-wise bound ``|err| <= 2 (T_h + T_w) eps S``, eps = 2^-24 and S
the largest direct sum of absolute products (fft.py's docstring derives it; random data
stay below 0.15 of it). Where the tile the module picks is not at hand (the gradients),
T_h + T_w <= 128 (tiles are at most 64) is used.
"""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck
from ember.backends import nnpack
from ember.backends.convolution import explain
from ember_nnpack_compat import fft, using

from ._shared import direct

# (N, C, K, (H, W), (kh, kw), padding, stride)
CASES = [
    (1, 1, 1, (7, 9), (2, 2), (0, 0), (1, 1)),
    (3, 5, 4, (7, 9), (3, 3), (2, 2), (1, 1)),
    (3, 5, 4, (17, 13), (3, 3), (1, 0), (2, 2)),
    (1, 5, 4, (17, 13), (5, 5), (4, 4), (2, 1)),
    (3, 1, 4, (33, 20), (7, 3), (3, 2), (1, 1)),
    (1, 5, 1, (33, 20), (7, 3), (6, 0), (2, 2)),
    (3, 5, 4, (33, 20), (11, 11), (10, 5), (1, 1)),
    (1, 1, 4, (17, 13), (11, 11), (10, 10), (2, 2)),
    (3, 5, 4, (33, 20), (16, 16), (15, 15), (1, 1)),
    (1, 5, 1, (17, 13), (16, 16), (0, 15), (2, 1)),
    (3, 2, 3, (16, 16), (16, 16), (0, 0), (1, 1)),
    (2, 3, 2, (70, 90), (3, 3), (1, 1), (1, 1)),
    (1, 2, 2, (70, 90), (5, 4), (0, 3), (2, 2)),
]
IDS = [f"n{c[0]}c{c[1]}k{c[2]}-{c[3][0]}x{c[3][1]}-w{c[4][0]}x{c[4][1]}-p{c[5][0]}{c[5][1]}"
       f"-s{c[6][0]}{c[6][1]}" for c in CASES]
DTYPES = {np.float32: E.float32, np.float64: E.float64}


def tolerance(dtype, scale, tile=(64, 64)):
    """Absolute tolerance for an FFT result whose direct |.|-sum peaks at ``scale``."""
    if dtype == np.float64:
        return 1e-10 * scale
    return 2 * (tile[0] + tile[1]) * 2.0 ** -24 * scale


def arrays(case, dtype, seed=0):
    n, c, k, (h, w), (kh, kw), padding, stride = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    wt = rng.standard_normal((k, c, kh, kw)).astype(dtype)
    out = direct(x, wt, padding, stride).shape
    gy = rng.standard_normal(out).astype(dtype)
    return x, wt, gy


def native_grads(x, w, gy, padding, stride, bias=None):
    """(y, grad_x, grad_w, grad_b) from ember's native im2col, in float64."""
    xt = E.tensor(x.astype(np.float64), requires_grad=True)
    wt = E.tensor(w.astype(np.float64), requires_grad=True)
    bt = None if bias is None else E.tensor(bias.astype(np.float64), requires_grad=True)
    with nnpack.flags(enabled=False):
        assert explain(xt, wt, bt, stride=stride, padding=padding).chosen == "native_im2col"
        y = F.conv2d(xt, wt, bt, stride=stride, padding=padding)
        y.backward(E.tensor(gy.astype(np.float64)))
    gb = None if bt is None else bt.grad.numpy()
    return y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy(), gb


def stride1_tile(case):
    n, c, k, (h, w), kernel, padding, stride = case
    out = [(s + 2 * p - kk) // st * st + 1 for s, p, kk, st in zip((h, w), padding, kernel,
                                                                    stride)]
    return fft.tile_shape(out, kernel, n, c, k)


# ---- the module functions on numpy arrays ---------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_forward_matches_direct(case, dtype):
    x, w, _ = arrays(case, dtype)
    padding, stride = case[5], case[6]
    y = fft.forward(x, w, padding, stride)
    ref = direct(x, w, padding, stride)
    assert y.dtype == dtype and y.shape == ref.shape and y.flags.c_contiguous
    scale = direct(np.abs(x), np.abs(w), padding, stride).max()
    np.testing.assert_allclose(y, ref, rtol=0, atol=tolerance(dtype, scale, stride1_tile(case)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradients_match_native(case, dtype):
    x, w, gy = arrays(case, dtype, seed=1)
    padding, stride = case[5], case[6]
    _, gx_ref, gw_ref, _ = native_grads(x, w, gy, padding, stride)
    gx = fft.grad_input(gy, w, x.shape, padding, stride)
    gw = fft.grad_weight(gy, x, w.shape, padding, stride)
    assert gx.dtype == dtype and gx.shape == x.shape
    assert gw.dtype == dtype and gw.shape == w.shape
    # the same sums of absolute products, taken by the native algorithm
    _, sx, sw, _ = native_grads(np.abs(x), np.abs(w), np.abs(gy), padding, stride)
    np.testing.assert_allclose(gx, gx_ref, rtol=0, atol=tolerance(dtype, sx.max()))
    np.testing.assert_allclose(gw, gw_ref, rtol=0, atol=tolerance(dtype, sw.max()))


@pytest.mark.parametrize("tile", [(8, 8), (8, 16), (16, 16), (32, 8), (64, 64), (37, 45)])
def test_every_tile_gives_the_same_result(tile, monkeypatch):
    # tile_shape's choice is a speed question only: force each size, odd ones included
    case = (2, 3, 2, (33, 40), (5, 7), (2, 6), (1, 2))
    x, w, gy = arrays(case, np.float64, seed=2)
    padding, stride = case[5], case[6]
    monkeypatch.setattr(fft, "tile_shape", lambda *args: tile)
    y_ref, gx_ref, gw_ref, _ = native_grads(x, w, gy, padding, stride)
    np.testing.assert_allclose(fft.forward(x, w, padding, stride), y_ref, rtol=1e-10,
                               atol=1e-10)
    np.testing.assert_allclose(fft.grad_input(gy, w, x.shape, padding, stride), gx_ref,
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fft.grad_weight(gy, x, w.shape, padding, stride), gw_ref,
                               rtol=1e-10, atol=1e-10)


def test_float32_error_is_within_the_documented_bound_on_a_wide_range():
    # values spanning 1e-7..1e7: the bound is norm-wise over the tile, so check it is
    # S, not each output's own size, that the error follows
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((2, 4, 40, 40)) * np.exp(rng.uniform(-16, 16, (2, 4, 40, 40))))
    x, w = x.astype(np.float32), rng.standard_normal((3, 4, 7, 7)).astype(np.float32)
    y = fft.forward(x, w, (3, 3), (1, 1))
    err = np.abs(y - direct(x, w, (3, 3), (1, 1))).max()
    scale = direct(np.abs(x), np.abs(w), (3, 3), (1, 1)).max()
    tile = fft.tile_shape((40, 40), (7, 7), 2, 4, 3)
    assert err <= tolerance(np.float32, scale, tile)


def test_spectrum_is_rfft2():
    # the matrix DFT must be numpy's rfft2 of the zero-padded tile, bin (f2, f1) first
    rng = np.random.default_rng(4)
    tile, size = (16, 10), (5, 7)
    items = rng.standard_normal((3, *size))
    rows = np.ascontiguousarray(items.transpose(1, 0, 2)).reshape(-1, size[1])
    got = fft._spectrum(rows, tile, size, np.dtype(np.float64)).reshape(
        tile[1] // 2 + 1, tile[0], 2, 3)
    want = np.fft.rfft2(items, s=tile).transpose(2, 1, 0)
    np.testing.assert_allclose(got[:, :, 0], want.real, atol=1e-12)
    np.testing.assert_allclose(got[:, :, 1], want.imag, atol=1e-12)


def test_tile_shape_rules():
    # a tile holds the kernel; small images take one tile, big kernels no 16-point ones
    for kernel in [(2, 2), (3, 3), (5, 5), (7, 3), (11, 11), (16, 16)]:
        for out in [(1, 1), (7, 9), (56, 56), (200, 31)]:
            th, tw = fft.tile_shape(out, kernel, 8, 64, 64)
            assert th >= kernel[0] and tw >= kernel[1]
    assert fft.tile_shape((6, 6), (3, 3), 1, 4, 4) == (8, 8)        # one 8x8 tile
    assert fft.tile_shape((1, 2), (16, 7), 1, 4, 4) == (16, 8)      # 8 = smooth(7 + 1)
    assert 16 not in fft.tile_shape((100, 100), (16, 16), 8, 32, 32)


def test_errors_name_the_dtypes():
    x = np.zeros((1, 1, 5, 5), np.float32)
    with pytest.raises(TypeError, match="float32 and float64"):
        fft.forward(x, np.zeros((1, 1, 3, 3), np.float64), (0, 0), (1, 1))
    with pytest.raises(TypeError, match="float16"):
        fft.grad_weight(np.zeros((1, 1, 3, 3), np.float16), x.astype(np.float16),
                        (1, 1, 3, 3), (0, 0), (1, 1))
    with pytest.raises(ValueError, match=r"padding < kernel.*\(3, 1\).*\(3, 3\)"):
        fft.grad_input(np.zeros((1, 1, 9, 5), np.float32), np.zeros((1, 1, 3, 3), np.float32),
                       (1, 1, 5, 5), (3, 1), (1, 1))


# ---- through F.conv2d with the algorithm forced ---------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", [CASES[i] for i in (1, 3, 4, 7, 10)],
                         ids=[IDS[i] for i in (1, 3, 4, 7, 10)])
def test_conv2d_under_using(case, dtype):
    x, w, gy = arrays(case, dtype, seed=5)
    padding, stride = case[5], case[6]
    bias = np.random.default_rng(6).standard_normal(case[2]).astype(dtype)
    xt, wt, bt = (E.tensor(a, requires_grad=True) for a in (x, w, bias))
    with using("nnpack_fft"):
        assert explain(xt, wt, bt, stride=stride, padding=padding).chosen == "nnpack_fft"
        y = F.conv2d(xt, wt, bt, stride=stride, padding=padding)
        y.backward(E.tensor(gy))
    assert y.dtype is DTYPES[dtype] and xt.grad.dtype is DTYPES[dtype]
    y_ref, gx_ref, gw_ref, gb_ref = native_grads(x, w, gy, padding, stride, bias)
    np.testing.assert_allclose(y_ref, direct(x, w, padding, stride) + bias[:, None, None],
                               rtol=1e-12, atol=1e-12)
    scale = direct(np.abs(x), np.abs(w), padding, stride).max() + np.abs(bias).max()
    _, sx, sw, _ = native_grads(np.abs(x), np.abs(w), np.abs(gy), padding, stride)
    np.testing.assert_allclose(y.detach().numpy(), y_ref, rtol=0, atol=tolerance(dtype, scale))
    np.testing.assert_allclose(xt.grad.numpy(), gx_ref, rtol=0, atol=tolerance(dtype, sx.max()))
    np.testing.assert_allclose(wt.grad.numpy(), gw_ref, rtol=0, atol=tolerance(dtype, sw.max()))
    np.testing.assert_allclose(bt.grad.numpy(), gb_ref, rtol=1e-5 if dtype == np.float32
                               else 1e-12)


def test_conv2d_with_groups_runs_per_group():
    x, w, _ = arrays((2, 4, 6, (9, 11), (3, 5), (1, 2), (1, 1)), np.float64, seed=7)
    w = w[:, :2]                                    # groups=2: (K, C/2, kh, kw)
    xt, wt = E.tensor(x), E.tensor(np.ascontiguousarray(w))
    with using("nnpack_fft"):
        assert explain(xt, wt, padding=(1, 2), groups=2).chosen == "nnpack_fft"
        y = F.conv2d(xt, wt, padding=(1, 2), groups=2).numpy()
    ref = np.concatenate([direct(x[:, :2], w[:3], (1, 2), (1, 1)),
                          direct(x[:, 2:], w[3:], (1, 2), (1, 1))], axis=1)
    np.testing.assert_allclose(y, ref, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kernel,padding,stride", [((3, 2), (1, 1), (2, 1)),
                                                   ((4, 4), (3, 0), (1, 2))])
def test_gradcheck_conv2d_with_bias(kernel, padding, stride):
    rng = np.random.default_rng(8)
    x = E.tensor(rng.standard_normal((2, 2, 6, 5)), requires_grad=True)
    w = E.tensor(rng.standard_normal((3, 2, *kernel)), requires_grad=True)
    b = E.tensor(rng.standard_normal(3), requires_grad=True)

    def conv(x, w, b):
        return F.conv2d(x, w, b, stride=stride, padding=padding)

    with using("nnpack_fft"):
        assert explain(x, w, b, stride=stride, padding=padding).chosen == "nnpack_fft"
        assert gradcheck(conv, (x, w, b), atol=1e-7, rtol=1e-5)
