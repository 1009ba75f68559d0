"""SGD against a numpy float64 reference of PyTorch's documented algorithm."""
import itertools

import numpy as np
import pytest
from core.optim.optim_cases import random_case, run_steps
from helpers import assert_close, to_np

import ember as E
from ember.optim import SGD

SHAPES = [(3, 4), (5,)]


def sgd_reference(params, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0,
                  nesterov=False, maximize=False):
    """Run len(grads) SGD steps in float64; grads[k][i] is parameter i's gradient."""
    params = [p.copy() for p in params]
    bufs = [None] * len(params)
    for step_grads in grads:
        for i, g in enumerate(step_grads):
            g = -g if maximize else g
            if weight_decay:
                g = g + weight_decay * params[i]
            if momentum:
                bufs[i] = g.copy() if bufs[i] is None else momentum * bufs[i] + (1 - dampening) * g
                g = g + momentum * bufs[i] if nesterov else bufs[i]
            params[i] = params[i] - lr * g
    return params


def data(steps, seed=0):
    return random_case(SHAPES, steps, seed)


def run(opt_cls, init, grads, **kw):
    return run_steps(opt_cls, init, grads, **kw)


OPTIONS = [dict(momentum=m, dampening=d, weight_decay=wd, nesterov=n, maximize=mx)
           for m, d, wd, n, mx in itertools.product([0.0, 0.9], [0.0, 0.25], [0.0, 0.1],
                                                    [False, True], [False, True])
           if not (n and (m == 0 or d != 0))]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(
    f"{k}={v}" for k, v in o.items() if v))
def test_matches_reference(options):
    init, grads = data(4)
    params, _ = run(SGD, init, grads, lr=0.1, **options)
    for p, ref in zip(params, sgd_reference(init, grads, 0.1, **options)):
        assert_close(p, ref)


def test_float32_params_stay_float32():
    init, grads = data(3)
    params = [E.tensor(a.astype(np.float32)).requires_grad_() for a in init]
    opt = SGD(params, lr=0.05, momentum=0.9)
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = E.tensor(g.astype(np.float32))
        opt.step()
    ref = sgd_reference([a.astype(np.float32).astype(np.float64) for a in init],
                        [[g.astype(np.float32).astype(np.float64) for g in s] for s in grads],
                        0.05, momentum=0.9)
    for p, r in zip(params, ref):
        assert_close(p, r, dtype=E.float32)


def test_param_groups_use_their_own_options():
    init, grads = data(3)
    a, b = (E.tensor(x).requires_grad_() for x in init)
    opt = SGD([{"params": [a]}, {"params": [b], "lr": 0.5, "momentum": 0.5}], lr=0.1)
    assert opt.param_groups[0]["momentum"] == 0 and opt.param_groups[1]["lr"] == 0.5
    for ga, gb in grads:
        a.grad, b.grad = E.tensor(ga), E.tensor(gb)
        opt.step()
    assert_close(a, sgd_reference([init[0]], [[g[0]] for g in grads], 0.1)[0])
    assert_close(b, sgd_reference([init[1]], [[g[1]] for g in grads], 0.5, momentum=0.5)[0])


def test_params_without_grad_are_skipped():
    init, grads = data(2)
    a, b = (E.tensor(x).requires_grad_() for x in init)
    opt = SGD([a, b], lr=0.1, momentum=0.9)
    a.grad = E.tensor(grads[0][0])
    opt.step()
    np.testing.assert_array_equal(to_np(b), init[1])
    assert b not in opt.state and "momentum_buffer" in opt.state[a]


def test_no_state_without_momentum():
    init, grads = data(1)
    _, opt = run(SGD, init, grads, lr=0.1)
    assert len(opt.state) == 0


def test_update_is_in_place_and_bumps_version():
    p = E.tensor([1.0, 2.0]).requires_grad_()
    data_before, version = p._data, p._version
    p.grad = E.tensor([1.0, 1.0])
    SGD([p], lr=0.5).step()
    assert p._data is data_before and p._version > version
    assert p.grad_fn is None and p.requires_grad


def test_minimizes_a_quadratic():
    target = E.tensor([1.0, -2.0, 3.0])
    x = E.zeros(3).requires_grad_()
    opt = SGD([x], lr=0.1, momentum=0.5)
    for _ in range(100):
        opt.zero_grad()
        loss = ((x - target) ** 2).sum()
        loss.backward()
        opt.step()
    assert_close(x, to_np(target), atol=1e-4, rtol=0)


def test_closure_result_is_returned():
    x = E.tensor([3.0]).requires_grad_()
    opt = SGD([x], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (x * x).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert float(loss) == 9.0 and float(x) == 3.0 - 0.25 * 6.0


@pytest.mark.parametrize("kwargs, match", [
    (dict(lr=-0.1), "Invalid learning rate"),
    (dict(momentum=-0.5), "Invalid momentum value"),
    (dict(weight_decay=-1e-4), "Invalid weight_decay value"),
    (dict(nesterov=True), "Nesterov momentum requires a momentum and zero dampening"),
    (dict(nesterov=True, momentum=0.9, dampening=0.1), "Nesterov momentum requires"),
])
def test_invalid_hyperparameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SGD([E.zeros(2).requires_grad_()], **kwargs)


def test_non_number_lr_is_a_type_error():
    with pytest.raises(TypeError, match="lr must be a real number"):
        SGD([E.zeros(2).requires_grad_()], lr="0.1")
