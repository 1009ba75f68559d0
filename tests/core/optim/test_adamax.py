"""Adamax against a numpy float64 reference of PyTorch's documented algorithm."""
import itertools

import numpy as np
import pytest
from core.optim.optim_cases import check_state_dict_round_trip, random_case, run_steps
from helpers import assert_close

import ember as E
from ember.optim import Adamax

SHAPES = [(2, 3, 2), (4,)]


def adamax_reference(params, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                     maximize=False):
    """Run len(grads) Adamax steps in float64 (Kingma & Ba's section 7.1, as torch)."""
    beta1, beta2 = betas
    params = [p.copy() for p in params]
    m = [np.zeros_like(p) for p in params]
    u = [np.zeros_like(p) for p in params]
    for t, step_grads in enumerate(grads, start=1):
        for i, g in enumerate(step_grads):
            g = -g if maximize else g
            if weight_decay:
                g = g + weight_decay * params[i]
            m[i] = beta1 * m[i] + (1 - beta1) * g
            u[i] = np.maximum(beta2 * u[i], np.abs(g) + eps)
            params[i] = params[i] - lr / (1 - beta1 ** t) * m[i] / u[i]
    return params


OPTIONS = [dict(weight_decay=wd, maximize=mx)
           for wd, mx in itertools.product([0.0, 0.1], [False, True])]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_matches_reference(options):
    init, grads = random_case(SHAPES, 6)
    kw = dict(lr=0.01, betas=(0.8, 0.9), eps=1e-2, **options)
    params, _ = run_steps(Adamax, init, grads, **kw)
    for p, ref in zip(params, adamax_reference(init, grads, **kw)):
        assert_close(p, ref)


def test_defaults():
    init, grads = random_case(SHAPES, 3)
    params, opt = run_steps(Adamax, init, grads)
    assert opt.defaults == {"lr": 2e-3, "betas": (0.9, 0.999), "eps": 1e-8,
                            "weight_decay": 0, "maximize": False,
                            "foreach": None, "capturable": False, "differentiable": False}
    for p, ref in zip(params, adamax_reference(init, grads)):
        assert_close(p, ref)
    assert set(opt.state[params[0]]) == {"step", "exp_avg", "exp_inf"}


def test_state_dict_round_trip():
    init, grads = random_case(SHAPES, 6, seed=1)
    check_state_dict_round_trip(Adamax, init, grads, 3, lr=0.05, betas=(0.8, 0.95),
                                weight_decay=0.01)


@pytest.mark.parametrize("kwargs, match", [
    (dict(lr=-1e-3), "Invalid learning rate"),
    (dict(eps=-1.0), "Invalid epsilon value"),
    (dict(betas=(1.0, 0.999)), "Invalid beta parameter at index 0"),
    (dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1"),
    (dict(weight_decay=-0.1), "Invalid weight_decay value"),
])
def test_invalid_hyperparameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Adamax([E.zeros(2).requires_grad_()], **kwargs)


def test_betas_must_be_a_pair():
    with pytest.raises(TypeError, match="betas must be a pair"):
        Adamax([E.zeros(2).requires_grad_()], betas=(0.9,))
