"""ConstantLR and LinearLR against their closed forms."""
import pytest
from core.optim.lr_scheduler.sched_cases import (BASE_LRS, assert_lrs, check_round_trip,
                                                 lr_sequence, sgd)

from ember.optim.lr_scheduler import ConstantLR, LinearLR


def linear(base, epoch, start, end, total):
    return base * (start + (end - start) * min(epoch, total) / total)


@pytest.mark.parametrize("factor, total", [(0.25, 4), (1 / 3, 5), (0.0, 3), (1.0, 2)])
def test_constant(factor, total):
    opt = sgd()
    seq = lr_sequence(opt, ConstantLR(opt, factor=factor, total_iters=total), 20)
    assert_lrs(seq, [[b * (factor if e < total else 1.0) for b in BASE_LRS]
                     for e in range(20)])


@pytest.mark.parametrize("start, end, total", [(0.2, 0.9, 6), (1.0, 0.1, 10), (0.5, 0.0, 4),
                                               (1 / 3, 1.0, 5)])
def test_linear(start, end, total):
    opt = sgd()
    seq = lr_sequence(opt, LinearLR(opt, start_factor=start, end_factor=end,
                                    total_iters=total), 20)
    assert_lrs(seq, [[linear(b, e, start, end, total) for b in BASE_LRS] for e in range(20)])


def test_defaults():
    c, lin = ConstantLR(sgd()), LinearLR(sgd())
    assert (c.factor, c.total_iters) == (1 / 3, 5)
    assert (lin.start_factor, lin.end_factor, lin.total_iters) == (1 / 3, 1.0, 5)


def test_step_epoch_jumps_by_the_closed_form():
    opt = sgd()
    const = ConstantLR(opt, factor=0.5, total_iters=3)
    opt2 = sgd()
    lin = LinearLR(opt2, start_factor=0.25, end_factor=0.75, total_iters=4)
    opt.step()
    opt2.step()
    for epoch in (2, 7, 3, 0):
        with pytest.warns(UserWarning, match="epoch parameter"):
            const.step(epoch)
            lin.step(epoch)
        assert_lrs([const.get_last_lr(), lin.get_last_lr()],
                   [[b * (0.5 if epoch < 3 else 1.0) for b in BASE_LRS],
                    [linear(b, epoch, 0.25, 0.75, 4) for b in BASE_LRS]])


@pytest.mark.parametrize("make", [lambda o: ConstantLR(o, 0.5, 6),
                                  lambda o: LinearLR(o, 0.1, 0.8, 7)], ids=["const", "linear"])
def test_state_dict_round_trip(make):
    check_round_trip(sgd, make, 3, 8)


@pytest.mark.parametrize("make, exc, match", [
    (lambda o: ConstantLR(o, factor=1.5), ValueError, "between 0 and 1; got 1.5"),
    (lambda o: ConstantLR(o, factor=-0.1), ValueError, "between 0 and 1"),
    (lambda o: ConstantLR(o, factor="x"), TypeError, "between 0 and 1; got str"),
    (lambda o: ConstantLR(o, total_iters=0), ValueError, "positive integer total_iters"),
    (lambda o: LinearLR(o, start_factor=0), ValueError, "greater than 0"),
    (lambda o: LinearLR(o, start_factor=1.2), ValueError, "greater than 0"),
    (lambda o: LinearLR(o, end_factor=-0.5), ValueError, "Ending multiplicative factor"),
    (lambda o: LinearLR(o, total_iters=2.0), ValueError, "positive integer total_iters"),
])
def test_argument_errors_leave_the_optimizer_alone(make, exc, match):
    opt = sgd()
    with pytest.raises(exc, match=match):
        make(opt)
    assert [g["lr"] for g in opt.param_groups] == list(BASE_LRS)
    assert all("initial_lr" not in g for g in opt.param_groups)
