"""Shared pieces of the scheduler tests: an optimizer of several groups, the lr sequence
a scheduler produces, comparison with a plain-Python reference, and a state-dict
round trip."""
from __future__ import annotations

import copy

import pytest

import ember as E
from ember.optim import SGD

BASE_LRS = (0.1, 0.5)


def sgd(lrs=BASE_LRS, **kw):
    """SGD with one group (one small parameter) per lr."""
    groups = [{"params": [E.zeros(2).requires_grad_()], "lr": lr} for lr in lrs]
    return SGD(groups, **kw)


def lr_sequence(opt, sched, n, metrics=None):
    """The lrs of every group for n training steps (optimizer, then scheduler)."""
    out = []
    for i in range(n):
        out.append([group["lr"] for group in opt.param_groups])
        opt.step()
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[i])
    return out


def assert_lrs(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g == pytest.approx(e, rel=1e-12, abs=1e-15)


def check_round_trip(make_opt, make_sched, before: int, after: int, metrics=None):
    """Save a scheduler (and its optimizer) after ``before`` steps, load both into fresh
    ones: the next ``after`` lrs must be exactly those of the original."""
    metrics = metrics or [None] * (before + after)
    opt = make_opt()
    sched = make_sched(opt)
    lr_sequence(opt, sched, before, None if metrics[0] is None else metrics[:before])
    saved = copy.deepcopy(sched.state_dict())
    assert "optimizer" not in saved
    opt2 = make_opt()
    sched2 = make_sched(opt2)
    opt2.load_state_dict(copy.deepcopy(opt.state_dict()))
    sched2.load_state_dict(saved)
    rest = None if metrics[0] is None else metrics[before:]
    assert lr_sequence(opt2, sched2, after, rest) == lr_sequence(opt, sched, after, rest)
    return sched2
