"""Adam against a numpy float64 reference of PyTorch's documented algorithm."""
import copy
import itertools

import numpy as np
import pytest
from core.optim.optim_cases import random_case, run_steps
from helpers import assert_close, to_np

import ember as E
from ember.optim import Adam

SHAPES = [(2, 3, 2), (4,)]


def adam_reference(params, grads, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                   amsgrad=False, maximize=False, decoupled=False):
    """Run len(grads) Adam steps in float64 (torch.optim.Adam's algorithm as written)."""
    beta1, beta2 = betas
    params = [p.copy() for p in params]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    v_max = [np.zeros_like(p) for p in params]
    for t, step_grads in enumerate(grads, start=1):
        for i, g in enumerate(step_grads):
            g = -g if maximize else g
            if weight_decay and decoupled:
                params[i] = params[i] * (1 - lr * weight_decay)
            elif weight_decay:
                g = g + weight_decay * params[i]
            m[i] = beta1 * m[i] + (1 - beta1) * g
            v[i] = beta2 * v[i] + (1 - beta2) * g * g
            v_max[i] = np.maximum(v_max[i], v[i])
            v_hat = (v_max[i] if amsgrad else v[i]) / (1 - beta2 ** t)
            m_hat = m[i] / (1 - beta1 ** t)
            params[i] = params[i] - lr * m_hat / (np.sqrt(v_hat) + eps)
    return params


def data(steps, seed=0):
    return random_case(SHAPES, steps, seed)


def run(init, grads, opt_cls=Adam, **kw):
    return run_steps(opt_cls, init, grads, **kw)


OPTIONS = [dict(weight_decay=wd, amsgrad=a, maximize=mx)
           for wd, a, mx in itertools.product([0.0, 0.1], [False, True], [False, True])]


@pytest.mark.parametrize("fused", [None, False], ids=["fused", "ops"])
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(
    f"{k}={v}" for k, v in o.items() if v) or "default")
def test_matches_reference(options, fused):
    init, grads = data(5)
    # a large eps and small betas make every term of the update matter
    kw = dict(lr=0.01, betas=(0.8, 0.9), eps=1e-2, fused=fused, **options)
    params, _ = run(init, grads, **kw)
    kw.pop("fused")
    for p, ref in zip(params, adam_reference(init, grads, **kw)):
        assert_close(p, ref)


def test_defaults_and_float32():
    init, grads = data(3)
    params = [E.tensor(a.astype(np.float32)).requires_grad_() for a in init]
    opt = Adam(params)
    assert opt.defaults["lr"] == 1e-3 and opt.defaults["betas"] == (0.9, 0.999)
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = E.tensor(g.astype(np.float32))
        opt.step()
    ref = adam_reference([a.astype(np.float32).astype(np.float64) for a in init],
                         [[g.astype(np.float32).astype(np.float64) for g in s] for s in grads],
                         lr=1e-3)
    for p, r in zip(params, ref):
        assert p.dtype is E.float32
        assert_close(p, r, rtol=1e-5, atol=1e-6)


def test_state_holds_step_and_moments():
    init, grads = data(3)
    params, opt = run(init, grads, lr=0.1, amsgrad=True)
    state = opt.state[params[0]]
    assert state["step"] == 3
    assert set(state) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
    g = [s[0] for s in grads]
    m = 0.0
    for gk in g:
        m = 0.9 * m + 0.1 * gk
    assert_close(state["exp_avg"], m)
    assert not state["exp_avg"].requires_grad


def test_param_groups_with_different_lrs():
    init, grads = data(3)
    a, b = (E.tensor(x).requires_grad_() for x in init)
    opt = Adam([{"params": [a], "lr": 0.1}, {"params": [b]}], lr=0.01)
    for ga, gb in grads:
        a.grad, b.grad = E.tensor(ga), E.tensor(gb)
        opt.step()
    assert_close(a, adam_reference([init[0]], [[g[0]] for g in grads], lr=0.1)[0])
    assert_close(b, adam_reference([init[1]], [[g[1]] for g in grads], lr=0.01)[0])


def test_params_without_grad_keep_their_own_step():
    init, grads = data(3)
    a, b = (E.tensor(x).requires_grad_() for x in init)
    opt = Adam([a, b], lr=0.1)
    for k, (ga, gb) in enumerate(grads):
        a.grad = E.tensor(ga)
        b.grad = E.tensor(gb) if k > 0 else None
        opt.step()
    assert opt.state[a]["step"] == 3 and opt.state[b]["step"] == 2
    assert_close(b, adam_reference([init[1]], [[g[1]] for g in grads[1:]], lr=0.1)[0])


def test_state_dict_round_trip_continues_identically():
    init, grads = data(6)
    kw = dict(lr=0.05, betas=(0.8, 0.95), amsgrad=True, weight_decay=0.01)
    straight, _ = run(init, grads, **kw)

    first, opt = run(init, grads[:3], **kw)
    saved = copy.deepcopy(opt.state_dict())
    resumed = [p.detach().clone().requires_grad_() for p in first]
    opt2 = Adam(resumed, lr=1.0)  # the loaded groups bring back lr and the rest
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == 0.05 and opt2.param_groups[0]["params"][0] is resumed[0]
    for step_grads in grads[3:]:
        for p, g in zip(resumed, step_grads):
            p.grad = E.tensor(g)
        opt2.step()
    for p, q in zip(resumed, straight):
        np.testing.assert_array_equal(to_np(p), to_np(q))


def test_bias_correction_uses_each_step():
    # one step of Adam moves every coordinate by lr (sign of the gradient) when eps -> 0
    p = E.tensor([1.0, -1.0, 2.0], dtype=E.float64).requires_grad_()
    p.grad = E.tensor([0.3, -5.0, 1e-3], dtype=E.float64)
    Adam([p], lr=0.1, eps=0.0).step()
    assert_close(p, [0.9, -0.9, 1.9])


@pytest.mark.parametrize("kwargs, match", [
    (dict(lr=-1e-3), "Invalid learning rate"),
    (dict(eps=-1.0), "Invalid epsilon value"),
    (dict(betas=(1.0, 0.999)), "Invalid beta parameter at index 0"),
    (dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1"),
    (dict(weight_decay=-0.1), "Invalid weight_decay value"),
])
def test_invalid_hyperparameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Adam([E.zeros(2).requires_grad_()], **kwargs)


def test_betas_must_be_a_pair():
    with pytest.raises(TypeError, match="betas must be a pair"):
        Adam([E.zeros(2).requires_grad_()], betas=0.9)
