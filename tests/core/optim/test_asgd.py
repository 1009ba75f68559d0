"""ASGD against a numpy float64 reference of PyTorch's documented algorithm."""
import itertools

import numpy as np
import pytest
from core.optim.optim_cases import check_state_dict_round_trip, random_case, run_steps
from helpers import assert_close

import ember as E
from ember.optim import ASGD

SHAPES = [(2, 3), (4,)]


def asgd_reference(params, grads, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0,
                   maximize=False):
    """Run len(grads) ASGD steps in float64; return (params, averages)."""
    params = [p.copy() for p in params]
    ax = [np.zeros_like(p) for p in params]
    eta, mu = lr, 1.0
    for t, step_grads in enumerate(grads, start=1):
        for i, g in enumerate(step_grads):
            g = -g if maximize else g
            if weight_decay:
                g = g + weight_decay * params[i]
            params[i] = params[i] * (1 - lambd * eta) - eta * g
            ax[i] = params[i].copy() if mu == 1 else ax[i] + mu * (params[i] - ax[i])
        eta = lr / (1 + lambd * lr * t) ** alpha
        mu = 1 / max(1, t - t0)
    return params, ax


OPTIONS = [dict(weight_decay=wd, maximize=mx)
           for wd, mx in itertools.product([0.0, 0.1], [False, True])]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_matches_reference(options):
    init, grads = random_case(SHAPES, 8)
    kw = dict(lr=0.1, lambd=0.05, alpha=0.6, t0=3, **options)
    params, opt = run_steps(ASGD, init, grads, **kw)
    ref_params, ref_ax = asgd_reference(init, grads, **kw)
    for p, ref, ax in zip(params, ref_params, ref_ax):
        assert_close(p, ref)
        assert_close(opt.state[p]["ax"], ax)  # averaging has started: t0 = 3 < 8 steps


def test_defaults():
    init, grads = random_case(SHAPES, 3)
    params, opt = run_steps(ASGD, init, grads)
    assert opt.defaults == {"lr": 1e-2, "lambd": 1e-4, "alpha": 0.75, "t0": 1e6,
                            "weight_decay": 0, "maximize": False,
                            "foreach": None, "capturable": False, "differentiable": False}
    for p, ref in zip(params, asgd_reference(init, grads)[0]):
        assert_close(p, ref)
    assert set(opt.state[params[0]]) == {"step", "eta", "mu", "ax"}
    # before t0, the average is the iterate itself
    np.testing.assert_array_equal(opt.state[params[0]]["ax"].numpy(), params[0].detach().numpy())


def test_state_dict_round_trip():
    init, grads = random_case(SHAPES, 8, seed=1)
    check_state_dict_round_trip(ASGD, init, grads, 4, lr=0.05, t0=2, weight_decay=0.01)


@pytest.mark.parametrize("kwargs, match", [
    (dict(lr=-1e-3), "Invalid learning rate"),
    (dict(weight_decay=-0.1), "Invalid weight_decay value"),
])
def test_invalid_hyperparameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ASGD([E.zeros(2).requires_grad_()], **kwargs)


def test_non_number_is_a_type_error():
    with pytest.raises(TypeError, match="t0 must be a real number"):
        ASGD([E.zeros(2).requires_grad_()], t0="soon")
