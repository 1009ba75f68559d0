"""Gradient clipping (``ember/nn/utils/clip_grad.py``) against numpy in float64:
total norms of every order over several gradients, the scaling rule
``min(1, max_norm / (total + 1e-6))``, clamping by value, skipped ``None`` grads, errors.
Reference: torch.nn.utils.clip_grad_norm_ / clip_grad_value_."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember as E
from ember.nn.utils import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, \
    get_total_norm
from helpers import assert_close


def params_with_grads(seed=0, scale=1.0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    shapes = [(3, 4), (4,), (2, 2, 2)]
    ps, gs = [], []
    for s in shapes:
        p = E.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True)
        g = (scale * rng.standard_normal(s)).astype(dtype)
        p.grad = E.tensor(g)
        ps.append(p)
        gs.append(g)
    return ps, gs


def np_total_norm(gs, p):
    flat = np.concatenate([g.ravel() for g in gs]).astype(np.float64)
    if p == math.inf:
        return np.abs(flat).max()
    if p == 0:  # PyTorch takes the 0-"norm" of the per-tensor norms: tensors with a nonzero
        return float(sum(np.count_nonzero(g) > 0 for g in gs))
    return (np.abs(flat) ** p).sum() ** (1.0 / p)


@pytest.mark.parametrize("p", [2.0, 1, 3.5, math.inf, "inf", 0])
def test_total_norm_is_the_norm_of_all_grads_concatenated(p):
    ps, gs = params_with_grads()
    want = np_total_norm(gs, float(p))
    assert_close(get_total_norm([q.grad for q in ps], p), np.array(want))


@pytest.mark.parametrize("max_norm", [0.5, 1e6])
@pytest.mark.parametrize("p", [2.0, 1.0, math.inf])
def test_clip_grad_norm_scales_by_the_clamped_coefficient(max_norm, p):
    ps, gs = params_with_grads(scale=3.0)
    total = np_total_norm(gs, p)
    got = clip_grad_norm_(ps, max_norm, norm_type=p)
    assert_close(got, np.array(total))            # the norm before clipping
    coef = min(1.0, max_norm / (total + 1e-6))
    for q, g in zip(ps, gs):
        assert_close(q.grad, g * coef)
    if max_norm < total:
        assert np_total_norm([q.grad.numpy() for q in ps], p) == pytest.approx(max_norm,
                                                                                rel=1e-5)


def test_clip_grad_norm_float32_and_one_tensor_and_none_grads():
    ps, gs = params_with_grads(dtype=np.float32)
    skipped = E.zeros(3, requires_grad=True)      # .grad is None: left alone
    got = clip_grad_norm_(ps + [skipped], 1.0)
    assert got.dtype == E.float32 and skipped.grad is None
    total = np_total_norm(gs, 2.0)
    for q, g in zip(ps, gs):
        assert_close(q.grad, g / (total + 1e-6), rtol=1e-5)
    single, (g,) = params_with_grads()[0][0], [params_with_grads()[1][0]]
    clip_grad_norm_(single, 0.1)
    assert_close(single.grad, g * 0.1 / (np.linalg.norm(g) + 1e-6))


def test_clip_grad_norm_without_grads_returns_zero():
    got = clip_grad_norm_([E.zeros(2, requires_grad=True)], 1.0)
    assert got.item() == 0.0


def test_nonfinite_total_norm_raises_only_when_asked_and_changes_nothing():
    ps, gs = params_with_grads()
    ps[1].grad = E.tensor(np.array([np.inf, 1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match="non-finite.*error_if_nonfinite=False"):
        clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
    assert_close(ps[0].grad, gs[0])               # nothing was scaled
    clip_grad_norm_(ps, 1.0)                      # PyTorch scales by the clamped 1 / inf
    assert_close(ps[0].grad, np.zeros_like(gs[0]))


def test_clipping_is_not_recorded():
    ps, _ = params_with_grads()
    for q in ps:
        q.grad.requires_grad_(True)
    total = clip_grad_norm_(ps, 0.1)
    assert total.grad_fn is None


def test_clip_grads_with_norm_uses_the_given_norm():
    ps, gs = params_with_grads()
    clip_grads_with_norm_(ps, 1.0, E.tensor(4.0, dtype=E.float64))
    for q, g in zip(ps, gs):
        assert_close(q.grad, g * (1.0 / (4.0 + 1e-6)))


@pytest.mark.parametrize("clip", [0.3, 2])
def test_clip_grad_value_clamps_in_place(clip):
    ps, gs = params_with_grads(scale=2.0)
    before = [q.grad for q in ps]
    clip_grad_value_(ps, clip)
    for q, g, b in zip(ps, gs, before):
        assert q.grad is b                        # in place
        assert_close(q.grad, np.clip(g, -clip, clip))


def test_bad_arguments():
    ps, _ = params_with_grads()
    with pytest.raises(TypeError, match="item 1 is str"):
        clip_grad_norm_([ps[0], "w"], 1.0)
    with pytest.raises(TypeError, match="norm_type must be a number"):
        clip_grad_norm_(ps, 1.0, norm_type="two")
    with pytest.raises(TypeError, match="clip_value must be a number"):
        clip_grad_value_(ps, None)


def test_deprecated_clip_grad_norm_warns_and_clips():
    p = E.zeros(2, requires_grad=True)
    p.grad = E.tensor([3.0, 4.0])
    with pytest.warns(FutureWarning, match="deprecated in favor of .*clip_grad_norm_`"):
        total = E.nn.utils.clip_grad_norm([p], 1.0)
    assert total.item() == pytest.approx(5.0)
    assert p.grad.numpy().tolist() == pytest.approx([0.6, 0.8], rel=1e-5)
