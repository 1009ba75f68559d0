"""affine_grid and grid_sample against numpy float64 references that sample pixel by pixel
(Keys' cubic kernel written by distance), exact values for the identity grid and the
padding modes, gradcheck and gradgradcheck w.r.t. input and grid, errors."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError, ShapeError
from helpers import assert_close

MODES = ["bilinear", "nearest", "bicubic"]
PADDINGS = ["zeros", "border", "reflection"]


def _np_base(n, align_corners):
    if n <= 1:
        return np.zeros(n)
    c = np.linspace(-1, 1, n)
    return c if align_corners else c * (n - 1) / n


def _np_affine_grid(theta, size, align_corners):
    spatial = size[2:]
    axes = [_np_base(s, align_corners) for s in spatial]          # z?, y, x
    out = np.zeros((size[0], *spatial, len(spatial)))
    for b in range(size[0]):
        for pos in np.ndindex(*spatial):
            point = [axes[k][pos[k]] for k in reversed(range(len(spatial)))] + [1.0]
            out[(b, *pos)] = theta[b] @ np.array(point)
    return out


def _unnormalize(v, size, ac):
    return (v + 1) / 2 * (size - 1) if ac else ((v + 1) * size - 1) / 2


def _reflect(v, twice_low, twice_high):
    if twice_low == twice_high:
        return 0.0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    v = abs(v - low)
    flips = math.floor(v / span)
    extra = math.fmod(v, span)
    return extra + low if flips % 2 == 0 else span - extra + low


def _pad(v, size, padding, ac):
    if padding == "zeros":
        return v
    if padding == "reflection":
        v = _reflect(v, 0, 2 * (size - 1)) if ac else _reflect(v, -1, 2 * size - 1)
    return min(max(v, 0), size - 1)


def _keys(s, a=-0.75):
    s = abs(s)
    if s <= 1:
        return (a + 2) * s ** 3 - (a + 3) * s ** 2 + 1
    return a * s ** 3 - 5 * a * s ** 2 + 8 * a * s - 4 * a if s < 2 else 0.0


def _read(img, idx, sizes):
    if all(0 <= i <= s - 1 for i, s in zip(idx, sizes)):
        return img[(slice(None), *[int(i) for i in idx])]
    return np.zeros(img.shape[0])


def _np_grid_sample(x, grid, mode, padding, ac):
    n, c = x.shape[:2]
    sizes = x.shape[2:]
    d = len(sizes)
    out = np.zeros((n, c, *grid.shape[1:-1]))
    for b in range(n):
        for pos in np.ndindex(*grid.shape[1:-1]):
            g = grid[(b, *pos)]
            coords = [_unnormalize(g[d - 1 - k], sizes[k], ac) for k in range(d)]
            val = np.zeros(c)
            if mode == "bicubic":
                fl = [math.floor(v) for v in coords]
                for offs in itertools.product(range(4), repeat=d):
                    taps = [f - 1 + o for f, o in zip(fl, offs)]
                    w = math.prod(_keys(v - t) for v, t in zip(coords, taps))
                    idx = [_pad(t, s, padding, ac) for t, s in zip(taps, sizes)]
                    val = val + w * _read(x[b], idx, sizes)
            else:
                coords = [_pad(v, s, padding, ac) for v, s in zip(coords, sizes)]
                if mode == "nearest":
                    val = _read(x[b], [np.rint(v) for v in coords], sizes)
                else:
                    fl = [math.floor(v) for v in coords]
                    for bits in itertools.product((0, 1), repeat=d):
                        w = math.prod((v - f) if bt else 1 - (v - f)
                                      for v, f, bt in zip(coords, fl, bits))
                        val = val + w * _read(x[b], [f + bt for f, bt in zip(fl, bits)],
                                              sizes)
            out[(b, slice(None), *pos)] = val
    return out


def _inputs(nd, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, 3, 4, 5) if nd == 4 else (2, 2, 3, 4, 3))
    grid = rng.uniform(-1.3, 1.3, size=(2, 3, 4, 2) if nd == 4 else (2, 2, 3, 2, 3))
    return x, grid


@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("size, theta_shape", [((2, 3, 4, 5), (2, 2, 3)),
                                               ((2, 1, 3, 4, 2), (2, 3, 4)),
                                               ((1, 1, 1, 3), (1, 2, 3))])
def test_affine_grid(size, theta_shape, align_corners):
    theta = np.random.default_rng(1).normal(size=theta_shape)
    if align_corners and min(size[2:]) == 1:
        with pytest.warns(UserWarning, match="unit-size"):
            out = F.affine_grid(E.tensor(theta), size, align_corners=align_corners)
    else:
        out = F.affine_grid(E.tensor(theta), size, align_corners=align_corners)
    assert_close(out, _np_affine_grid(theta, size, align_corners))


def test_affine_grid_gradients_and_default_warning():
    theta = E.tensor(np.random.default_rng(2).normal(size=(1, 2, 3)), requires_grad=True)
    assert gradcheck(lambda t: F.affine_grid(t, (1, 1, 2, 3), align_corners=False), (theta,))
    with pytest.warns(UserWarning, match="align_corners=False"):
        F.affine_grid(theta, (1, 1, 2, 3))


@pytest.mark.parametrize("nd, mode", [(4, m) for m in MODES] +
                         [(5, "bilinear"), (5, "nearest")])   # bicubic is 4-D only
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("align_corners", [True, False])
def test_grid_sample_against_numpy(nd, mode, padding, align_corners):
    x, grid = _inputs(nd)
    out = F.grid_sample(E.tensor(x), E.tensor(grid), mode=mode, padding_mode=padding,
                        align_corners=align_corners)
    assert_close(out, _np_grid_sample(x, grid, mode, padding, align_corners))


def test_grid_sample_float32():
    x, grid = _inputs(4)
    out = F.grid_sample(E.tensor(x).float(), E.tensor(grid).float(), align_corners=False)
    assert out.dtype is E.float32
    assert_close(out, _np_grid_sample(x, grid, "bilinear", "zeros", False), rtol=1e-5,
                 atol=1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_identity_grid_reproduces_input(mode):
    x = np.random.default_rng(3).normal(size=(2, 3, 4, 5))
    theta = E.tensor(np.tile(np.eye(2, 3), (2, 1, 1)))
    for ac in (True, False):
        grid = F.affine_grid(theta, (2, 3, 4, 5), align_corners=ac)
        out = F.grid_sample(E.tensor(x), grid, mode=mode, align_corners=ac)
        assert_close(out, x, atol=1e-12)


def test_padding_modes_exact_values():
    img = E.tensor([[[[1.0, 2.0, 3.0]]]])                      # (1, 1, 1, 3)
    # x = 3 with align_corners is pixel (3 + 1) / 2 * 2 = 4, two past the last (pixel 2):
    # reflected at pixel 2 it is pixel 0
    grid = E.tensor([[[[3.0, 0.0]]]])
    vals = {p: F.grid_sample(img, grid, padding_mode=p, align_corners=True).item()
            for p in PADDINGS}
    assert vals == {"zeros": 0.0, "border": 3.0, "reflection": 1.0}


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("padding", PADDINGS)
def test_grid_sample_gradients(mode, padding):
    rng = np.random.default_rng(4)
    x = E.tensor(rng.normal(size=(1, 2, 3, 3)), requires_grad=True)
    grid = E.tensor(rng.uniform(-1.2, 1.2, size=(1, 2, 2, 2)), requires_grad=True)

    def fn(x, g):
        return F.grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=False)
    assert gradcheck(fn, (x, grid))
    assert gradgradcheck(fn, (x, grid))


def test_grid_sample_gradients_5d_and_nearest():
    rng = np.random.default_rng(5)
    x = E.tensor(rng.normal(size=(1, 1, 2, 2, 3)), requires_grad=True)
    grid = E.tensor(rng.uniform(-1, 1, size=(1, 1, 2, 2, 3)), requires_grad=True)
    assert gradcheck(lambda x, g: F.grid_sample(x, g, align_corners=True), (x, grid))
    out = F.grid_sample(x, grid, mode="nearest", align_corners=True)
    out.sum().backward()
    assert grid.grad is None or not grid.grad.numpy().any()   # nearest: no grid gradient
    assert gradcheck(lambda x: F.grid_sample(x, grid.detach(), mode="nearest",
                                             align_corners=True), (x,))


def test_grid_sample_default_align_corners_warns():
    x, grid = _inputs(4)
    with pytest.warns(UserWarning, match="align_corners=False"):
        out = F.grid_sample(E.tensor(x), E.tensor(grid))
    assert_close(out, _np_grid_sample(x, grid, "bilinear", "zeros", False))


X4, G4 = E.zeros(2, 1, 3, 3), E.zeros(2, 2, 2, 2)


@pytest.mark.parametrize("call, exc, words", [
    (lambda: F.grid_sample(X4, G4, mode="area", align_corners=False), ValueError, "mode"),
    (lambda: F.grid_sample(X4, G4, padding_mode="wrap", align_corners=False), ValueError,
     "padding_mode"),
    (lambda: F.grid_sample(X4, E.zeros(1, 2, 2, 2), align_corners=False), ShapeError,
     "same batch size"),
    (lambda: F.grid_sample(X4, E.zeros(2, 2, 2, 3), align_corners=False), ShapeError,
     "size 2 in its last dim"),
    (lambda: F.grid_sample(E.zeros(2, 1, 3), E.zeros(2, 2, 1), align_corners=False),
     ShapeError, "4-D or 5-D"),
    (lambda: F.grid_sample(X4, G4.double(), align_corners=False), DtypeError, "dtype"),
    (lambda: F.grid_sample(E.zeros(1, 1, 2, 2, 2), E.zeros(1, 1, 1, 1, 3), mode="bicubic",
                           align_corners=False), NotImplementedError, "4-D"),
    (lambda: F.affine_grid(E.zeros(2, 2, 3), (2, 3, 4), align_corners=False),
     NotImplementedError, "4D and 5D"),
    (lambda: F.affine_grid(E.zeros(2, 2, 2), (2, 3, 4, 5), align_corners=False), ValueError,
     "Nx2x3"),
    (lambda: F.affine_grid(E.zeros(2, 2, 3), (2, 3, 0, 5), align_corners=False), ValueError,
     "positive output size"),
    (lambda: F.affine_grid(E.zeros(2, 2, 3), (3, 3, 4, 5), align_corners=False), ShapeError,
     "batch of 3"),
    (lambda: F.affine_grid(E.zeros(2, 2, 3, dtype=E.int64), (2, 3, 4, 5),
                           align_corners=False), DtypeError, "floating theta"),
])
def test_errors(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    assert words in str(info.value)
