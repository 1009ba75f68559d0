"""Gradients are checked against their tensor (issue 35, class 2): ``.grad`` assignment and
tensor hooks refuse anything that is not a Tensor of the tensor's shape, dtype and device,
as PyTorch does, and leave the old gradient in place; an optimizer step updates every
parameter or none (class 7)."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E

BAD_VALUES = [  # (value maker for a float32 tensor of shape (3,), expected error)
    (lambda: 5, TypeError),
    (lambda: 5.0, TypeError),
    (lambda: [1.0, 2.0, 3.0], TypeError),
    (lambda: np.ones(3, np.float32), TypeError),
    (lambda: E.ones(1) * 5, E.ShapeError),       # broadcastable is not enough
    (lambda: E.tensor(5.0), E.ShapeError),        # nor is a 0-d tensor
    (lambda: E.ones(3, 1), E.ShapeError),
    (lambda: E.ones(4), E.ShapeError),
    (lambda: E.ones(3, dtype=E.float64), E.DtypeError),
    (lambda: E.ones(3, dtype=E.float16), E.DtypeError),
    (lambda: E.ones(3, dtype=E.int64), E.DtypeError),
]


@pytest.mark.parametrize("make, error", BAD_VALUES)
@pytest.mark.parametrize("kind", ["leaf", "parameter", "non-leaf"])
def test_assigning_a_grad_that_does_not_fit_raises_and_keeps_the_old_one(make, error, kind):
    x = E.ones(3, requires_grad=True)
    t = {"leaf": x, "parameter": E.nn.Parameter(E.ones(3)), "non-leaf": x * 1}[kind]
    old = E.full((3,), 7.0)
    t.grad = old
    with pytest.raises(error, match="grad"):
        t.grad = make()
    assert t.grad is old


def test_a_fitting_grad_none_and_del_are_accepted():
    p = E.nn.Parameter(E.ones(2, 3))
    g = E.zeros(2, 3)
    p.grad = g
    assert p.grad is g
    p.grad = E.zeros(3, 2).t()  # any strides: only shape, dtype and device count
    p.grad = None
    assert p.grad is None
    p.grad = g
    del p.grad
    assert p.grad is None


def test_a_tensor_is_not_its_own_grad():
    p = E.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="own grad"):
        p.grad = p


HOOK_RESULTS = [  # (hook, error, message)
    (lambda g: 5, TypeError, "returned int"),
    (lambda g: "g", TypeError, "returned str"),
    (lambda g: g.sum(), RuntimeError, "changed the size"),
    (lambda g: g[:1], RuntimeError, "changed the size"),
    (lambda g: g.reshape(3, 1), RuntimeError, "changed the size"),
    (lambda g: g.double(), RuntimeError, "changed the type"),
    (lambda g: g.half(), RuntimeError, "changed the type"),
]


@pytest.mark.parametrize("hook, error, message", HOOK_RESULTS)
@pytest.mark.parametrize("kind", ["leaf", "non-leaf retained", "non-leaf"])
def test_a_hook_returning_what_does_not_fit_raises_naming_the_hook(hook, error, message, kind):
    x = E.ones(3, requires_grad=True)
    t = x if kind == "leaf" else x * 1
    if kind == "non-leaf retained":
        t.retain_grad()
    t.register_hook(hook)
    with pytest.raises(error, match=message) as info:
        (t * 2).sum().backward()
    assert "hook '" in str(info.value)
    assert x.grad is None  # nothing reached the leaf


def test_a_hook_returning_a_fitting_tensor_replaces_the_gradient():
    x = E.ones(3, requires_grad=True)
    x.register_hook(lambda g: g * 10)
    (x * 2).sum().backward()
    assert x.grad.tolist() == [20.0, 20.0, 20.0]


OPTIMIZERS = [
    (E.optim.SGD, {"lr": 0.1, "momentum": 0.9}), (E.optim.ASGD, {}), (E.optim.Adam, {}),
    (E.optim.AdamW, {}), (E.optim.Adamax, {}), (E.optim.NAdam, {}), (E.optim.RAdam, {}),
    (E.optim.RMSprop, {"momentum": 0.5}), (E.optim.Rprop, {}), (E.optim.Adagrad, {}),
    (E.optim.Adadelta, {}), (E.optim.Adafactor, {}),
]


@pytest.mark.parametrize("opt, kwargs", OPTIMIZERS, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("stale", ["shape", "dtype"])
def test_an_optimizer_step_updates_every_parameter_or_none(opt, kwargs, stale):
    a, b = E.nn.Parameter(E.ones(2, 3)), E.nn.Parameter(E.ones(3))
    c = E.nn.Parameter(E.ones(2))
    o = opt([{"params": [a]}, {"params": [b, c]}], **kwargs)
    (a.sum() + b.sum() + c.sum()).backward()
    # the gradient of b stops fitting when its data is replaced after backward
    b.data = E.ones(4) if stale == "shape" else E.ones(3, dtype=E.float64)
    before = [p.detach().clone() for p in (a, b, c)]
    state = _snapshot(o.state)  # (Adagrad makes its state at construction)
    error = E.ShapeError if stale == "shape" else E.DtypeError
    with pytest.raises(error, match="parameter 0 of param group 1"):
        o.step()
    for p, q in zip((a, b, c), before):
        assert p.tolist() == q.tolist()
    assert _snapshot(o.state) == state  # no state was created or advanced either


def _snapshot(state) -> dict:
    return {id(p): {k: v.tolist() if isinstance(v, E.Tensor) else v for k, v in s.items()}
            for p, s in state.items()}
