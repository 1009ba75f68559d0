"""F.unfold against a numpy loop over blocks, F.fold as its adjoint (<unfold(x), y> ==
<x, fold(y)>) and against a numpy scatter loop, gradients, hypothesis fuzzing, errors."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import ShapeError
from helpers import FLOAT_DTYPES, assert_close, make, to_np


def _blocks(n, k, d, p, s):
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


def unfold_ref(x, k, d, p, s):
    """Column l = bh * L_w + bw, row c * kh * kw + i * kw + j: one cell per loop step."""
    n, c, h, w = x.shape
    lh, lw = _blocks(h, k[0], d[0], p[0], s[0]), _blocks(w, k[1], d[1], p[1], s[1])
    out = np.zeros((n, c * k[0] * k[1], lh * lw))
    for ci, i, j, bh, bw in itertools.product(range(c), range(k[0]), range(k[1]), range(lh),
                                              range(lw)):
        row, col = bh * s[0] - p[0] + i * d[0], bw * s[1] - p[1] + j * d[1]
        if 0 <= row < h and 0 <= col < w:
            out[:, (ci * k[0] + i) * k[1] + j, bh * lw + bw] = x[:, ci, row, col]
    return out


def fold_ref(cols, size, k, d, p, s):
    n, ckk, _ = cols.shape
    c = ckk // (k[0] * k[1])
    lh, lw = _blocks(size[0], k[0], d[0], p[0], s[0]), _blocks(size[1], k[1], d[1], p[1], s[1])
    out = np.zeros((n, c) + tuple(size))
    for ci, i, j, bh, bw in itertools.product(range(c), range(k[0]), range(k[1]), range(lh),
                                              range(lw)):
        row, col = bh * s[0] - p[0] + i * d[0], bw * s[1] - p[1] + j * d[1]
        if 0 <= row < size[0] and 0 <= col < size[1]:
            out[:, ci, row, col] += cols[:, (ci * k[0] + i) * k[1] + j, bh * lw + bw]
    return out


CASES = [  # (input shape, kernel, dilation, padding, stride)
    ((2, 3, 4, 5), (2, 2), (1, 1), (0, 0), (1, 1)),
    ((1, 2, 5, 5), (3, 2), (1, 2), (1, 0), (2, 1)),
    ((1, 1, 6, 4), (2, 3), (2, 1), (2, 1), (3, 2)),
    ((2, 2, 3, 3), (1, 1), (1, 1), (0, 0), (2, 2)),
    ((1, 2, 1, 1), (5, 1), (1, 1), (2, 0), (1, 1)),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape, k, d, p, s", CASES)
def test_unfold_and_fold_match_loops(dtype, shape, k, d, p, s):
    x, xn = make(shape, dtype)
    cols = F.unfold(x, k, d, p, s)
    assert_close(cols, unfold_ref(xn, k, d, p, s))
    y, yn = make(tuple(cols.shape), dtype, seed=1)
    assert_close(F.fold(y, shape[2:], k, d, p, s), fold_ref(yn, shape[2:], k, d, p, s))


@settings(max_examples=30, deadline=None)
@given(h=st.integers(1, 6), w=st.integers(1, 6), k=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       d=st.tuples(st.integers(1, 2), st.integers(1, 2)),
       p=st.tuples(st.integers(0, 2), st.integers(0, 2)),
       s=st.tuples(st.integers(1, 3), st.integers(1, 3)))
def test_fold_is_the_adjoint_of_unfold(h, w, k, d, p, s):
    if _blocks(h, k[0], d[0], p[0], s[0]) < 1 or _blocks(w, k[1], d[1], p[1], s[1]) < 1:
        with pytest.raises(ShapeError, match="must be at least one"):
            F.unfold(E.zeros(1, 2, h, w), k, d, p, s)
        return
    x, xn = make((1, 2, h, w), E.float64)
    ux = to_np(F.unfold(x, k, d, p, s))
    y, yn = make(ux.shape, E.float64, seed=2)
    fy = to_np(F.fold(y, (h, w), k, d, p, s))
    np.testing.assert_allclose((ux * yn).sum(), (xn * fy).sum(), rtol=1e-10, atol=1e-12)


def test_unbatched_and_int_arguments():
    x, xn = make((2, 4, 4), E.float64)
    cols = F.unfold(x, 2, stride=2)
    assert_close(cols, unfold_ref(xn[None], (2, 2), (1, 1), (0, 0), (2, 2))[0])
    # non-overlapping blocks: fold undoes unfold
    assert_close(F.fold(cols, 4, 2, stride=2), xn)


@pytest.mark.parametrize("fn", [
    lambda x: F.unfold(x, (2, 2), padding=1, stride=(2, 1)),
    lambda x: F.unfold(x, 2, dilation=(1, 2)),
])
def test_unfold_gradients(fn):
    x = make((1, 1, 3, 4), E.float64)[0].requires_grad_()
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_unfold_gradient_is_fold():
    x = make((1, 2, 4, 3), E.float64)[0].requires_grad_()
    cols = F.unfold(x, 2, padding=1)
    g, gn = make(tuple(cols.shape), E.float64, seed=3)
    cols.backward(g)
    assert_close(x.grad, fold_ref(gn, (4, 3), (2, 2), (1, 1), (1, 1), (1, 1)))


def test_fold_gradients():
    y = make((1, 4, 4), E.float64)[0].requires_grad_()  # 1 channel, 2x2 kernel, 2x2 blocks
    fn = lambda y: F.fold(y, (3, 3), 2, padding=(0, 1), stride=(1, 2))
    assert gradcheck(fn, (y,))
    assert gradgradcheck(fn, (y,))


@pytest.mark.parametrize("call, err, match", [
    (lambda: F.unfold(E.zeros(3, 3), 2), ShapeError, "3-D .* or 4-D"),
    (lambda: F.unfold(E.zeros(1, 2, 3, 3), (0, 2)), ShapeError, "kernel size should be greater"),
    (lambda: F.unfold(E.zeros(1, 2, 3, 3), 2, padding=-1), ShapeError, "non-negative"),
    (lambda: F.unfold(E.zeros(1, 2, 3, 3), 2, stride=0), ShapeError, "stride should be greater"),
    (lambda: F.unfold(E.zeros(1, 2, 3, 3), (4, 2)), ShapeError, r"as \(0, 2\)"),
    (lambda: F.unfold(E.zeros(1, 2, 3, 3, dtype=E.int64), 2), NotImplementedError, "floating"),
    (lambda: F.fold(E.zeros(2, 1, 8, 4), 3, 2), ShapeError, "2D or 3D"),
    (lambda: F.fold(E.zeros(1, 5, 4), 3, 2), ShapeError, r"input.size\(1\)=5"),
    (lambda: F.fold(E.zeros(1, 8, 5), 3, 2), ShapeError, r"2 \* 2 = 4, but got input.size\(2\)=5"),
    (lambda: F.fold(E.zeros(1, 8, 4), 0, 2), ShapeError, "greater than zero"),
])
def test_errors(call, err, match):
    with pytest.raises(err, match=match):
        call()
