"""Rprop against a numpy float64 reference of PyTorch's documented algorithm."""
import numpy as np
import pytest
from core.optim.optim_cases import check_state_dict_round_trip, random_case, run_steps
from helpers import assert_close

import ember as E
from ember.optim import Rprop

SHAPES = [(2, 3), (5,)]


def rprop_reference(params, grads, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50),
                    maximize=False):
    """Run len(grads) Rprop steps in float64 (Riedmiller & Braun 1993, as torch)."""
    etaminus, etaplus = etas
    params = [p.copy() for p in params]
    prev = [np.zeros_like(p) for p in params]
    size = [np.full_like(p, lr) for p in params]
    for step_grads in grads:
        for i, g in enumerate(step_grads):
            g = -g if maximize else g
            agree = g * prev[i]
            factor = np.where(agree > 0, etaplus, np.where(agree < 0, etaminus, 1.0))
            size[i] = np.clip(size[i] * factor, *step_sizes)
            g = np.where(agree < 0, 0.0, g)
            params[i] = params[i] - np.sign(g) * size[i]
            prev[i] = g
    return params


def correlated_case(seed=0, steps=10):
    """Gradients that mostly keep their sign, with flips: every branch of the rule runs."""
    init, noise = random_case(SHAPES, steps, seed=seed)
    drift = [np.ones(s) for s in SHAPES]
    grads = [[d + 1.5 * n for d, n in zip(drift, step)] for step in noise]
    if steps > 3:
        grads[3] = [np.zeros(s) for s in SHAPES]  # a zero gradient: factor 1, no move
    return init, grads


@pytest.mark.parametrize("options", [
    dict(), dict(maximize=True), dict(etas=(0.3, 1.5), step_sizes=(0.02, 0.12)),
], ids=str)
def test_matches_reference(options):
    init, grads = correlated_case()
    params, _ = run_steps(Rprop, init, grads, lr=0.05, **options)
    for p, ref in zip(params, rprop_reference(init, grads, lr=0.05, **options)):
        assert_close(p, ref)


def test_defaults_and_state():
    init, grads = correlated_case(steps=3)
    params, opt = run_steps(Rprop, init, grads)
    assert opt.defaults == {"lr": 1e-2, "etas": (0.5, 1.2), "step_sizes": (1e-6, 50),
                            "maximize": False,
                            "foreach": None, "capturable": False, "differentiable": False}
    for p, ref in zip(params, rprop_reference(init, grads)):
        assert_close(p, ref)
    assert set(opt.state[params[0]]) == {"step", "prev", "step_size"}


def test_float64_factors_are_not_rounded_to_float32():
    p = E.tensor([1.0], dtype=E.float64).requires_grad_()
    opt = Rprop([p], lr=1.0)
    for _ in range(3):
        p.grad = E.tensor([1.0], dtype=E.float64)
        opt.step()
    assert opt.state[p]["step_size"].item() == 1.2 * 1.2  # exactly, in float64


def test_state_dict_round_trip():
    init, grads = correlated_case(seed=2)
    check_state_dict_round_trip(Rprop, init, grads, 5, lr=0.03, etas=(0.4, 1.3))


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(lr=-1e-3), ValueError, "Invalid learning rate"),
    (dict(etas=(1.5, 1.2)), ValueError, "Invalid eta values: 1.5, 1.2"),
    (dict(etas=(0.5, 0.9)), ValueError, "0 < etaminus < 1 < etaplus"),
    (dict(etas=0.5), TypeError, "etas must be a pair"),
    (dict(step_sizes=(1e-6,)), TypeError, "step_sizes must be a pair"),
])
def test_invalid_hyperparameters(kwargs, error, match):
    with pytest.raises(error, match=match):
        Rprop([E.zeros(2).requires_grad_()], **kwargs)
