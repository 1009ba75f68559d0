"""RAdam against a numpy float64 reference of PyTorch's documented algorithm."""
import itertools
import math

import numpy as np
import pytest
from core.optim.optim_cases import check_state_dict_round_trip, random_case, run_steps
from helpers import assert_close

import ember as E
from ember.optim import RAdam

SHAPES = [(2, 3, 2), (4,)]


def rho(t, beta2):
    """The length of the approximated SMA at step t (Liu et al., eq. 6)."""
    rho_inf = 2 / (1 - beta2) - 1
    return rho_inf - 2 * t * beta2 ** t / (1 - beta2 ** t)


def radam_reference(params, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                    decoupled_weight_decay=False, maximize=False):
    """Run len(grads) RAdam steps in float64 (Liu et al.'s Algorithm 2, as torch)."""
    beta1, beta2 = betas
    rho_inf = 2 / (1 - beta2) - 1
    params = [p.copy() for p in params]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    for t, step_grads in enumerate(grads, start=1):
        rho_t = rho(t, beta2)
        for i, g in enumerate(step_grads):
            g = -g if maximize else g
            if weight_decay and decoupled_weight_decay:
                params[i] = params[i] * (1 - lr * weight_decay)
            elif weight_decay:
                g = g + weight_decay * params[i]
            m[i] = beta1 * m[i] + (1 - beta1) * g
            v[i] = beta2 * v[i] + (1 - beta2) * g * g
            m_hat = m[i] / (1 - beta1 ** t)
            if rho_t > 5:
                l_t = math.sqrt(1 - beta2 ** t) / (np.sqrt(v[i]) + eps)
                r_t = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                                / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                params[i] = params[i] - lr * m_hat * r_t * l_t
            else:
                params[i] = params[i] - lr * m_hat
    return params


OPTIONS = [dict(weight_decay=wd, decoupled_weight_decay=d, maximize=mx)
           for wd, d, mx in itertools.product([0.0, 0.1], [False, True], [False, True])
           if wd or not d]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_matches_reference(options):
    # beta2 = 0.9 turns the rectified step on at step 6 of 8: both branches run
    assert rho(5, 0.9) <= 5 < rho(6, 0.9)
    init, grads = random_case(SHAPES, 8)
    kw = dict(lr=0.01, betas=(0.8, 0.9), eps=1e-2, **options)
    params, _ = run_steps(RAdam, init, grads, **kw)
    for p, ref in zip(params, radam_reference(init, grads, **kw)):
        assert_close(p, ref)


def test_defaults():
    init, grads = random_case(SHAPES, 3)
    params, opt = run_steps(RAdam, init, grads)
    assert opt.defaults == {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8,
                            "weight_decay": 0, "decoupled_weight_decay": False,
                            "maximize": False,
                            "foreach": None, "capturable": False, "differentiable": False}
    for p, ref in zip(params, radam_reference(init, grads)):
        assert_close(p, ref)
    assert set(opt.state[params[0]]) == {"step", "exp_avg", "exp_avg_sq"}


def test_state_dict_round_trip():
    init, grads = random_case(SHAPES, 9, seed=1)
    check_state_dict_round_trip(RAdam, init, grads, 4, lr=0.05, betas=(0.8, 0.9),
                                weight_decay=0.01, decoupled_weight_decay=True)


@pytest.mark.parametrize("kwargs, match", [
    (dict(lr=-1e-3), "Invalid learning rate"),
    (dict(eps=-1.0), "Invalid epsilon value"),
    (dict(betas=(-0.1, 0.999)), "Invalid beta parameter at index 0"),
    (dict(betas=(0.9, 1.0)), "Invalid beta parameter at index 1"),
    (dict(weight_decay=-0.1), "Invalid weight_decay value"),
])
def test_invalid_hyperparameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RAdam([E.zeros(2).requires_grad_()], **kwargs)
