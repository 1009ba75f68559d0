"""The fused loss kernels (kernels/loss_fused.py, their blocked programs in
kernels/loss_programs.py) against float64 numpy references: values and first-order
gradients for float16, bfloat16, float32 and float64, at a small size (plain ufuncs) and
at a size that takes the blocked engine, with special values (+-inf, nan, -0.0, huge, tiny,
subnormal); 'none' elementwise; the op-by-op form for create_graph and under tracing."""
import numpy as np
import pytest
from helpers import FLOAT_DTYPES, LOW_FLOAT_DTYPES, TOL, to_np

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in cast")
DTYPES = LOW_FLOAT_DTYPES + FLOAT_DTYPES
SIZES = [(6, 7), (256, 160)]          # 42 elements; 40960 >= ENGINE_MIN_SIZE
REDUCTIONS = ["mean", "sum", "none"]
SPECIAL = [np.inf, -np.inf, np.nan, -0.0, 0.0, 1e30, -1e30, 1e-30, 1e-40, 3.0, -3.0]


def _sigmoid(x):
    return np.exp(-np.logaddexp(0.0, -x))


def _reduce(v, reduction):
    return v.mean() if reduction == "mean" else v.sum() if reduction == "sum" else v


def _grad_scale(reduction, n):
    return 1.0 / n if reduction == "mean" else 1.0


def _inputs(shape, dtype, seed, low=-4.0, high=4.0, special=False):
    """(tensor, its values in float64 after rounding to dtype)."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(low, high, shape)
    if special:
        a.reshape(-1)[:len(SPECIAL)] = SPECIAL
    t = E.tensor(a, dtype=dtype)
    return t, to_np(t).astype(np.float64)


def _check(out, ref, dtype, reduction, rtol=None):
    r, a = TOL[dtype]
    got = to_np(out)
    with np.errstate(over="ignore"):   # a float16 sum may overflow, as it does in torch
        ref = np.asarray(ref).astype(got.dtype).astype(np.float64)
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=rtol or r, atol=a,
                               equal_nan=True)
    assert out.dtype is dtype


POINTWISE = {
    # name: (call, loss(x, y), d loss / dx, (x low, x high), target kind)
    "smooth_l1": (lambda x, y, r: F.smooth_l1_loss(x, y, reduction=r, beta=0.5),
                  lambda x, y: np.where(np.abs(x - y) < 0.5, (x - y) ** 2, np.abs(x - y) - 0.25),
                  lambda x, y: np.clip(x - y, -0.5, 0.5) / 0.5, (-3, 3), "real"),
    "huber": (lambda x, y, r: F.huber_loss(x, y, reduction=r, delta=2.0),
              lambda x, y: np.where(np.abs(x - y) < 2, 0.5 * (x - y) ** 2,
                                    2 * (np.abs(x - y) - 1)),
              lambda x, y: np.clip(x - y, -2, 2), (-3, 3), "real"),
    "bce_with_logits": (lambda x, y, r: F.binary_cross_entropy_with_logits(x, y, reduction=r),
                        lambda x, y: (1 - y) * x + np.logaddexp(0.0, -x),
                        lambda x, y: _sigmoid(x) - y, (-20, 20), "prob"),
    "soft_margin": (lambda x, y, r: F.soft_margin_loss(x, y, reduction=r),
                    lambda x, y: np.logaddexp(0.0, -y * x),
                    lambda x, y: -y * _sigmoid(-y * x), (-20, 20), "sign"),
    "bce": (lambda x, y, r: F.binary_cross_entropy(x, y, reduction=r),
            lambda x, y: -(y * np.maximum(np.log(x), -100) +
                           (1 - y) * np.maximum(np.log1p(-x), -100)),
            lambda x, y: -y / x + (1 - y) / (1 - x), (0.02, 0.98), "prob"),
}


def _target(kind, shape, dtype):
    if kind == "real":
        return _inputs(shape, dtype, 1)
    rng = np.random.default_rng(2)
    a = rng.uniform(0, 1, shape) if kind == "prob" else np.sign(rng.normal(size=shape))
    t = E.tensor(a, dtype=dtype)
    return t, to_np(t).astype(np.float64)


@pytest.mark.parametrize("name", list(POINTWISE))
@pytest.mark.parametrize("shape", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_pointwise_losses_against_float64(name, shape, dtype, reduction):
    call, loss, grad, (lo, hi), kind = POINTWISE[name]
    x, xn = _inputs(shape, dtype, 0, lo, hi)
    x.requires_grad_(True)
    y, yn = _target(kind, shape, dtype)
    out = call(x, y, reduction)
    _check(out, _reduce(loss(xn, yn), reduction), dtype, reduction)
    out.sum().backward()
    # a gradient is rounded once from float32 (low floats): compare at its own scale
    ref = grad(xn, yn) * _grad_scale(reduction, xn.size)
    r, a = TOL[dtype]
    np.testing.assert_allclose(to_np(x.grad), ref, rtol=r, atol=a * np.abs(ref).max())


@pytest.mark.parametrize("name", ["smooth_l1", "huber", "bce_with_logits", "soft_margin"])
@pytest.mark.parametrize("shape", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_pointwise_special_values_elementwise(name, shape, dtype):
    call, loss, grad, _, kind = POINTWISE[name]
    x, xn = _inputs(shape, dtype, 0, special=True)
    y, yn = _target(kind, shape, dtype)
    with np.errstate(all="ignore"):
        ref = loss(xn, yn)
    got = to_np(call(x, y, "none")).astype(np.float64)
    r, a = TOL[dtype]
    # NOTE: a float16 loss may round to inf where float64's is finite (1e30 inputs)
    finite = np.isfinite(ref) & (np.abs(ref) < np.finfo(to_np(x).dtype).max)
    np.testing.assert_allclose(got[finite], ref[finite], rtol=r, atol=a)
    assert np.array_equal(np.isnan(got), np.isnan(ref))


def test_bce_at_zero_and_one_is_clamped_with_finite_gradient():
    p = E.tensor([0.0, 1.0, 0.5, 1e-45], dtype=E.float32, requires_grad=True)
    y = E.tensor([0.0, 1.0, 1.0, 1.0], dtype=E.float32)
    out = F.binary_cross_entropy(p, y, reduction="none")
    np.testing.assert_allclose(to_np(out), [0.0, 0.0, np.log(2), 100.0], rtol=1e-6)
    out.sum().backward()
    # each log's term is flat where it is clamped (p = 0 for log p, p = 1 for log(1 - p))
    np.testing.assert_allclose(to_np(p.grad), [1.0, -1.0, -2.0, 0.0], rtol=1e-6)


def _np_ce(x, t, w, reduction, ignore_index, ls):
    """(loss, d loss.sum() / dx) in float64, PyTorch's formulas."""
    n, c = x.shape
    z = x - x.max(1, keepdims=True)
    lse = np.log(np.exp(z).sum(1))
    logp = z - lse[:, None]
    p = np.exp(logp)
    w = np.ones(c) if w is None else w
    keep = t != ignore_index
    ts = np.where(keep, t, 0)
    wt = w[ts] * keep
    nll = -logp[np.arange(n), ts] * wt
    smooth = -(logp * w).sum(1) * keep
    onehot = np.eye(c)[ts]
    g_nll = (p - onehot) * wt[:, None]
    g_smooth = (p * w.sum() - w) * keep[:, None]
    loss = (1 - ls) * nll + ls / c * smooth
    grad = (1 - ls) * g_nll + ls / c * g_smooth
    if reduction == "none":
        return loss, grad
    if reduction == "sum":
        return loss.sum(), grad
    return loss.sum() / wt.sum(), grad / wt.sum()


CE_CASES = [  # (weight, ignore_index, label_smoothing)
    (None, -100, 0.0), (None, 2, 0.0), ("w", -100, 0.0), ("w", 1, 0.0),
    (None, -100, 0.1), ("w", 3, 0.25),
]


@pytest.mark.parametrize("weight,ignore_index,ls", CE_CASES)
@pytest.mark.parametrize("shape", [(7, 5), (64, 600)])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_against_float64(weight, ignore_index, ls, shape, dtype, reduction):
    x, xn = _inputs(shape, dtype, 0, -6, 6)
    x.requires_grad_(True)
    t = np.random.default_rng(1).integers(0, shape[1], shape[0])
    w = None if weight is None else E.tensor(np.linspace(0.5, 2, shape[1]), dtype=dtype)
    wn = None if w is None else to_np(w).astype(np.float64)
    out = F.cross_entropy(x, E.tensor(t), weight=w, reduction=reduction,
                          ignore_index=ignore_index, label_smoothing=ls)
    ref, gref = _np_ce(xn, t, wn, reduction, ignore_index, ls)
    _check(out, ref, dtype, reduction)
    out.sum().backward()
    r, a = TOL[dtype]
    np.testing.assert_allclose(to_np(x.grad), gref, rtol=r, atol=a * np.abs(gref).max())


@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_entropy_special_logits(dtype):
    x = E.tensor([[0.0, -np.inf, 1e-40, -0.0], [np.nan, 1.0, 2.0, 3.0],
                  [1e4, 0.0, 0.0, 0.0]], dtype=dtype)
    out = F.cross_entropy(x, E.tensor([0, 1, 0]), reduction="none")
    got = to_np(out)
    np.testing.assert_allclose(got[0], np.log(3.0), rtol=TOL[dtype][0])
    assert np.isnan(got[1]) and got[2] == 0.0


@pytest.mark.parametrize("ls", [0.0, 0.2])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_probability_cross_entropy_against_float64(ls, reduction):
    x, xn = _inputs((9, 6), E.float64, 0, -5, 5)
    x.requires_grad_(True)
    p = np.random.default_rng(3).dirichlet(np.ones(6), 9)
    w = np.linspace(0.5, 1.5, 6)
    out = F.cross_entropy(x, E.tensor(p), weight=E.tensor(w), reduction=reduction,
                          label_smoothing=ls)
    pp = (p * (1 - ls) + ls / 6) * w
    logp = xn - np.log(np.exp(xn).sum(1, keepdims=True))
    loss = -(pp * logp).sum(1)
    grad = np.exp(logp) * pp.sum(1, keepdims=True) - pp
    scale = 1 / 9 if reduction == "mean" else 1
    _check(out, _reduce(loss, reduction), E.float64, reduction)
    out.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), grad * scale, rtol=1e-12)


@pytest.mark.parametrize("call", [
    lambda x: F.cross_entropy(x, E.tensor([0, 2, 1]), label_smoothing=0.1),
    lambda x: F.cross_entropy(x, E.tensor([0, 2, 1]), reduction="none"),
    lambda x: F.smooth_l1_loss(x, E.ones(3, 4, dtype=E.float64) * 0.3),
    lambda x: F.huber_loss(x, E.zeros(3, 4, dtype=E.float64), delta=0.7),
    lambda x: F.binary_cross_entropy_with_logits(x, E.full((3, 4), 0.3, dtype=E.float64)),
    lambda x: F.soft_margin_loss(x, E.ones(3, 4, dtype=E.float64)),
    lambda x: F.binary_cross_entropy(x.sigmoid(), E.full((3, 4), 0.3, dtype=E.float64)),
])
def test_gradcheck_and_gradgradcheck_through_the_reference(call):
    x = E.tensor(np.random.default_rng(5).normal(size=(3, 4)), requires_grad=True)
    assert gradcheck(call, (x,))
    assert gradgradcheck(call, (x,))


def test_one_node_and_a_second_backward_raises():
    x = E.tensor(np.ones((2, 3)), requires_grad=True)
    loss = F.smooth_l1_loss(x, E.zeros(2, 3, dtype=E.float64))
    assert loss.grad_fn.name() == "SmoothL1LossBackward0"
    loss.backward()
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()


def test_in_place_change_of_a_saved_input_raises():
    x = E.tensor(np.ones((2, 3)), requires_grad=True)
    h = x * 1.0
    loss = F.soft_margin_loss(h, E.ones(2, 3, dtype=E.float64))
    h.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


@pytest.mark.parametrize("weight,ignore_index", [(None, -100), (None, 2), ("w", -100), ("w", 1)])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_against_float64(weight, ignore_index, dtype, reduction):
    x, xn = _inputs((9, 5), dtype, 0, -6, 0)
    x.requires_grad_(True)
    t = np.random.default_rng(1).integers(0, 5, 9)
    w = None if weight is None else E.tensor(np.linspace(0.5, 2, 5), dtype=dtype)
    wn = np.ones(5) if w is None else to_np(w).astype(np.float64)
    out = F.nll_loss(x, E.tensor(t), weight=w, reduction=reduction, ignore_index=ignore_index)
    keep = t != ignore_index
    wt = wn[np.where(keep, t, 0)] * keep
    loss = -xn[np.arange(9), np.where(keep, t, 0)] * wt
    grad = np.zeros_like(xn)
    grad[np.arange(9), np.where(keep, t, 0)] = -wt
    if reduction == "mean":
        loss, grad = loss.sum() / wt.sum(), grad / wt.sum()
    _check(out, _reduce(loss, "sum" if reduction == "mean" else reduction) if
           reduction != "mean" else loss, dtype, reduction)
    assert out.grad_fn.name() == "NllLossBackward0"
    out.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), grad, rtol=TOL[dtype][0], atol=TOL[dtype][1])


def test_nll_loss_out_of_range_and_empty():
    x = E.tensor(np.zeros((3, 4)), requires_grad=True)
    with pytest.raises(IndexError, match="Target 4 is out of bounds"):
        F.nll_loss(x, E.tensor([0, 4, 1]))
    with pytest.raises(IndexError, match="Target -1 is out of bounds"):
        F.nll_loss(x, E.tensor([0, -1, 1]))
    assert np.isnan(to_np(F.nll_loss(x, E.tensor([2, 2, 2]), ignore_index=2)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_triplet_margin_loss_against_float64(dtype, reduction):
    rng = np.random.default_rng(6)
    a, p, n = (E.tensor(rng.normal(size=(8, 5)), dtype=dtype, requires_grad=True)
               for _ in range(3))
    n.data[0] = p.detach()[0] + 3.0          # a triplet inside the margin: hinge 0
    out = F.triplet_margin_loss(a, p, n, margin=1.5, reduction=reduction)
    an, pn, nn = (to_np(t.detach()).astype(np.float64) for t in (a, p, n))
    u, v = an - pn + 1e-6, an - nn + 1e-6
    du, dv = np.sqrt((u * u).sum(-1)), np.sqrt((v * v).sum(-1))
    h = du - dv + 1.5
    _check(out, _reduce(np.maximum(h, 0), reduction), dtype, reduction)
    out.sum().backward()
    m = (h >= 0) * _grad_scale(reduction, 8)
    r, tol = TOL[dtype]
    for t, ref in ((a, m[:, None] * (u / du[:, None] - v / dv[:, None])),
                   (p, -m[:, None] * u / du[:, None]), (n, m[:, None] * v / dv[:, None])):
        np.testing.assert_allclose(to_np(t.grad), ref, rtol=r, atol=tol)


@pytest.mark.parametrize("call", [
    lambda x: F.smooth_l1_loss(x * 2.0, x, beta=0.5),      # one input made from the other
    lambda x: F.soft_margin_loss(x, x),                      # one tensor twice
    lambda x: F.huber_loss(x.sin(), x, delta=0.3),
])
def test_create_graph_derivative_matches_the_first_order_kernel(call):
    # the Hessian-vector product through create_graph (the reference, differentiated)
    # against central differences of the first-order kernels' gradient
    x = E.tensor(np.random.default_rng(7).normal(size=(3, 4)), requires_grad=True)
    v = np.random.default_rng(8).normal(size=(3, 4))
    (g,) = E.autograd.grad(call(x), x, create_graph=True)
    (hv,) = E.autograd.grad((g * E.tensor(v)).sum(), x)

    def first(a):
        xa = E.tensor(a, requires_grad=True)
        (ga,) = E.autograd.grad(call(xa), xa)
        return to_np(ga)
    x0, h = to_np(x.detach()), 1e-6
    fd = (first(x0 + h * v) - first(x0 - h * v)) / (2 * h)
    np.testing.assert_allclose(to_np(g.detach()), first(x0), rtol=1e-12)
    np.testing.assert_allclose(to_np(hv), fd, rtol=1e-5, atol=1e-7)
