"""Shared inputs for the optimizer tests: random parameters and per-step gradients, a
loop that feeds them to an optimizer, and a state-dict round-trip check."""
from __future__ import annotations

import copy

import numpy as np

import ember as E


def random_case(shapes, steps: int, seed: int = 0):
    """(initial values, one list of gradients per step): float64 arrays of ``shapes``."""
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s) for s in shapes]
    grads = [[rng.standard_normal(s) for s in shapes] for _ in range(steps)]
    return init, grads


def run_steps(opt_cls, init, grads, **kw):
    """Leaves made from ``init`` stepped by ``opt_cls(params, **kw)`` with ``grads``;
    returns (params, optimizer)."""
    params = [E.tensor(a).requires_grad_() for a in init]
    opt = opt_cls(params, **kw)
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = E.tensor(g)
        opt.step()
    return params, opt


def check_state_dict_round_trip(opt_cls, init, grads, split: int, **kw):
    """Step ``split`` times, save and load the state into a fresh optimizer on copies of
    the parameters, step on: it must land bit-for-bit where stepping straight does.
    Returns the loaded optimizer."""
    straight, _ = run_steps(opt_cls, init, grads, **kw)
    first, opt = run_steps(opt_cls, init, grads[:split], **kw)
    saved = copy.deepcopy(opt.state_dict())
    resumed = [p.detach().clone().requires_grad_() for p in first]
    opt2 = opt_cls(resumed)  # default options: the loaded groups bring back the real ones
    opt2.load_state_dict(saved)
    for name, value in kw.items():
        assert opt2.param_groups[0][name] == value, name
    for step_grads in grads[split:]:
        for p, g in zip(resumed, step_grads):
            p.grad = E.tensor(g)
        opt2.step()
    for p, q in zip(resumed, straight):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    return opt2
