"""Adafactor against a numpy float64 reference of PyTorch's documented algorithm."""
import numpy as np
import pytest
from core.optim.optim_cases import check_state_dict_round_trip, random_case, run_steps
from helpers import assert_close

import ember as E
from ember.optim import Adafactor

SHAPES = [(3, 4), (2, 3, 5), (6,), ()]


def adafactor_reference(params, grads, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                        weight_decay=0.0, maximize=False):
    """Run len(grads) Adafactor steps in float64 (Shazeer & Stern 2018, as torch)."""
    eps1 = np.finfo(np.float64).eps if eps[0] is None else eps[0]
    params = [p.copy() for p in params]
    rows = [np.zeros(p.shape[:-1] + (1,)) if p.ndim > 1 else None for p in params]
    cols = [np.zeros(p.shape[:-2] + (1, p.shape[-1])) if p.ndim > 1 else None for p in params]
    var = [np.zeros_like(p) for p in params]
    for t, step_grads in enumerate(grads, start=1):
        for i, g in enumerate(step_grads):
            p = params[i]
            g = -g if maximize else g
            b = t ** beta2_decay
            alpha = max(eps[1], np.sqrt(np.mean(p ** 2))) * min(lr, 1 / np.sqrt(t))
            p = p * (1 - lr * weight_decay)
            if p.ndim > 1:
                rows[i] += b * ((g ** 2).mean(-1, keepdims=True) - rows[i])
                cols[i] += b * ((g ** 2).mean(-2, keepdims=True) - cols[i])
                v = rows[i] @ cols[i] / np.maximum(rows[i].mean(-2, keepdims=True), eps1)
            else:
                var[i] += b * (g ** 2 - var[i])
                v = var[i]
            u = g / np.sqrt(np.maximum(v, eps1 ** 2))
            params[i] = p - alpha / max(1.0, np.sqrt(np.mean(u ** 2)) / d) * u
    return params


@pytest.mark.parametrize("options", [
    dict(), dict(maximize=True, weight_decay=0.1),
    dict(beta2_decay=-0.5, eps=(1e-3, 1e-2), d=1.5),
], ids=str)
def test_matches_reference(options):
    init, grads = random_case(SHAPES, 6)
    params, _ = run_steps(Adafactor, init, grads, lr=0.3, **options)
    for p, ref in zip(params, adafactor_reference(init, grads, lr=0.3, **options)):
        assert_close(p, ref)


def test_factored_state_shapes():
    init, grads = random_case(SHAPES, 2)
    params, opt = run_steps(Adafactor, init, grads)
    assert opt.defaults == {"lr": 1e-2, "beta2_decay": -0.8, "eps": (None, 1e-3), "d": 1.0,
                            "weight_decay": 0.0, "maximize": False,
                            "foreach": None}
    matrix, cube, vector, scalar = (opt.state[p] for p in params)
    assert matrix["row_var"].shape == (3, 1) and matrix["col_var"].shape == (1, 4)
    assert cube["row_var"].shape == (2, 3, 1) and cube["col_var"].shape == (2, 1, 5)
    assert set(vector) == {"step", "variance"} and vector["variance"].shape == (6,)
    assert scalar["variance"].shape == ()


def test_default_eps1_follows_the_dtype():
    # float32's eps floors the variance: a tiny gradient's update is capped
    p = E.zeros(3, dtype=E.float32).requires_grad_()
    opt = Adafactor([p], lr=1.0)
    p.grad = E.full((3,), 1e-9, dtype=E.float32)
    opt.step()
    eps1 = float(np.finfo(np.float32).eps)
    expected = -1e-3 * (1e-9 / eps1) / max(1.0, 1e-9 / eps1)
    assert_close(p, np.full(3, expected), rtol=1e-5)


def test_state_dict_round_trip():
    init, grads = random_case(SHAPES, 6, seed=3)
    check_state_dict_round_trip(Adafactor, init, grads, 3, lr=0.2, weight_decay=0.05)


@pytest.mark.parametrize("kwargs, match", [
    (dict(lr=-1e-3), "Invalid learning rate"),
    (dict(beta2_decay=0.1), "beta2_decay should be <= 0"),
    (dict(eps=(-1.0, 1e-3)), "Invalid epsilon1"),
    (dict(eps=(None, -1.0)), "Invalid epsilon2"),
    (dict(d=0.5), "Invalid clipping threshold d"),
    (dict(weight_decay=-0.1), "Invalid weight_decay value"),
])
def test_invalid_hyperparameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Adafactor([E.zeros(2).requires_grad_()], **kwargs)


def test_eps_must_be_a_pair():
    with pytest.raises(TypeError, match="eps must be a pair"):
        Adafactor([E.zeros(2).requires_grad_()], eps=1e-3)
