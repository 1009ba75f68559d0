"""Shared inputs for the optimizer tests: random parameters and per-step gradients, and
a loop that feeds them to an optimizer."""
from __future__ import annotations

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
