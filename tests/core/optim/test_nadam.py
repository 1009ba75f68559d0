"""NAdam against a numpy float64 reference of PyTorch's documented algorithm."""
import itertools

import numpy as np
import pytest
from core.optim.optim_cases import check_state_dict_round_trip, random_case, run_steps
from helpers import assert_close

import ember as E
from ember.optim import NAdam

SHAPES = [(2, 3, 2), (4,)]


def nadam_reference(params, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                    momentum_decay=4e-3, decoupled_weight_decay=False, maximize=False):
    """Run len(grads) NAdam steps in float64 (Dozat's algorithm with torch's mu schedule)."""
    beta1, beta2 = betas
    params = [p.copy() for p in params]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    mus = [beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay)) for t in range(1, len(grads) + 2)]
    for t, step_grads in enumerate(grads, start=1):
        mu_t, mu_next = mus[t - 1], mus[t]
        prod_t = np.prod(mus[:t])          # mu_1 * ... * mu_t
        prod_next = np.prod(mus[:t + 1])   # ... * mu_{t+1}
        for i, g in enumerate(step_grads):
            g = -g if maximize else g
            if weight_decay and decoupled_weight_decay:
                params[i] = params[i] * (1 - lr * weight_decay)
            elif weight_decay:
                g = g + weight_decay * params[i]
            m[i] = beta1 * m[i] + (1 - beta1) * g
            v[i] = beta2 * v[i] + (1 - beta2) * g * g
            m_bar = mu_next * m[i] / (1 - prod_next) + (1 - mu_t) * g / (1 - prod_t)
            v_hat = v[i] / (1 - beta2 ** t)
            params[i] = params[i] - lr * m_bar / (np.sqrt(v_hat) + eps)
    return params


OPTIONS = [dict(weight_decay=wd, decoupled_weight_decay=d, maximize=mx, momentum_decay=md)
           for wd, d, mx, md in itertools.product([0.0, 0.1], [False, True], [False, True],
                                                  [4e-3, 0.5])
           if wd or not d]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_matches_reference(options):
    init, grads = random_case(SHAPES, 6)
    kw = dict(lr=0.01, betas=(0.8, 0.9), eps=1e-2, **options)
    params, _ = run_steps(NAdam, init, grads, **kw)
    for p, ref in zip(params, nadam_reference(init, grads, **kw)):
        assert_close(p, ref)


def test_defaults_and_state():
    init, grads = random_case(SHAPES, 3)
    params, opt = run_steps(NAdam, init, grads)
    assert opt.defaults == {"lr": 2e-3, "betas": (0.9, 0.999), "eps": 1e-8,
                            "weight_decay": 0, "momentum_decay": 4e-3,
                            "decoupled_weight_decay": False, "maximize": False,
                            "foreach": None, "capturable": False, "differentiable": False}
    for p, ref in zip(params, nadam_reference(init, grads)):
        assert_close(p, ref)
    state = opt.state[params[0]]
    assert set(state) == {"step", "mu_product", "exp_avg", "exp_avg_sq"}
    mus = [0.9 * (1 - 0.5 * 0.96 ** (t * 4e-3)) for t in (1, 2, 3)]
    assert state["mu_product"] == pytest.approx(mus[0] * mus[1] * mus[2], rel=1e-15)


def test_state_dict_round_trip():
    init, grads = random_case(SHAPES, 6, seed=1)
    check_state_dict_round_trip(NAdam, init, grads, 3, lr=0.05, betas=(0.8, 0.95),
                                weight_decay=0.01, decoupled_weight_decay=True)


@pytest.mark.parametrize("kwargs, match", [
    (dict(lr=-1e-3), "Invalid learning rate"),
    (dict(eps=-1.0), "Invalid epsilon value"),
    (dict(betas=(1.0, 0.999)), "Invalid beta parameter at index 0"),
    (dict(betas=(0.9, 1.0)), "Invalid beta parameter at index 1"),
    (dict(weight_decay=-0.1), "Invalid weight_decay value"),
    (dict(momentum_decay=-0.1), "Invalid momentum_decay value"),
])
def test_invalid_hyperparameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        NAdam([E.zeros(2).requires_grad_()], **kwargs)
