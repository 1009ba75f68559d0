"""SequentialLR and ChainedScheduler against piecewise and product closed forms."""
import pytest
from core.optim.lr_scheduler.sched_cases import (BASE_LRS, assert_lrs, check_round_trip,
                                                 lr_sequence, sgd)

from ember.optim.lr_scheduler import (ChainedScheduler, ConstantLR, ExponentialLR, LinearLR,
                                      MultiStepLR, ReduceLROnPlateau, SequentialLR, StepLR)


def warmup_then_decay(o):
    return SequentialLR(o, [LinearLR(o, start_factor=0.1, total_iters=4),
                            ExponentialLR(o, gamma=0.8), StepLR(o, step_size=3, gamma=0.5)],
                        milestones=[5, 11])


def sequential_reference(base, e):
    if e < 5:
        return base * (0.1 + 0.9 * min(e, 4) / 4)
    if e < 11:
        return base * 0.8 ** (e - 5)
    return base * 0.5 ** ((e - 11) // 3)


def test_sequential_switches_at_milestones():
    opt = sgd()
    seq = lr_sequence(opt, warmup_then_decay(opt), 22)
    assert_lrs(seq, [[sequential_reference(b, e) for b in BASE_LRS] for e in range(22)])


def test_sequential_get_last_lr_and_initial_lr_reset():
    opt = sgd()
    sched = warmup_then_decay(opt)
    assert_lrs([sched.get_last_lr()], [[0.1 * b for b in BASE_LRS]])
    assert [s.last_epoch for s in sched._schedulers] == [0, -1, -1]


def chained(o):
    return ChainedScheduler([ConstantLR(o, factor=0.1, total_iters=3),
                             ExponentialLR(o, gamma=0.9), MultiStepLR(o, [5, 9], gamma=0.5)])


def test_chained_factors_multiply():
    opt = sgd()
    sched = chained(opt)
    seq = lr_sequence(opt, sched, 20)
    expected = [[b * (0.1 if e < 3 else 1) * 0.9 ** e * 0.5 ** ((e >= 5) + (e >= 9))
                 for b in BASE_LRS] for e in range(20)]
    assert_lrs(seq, expected)
    assert sched.get_last_lr() == [g["lr"] for g in opt.param_groups]


def test_chained_takes_an_explicit_optimizer():
    opt = sgd()
    sched = ChainedScheduler([ExponentialLR(opt, 0.5)], optimizer=opt)
    assert sched.optimizer is opt


@pytest.mark.parametrize("make", [warmup_then_decay, chained], ids=["sequential", "chained"])
def test_state_dict_nests_the_schedulers(make):
    opt = sgd()
    saved = make(opt).state_dict()
    assert "optimizer" not in saved and len(saved["_schedulers"]) == 3
    assert all("optimizer" not in s for s in saved["_schedulers"])
    check_round_trip(sgd, make, 7, 10)


def test_sequential_argument_errors():
    opt, other = sgd(), sgd()
    with pytest.raises(ValueError, match="at least one scheduler"):
        SequentialLR(opt, [], milestones=[])
    with pytest.raises(ValueError, match="number of schedulers 2 and the number of "
                                         "milestones to be equal to 2"):
        SequentialLR(opt, [ExponentialLR(opt, 0.9), ExponentialLR(opt, 0.9)], [2, 4])
    with pytest.raises(ValueError, match="non-decreasing milestones"):
        SequentialLR(opt, [ExponentialLR(opt, 0.9)] * 3, [4, 2])
    with pytest.raises(TypeError, match="milestones to be ints"):
        SequentialLR(opt, [ExponentialLR(opt, 0.9)] * 2, [2.0])
    with pytest.raises(ValueError, match="same optimizer"):
        SequentialLR(opt, [ExponentialLR(opt, 0.9), ExponentialLR(other, 0.9)], [2])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        SequentialLR(opt, [ExponentialLR(opt, 0.9), ReduceLROnPlateau(opt)], [2])
    with pytest.raises(TypeError, match="index 0 is a str, not an LRScheduler"):
        SequentialLR(opt, ["exp"], [])


def test_chained_argument_errors():
    opt, other = sgd(), sgd()
    with pytest.raises(ValueError, match="at least one scheduler"):
        ChainedScheduler([])
    with pytest.raises(ValueError, match="same optimizer"):
        ChainedScheduler([ExponentialLR(opt, 0.9), ExponentialLR(other, 0.9)])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        ChainedScheduler([ReduceLROnPlateau(opt)])
    with pytest.raises(TypeError, match="not an LRScheduler"):
        ChainedScheduler([ExponentialLR(opt, 0.9), None])
