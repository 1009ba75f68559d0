"""multi_margin_loss, multilabel_margin_loss and multilabel_soft_margin_loss against numpy
float64 references written from their definitions (loops over classes): p, margin,
weight, each reduction, unbatched input, gradcheck and gradgradcheck, errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError, ShapeError
from helpers import FLOAT_DTYPES, assert_close, make

REDUCTIONS = ["none", "mean", "sum"]


def _reduce(loss, reduction):
    return {"none": loss, "mean": loss.mean(), "sum": loss.sum()}[reduction]


def _tol(dtype):
    return {"rtol": 1e-5, "atol": 1e-6} if dtype is E.float32 else {}


def _np_multi_margin(x, y, p, margin, w):
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        for j in range(c):
            if j != y[i]:
                h = max(0.0, margin - x[i, y[i]] + x[i, j]) ** p
                out[i] += h * (w[y[i]] if w is not None else 1.0)
    return out / c


def _np_multilabel_margin(x, t):
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        labels = []
        for v in t[i]:
            if v == -1:
                break
            labels.append(v)
        for j in labels:
            for k in range(c):
                if k not in labels:
                    out[i] += max(0.0, 1 - (x[i, j] - x[i, k]))
    return out / c


def _np_soft_margin(x, y, w):
    log_sig = -np.log1p(np.exp(-x))
    log_sig_neg = -np.log1p(np.exp(x))
    loss = -(y * log_sig + (1 - y) * log_sig_neg)
    if w is not None:
        loss = loss * w
    return loss.mean(-1)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_multi_margin_loss(dtype, reduction, p, weighted):
    x, xn = make((5, 4), dtype, low=-1, high=1)
    y = np.array([0, 3, 1, 1, 2])
    w, wn = make((4,), dtype, low=0.1, high=2, seed=3) if weighted else (None, None)
    out = F.multi_margin_loss(x, E.tensor(y), p=p, margin=0.8, weight=w, reduction=reduction)
    assert_close(out, _reduce(_np_multi_margin(xn, y, p, 0.8, wn), reduction), **_tol(dtype))


def test_multi_margin_loss_unbatched():
    x, xn = make((4,), E.float64, low=-1, high=1)
    out = F.multi_margin_loss(x, E.tensor(2), reduction="none")
    assert tuple(out.shape) == ()
    assert_close(out, _np_multi_margin(xn[None], [2], 1, 1.0, None)[0])


@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin_loss_gradients(p):
    x, _ = make((3, 4), E.float64, low=-1, high=1, seed=5)
    w, _ = make((4,), E.float64, low=0.5, high=1.5, seed=6)
    y = E.tensor([0, 2, 3])

    def fn(x, w):
        return F.multi_margin_loss(x, y, p=p, margin=0.9, weight=w, reduction="sum")
    assert gradcheck(fn, (x.requires_grad_(), w.requires_grad_()))
    assert gradgradcheck(fn, (x, w))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss(dtype, reduction):
    x, xn = make((4, 5), dtype, low=-1, high=1)
    # targets end at the first -1; what follows is ignored; a repeated class counts twice;
    # an empty list gives 0
    t = np.array([[3, 0, -1, 1, 2], [1, 2, 3, 4, -1], [-1, 1, 2, 3, 0], [2, 2, -1, 0, 0]])
    out = F.multilabel_margin_loss(x, E.tensor(t), reduction=reduction)
    assert_close(out, _reduce(_np_multilabel_margin(xn, t), reduction), **_tol(dtype))


def test_multilabel_margin_loss_unbatched_and_gradients():
    x, xn = make((4,), E.float64, low=-1, high=1, seed=2)
    t = np.array([1, 3, -1, 0])
    out = F.multilabel_margin_loss(x, E.tensor(t), reduction="none")
    assert tuple(out.shape) == ()
    assert_close(out, _np_multilabel_margin(xn[None], t[None])[0])
    x2, _ = make((2, 4), E.float64, low=-1, high=1, seed=7)
    t2 = E.tensor([[0, 3, -1, -1], [2, -1, 0, 0]])

    def fn(x):
        return F.multilabel_margin_loss(x, t2)
    assert gradcheck(fn, (x2.requires_grad_(),))
    assert gradgradcheck(fn, (x2,))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_multilabel_soft_margin_loss(dtype, reduction, weighted):
    x, xn = make((3, 4), dtype)
    yn = (np.random.default_rng(1).random((3, 4)) > 0.5).astype(np.float64)
    y = E.tensor(yn).to(dtype)
    w, wn = make((4,), dtype, low=0.1, high=2, seed=3) if weighted else (None, None)
    out = F.multilabel_soft_margin_loss(x, y, weight=w, reduction=reduction)
    assert_close(out, _reduce(_np_soft_margin(xn, yn, wn), reduction), **_tol(dtype))
    if dtype is E.float64:
        def fn(x):
            return F.multilabel_soft_margin_loss(x, y, weight=w, reduction=reduction)
        assert gradcheck(fn, (x.requires_grad_(),))
        assert gradgradcheck(fn, (x,))


def test_multilabel_soft_margin_loss_unbatched():
    x, xn = make((4,), E.float64)
    out = F.multilabel_soft_margin_loss(x, E.tensor([1.0, 0, 0, 1]), reduction="none")
    assert_close(out, _np_soft_margin(xn, np.array([1.0, 0, 0, 1]), None))


def test_deprecated_size_average():
    x, xn = make((3, 4), E.float64)
    with pytest.warns(UserWarning, match="deprecated"):
        out = F.multi_margin_loss(x, E.tensor([0, 1, 2]), size_average=False)
    assert_close(out, _np_multi_margin(xn, [0, 1, 2], 1, 1.0, None).sum())


X = E.zeros(3, 4)


@pytest.mark.parametrize("call, exc, words", [
    (lambda: F.multi_margin_loss(X, E.tensor([0, 1, 2]), p=3), ValueError, "p == 1 and p == 2"),
    (lambda: F.multi_margin_loss(X, E.tensor([0, 1])), ShapeError, "expected (3,)"),
    (lambda: F.multi_margin_loss(X, E.tensor([0, 1, 4])), IndexError, "[0, 4)"),
    (lambda: F.multi_margin_loss(X, E.tensor([0, 1, 2]), weight=E.ones(3)), ShapeError,
     "weight of shape (4,)"),
    (lambda: F.multi_margin_loss(X, E.zeros(3)), DtypeError, "integral"),
    (lambda: F.multi_margin_loss(E.zeros(2, 3, 4), E.tensor([0, 1])), ShapeError, "(N, C)"),
    (lambda: F.multi_margin_loss(X, E.tensor([0, 1, 2]), reduction="x"), ValueError,
     "reduction"),
    (lambda: F.multilabel_margin_loss(X, E.zeros(3, 3, dtype=E.int64)), ShapeError,
     "inconsistent target size"),
    (lambda: F.multilabel_margin_loss(X, E.full((3, 4), 4, dtype=E.int64)), IndexError,
     "out of range"),
    (lambda: F.multilabel_margin_loss(X.long(), E.zeros(3, 4, dtype=E.int64)), DtypeError,
     "floating input"),
    (lambda: F.multilabel_soft_margin_loss(X, E.zeros(3, 3)), ShapeError, "input's shape"),
])
def test_errors(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    assert words in str(info.value)
