"""ember.nn.functional losses against numpy float64 references that implement PyTorch's
semantics (weighted means, ignore_index, label smoothing, probability targets,
K-dimensional inputs), with gradcheck, gradgradcheck and the error messages."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError, ShapeError
from helpers import assert_close, make, to_np

REDUCTIONS = ["none", "mean", "sum"]


def _reduce(loss, reduction, denominator=None):
    if reduction == "none":
        return loss
    total = loss.sum()
    if reduction == "sum":
        return total
    return total / (loss.size if denominator is None else denominator)


def np_cross_entropy(x, t, w=None, ignore_index=-100, reduction="mean", smoothing=0.0,
                     log_probs=False):
    """PyTorch's cross_entropy (nll_loss with log_probs=True) in float64 numpy."""
    class_dim = 0 if x.ndim == 1 else 1
    xm = np.moveaxis(x, class_dim, -1)
    n_classes = xm.shape[-1]
    if log_probs:
        lp = xm
    else:
        m = xm.max(axis=-1, keepdims=True)
        lp = xm - m - np.log(np.exp(xm - m).sum(axis=-1, keepdims=True))
    w = np.ones(n_classes) if w is None else w
    if np.issubdtype(t.dtype, np.floating):  # class probabilities
        tm = np.moveaxis(t, class_dim, -1) * (1 - smoothing) + smoothing / n_classes
        return _reduce(-(lp * tm * w).sum(-1), reduction, lp.size / n_classes)
    keep = t != ignore_index
    safe = np.where(keep, t, 0)
    tw = w[safe] * keep
    nll = -np.take_along_axis(lp, safe[..., None], -1)[..., 0] * tw
    smooth = -(lp * w).sum(-1) * keep
    loss = nll * (1 - smoothing) + smooth * (smoothing / n_classes)
    return _reduce(loss, reduction, tw.sum())


SHAPES = [(6, 5), (5,), (3, 4, 2), (2, 3, 2, 2)]  # (N, C), (C,), (N, C, d1), (N, C, d1, d2)


def _problem(shape, seed=0, ignored=None):
    """Logits, class-index targets (one set to ``ignored``), probabilities, weights."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    class_dim = 0 if len(shape) == 1 else 1
    n_classes = shape[class_dim]
    t = rng.integers(0, n_classes, shape[:class_dim] + shape[class_dim + 1:])
    if ignored is not None and t.size > 1:
        t.flat[1] = ignored
    p = rng.random(shape)
    p /= p.sum(axis=class_dim, keepdims=True)
    return x, t, p, rng.random(n_classes) + 0.5


def _t(a, requires_grad=False):
    return E.tensor(a, requires_grad=requires_grad)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 2])
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
def test_cross_entropy_class_indices(shape, reduction, weighted, ignore_index, smoothing):
    x, t, _, w = _problem(shape, ignored=2)
    w = w if weighted else None
    out = F.cross_entropy(_t(x), _t(t), None if w is None else _t(w),
                          ignore_index=ignore_index, reduction=reduction,
                          label_smoothing=smoothing)
    assert_close(out, np_cross_entropy(x, t, w, ignore_index, reduction, smoothing))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
def test_cross_entropy_class_probabilities(shape, reduction, weighted, smoothing):
    x, _, p, w = _problem(shape)
    w = w if weighted else None
    out = F.cross_entropy(_t(x), _t(p), None if w is None else _t(w), reduction=reduction,
                          label_smoothing=smoothing)
    assert_close(out, np_cross_entropy(x, p, w, -100, reduction, smoothing))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 2])
def test_nll_loss(shape, reduction, weighted, ignore_index):
    x, t, _, w = _problem(shape, ignored=2)
    w = w if weighted else None
    out = F.nll_loss(_t(x), _t(t), None if w is None else _t(w), ignore_index=ignore_index,
                     reduction=reduction)
    assert_close(out, np_cross_entropy(x, t, w, ignore_index, reduction, log_probs=True))


def test_cross_entropy_float32_and_any_integral_target():
    x, t, _, _ = _problem((8, 5))
    expected = np_cross_entropy(x, t)
    for dtype in (E.int64, E.int32, E.uint8):
        out = F.cross_entropy(_t(x).float(), _t(t).to(dtype))
        assert_close(out, expected, dtype=E.float32, rtol=1e-5, atol=1e-6)


def test_cross_entropy_all_ignored():
    x, _, _, _ = _problem((3, 4))
    t = _t(np.full(3, -100))
    assert math.isnan(F.cross_entropy(_t(x), t).item())
    assert F.cross_entropy(_t(x), t, reduction="sum").item() == 0
    assert F.cross_entropy(_t(x), t, reduction="none").tolist() == [0, 0, 0]


def test_cross_entropy_is_the_composite_op():
    x, t, _, w = _problem((4, 3))
    a = F.cross_entropy(_t(x), _t(t), _t(w), ignore_index=1, label_smoothing=0.1)
    b = E.cross_entropy_loss(_t(x), _t(t), _t(w), "mean", 1, 0.1)
    assert a.item() == b.item()


def test_legacy_size_average_and_reduce():
    x, t, _, _ = _problem((4, 3))
    with pytest.warns(UserWarning, match="deprecated"):
        out = F.cross_entropy(_t(x), _t(t), reduce=False)
    assert_close(out, np_cross_entropy(x, t, reduction="none"))
    with pytest.warns(UserWarning, match="deprecated"):
        out = F.mse_loss(_t(x), _t(x * 0), size_average=False)
    assert_close(out, (x * x).sum())


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 4), c=st.integers(1, 5), extra=st.lists(st.integers(1, 3), max_size=2),
       reduction=st.sampled_from(REDUCTIONS), smoothing=st.sampled_from([0.0, 0.25]),
       weighted=st.booleans(), seed=st.integers(0, 2**16))
def test_cross_entropy_shapes_fuzz(n, c, extra, reduction, smoothing, weighted, seed):
    x, t, p, w = _problem((n, c, *extra), seed=seed, ignored=-100)
    w = w if weighted else None
    wt = None if w is None else _t(w)
    for target in (t, p):
        out = F.cross_entropy(_t(x), _t(target), wt, reduction=reduction,
                              label_smoothing=smoothing)
        assert_close(out, np_cross_entropy(x, target, w, -100, reduction, smoothing))


# ---- gradients --------------------------------------------------------------------------

def _check_grads(fn, *inputs):
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kwargs", [{}, {"ignore_index": 1, "label_smoothing": 0.2},
                                    {"weighted": True, "label_smoothing": 0.2}])
def test_cross_entropy_gradients(reduction, kwargs):
    x, t, _, w = _problem((3, 4), ignored=1)
    kwargs = dict(kwargs)
    weight = _t(w) if kwargs.pop("weighted", False) else None
    fn = lambda x: F.cross_entropy(x, _t(t), weight, reduction=reduction, **kwargs)
    _check_grads(fn, _t(x, True))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_probability_and_kdim_gradients(reduction):
    x, _, p, w = _problem((2, 3, 2))
    _check_grads(lambda x, p: F.cross_entropy(x, p, _t(w), reduction=reduction,
                                              label_smoothing=0.1), _t(x, True), _t(p, True))
    x, t, _, _ = _problem((2, 3, 2), ignored=-100)
    _check_grads(lambda x: F.cross_entropy(x, _t(t), reduction=reduction), _t(x, True))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_gradients(reduction):
    x, t, _, w = _problem((3, 4), ignored=2)
    _check_grads(lambda x: F.nll_loss(x, _t(t), _t(w), ignore_index=2, reduction=reduction),
                 _t(x, True))


# ---- regression losses ------------------------------------------------------------------

def _np_smooth_l1(d, beta):
    a = np.abs(d)
    return a if beta == 0 else np.where(a < beta, 0.5 * d * d / beta, a - 0.5 * beta)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", ["mse", "l1", "smooth_l1_0", "smooth_l1_0.5", "smooth_l1_2"])
def test_regression_losses(name, reduction):
    x, xn = make((3, 4), E.float64, seed=0)
    y, yn = make((3, 4), E.float64, seed=1)
    w, wn = make((3, 4), E.float64, low=0.5, high=2.0, seed=2)
    d = xn - yn
    if name.startswith("smooth_l1"):
        beta = float(name.rsplit("_", 1)[1])
        fn = lambda a, b: F.smooth_l1_loss(a, b, reduction=reduction, beta=beta)
        assert_close(fn(x, y), _reduce(_np_smooth_l1(d, beta), reduction))
    else:
        op, ref = (F.mse_loss, d * d) if name == "mse" else (F.l1_loss, np.abs(d))
        fn = lambda a, b: op(a, b, reduction=reduction)
        assert_close(fn(x, y), _reduce(ref, reduction))
        assert_close(op(x, y, reduction=reduction, weight=w),
                     _reduce(ref * wn, reduction, wn.sum()))
    _check_grads(fn, x.requires_grad_(), y.requires_grad_())


def test_regression_broadcast_warns():
    x, xn = make((3, 4), E.float64)
    y, yn = make((4,), E.float64, seed=1)
    with pytest.warns(UserWarning, match="broadcast"):
        out = F.mse_loss(x, y)
    assert_close(out, ((xn - yn) ** 2).mean())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.l1_loss(x, x)


def test_l1_gradient_zero_where_equal():
    x = _t(np.array([1.0, 2.0]), True)
    (g,) = E.autograd.grad(F.l1_loss(x, _t(np.array([1.0, 3.0])), reduction="sum"), x)
    assert g.tolist() == [0.0, -1.0]


# ---- binary losses ----------------------------------------------------------------------

def _np_bce(p, t, w=1.0):
    with np.errstate(divide="ignore"):
        return -w * (t * np.maximum(np.log(p), -100) + (1 - t) * np.maximum(np.log1p(-p), -100))


def _np_bce_logits(x, t, w=1.0, pos_weight=1.0):
    log_sig = -np.logaddexp(0, -x)
    return w * ((1 - t) * x - (1 + (pos_weight - 1) * t) * log_sig)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weight_shape", [None, (3, 4), (4,)])
def test_binary_cross_entropy(reduction, weight_shape):
    p, pn = make((3, 4), E.float64, low=0.05, high=0.95)
    t, tn = make((3, 4), E.float64, low=0, high=1, seed=1)
    w, wn = make(weight_shape, E.float64, low=0.5, high=2, seed=2) if weight_shape else (None, 1)
    fn = lambda p, t: F.binary_cross_entropy(p, t, w, reduction=reduction)
    assert_close(fn(p, t), _reduce(_np_bce(pn, tn, wn), reduction))
    _check_grads(fn, p.requires_grad_(), t.requires_grad_())


def test_binary_cross_entropy_clamps_log_at_the_edges():
    p = _t(np.array([0.0, 1.0, 0.0, 1.0]), True)
    t = _t(np.array([1.0, 0.0, 0.0, 1.0]))
    loss = F.binary_cross_entropy(p, t, reduction="none")
    assert loss.tolist() == [100.0, 100.0, 0.0, 0.0]
    (g,) = E.autograd.grad(loss.sum(), p)
    assert np.isfinite(to_np(g)).all()


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("pos_weighted", [False, True])
def test_binary_cross_entropy_with_logits(reduction, weighted, pos_weighted):
    x, xn = make((3, 4), E.float64, low=-4, high=4)
    t, tn = make((3, 4), E.float64, low=0, high=1, seed=1)
    w, wn = make((3, 4), E.float64, low=0.5, high=2, seed=2) if weighted else (None, 1)
    pw, pwn = make((4,), E.float64, low=0.5, high=3, seed=3) if pos_weighted else (None, 1)
    fn = lambda x, t: F.binary_cross_entropy_with_logits(x, t, w, reduction=reduction,
                                                         pos_weight=pw)
    assert_close(fn(x, t), _reduce(_np_bce_logits(xn, tn, wn, pwn), reduction))
    _check_grads(fn, x.requires_grad_(), t.requires_grad_())


def test_binary_cross_entropy_with_logits_is_stable():
    x = _t(np.array([-1000.0, 1000.0, 0.0, 0.0]), True)
    t = _t(np.array([1.0, 0.0, 1.0, 0.0]))
    loss = F.binary_cross_entropy_with_logits(x, t, reduction="none")
    np.testing.assert_allclose(to_np(loss), [1000, 1000, math.log(2), math.log(2)])
    (g,) = E.autograd.grad(loss.sum(), x)  # sigmoid(x) - t, exact at 0 too
    np.testing.assert_allclose(to_np(g), [-1, 1, -0.5, 0.5])


# ---- errors -----------------------------------------------------------------------------

X = E.tensor(np.zeros((4, 5)))


@pytest.mark.parametrize("call, error, match", [
    (lambda: F.cross_entropy(X, _t(np.array([1, 2, 12, 0]))), IndexError,
     r"Target 12 is out of bounds.*\[0, 5\)"),
    (lambda: F.cross_entropy(X, _t(np.array([-1, 0, 0, 0]))), IndexError, "Target -1"),
    (lambda: F.nll_loss(X, _t(np.array([1, 2, 7, 0])), ignore_index=2), IndexError,
     r"Target 7 .*ignore_index \(2\)"),
    (lambda: F.cross_entropy(X, _t(np.array([1, 2, 0]))), ShapeError, "batch_size"),
    (lambda: F.nll_loss(E.zeros(2, 5, 2), E.zeros(2, 3, dtype=E.int64)), ShapeError,
     r"target of shape \(2, 2\)"),
    (lambda: F.cross_entropy(X, E.zeros(4)), ShapeError, "class probabilities"),
    (lambda: F.nll_loss(X, E.zeros(4)), DtypeError, "integral"),
    (lambda: F.cross_entropy(X, E.zeros(4, dtype=E.bool_)), DtypeError, "integral"),
    (lambda: F.cross_entropy(X.int(), E.zeros(4, dtype=E.int64)), DtypeError, "floating"),
    (lambda: F.cross_entropy(X, E.zeros(4, dtype=E.int64), E.ones(3)), ShapeError,
     r"weight of shape \(5,\)"),
    (lambda: F.nll_loss(E.zeros(()), E.tensor(0)), ShapeError, "0-d"),
    (lambda: F.cross_entropy(X, E.zeros(4, dtype=E.int64), reduction="avg"), ValueError,
     "reduction"),
    (lambda: F.cross_entropy(X, E.zeros(4, dtype=E.int64), label_smoothing=1.5), ValueError,
     "label_smoothing"),
    (lambda: F.cross_entropy(X, E.zeros(4, 5), ignore_index=1), ValueError, "ignore_index"),
    (lambda: F.mse_loss(X, X, reduction="elementwise"), ValueError, "reduction"),
    (lambda: F.mse_loss(X, X, weight=E.ones(5)), ShapeError, "weight"),
    (lambda: F.smooth_l1_loss(X, X, beta=-1.0), ValueError, "beta"),
    (lambda: F.binary_cross_entropy(E.tensor([0.5, 1.2]), E.zeros(2)), ValueError, r"\[0, 1\]"),
    (lambda: F.binary_cross_entropy(E.zeros(2), E.zeros(1, 2)), ShapeError, "target"),
    (lambda: F.binary_cross_entropy_with_logits(E.zeros(2), E.zeros(2, 1)), ShapeError,
     "target"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
