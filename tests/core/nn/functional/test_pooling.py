"""ember.nn.functional pooling against direct numpy float64 loops: max_pool1d/2d (values,
indices, argument normalization), avg_pool1d/2d (padding, ceil_mode, count_include_pad,
divisor_override), adaptive_avg_pool2d (sizes that do not divide); gradcheck and
gradgradcheck of each, and the errors."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import ShapeError
from helpers import assert_close, make, to_np


def out_size(n, k, s, p, ceil_mode, d=1):
    size = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    return size - 1 if ceil_mode and (size - 1) * s >= n + p else size


def np_max_pool1d(x, k, s, p, d, ceil_mode):
    """(values, indices) over the last dim, PyTorch's first-maximum rule."""
    *lead, n = x.shape
    rows = x.reshape(-1, n)
    o = out_size(n, k, s, p, ceil_mode, d)
    vals, idx = np.empty((len(rows), o)), np.empty((len(rows), o), np.int64)
    for r, row in enumerate(rows):
        for q in range(o):
            cells = [q * s - p + i * d for i in range(k) if 0 <= q * s - p + i * d < n]
            best = max(cells, key=lambda c: (row[c], -c))
            vals[r, q], idx[r, q] = row[best], best
    return vals.reshape(*lead, o), idx.reshape(*lead, o)


def np_avg_pool2d(x, k, s, p, ceil_mode, include_pad, divisor=None):
    *lead, h, w = x.shape
    planes = x.reshape(-1, h, w)
    oh, ow = out_size(h, k[0], s[0], p[0], ceil_mode), out_size(w, k[1], s[1], p[1], ceil_mode)
    out = np.empty((len(planes), oh, ow))
    for c, plane in enumerate(planes):
        for r in range(oh):
            for q in range(ow):
                h0, w0 = r * s[0] - p[0], q * s[1] - p[1]
                h1, w1 = min(h0 + k[0], h + p[0]), min(w0 + k[1], w + p[1])
                count = (h1 - h0) * (w1 - w0)
                h0, w0, h1, w1 = max(h0, 0), max(w0, 0), min(h1, h), min(w1, w)
                if not include_pad:
                    count = (h1 - h0) * (w1 - w0)
                out[c, r, q] = plane[h0:h1, w0:w1].sum() / (divisor or count)
    return out.reshape(*lead, oh, ow)


def np_adaptive_avg_pool2d(x, size):
    *lead, h, w = x.shape
    out = np.empty((*lead, *size))
    for r in range(size[0]):
        for q in range(size[1]):
            h0, h1 = r * h // size[0], math.ceil((r + 1) * h / size[0])
            w0, w1 = q * w // size[1], math.ceil((q + 1) * w / size[1])
            out[..., r, q] = x[..., h0:h1, w0:w1].mean(axis=(-2, -1))
    return out


def small(shape, seed=0):
    """A float64 leaf of distinct values (no ties: max pooling is differentiable there)."""
    n = math.prod(shape)
    vals = np.random.default_rng(seed).permutation(n).reshape(shape) * 0.3 - n * 0.15
    return E.tensor(vals, requires_grad=True)


# --- max pooling ---------------------------------------------------------------------------

def test_max_pool2d_normalizes_arguments_and_returns_indices():
    x, ref = make((2, 3, 7, 6), E.float32)
    out, idx = F.max_pool2d(x, 3, padding=1, return_indices=True)  # stride None -> 3
    assert isinstance(F.max_pool2d(x, 3, padding=1), E.Tensor)
    exp_v, exp_i = E.max_pool2d_with_indices(x, (3, 3), (3, 3), (1, 1))
    assert out.dtype is E.float32 and tuple(out.shape) == (2, 3, 3, 2)
    np.testing.assert_array_equal(to_np(out), to_np(exp_v))
    np.testing.assert_array_equal(to_np(idx), to_np(exp_i))
    assert_close(F.max_pool2d(x, (2, 3), stride=(1, 2), dilation=(2, 1), ceil_mode=True),
                 to_np(E.max_pool2d_with_indices(x, (2, 3), (1, 2), 0, (2, 1), True)[0]))


@pytest.mark.parametrize("shape", [(2, 3, 9), (3, 9)])
@pytest.mark.parametrize("k,s,p,d,ceil_mode", [(2, None, 0, 1, False), (3, 2, 1, 1, True),
                                               (2, 1, 1, 3, False), (4, 3, 2, 1, True)])
def test_max_pool1d(shape, k, s, p, d, ceil_mode):
    x, ref = make(shape, E.float64)
    exp_v, exp_i = np_max_pool1d(ref, k, s or k, p, d, ceil_mode)
    out, idx = F.max_pool1d(x, k, s, p, d, ceil_mode, return_indices=True)
    assert_close(out, exp_v)
    np.testing.assert_array_equal(to_np(idx), exp_i)
    assert_close(F.max_pool1d(x, k, s, p, d, ceil_mode), exp_v)


@pytest.mark.parametrize("fn", [
    lambda x: F.max_pool2d(x, 2),                                    # tiles
    lambda x: F.max_pool2d(x, 3, stride=1, padding=1),               # overlapping, padded
    lambda x: F.max_pool2d(x, 2, stride=1, dilation=2, ceil_mode=True),
    lambda x: F.max_pool1d(x.flatten(-2), 3, 2, 1, ceil_mode=True),
])
def test_max_pool_gradcheck_and_gradgradcheck(fn):
    x = small((1, 2, 4, 4))
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_max_pool_backward_op_is_differentiable_in_grad_output():
    # the op_samples entry for max_pool2d_with_indices_backward: position 4 gets two grads
    idx = E.tensor(np.array([[[[0, 1], [4, 4]]]]))
    x = E.zeros(1, 1, 3, 3, dtype=E.float64)
    fn = lambda go: E.max_pool2d_with_indices_backward(go, x, (2, 2), (1, 1), (0, 0), (1, 1),
                                                       False, idx)
    go = small((1, 1, 2, 2))
    g = to_np(go).ravel()
    assert_close(fn(go), np.array([[[[g[0], g[1], 0], [0, g[2] + g[3], 0], [0, 0, 0]]]]))
    assert gradcheck(fn, (go,))
    assert gradgradcheck(fn, (go,))


# --- average pooling -----------------------------------------------------------------------

AVG_CASES = [  # kernel, stride, padding, ceil_mode
    (2, None, 0, False), (2, None, 0, True), (3, 2, 1, False), (3, 2, 1, True),
    ((2, 3), (1, 2), (1, 1), True), ((3, 2), 3, (1, 0), False),
]


@pytest.mark.parametrize("dtype", [E.float32, E.float64])
@pytest.mark.parametrize("case", AVG_CASES)
@pytest.mark.parametrize("include_pad", [True, False])
def test_avg_pool2d(dtype, case, include_pad):
    k, s, p, ceil_mode = case
    x, ref = make((2, 3, 7, 6), dtype)
    pair = lambda v: (v, v) if isinstance(v, int) else v
    exp = np_avg_pool2d(ref, pair(k), pair(s or k), pair(p), ceil_mode, include_pad)
    assert_close(F.avg_pool2d(x, k, s, p, ceil_mode, include_pad), exp, dtype)
    exp = np_avg_pool2d(ref, pair(k), pair(s or k), pair(p), ceil_mode, include_pad, 5)
    assert_close(F.avg_pool2d(x, k, s, p, ceil_mode, include_pad, divisor_override=5), exp,
                 dtype)


def test_avg_pool2d_unbatched_and_1d():
    x, ref = make((3, 5, 5), E.float64)
    assert_close(F.avg_pool2d(x, 2), np_avg_pool2d(ref, (2, 2), (2, 2), (0, 0), False, True))
    x, ref = make((2, 3, 9), E.float64)
    exp = np_avg_pool2d(ref[:, :, None], (1, 3), (1, 2), (0, 1), True, False)[:, :, 0]
    assert_close(F.avg_pool1d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), exp)
    assert_close(F.avg_pool1d(x[0], 2), ref[0, :, :8].reshape(3, 4, 2).mean(-1))


@pytest.mark.parametrize("fn", [
    lambda x: F.avg_pool2d(x, 2),
    lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    lambda x: F.avg_pool1d(x.flatten(-2), 3, 2, 1, ceil_mode=True),
])
def test_avg_pool_gradcheck_and_gradgradcheck(fn):
    x = small((1, 2, 4, 4))
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_avg_pool_errors():
    x = E.zeros(1, 1, 4, 4)
    with pytest.raises(ValueError, match="divisor_override must be non-zero"):
        F.avg_pool2d(x, 2, divisor_override=0)
    with pytest.raises(NotImplementedError, match="floating"):
        F.avg_pool2d(E.zeros(1, 1, 4, 4, dtype=E.int64), 2)
    with pytest.raises(ShapeError, match="at most half of kernel size"):
        F.avg_pool2d(x, 3, padding=2)
    with pytest.raises(ShapeError, match="2-D .C, L. or 3-D"):
        F.avg_pool1d(x, 2)
    with pytest.raises(ShapeError, match="tuple of one int"):
        F.max_pool1d(x[0], (2, 2))


# --- adaptive average pooling --------------------------------------------------------------

@pytest.mark.parametrize("shape,size,expected", [
    ((2, 3, 8, 6), (4, 3), (4, 3)),          # divides: reshape and mean
    ((2, 3, 7, 6), (3, 4), (3, 4)),          # overlapping windows of unequal size
    ((3, 5, 5), 2, (2, 2)),
    ((3, 5, 5), (None, 3), (5, 3)),
    ((1, 2, 3, 3), (5, 7), (5, 7)),          # upsampling: windows repeat cells
])
def test_adaptive_avg_pool2d(shape, size, expected):
    x, ref = make(shape, E.float32)
    out = F.adaptive_avg_pool2d(x, size)
    assert out.dtype is E.float32
    assert_close(out, np_adaptive_avg_pool2d(ref, expected))


def test_adaptive_avg_pool2d_gradcheck_and_errors():
    x = small((1, 2, 5, 4))
    for size in ((3, 2), (2, 2)):
        assert gradcheck(lambda t: F.adaptive_avg_pool2d(t, size), (x,))
        assert gradgradcheck(lambda t: F.adaptive_avg_pool2d(t, size), (x,))
    with pytest.raises(ShapeError, match="3-D"):
        F.adaptive_avg_pool2d(E.zeros(4, 4), 2)
    with pytest.raises(ShapeError, match="non-negative"):
        F.adaptive_avg_pool2d(E.zeros(1, 4, 4), (-1, 2))


# --- adaptive max pooling and power-average pooling -----------------------------------------

def np_adaptive_max_pool2d(x, oh, ow):
    """(values, flat indices) with windows floor(i n / out) .. ceil((i + 1) n / out)."""
    *lead, h, w = x.shape
    vals, idx = np.empty((*lead, oh, ow)), np.empty((*lead, oh, ow), dtype=np.int64)
    for i in range(oh):
        for j in range(ow):
            r0, r1 = i * h // oh, -(-(i + 1) * h // oh)
            c0, c1 = j * w // ow, -(-(j + 1) * w // ow)
            win = x[..., r0:r1, c0:c1].reshape(*lead, -1)
            t = win.argmax(-1)  # the first maximum in row-major order, as PyTorch
            vals[..., i, j] = win.max(-1)
            idx[..., i, j] = (r0 + t // (c1 - c0)) * w + c0 + t % (c1 - c0)
    return vals, idx


@pytest.mark.parametrize("shape, size", [((2, 3, 5, 7), (2, 3)), ((2, 3, 5, 7), (5, 7)),
                                         ((1, 2, 4, 4), (3, 5)), ((3, 6, 5), (1, 1)),
                                         ((1, 1, 7, 3), (4, None)), ((2, 1, 6, 6), 4)])
def test_adaptive_max_pool2d_values_and_indices(shape, size):
    x, xn = make(shape, E.float64)
    v, i = F.adaptive_max_pool2d(x, size, return_indices=True)
    pair = size if isinstance(size, tuple) else (size, size)
    pair = tuple(shape[-2 + k] if s is None else s for k, s in enumerate(pair))
    rv, ri = np_adaptive_max_pool2d(xn, *pair)
    assert_close(v, rv)
    np.testing.assert_array_equal(to_np(i), ri)
    assert i.dtype is E.int64
    assert_close(F.adaptive_max_pool2d(x, size), rv)


def test_adaptive_max_pool_ties_pick_the_first():
    x = E.tensor([[[1.0, 5.0, 5.0, 2.0], [5.0, 0.0, 1.0, 5.0]]])
    v, i = F.adaptive_max_pool2d(x, (1, 2), return_indices=True)
    np.testing.assert_array_equal(to_np(i), [[[1, 2]]])
    np.testing.assert_array_equal(to_np(v), [[[5.0, 5.0]]])


def test_adaptive_max_pool1d():
    x, xn = make((2, 3, 7), E.float64)
    v, i = F.adaptive_max_pool1d(x, 3, return_indices=True)
    rv, ri = np_adaptive_max_pool2d(xn[..., None, :], 1, 3)
    assert_close(v, rv[..., 0, :])
    np.testing.assert_array_equal(to_np(i), ri[..., 0, :])
    assert_close(F.adaptive_max_pool1d(x[0], (3,)), rv[0, :, 0, :])


@pytest.mark.parametrize("fn", [lambda x: F.adaptive_max_pool2d(x, (2, 3)),
                                lambda x: F.adaptive_max_pool1d(x.reshape(1, 2, 6), 4)])
def test_adaptive_max_pool_gradients(fn):
    x = make((1, 3, 4), E.float64, seed=5)[0].requires_grad_()  # distinct values: no ties
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("call, err, match", [
    (lambda: F.adaptive_max_pool2d(E.zeros(3, 4), 2), ShapeError, "3-D"),
    (lambda: F.adaptive_max_pool2d(E.zeros(1, 2, 0, 4), 2), ShapeError, "non-zero"),
    (lambda: F.adaptive_max_pool2d(E.zeros(1, 2, 3, 4), (-1, 2)), ShapeError, "non-negative"),
    (lambda: F.adaptive_max_pool2d(E.zeros(1, 2, 3, 4), (1, 2, 3)), ShapeError, "2 ints"),
    (lambda: F.adaptive_max_pool2d(E.zeros(1, 2, 3, dtype=E.int64), 2), NotImplementedError,
     "floating"),
    (lambda: F.adaptive_max_pool1d(E.zeros(3, 4, 5, 6), 1), ShapeError, "2-D"),
    (lambda: F.adaptive_max_pool1d(E.zeros(3, 4), (1, 2)), ShapeError, "one int"),
])
def test_adaptive_max_pool_errors(call, err, match):
    with pytest.raises(err, match=match):
        call()


def np_lp_pool2d(x, p, k, s):
    *lead, h, w = x.shape
    oh, ow = (h - k[0]) // s[0] + 1, (w - k[1]) // s[1] + 1
    out = np.empty((*lead, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = x[..., i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]]
            out[..., i, j] = (win ** p).sum((-2, -1)) ** (1 / p)
    return out


@pytest.mark.parametrize("p, k, s", [(2, (2, 2), None), (3.0, (3, 2), (1, 2)), (1, 2, 1)])
def test_lp_pool2d_and_1d(p, k, s):
    x, xn = make((2, 3, 5, 6), E.float64, low=0.1, high=2.0)
    kk = k if isinstance(k, tuple) else (k, k)
    ss = kk if s is None else (s if isinstance(s, tuple) else (s, s))
    assert_close(F.lp_pool2d(x, p, k, s), np_lp_pool2d(xn, p, kk, ss))
    assert_close(F.lp_pool1d(x[0], p, kk[1], ss[1]),
                 np_lp_pool2d(xn[0][:, None], p, (1, kk[1]), (1, ss[1]))[:, 0])


def test_lp_pool_inf_is_max_of_abs():
    x, xn = make((1, 2, 4, 4), E.float64)
    ref = np.abs(xn).reshape(1, 2, 2, 2, 2, 2).max((3, 5))
    assert_close(F.lp_pool2d(x, float("inf"), 2), ref)


def test_lp_pool_gradients():
    x = make((1, 3, 4), E.float64, low=0.5, high=2.0)[0].requires_grad_()
    assert gradcheck(lambda x: F.lp_pool2d(x, 2, 2, 1), (x,))
    assert gradgradcheck(lambda x: F.lp_pool1d(x, 3, 2), (x,))
