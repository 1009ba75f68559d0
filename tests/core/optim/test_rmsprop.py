"""RMSprop against a numpy float64 reference of PyTorch's documented algorithm."""
import itertools

import numpy as np
import pytest
from helpers import assert_close

import ember as E
from ember.optim import RMSprop


def rmsprop_reference(param, grads, lr, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0,
                      centered=False, maximize=False):
    """float64 RMSprop (torch.optim.RMSprop's algorithm as written) for one parameter."""
    p, v, a, b = param.copy(), 0.0, 0.0, 0.0
    for g in grads:
        g = -g if maximize else g
        if weight_decay:
            g = g + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g
        if centered:
            a = alpha * a + (1 - alpha) * g
            d = np.sqrt(v - a * a) + eps
        else:
            d = np.sqrt(v) + eps
        if momentum > 0:
            b = momentum * b + g / d
            p = p - lr * b
        else:
            p = p - lr * g / d
    return p


def data(steps=5, seed=2):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((2, 5)), [rng.standard_normal((2, 5)) for _ in range(steps)]


def run(init, grads, **kw):
    p = E.tensor(init).requires_grad_()
    opt = RMSprop([p], **kw)
    for g in grads:
        p.grad = E.tensor(g)
        opt.step()
    return p, opt


OPTIONS = [dict(weight_decay=wd, momentum=m, centered=c, maximize=mx)
           for wd, m, c, mx in itertools.product([0.0, 0.1], [0.0, 0.5], [False, True],
                                                 [False, True])]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(
    f"{k}={v}" for k, v in o.items() if v) or "default")
def test_matches_reference(options):
    init, grads = data()
    kw = dict(lr=0.01, alpha=0.9, eps=1e-3, **options)
    p, _ = run(init, grads, **kw)
    assert_close(p, rmsprop_reference(init, grads, **kw))


def test_defaults():
    init, grads = data()
    p, opt = run(init, grads)
    assert opt.defaults["lr"] == 1e-2 and opt.defaults["alpha"] == 0.99
    assert_close(p, rmsprop_reference(init, grads, 1e-2))


def test_state_keys_follow_the_options():
    init, grads = data(2)
    _, opt = run(init, grads)
    assert set(next(iter(opt.state.values()))) == {"step", "square_avg"}
    _, opt = run(init, grads, momentum=0.9, centered=True)
    state = next(iter(opt.state.values()))
    assert set(state) == {"step", "square_avg", "momentum_buffer", "grad_avg"}
    assert state["step"] == 2


def test_momentum_turned_on_later_starts_a_buffer():
    init, grads = data(4)
    p, opt = run(init, grads[:2], momentum=0.0)
    opt.param_groups[0]["momentum"] = 0.5
    for g in grads[2:]:
        p.grad = E.tensor(g)
        opt.step()
    assert "momentum_buffer" in opt.state[p]


@pytest.mark.parametrize("kwargs, match", [
    (dict(lr=-0.1), "Invalid learning rate"),
    (dict(eps=-1e-8), "Invalid epsilon value"),
    (dict(momentum=-0.1), "Invalid momentum value"),
    (dict(weight_decay=-0.1), "Invalid weight_decay value"),
    (dict(alpha=-0.5), "Invalid alpha value"),
])
def test_invalid_hyperparameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RMSprop([E.zeros(2).requires_grad_()], **kwargs)
