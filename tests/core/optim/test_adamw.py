"""AdamW: Adam with decoupled weight decay, against a numpy float64 reference."""
import itertools

import numpy as np
import pytest
from helpers import assert_close

import ember as E
from ember.optim import Adam, AdamW


def adamw_reference(param, grads, lr, betas, eps, weight_decay, amsgrad=False, maximize=False):
    """float64 AdamW (torch.optim.AdamW's algorithm as written) for one parameter."""
    beta1, beta2 = betas
    p, m, v, v_max = param.copy(), 0.0, 0.0, 0.0
    for t, g in enumerate(grads, start=1):
        g = -g if maximize else g
        p = p * (1 - lr * weight_decay)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        v_max = np.maximum(v_max, v)
        v_hat = (v_max if amsgrad else v) / (1 - beta2 ** t)
        p = p - lr * (m / (1 - beta1 ** t)) / (np.sqrt(v_hat) + eps)
    return p


def run(opt_cls, init, grads, **kw):
    p = E.tensor(init).requires_grad_()
    opt = opt_cls([p], **kw)
    for g in grads:
        p.grad = E.tensor(g)
        opt.step()
    return p, opt


def data(steps=5, seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((3, 4)), [rng.standard_normal((3, 4)) for _ in range(steps)]


@pytest.mark.parametrize("amsgrad, maximize", itertools.product([False, True], repeat=2))
def test_matches_reference(amsgrad, maximize):
    init, grads = data()
    kw = dict(lr=0.05, betas=(0.8, 0.9), eps=1e-2, weight_decay=0.5, amsgrad=amsgrad,
              maximize=maximize)
    p, _ = run(AdamW, init, grads, **kw)
    assert_close(p, adamw_reference(init, grads, **kw))


def test_default_weight_decay_is_one_hundredth():
    init, grads = data()
    p, opt = run(AdamW, init, grads)
    assert opt.defaults["weight_decay"] == 1e-2 and opt.defaults["decoupled_weight_decay"]
    assert_close(p, adamw_reference(init, grads, 1e-3, (0.9, 0.999), 1e-8, 1e-2))


def test_decay_is_not_an_l2_penalty():
    init, grads = data()
    decoupled, _ = run(AdamW, init, grads, lr=0.05, weight_decay=0.5)
    l2, _ = run(Adam, init, grads, lr=0.05, weight_decay=0.5)
    same, _ = run(Adam, init, grads, lr=0.05, weight_decay=0.5, decoupled_weight_decay=True)
    assert not np.allclose(decoupled.detach().numpy(), l2.detach().numpy())
    np.testing.assert_array_equal(decoupled.detach().numpy(), same.detach().numpy())


def test_zero_gradient_still_decays():
    p, _ = run(AdamW, np.ones(3), [np.zeros(3)], lr=0.1, weight_decay=0.5)
    assert_close(p, np.full(3, 0.95))


@pytest.mark.parametrize("kwargs, match", [
    (dict(weight_decay=-0.01), "Invalid weight_decay value"),
    (dict(betas=(0.9, 1.5)), "Invalid beta parameter at index 1"),
    (dict(lr=-1.0), "Invalid learning rate"),
])
def test_invalid_hyperparameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        AdamW([E.zeros(2).requires_grad_()], **kwargs)
