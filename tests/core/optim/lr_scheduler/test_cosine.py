"""CosineAnnealingWarmRestarts (SGDR) against its periods computed by hand.

CosineAnnealingLR is tested in tests/core/optim/test_lr_scheduler.py."""
import math

import pytest
from core.optim.lr_scheduler.sched_cases import (BASE_LRS, assert_lrs, check_round_trip,
                                                 lr_sequence, sgd)

import ember as E
from ember.optim.lr_scheduler import CosineAnnealingWarmRestarts


def sgdr(base, epoch, t_0, t_mult, eta_min):
    """Walk the periods T_0, T_0 * T_mult, ... to the one holding ``epoch``."""
    start, period = 0, t_0
    while epoch >= start + period:
        start += period
        period *= t_mult
    return eta_min + (base - eta_min) * (1 + math.cos(math.pi * (epoch - start) / period)) / 2


@pytest.mark.parametrize("t_0, t_mult, eta_min", [(4, 1, 0.0), (3, 2, 0.01), (2, 3, 0.0)])
def test_restarts(t_0, t_mult, eta_min):
    opt = sgd()
    sched = CosineAnnealingWarmRestarts(opt, T_0=t_0, T_mult=t_mult, eta_min=eta_min)
    seq = lr_sequence(opt, sched, 25)
    assert_lrs(seq, [[sgdr(b, e, t_0, t_mult, eta_min) for b in BASE_LRS] for e in range(25)])


@pytest.mark.parametrize("t_mult", [1, 2])
def test_fractional_epochs(t_mult):
    opt = sgd()
    sched = CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=t_mult, eta_min=0.01)
    opt.step()
    for epoch in (0.5, 1.25, 2.999, 3.0, 4.5, 8.2, 9.0, 20.7, 1.5):
        sched.step(epoch)   # the supported way to anneal within an epoch: no warning
        assert_lrs([sched.get_last_lr()], [[sgdr(b, epoch, 3, t_mult, 0.01)
                                            for b in BASE_LRS]])
        assert sched.last_epoch == math.floor(epoch)


def test_state_dict_round_trip():
    check_round_trip(sgd, lambda o: CosineAnnealingWarmRestarts(o, 2, 2, 0.001), 5, 10)


@pytest.mark.parametrize("kwargs, match", [
    (dict(T_0=0), "positive integer T_0, but got 0"),
    (dict(T_0=2.5), "positive integer T_0"),
    (dict(T_0=3, T_mult=0), "integer T_mult >= 1, but got 0"),
    (dict(T_0=3, T_mult=1.5), "integer T_mult >= 1"),
    (dict(T_0=3, eta_min="0"), "float or int eta_min"),
])
def test_argument_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        CosineAnnealingWarmRestarts(sgd(), **kwargs)


def test_negative_epoch():
    sched = CosineAnnealingWarmRestarts(sgd(), T_0=3)
    with pytest.raises(ValueError, match="non-negative epoch, but got -1"):
        sched.step(-1)


def test_needs_an_optimizer():
    with pytest.raises(TypeError, match="is not an Optimizer"):
        CosineAnnealingWarmRestarts([E.zeros(1)], T_0=3)
