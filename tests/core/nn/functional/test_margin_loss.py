"""margin_ranking_loss, hinge_embedding_loss, soft_margin_loss, cosine_embedding_loss and
triplet_margin_loss against numpy float64 references written from their formulas: each
reduction, dtypes, broadcasting, large inputs, gradcheck and gradgradcheck, errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import ShapeError
from helpers import FLOAT_DTYPES, assert_close, make

REDUCTIONS = ["none", "mean", "sum"]


def _reduce(loss, reduction):
    return {"none": loss, "mean": loss.mean(), "sum": loss.sum()}[reduction]


def _tol(dtype):
    return {"rtol": 1e-5, "atol": 1e-6} if dtype is E.float32 else {}


def _labels(n, dtype=E.float64, seed=0):
    """+1 / -1 labels, both present."""
    lab = np.where(np.random.default_rng(seed).random(n) > 0.5, 1.0, -1.0)
    lab[:2] = [1.0, -1.0]
    return E.tensor(lab.astype(dtype.numpy)), lab


def _grads(fn, *inputs):
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_ranking_loss(reduction, dtype):
    a, an = make((6,), dtype, seed=1)
    b, bn = make((6,), dtype, seed=2)
    y, yn = _labels(6, dtype)
    out = F.margin_ranking_loss(a, b, y, margin=0.3, reduction=reduction)
    assert_close(out, _reduce(np.maximum(0, -yn * (an - bn) + 0.3), reduction), **_tol(dtype))
    if dtype is E.float64:
        _grads(lambda a, b: F.margin_ranking_loss(a, b, y, 0.3, reduction=reduction),
               a.requires_grad_(), b.requires_grad_())


def _np_hinge(x, y, margin):
    return np.where(y != 1, np.maximum(0, margin - x), 0) + np.where(y != -1, x, 0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_hinge_embedding_loss(reduction, dtype):
    x, xn = make((2, 5), dtype, low=0, high=3)
    y, yn = _labels(5, dtype)          # broadcast along the rows
    out = F.hinge_embedding_loss(x, y, margin=1.5, reduction=reduction)
    assert_close(out, _reduce(_np_hinge(xn, yn, 1.5), reduction), **_tol(dtype))
    if dtype is E.float64:
        _grads(lambda x: F.hinge_embedding_loss(x, y, 1.5, reduction=reduction),
               x.requires_grad_())


def test_hinge_embedding_loss_other_labels_get_both_terms():
    # as ATen: a label that is neither 1 nor -1 adds the hinge and the input
    out = F.hinge_embedding_loss(E.tensor([0.3, 2.0, 0.5]), E.tensor([1, -1, 0]),
                                 reduction="none")
    assert_close(out, np.array([0.3, 0.0, 1.0]), rtol=1e-6)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_soft_margin_loss(reduction, dtype):
    x, xn = make((3, 4), dtype)
    y, yn = _labels(4, dtype)
    out = F.soft_margin_loss(x, y, reduction=reduction)
    assert_close(out, _reduce(np.logaddexp(0, -yn * xn), reduction), **_tol(dtype))
    if dtype is E.float64:
        _grads(lambda x: F.soft_margin_loss(x, y, reduction=reduction), x.requires_grad_())


def test_soft_margin_loss_large_margins_do_not_overflow():
    x = E.tensor([-1000.0, -100.0, 0.0, 1000.0], requires_grad=True)
    out = F.soft_margin_loss(x, E.ones(4), reduction="none")
    assert_close(out.detach(), np.array([1000.0, 100.0, np.log(2), 0.0]), rtol=1e-6)
    (g,) = E.autograd.grad(out.sum(), x)
    assert_close(g, np.array([-1.0, -1.0, -0.5, 0.0]), rtol=1e-6)


def _np_cosine_embedding(a, b, y, margin, dim):
    cos = (a * b).sum(dim) / np.sqrt(((a * a).sum(dim) + 1e-12) * ((b * b).sum(dim) + 1e-12))
    return np.where(y == 1, 1 - cos, 0) + np.where(y == -1, np.maximum(0, cos - margin), 0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.4])
def test_cosine_embedding_loss(margin, reduction, dtype):
    a, an = make((4, 3), dtype, seed=1)
    b, bn = make((4, 3), dtype, seed=2)
    y, yn = _labels(4, dtype)
    out = F.cosine_embedding_loss(a, b, y, margin, reduction=reduction)
    assert_close(out, _reduce(_np_cosine_embedding(an, bn, yn, margin, 1), reduction),
                 **_tol(dtype))
    if dtype is E.float64:
        _grads(lambda a, b: F.cosine_embedding_loss(a, b, y, margin, reduction=reduction),
               a.requires_grad_(), b.requires_grad_())


def test_cosine_embedding_loss_single_pair_and_zero_vector():
    a, an = make((3,), E.float64, seed=1)
    b, bn = make((3,), E.float64, seed=2)
    out = F.cosine_embedding_loss(a, b, E.tensor(-1.0), margin=-0.5, reduction="none")
    assert_close(out, _np_cosine_embedding(an, bn, -1, -0.5, 0))     # 0-d
    zero = F.cosine_embedding_loss(E.zeros(2, 3), E.ones(2, 3), E.tensor([1.0, -1.0]),
                                   reduction="none")
    assert zero.tolist() == [1.0, 0.0]


def _np_pdist(a, b, p, eps=1e-6):
    return (np.abs(a - b + eps) ** p).sum(-1) ** (1 / p)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p, swap", [(2.0, False), (1.0, True), (3.0, True)])
def test_triplet_margin_loss(p, swap, reduction, dtype):
    a, an = make((4, 3), dtype, seed=1)
    pos, pn = make((4, 3), dtype, seed=2)
    neg, nn_ = make((4, 3), dtype, seed=3)
    d_neg = _np_pdist(an, nn_, p)
    if swap:
        d_neg = np.minimum(d_neg, _np_pdist(pn, nn_, p))
    expected = np.maximum(0, _np_pdist(an, pn, p) - d_neg + 2.0)
    out = F.triplet_margin_loss(a, pos, neg, margin=2.0, p=p, swap=swap, reduction=reduction)
    assert_close(out, _reduce(expected, reduction), **_tol(dtype))
    if dtype is E.float64:
        _grads(lambda a, b, c: F.triplet_margin_loss(a, b, c, 2.0, p, swap=swap,
                                                     reduction=reduction),
               a.requires_grad_(), pos.requires_grad_(), neg.requires_grad_())


def test_triplet_margin_loss_single_triplet_and_broadcast():
    a, an = make((3,), E.float64, seed=1)
    pos, pn = make((3,), E.float64, seed=2)
    neg, nn_ = make((3,), E.float64, seed=3)
    expected = max(0.0, _np_pdist(an, pn, 2) - _np_pdist(an, nn_, 2) + 1.0)
    assert_close(F.triplet_margin_loss(a, pos, neg), np.array(expected))
    batch, bn = make((2, 3), E.float64, seed=4)
    out = F.triplet_margin_loss(batch, pos[None], neg[None], reduction="none")
    assert_close(out, np.maximum(0, _np_pdist(bn, pn, 2) - _np_pdist(bn, nn_, 2) + 1.0))


def test_deprecated_size_average_and_reduce():
    a, an = make((4,), E.float64, seed=1)
    y, yn = _labels(4)
    with pytest.warns(UserWarning, match="deprecated"):
        out = F.soft_margin_loss(a, y, reduce=False)
    assert_close(out, np.logaddexp(0, -yn * an))
    with pytest.warns(UserWarning, match="deprecated"):
        out = F.margin_ranking_loss(a, a * 0, y, size_average=False)
    assert_close(out, np.maximum(0, -yn * an).sum())


V = E.zeros(3)


@pytest.mark.parametrize("call, error, match", [
    (lambda: F.margin_ranking_loss(V, V, E.zeros(1, 3)), ShapeError, "same number of dims"),
    (lambda: F.margin_ranking_loss(V, V, V, reduction="avg"), ValueError, "reduction"),
    (lambda: F.hinge_embedding_loss(V, V, reduction="avg"), ValueError, "reduction"),
    (lambda: F.soft_margin_loss(V, V, reduction="avg"), ValueError, "reduction"),
    (lambda: F.cosine_embedding_loss(V, V, E.ones(1)), ShapeError, "1-D target expects 2-D"),
    (lambda: F.cosine_embedding_loss(E.ones(2, 3), E.ones(2, 3), E.ones(2, 1)), ShapeError,
     "multi-target"),
    (lambda: F.cosine_embedding_loss(E.ones(2, 3), E.ones(2, 4), E.ones(2)), ShapeError,
     "do not broadcast"),
    (lambda: F.triplet_margin_loss(E.ones(2, 3), V, E.ones(2, 3)), ShapeError,
     r"same number of dims, got 2-D \(2, 3\), 1-D \(3,\)"),
    (lambda: F.triplet_margin_loss(V, V, V, margin=0.0), ValueError, "greater than 0"),
    (lambda: F.triplet_margin_loss(V, V, V, reduction="x"), ValueError, "reduction"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ---- triplet_margin_with_distance_loss ----------------------------------------------------

def _np_l1(a, b):
    return np.abs(a - b).sum(-1)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("custom", [False, True])
def test_triplet_margin_with_distance_loss(reduction, swap, custom):
    a, an = make((5, 3), E.float64, seed=1)
    p, pn = make((5, 3), E.float64, seed=2)
    n, nn_ = make((5, 3), E.float64, seed=3)
    if custom:
        def dist(x, y):
            return (x - y).abs().sum(-1)
        ref_dist = _np_l1
    else:
        dist = None

        def ref_dist(x, y):   # pairwise_distance: the 2-norm of x - y + 1e-6
            return np.sqrt(((x - y + 1e-6) ** 2).sum(-1))
    d_neg = ref_dist(an, nn_)
    if swap:
        d_neg = np.minimum(d_neg, ref_dist(pn, nn_))
    ref = np.maximum(ref_dist(an, pn) - d_neg + 1.5, 0)
    out = F.triplet_margin_with_distance_loss(a, p, n, distance_function=dist, margin=1.5,
                                              swap=swap, reduction=reduction)
    assert_close(out, _reduce(ref, reduction))
    _grads(lambda a, p, n: F.triplet_margin_with_distance_loss(
        a, p, n, distance_function=dist, margin=1.5, swap=swap, reduction=reduction),
        a.requires_grad_(), p.requires_grad_(), n.requires_grad_())


def test_triplet_margin_with_distance_loss_default_is_triplet_margin_loss():
    a, _ = make((4, 3), E.float64, seed=4)
    p, _ = make((4, 3), E.float64, seed=5)
    n, _ = make((4, 3), E.float64, seed=6)
    assert_close(F.triplet_margin_with_distance_loss(a, p, n, reduction="none"),
                 F.triplet_margin_loss(a, p, n, reduction="none").numpy())


@pytest.mark.parametrize("call, error, match", [
    (lambda: F.triplet_margin_with_distance_loss(V, V, V, margin=0), ValueError,
     "greater than 0"),
    (lambda: F.triplet_margin_with_distance_loss(E.ones(2, 3), V, V), ShapeError,
     "anchor 2-D, positive 1-D"),
    (lambda: F.triplet_margin_with_distance_loss(V, V, V, reduction="x"), ValueError,
     "reduction"),
])
def test_triplet_margin_with_distance_loss_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
