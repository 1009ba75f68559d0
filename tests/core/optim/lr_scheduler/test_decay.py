"""MultiStepLR, ExponentialLR and PolynomialLR against their closed forms."""
import pytest
from core.optim.lr_scheduler.sched_cases import (BASE_LRS, assert_lrs, check_round_trip,
                                                 lr_sequence, sgd)

from ember.optim.lr_scheduler import ExponentialLR, MultiStepLR, PolynomialLR, StepLR


def multistep(base, epoch, milestones, gamma):
    return base * gamma ** sum(1 for m in milestones if m <= epoch)


def poly(base, epoch, total, power):
    return base * (1 - min(epoch, total) / total) ** power


def test_multistep_counts_repeated_milestones_in_any_order():
    milestones = [12, 3, 7, 7]
    opt = sgd()
    seq = lr_sequence(opt, MultiStepLR(opt, milestones, gamma=0.5), 20)
    assert_lrs(seq, [[multistep(b, e, milestones, 0.5) for b in BASE_LRS] for e in range(20)])


def test_exponential():
    opt = sgd()
    seq = lr_sequence(opt, ExponentialLR(opt, gamma=0.9), 20)
    assert_lrs(seq, [[b * 0.9 ** e for b in BASE_LRS] for e in range(20)])


@pytest.mark.parametrize("total, power", [(10, 1.0), (7, 2.0), (15, 0.5)])
def test_polynomial_reaches_zero_and_stays(total, power):
    opt = sgd()
    seq = lr_sequence(opt, PolynomialLR(opt, total_iters=total, power=power), 20)
    assert_lrs(seq, [[poly(b, e, total, power) for b in BASE_LRS] for e in range(20)])


def test_polynomial_defaults():
    opt = sgd()
    sched = PolynomialLR(opt)
    assert (sched.total_iters, sched.power) == (5, 1.0)


@pytest.mark.parametrize("make, formula", [
    (lambda o: MultiStepLR(o, [2, 5, 5], gamma=0.3),
     lambda b, e: multistep(b, e, [2, 5, 5], 0.3)),
    (lambda o: ExponentialLR(o, gamma=0.8), lambda b, e: b * 0.8 ** e),
    (lambda o: PolynomialLR(o, total_iters=6, power=2.0), lambda b, e: poly(b, e, 6, 2.0)),
], ids=["multistep", "exponential", "polynomial"])
def test_step_epoch_jumps_by_the_closed_form(make, formula):
    opt = sgd()
    sched = make(opt)
    opt.step()
    for epoch in (4, 9, 1, 5, 0):
        with pytest.warns(UserWarning, match="epoch parameter"):
            sched.step(epoch)
        assert_lrs([sched.get_last_lr()], [[formula(b, epoch) for b in BASE_LRS]])


@pytest.mark.parametrize("make", [
    lambda o: StepLR(o, 3, gamma=0.5), lambda o: MultiStepLR(o, [2, 6], gamma=0.5),
    lambda o: ExponentialLR(o, 0.9), lambda o: PolynomialLR(o, 8, 2.0),
], ids=["step", "multistep", "exponential", "polynomial"])
def test_state_dict_round_trip(make):
    check_round_trip(sgd, make, 4, 8)


def test_argument_errors():
    with pytest.raises(TypeError, match="milestones to be ints, got 2.5"):
        MultiStepLR(sgd(), [1, 2.5])
    with pytest.raises(TypeError, match="milestones to be a list of epochs"):
        MultiStepLR(sgd(), 3)
    with pytest.raises(TypeError, match="gamma to be a real number, got str"):
        ExponentialLR(sgd(), gamma="0.9")
    for bad in (0, -2, 2.5):
        with pytest.raises(ValueError, match="positive integer total_iters"):
            PolynomialLR(sgd(), total_iters=bad)
    with pytest.raises(TypeError, match="power to be a real number"):
        PolynomialLR(sgd(), power=None)
