"""Adagrad against a numpy float64 reference of PyTorch's documented algorithm."""
import itertools

import numpy as np
import pytest
from core.optim.optim_cases import check_state_dict_round_trip, random_case, run_steps
from helpers import assert_close

import ember as E
from ember.optim import Adagrad

SHAPES = [(2, 3, 2), (4,)]


def adagrad_reference(params, grads, lr, lr_decay=0.0, weight_decay=0.0,
                      initial_accumulator_value=0.0, eps=1e-10, maximize=False):
    """Run len(grads) Adagrad steps in float64 (torch.optim.Adagrad's algorithm as written)."""
    params = [p.copy() for p in params]
    sums = [np.full_like(p, initial_accumulator_value) for p in params]
    for t, step_grads in enumerate(grads, start=1):
        for i, g in enumerate(step_grads):
            g = -g if maximize else g
            if weight_decay:
                g = g + weight_decay * params[i]
            clr = lr / (1 + (t - 1) * lr_decay)
            sums[i] = sums[i] + g ** 2
            params[i] = params[i] - clr * g / (np.sqrt(sums[i]) + eps)
    return params


OPTIONS = [dict(lr_decay=ld, weight_decay=wd, initial_accumulator_value=acc, maximize=mx)
           for ld, wd, acc, mx in itertools.product([0.0, 0.2], [0.0, 0.1], [0.0, 0.5],
                                                    [False, True])]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(
    f"{k}={v}" for k, v in o.items() if v) or "default")
def test_matches_reference(options):
    init, grads = random_case(SHAPES, 5)
    kw = dict(lr=0.1, eps=1e-3, **options)
    params, _ = run_steps(Adagrad, init, grads, **kw)
    for p, ref in zip(params, adagrad_reference(init, grads, **kw)):
        assert_close(p, ref)


def test_defaults_and_float32():
    init, grads = random_case(SHAPES, 3)
    params = [E.tensor(a.astype(np.float32)).requires_grad_() for a in init]
    opt = Adagrad(params)
    assert opt.defaults == {"lr": 1e-2, "lr_decay": 0, "eps": 1e-10, "weight_decay": 0,
                            "initial_accumulator_value": 0, "maximize": False,
                            "foreach": None, "differentiable": False, "fused": None}
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = E.tensor(g.astype(np.float32))
        opt.step()
    ref = adagrad_reference([a.astype(np.float32).astype(np.float64) for a in init],
                            [[g.astype(np.float32).astype(np.float64) for g in s]
                             for s in grads], lr=1e-2)
    for p, r in zip(params, ref):
        assert p.dtype is E.float32
        assert_close(p, r, rtol=1e-5, atol=1e-6)


def test_state_starts_when_a_parameter_joins():
    a, b = E.zeros(2, 3).requires_grad_(), E.zeros(4).requires_grad_()
    opt = Adagrad([a], initial_accumulator_value=0.25)
    assert opt.state[a]["step"] == 0
    assert_close(opt.state[a]["sum"], np.full((2, 3), 0.25))
    assert opt.state_dict()["state"][0]["step"] == 0
    opt.add_param_group({"params": [b], "initial_accumulator_value": 2.0})
    assert_close(opt.state[b]["sum"], np.full(4, 2.0))


def test_state_dict_round_trip():
    init, grads = random_case(SHAPES, 6, seed=1)
    opt = check_state_dict_round_trip(Adagrad, init, grads, 3, lr=0.1, lr_decay=0.1,
                                      weight_decay=0.05, initial_accumulator_value=0.1)
    assert opt.state[opt.param_groups[0]["params"][0]]["step"] == 6


@pytest.mark.parametrize("kwargs, match", [
    (dict(lr=-0.1), "Invalid learning rate"),
    (dict(lr_decay=-0.1), "Invalid lr_decay value"),
    (dict(weight_decay=-0.1), "Invalid weight_decay value"),
    (dict(initial_accumulator_value=-1.0), "Invalid initial_accumulator_value value"),
    (dict(eps=-1e-10), "Invalid epsilon value"),
])
def test_invalid_hyperparameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Adagrad([E.zeros(2).requires_grad_()], **kwargs)


def test_hyperparameter_must_be_a_number():
    with pytest.raises(TypeError, match="lr_decay must be a real number"):
        Adagrad([E.zeros(2).requires_grad_()], lr_decay="0.1")
