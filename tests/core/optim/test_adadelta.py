"""Adadelta against a numpy float64 reference of PyTorch's documented algorithm."""
import itertools

import numpy as np
import pytest
from core.optim.optim_cases import check_state_dict_round_trip, random_case, run_steps
from helpers import assert_close

import ember as E
from ember.optim import Adadelta

SHAPES = [(3, 2), (5,)]


def adadelta_reference(params, grads, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0,
                       maximize=False):
    """Run len(grads) Adadelta steps in float64 (Zeiler's algorithm, as torch writes it)."""
    params = [p.copy() for p in params]
    v = [np.zeros_like(p) for p in params]
    u = [np.zeros_like(p) for p in params]
    for step_grads in grads:
        for i, g in enumerate(step_grads):
            g = -g if maximize else g
            if weight_decay:
                g = g + weight_decay * params[i]
            v[i] = rho * v[i] + (1 - rho) * g ** 2
            d = np.sqrt(u[i] + eps) / np.sqrt(v[i] + eps) * g
            u[i] = rho * u[i] + (1 - rho) * d ** 2
            params[i] = params[i] - lr * d
    return params


OPTIONS = [dict(weight_decay=wd, maximize=mx, rho=rho)
           for wd, mx, rho in itertools.product([0.0, 0.1], [False, True], [0.9, 0.5])]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_matches_reference(options):
    init, grads = random_case(SHAPES, 5)
    kw = dict(lr=0.5, eps=1e-2, **options)
    params, _ = run_steps(Adadelta, init, grads, **kw)
    for p, ref in zip(params, adadelta_reference(init, grads, **kw)):
        assert_close(p, ref)


def test_defaults():
    init, grads = random_case(SHAPES, 3)
    params, opt = run_steps(Adadelta, init, grads)
    assert opt.defaults == {"lr": 1.0, "rho": 0.9, "eps": 1e-6, "weight_decay": 0,
                            "maximize": False,
                            "foreach": None, "capturable": False, "differentiable": False}
    for p, ref in zip(params, adadelta_reference(init, grads)):
        assert_close(p, ref)
    assert set(opt.state[params[0]]) == {"step", "square_avg", "acc_delta"}
    assert opt.state[params[0]]["step"] == 3


def test_state_dict_round_trip():
    init, grads = random_case(SHAPES, 6, seed=1)
    check_state_dict_round_trip(Adadelta, init, grads, 2, lr=0.3, rho=0.8, weight_decay=0.1)


@pytest.mark.parametrize("kwargs, match", [
    (dict(lr=-0.1), "Invalid learning rate"),
    (dict(rho=-0.1), "Invalid rho value"),
    (dict(rho=1.5), "Invalid rho value"),
    (dict(eps=-1e-6), "Invalid epsilon value"),
    (dict(weight_decay=-0.1), "Invalid weight_decay value"),
])
def test_invalid_hyperparameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Adadelta([E.zeros(2).requires_grad_()], **kwargs)


def test_rho_of_one_is_allowed():
    Adadelta([E.zeros(2).requires_grad_()], rho=1.0)  # PyTorch's range is [0, 1]
