"""F.interpolate against numpy float64 references written from PyTorch's index formulas
(per output cell, not per dim), PyTorch's documented examples, gradcheck and gradgradcheck
per mode, hypothesis shape fuzzing and the errors."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import ShapeError
from helpers import FLOAT_DTYPES, assert_close, make, to_np


# --- references ----------------------------------------------------------------------------

def _step(n_in, n_out, scale):
    """Source cells per output cell: 1 / scale when given, else n_in / n_out."""
    return 1.0 / scale if scale else n_in / n_out


def _src_nearest(o, n_in, n_out, scale, exact):
    # PyTorch computes this one in float32
    s = np.float32(1.0 / scale) if scale else np.float32(n_in) / np.float32(n_out)
    src = np.float32(o + 0.5) * s if exact else np.float32(o) * s
    return min(int(math.floor(src)), n_in - 1)


def _src_linear(o, n_in, n_out, align_corners, scale, cubic=False):
    if align_corners:
        return o * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    src = _step(n_in, n_out, scale) * (o + 0.5) - 0.5
    return src if cubic else max(src, 0.0)


def nearest_ref(x, size, scales, exact=False):
    out = np.empty(x.shape[:2] + tuple(size))
    for pos in itertools.product(*(range(n) for n in size)):
        src = tuple(_src_nearest(o, n, m, s, exact)
                    for o, n, m, s in zip(pos, x.shape[2:], size, scales))
        out[(...,) + pos] = x[(...,) + src]
    return out


def linear_ref(x, size, scales, align_corners):
    """Every output cell mixes the 2^k corner cells of the source box around it."""
    out = np.zeros(x.shape[:2] + tuple(size))
    for pos in itertools.product(*(range(n) for n in size)):
        lo, frac = [], []
        for o, n, m, s in zip(pos, x.shape[2:], size, scales):
            src = _src_linear(o, n, m, align_corners, s)
            i = min(int(math.floor(src)), n - 1)
            lo.append(i)
            frac.append(src - i)
        for corner in itertools.product((0, 1), repeat=len(size)):
            w = np.prod([t if c else 1 - t for c, t in zip(corner, frac)])
            idx = tuple(min(i + c, n - 1) for i, c, n in zip(lo, corner, x.shape[2:]))
            out[(...,) + pos] += w * x[(...,) + idx]
    return out


def _keys(d, a=-0.75):
    """Keys' cubic convolution kernel at distance d."""
    d = abs(d)
    if d <= 1:
        return (a + 2) * d ** 3 - (a + 3) * d ** 2 + 1
    if d < 2:
        return a * d ** 3 - 5 * a * d ** 2 + 8 * a * d - 4 * a
    return 0.0


def bicubic_ref(x, size, scales, align_corners):
    out = np.zeros(x.shape[:2] + tuple(size))
    h, w = x.shape[2:]
    for i, j in itertools.product(range(size[0]), range(size[1])):
        sy = _src_linear(i, h, size[0], align_corners, scales[0], cubic=True)
        sx = _src_linear(j, w, size[1], align_corners, scales[1], cubic=True)
        fy, fx = math.floor(sy), math.floor(sx)
        for a, b in itertools.product(range(-1, 3), repeat=2):
            weight = _keys(sy - (fy + a)) * _keys(sx - (fx + b))
            out[..., i, j] += weight * x[..., min(max(fy + a, 0), h - 1),
                                         min(max(fx + b, 0), w - 1)]
    return out


def area_ref(x, size):
    out = np.empty(x.shape[:2] + tuple(size))
    for pos in itertools.product(*(range(n) for n in size)):
        box = tuple(slice(o * n // m, -(-(o + 1) * n // m))
                    for o, n, m in zip(pos, x.shape[2:], size))
        out[(...,) + pos] = x[(...,) + box].mean(axis=tuple(range(2, x.ndim)))
    return out


def ref(x, mode, size=None, scale_factor=None, align_corners=None,
        recompute_scale_factor=None):
    k = x.ndim - 2
    if size is not None:
        size = list(size) if isinstance(size, (tuple, list)) else [size] * k
        scales = [None] * k
    else:
        scales = list(scale_factor) if isinstance(scale_factor, (tuple, list)) \
            else [scale_factor] * k
        size = [math.floor(n * s) for n, s in zip(x.shape[2:], scales)]
        if recompute_scale_factor or mode == "area":
            scales = [None] * k
    if mode in ("nearest", "nearest-exact"):
        return nearest_ref(x, size, scales, mode == "nearest-exact")
    if mode == "area":
        return area_ref(x, size)
    if mode == "bicubic":
        return bicubic_ref(x, size, scales, bool(align_corners))
    return linear_ref(x, size, scales, bool(align_corners))


# --- values --------------------------------------------------------------------------------

CASES = [  # (input shape, mode, keyword arguments)
    ((2, 3, 5), "nearest", dict(size=8)),
    ((2, 3, 7), "nearest", dict(size=3)),
    ((1, 2, 3, 4), "nearest", dict(scale_factor=2)),
    ((1, 2, 5, 4), "nearest", dict(scale_factor=(1.7, 0.6))),
    ((1, 2, 5, 4), "nearest", dict(scale_factor=(1.7, 0.6), recompute_scale_factor=True)),
    ((1, 1, 2, 3, 4), "nearest", dict(size=(3, 5, 2))),
    ((2, 3, 5), "nearest-exact", dict(size=8)),
    ((1, 2, 5, 3), "nearest-exact", dict(size=(3, 7))),
    ((1, 1, 3, 2, 4), "nearest-exact", dict(scale_factor=1.5)),
    ((2, 3, 4), "linear", dict(size=9)),
    ((2, 3, 4), "linear", dict(size=9, align_corners=True)),
    ((2, 3, 9), "linear", dict(size=4)),
    ((1, 2, 3, 5), "bilinear", dict(size=(7, 2))),
    ((1, 2, 3, 5), "bilinear", dict(size=(7, 2), align_corners=True)),
    ((1, 2, 3, 5), "bilinear", dict(scale_factor=(2.5, 0.5))),
    ((1, 2, 3, 5), "bilinear", dict(scale_factor=(2.5, 0.5), recompute_scale_factor=True)),
    ((1, 2, 4, 4), "bilinear", dict(size=1)),
    ((1, 2, 4, 4), "bilinear", dict(size=1, align_corners=True)),
    ((1, 1, 2, 3, 4), "trilinear", dict(size=(3, 5, 2))),
    ((1, 1, 2, 3, 4), "trilinear", dict(scale_factor=1.5, align_corners=True)),
    ((1, 2, 3, 4), "bicubic", dict(size=(5, 7))),
    ((1, 2, 3, 4), "bicubic", dict(size=(5, 2), align_corners=True)),
    ((1, 2, 6, 5), "bicubic", dict(scale_factor=0.6)),
    ((2, 3, 7), "area", dict(size=3)),
    ((1, 2, 5, 7), "area", dict(size=(2, 3))),
    ((1, 2, 6, 4), "area", dict(scale_factor=0.5)),
    ((1, 1, 4, 5, 3), "area", dict(size=(3, 2, 2))),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape, mode, kw", CASES)
def test_matches_the_index_formulas(dtype, shape, mode, kw):
    x, xn = make(shape, dtype)
    assert_close(F.interpolate(x, mode=mode, **kw), ref(xn, mode, **kw))


def test_pytorch_documented_bilinear_examples():
    x = E.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
    got = F.interpolate(x, scale_factor=2, mode="bilinear")
    np.testing.assert_allclose(to_np(got)[0, 0], [[1.0, 1.25, 1.75, 2.0], [1.5, 1.75, 2.25, 2.5],
                                                  [2.5, 2.75, 3.25, 3.5], [3.0, 3.25, 3.75, 4.0]])
    got = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True)
    third = 1 / 3
    np.testing.assert_allclose(to_np(got)[0, 0, 0], [1, 1 + third, 1 + 2 * third, 2], rtol=1e-6)
    np.testing.assert_allclose(to_np(got)[0, 0, :, 0], [1, 1 + 2 * third, 1 + 4 * third, 3],
                               rtol=1e-6)


def test_given_scale_sets_the_sampling_step():
    # 3 * 2.5 -> 7 cells: PyTorch samples with step 1 / 2.5 = 0.4, not 3 / 7
    x, xn = make((1, 1, 3), E.float64)
    got = to_np(F.interpolate(x, scale_factor=2.5, mode="linear"))
    recomputed = to_np(F.interpolate(x, scale_factor=2.5, mode="linear",
                                     recompute_scale_factor=True))
    src = np.maximum(0.4 * (np.arange(7) + 0.5) - 0.5, 0)
    np.testing.assert_allclose(got[0, 0], np.interp(src, np.arange(3), xn[0, 0]))
    assert not np.allclose(got, recomputed)


def test_nearest_keeps_integer_dtypes_and_returns_a_new_tensor():
    x = E.arange(6).reshape(1, 1, 2, 3)
    got = F.interpolate(x, scale_factor=2)
    assert got.dtype is E.int64
    np.testing.assert_array_equal(to_np(got), np.repeat(np.repeat(to_np(x), 2, 2), 2, 3))
    same = F.interpolate(x, size=(2, 3))
    assert same is not x and np.array_equal(to_np(same), to_np(x))


@settings(max_examples=30, deadline=None)
@given(spatial=st.lists(st.integers(1, 5), min_size=1, max_size=3),
       out=st.lists(st.integers(1, 7), min_size=3, max_size=3),
       exact=st.booleans(), align_corners=st.booleans())
def test_random_shapes(spatial, out, exact, align_corners):
    k = len(spatial)
    x, xn = make((1, 2) + tuple(spatial), E.float64, seed=sum(spatial))
    size = tuple(out[:k])
    mode = "nearest-exact" if exact else "nearest"
    assert_close(F.interpolate(x, size=size, mode=mode), ref(xn, mode, size=size))
    linear = {1: "linear", 2: "bilinear", 3: "trilinear"}[k]
    assert_close(F.interpolate(x, size=size, mode=linear, align_corners=align_corners),
                 ref(xn, linear, size=size, align_corners=align_corners))


# --- gradients -----------------------------------------------------------------------------

@pytest.mark.parametrize("shape, mode, kw", [
    ((1, 1, 3), "nearest", dict(size=5)),
    ((1, 1, 2, 3), "nearest-exact", dict(size=(3, 2))),
    ((1, 1, 3), "linear", dict(size=4)),
    ((1, 1, 2, 3), "bilinear", dict(size=(3, 2), align_corners=True)),
    ((1, 1, 2, 2, 2), "trilinear", dict(scale_factor=1.5)),
    ((1, 1, 2, 3), "bicubic", dict(size=(3, 2))),
    ((1, 1, 3, 4), "area", dict(size=(2, 3))),
])
def test_gradcheck_and_gradgradcheck(shape, mode, kw):
    x = make(shape, E.float64)[0].requires_grad_()
    fn = lambda x: F.interpolate(x, mode=mode, **kw)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


# --- errors --------------------------------------------------------------------------------

X4 = E.zeros(1, 2, 3, 4)


@pytest.mark.parametrize("kw, err, match", [
    (dict(size=5, scale_factor=2), ValueError, "only one of size or scale_factor"),
    (dict(), ValueError, "either size or scale_factor"),
    (dict(size=(1, 2, 3)), ValueError, "same number of spatial dimensions"),
    (dict(scale_factor=(1, 2, 3)), ValueError, "scale_factor must have the same number"),
    (dict(size=5, align_corners=True), ValueError, "align_corners option can only be set"),
    (dict(size=5, recompute_scale_factor=True), ValueError, "not meaningful with an explicit"),
    (dict(size=5, mode="linear"), NotImplementedError, "Got 4D input, but linear mode needs"),
    (dict(size=5, mode="trilinear"), NotImplementedError, "trilinear mode needs 5D"),
    (dict(size=5, mode="lanczos"), NotImplementedError, "Only 3D, 4D and 5D"),
    (dict(size=5, antialias=True), ValueError, "Anti-alias option is restricted"),
    (dict(size=0), ShapeError, "greater than 0"),
    (dict(scale_factor=0.1, mode="bilinear"), ShapeError, "greater than 0"),
])
def test_errors(kw, err, match):
    with pytest.raises(err, match=match):
        F.interpolate(X4, **kw)


def test_rank_and_dtype_errors():
    with pytest.raises(NotImplementedError, match="got 2D"):
        F.interpolate(E.zeros(2, 3), size=4)
    with pytest.raises(NotImplementedError, match="floating"):
        F.interpolate(E.zeros(1, 1, 3, dtype=E.int64), size=4, mode="linear")
    with pytest.raises(ShapeError, match="expected a 4-D input"):
        E.upsample_bilinear2d(E.zeros(1, 3, 4), (2, 2), False)
