"""The CTC kernels (kernels/loss_ctc.py) and the margin-loss kernels (kernels/loss_margin.py)
against float64 references: the scaled linear-space recursion against the log-space one
(values and occupancy gradients), its fallback for emissions far below a frame's best,
every float dtype through F.ctc_loss, and the margin kernels against their op-by-op
composites (the create_graph path) in float16, bfloat16, float32 and float64."""
import numpy as np
import pytest
from helpers import FLOAT_DTYPES, LOW_FLOAT_DTYPES, TOL, to_np

import ember as E
import ember.nn.functional as F
from ember.backends.kernels import loss_ctc as K

DTYPES = LOW_FLOAT_DTYPES + FLOAT_DTYPES


def _case(t=30, n=4, c=8, s=6, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(t, n, c)) * scale
    lp = x - np.log(np.exp(x).sum(-1, keepdims=True))
    targets = rng.integers(1, c, (n, s))
    targets[0, 1] = targets[0, 0]                       # a repeat: no skip there
    il, tl = [t, t - 3, t - 7, 5], [s, s - 2, 1, 0]
    ext, skip = K.ctc_labels(np, targets, tl, 0, c)
    return lp, ext, skip, (il, tl)


@pytest.mark.parametrize("scale", [1.0, 8.0])
def test_linear_recursion_matches_log_space_float64(scale):
    lp, ext, skip, args = _case(scale=scale)
    loss, state = K.ctc_forward(np, (lp, ext, skip), args)
    ref, ref_state = K._log_forward(np, (lp, ext, skip), args)
    assert state[0] == "linear"
    np.testing.assert_allclose(loss, ref, rtol=1e-12)
    g = np.array([1.0, 0.5, -2.0, 3.0])
    got = K.ctc_backward(np, g, (lp, ext, skip), state, args, (True,))[0]
    want = K._log_backward(np, g, (lp, ext, skip), ("log", ref_state)[1], args, (True,))[0]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_emissions_far_below_the_best_fall_back_to_log_space():
    lp, ext, skip, args = _case()
    lp = lp.copy()
    lp[:, :, 0] = -2000.0                               # blanks: e^-2000 relative
    loss, state = K.ctc_forward(np, (lp, ext, skip), args)
    ref, _ = K._log_forward(np, (lp, ext, skip), args)
    assert state[0] == "log"
    np.testing.assert_allclose(loss, ref, rtol=1e-12)


def test_float32_within_stated_error_of_float64():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(200, 8, 50))
    lp = x - np.log(np.exp(x).sum(-1, keepdims=True))
    args = ([200] * 8, [40] * 8)
    ext, skip = K.ctc_labels(np, rng.integers(1, 50, (8, 40)), [40] * 8, 0, 50)
    l32, st32 = K.ctc_forward(np, (lp.astype(np.float32), ext, skip), args)
    l64, st64 = K.ctc_forward(np, (lp, ext, skip), args)
    ulp = np.spacing(np.abs(l64).astype(np.float32)).astype(np.float64)
    assert (np.abs(l32 - l64) <= 4 * ulp).all()
    g = np.ones(8)
    g32 = K.ctc_backward(np, g.astype(np.float32), (lp.astype(np.float32), ext, skip), st32,
                         args, (True,))[0]
    g64 = K.ctc_backward(np, g, (lp, ext, skip), st64, args, (True,))[0]
    assert np.abs(g32 - g64).max() <= 2e-6


@pytest.mark.parametrize("dtype", DTYPES)
def test_ctc_loss_every_float_dtype(dtype):
    lp, ext, skip, (il, tl) = _case()
    x = E.tensor(lp, dtype=dtype, requires_grad=True)
    targets = E.tensor(np.random.default_rng(0).integers(1, 8, (4, 6)))
    out = F.ctc_loss(x, targets, il, tl, reduction="sum")
    lpq = to_np(x.detach()).astype(np.float64)        # the rounded inputs, in float64
    ext, skip = K.ctc_labels(np, to_np(targets), tl, 0, 8)
    ref, state = K._log_forward(np, (lpq, ext, skip), (il, tl))
    assert out.dtype is dtype
    r, a = TOL[dtype]
    np.testing.assert_allclose(to_np(out), ref.sum(), rtol=r, atol=a)
    out.backward()
    gref = K._log_backward(np, np.ones(4), (lpq, ext, skip), state, (il, tl), (True,))[0]
    np.testing.assert_allclose(to_np(x.grad), gref, rtol=r, atol=a)


MARGIN = {
    "multi_margin p=1": lambda x, r: F.multi_margin_loss(
        x, E.tensor([0, 3, 2, 4, 1]), reduction=r),
    "multi_margin p=2 weight": lambda x, r: F.multi_margin_loss(
        x, E.tensor([0, 3, 2, 4, 1]), p=2, margin=0.5,
        weight=E.tensor(np.linspace(0.5, 2, 6), dtype=x.dtype), reduction=r),
    "multilabel_margin": lambda x, r: F.multilabel_margin_loss(
        x, E.tensor([[1, 3, -1, 0, 0, 0], [5, 5, 2, -1, 1, 1], [-1, 0, 0, 0, 0, 0],
                     [0, 1, 2, 3, 4, 5], [4, -1, 2, 2, 2, 2]]), reduction=r),
}


@pytest.mark.parametrize("name", list(MARGIN))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_margin_kernels_against_float64(name, dtype, reduction):
    rng = np.random.default_rng(4)
    base = rng.normal(size=(5, 6))
    base[1, 2] = base[1, 5] - 1.0 + 0.0     # a hinge at exactly 0
    base[2, 0] = np.nan
    x = E.tensor(base, dtype=dtype, requires_grad=True)
    out = MARGIN[name](x, reduction)
    # float64 reference: the op-by-op form, through create_graph's path
    x64 = E.tensor(to_np(x.detach()).astype(np.float64), requires_grad=True)
    with E.enable_grad():
        ref = MARGIN[name](x64, reduction)
        (g64,) = E.autograd.grad(ref.sum(), x64, create_graph=True)
    r, a = TOL[dtype]
    np.testing.assert_allclose(to_np(out), to_np(ref.detach()), rtol=r, atol=a)
    out.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), to_np(g64.detach()), rtol=r, atol=a)
