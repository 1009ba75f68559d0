"""CyclicLR against the triangular policy computed from the step's place in its cycle.

OneCycleLR is tested in tests/core/optim/test_lr_scheduler.py."""
import pytest
from core.optim.lr_scheduler.sched_cases import assert_lrs, check_round_trip, sgd

import ember as E
from ember.optim import SGD, Adagrad, Adam
from ember.optim.lr_scheduler import CyclicLR


def triangle(t, up, down):
    """(cycle number from 1, height in [0, 1]) of step t of a cycle of up + down steps."""
    pos = t % (up + down)
    height = pos / up if pos <= up else 1 - (pos - up) / down
    return t // (up + down) + 1, height


def cyclic_reference(t, lo, hi, up, down, scale):
    """(lr, momentum factor) with ``scale(cycle, t)`` the amplitude's scale."""
    cycle, h = triangle(t, up, down)
    return lo + (hi - lo) * h * scale(cycle, t), h * scale(cycle, t)


SCALES = {
    "triangular": lambda cycle, t: 1.0,
    "triangular2": lambda cycle, t: 0.5 ** (cycle - 1),
    "exp_range": lambda cycle, t: 0.9 ** t,
}


def run(opt, sched, n):
    """Per step: the lrs and momenta of every group."""
    out = []
    for _ in range(n):
        out.append([(g["lr"], g["momentum"] if "momentum" in g else g["betas"][0])
                    for g in opt.param_groups])
        opt.step()
        sched.step()
    return out


@pytest.mark.parametrize("mode", list(SCALES))
@pytest.mark.parametrize("up, down", [(3, 5), (4, None)])
def test_modes_lr_and_momentum(mode, up, down):
    opt = sgd(momentum=0.9)
    sched = CyclicLR(opt, base_lr=[0.01, 0.02], max_lr=[0.1, 0.3], step_size_up=up,
                     step_size_down=down, mode=mode, gamma=0.9)
    seq = run(opt, sched, 24)
    expected = []
    for t in range(24):
        row = []
        for lo, hi in ((0.01, 0.1), (0.02, 0.3)):
            lr, h = cyclic_reference(t, lo, hi, up, down or up, SCALES[mode])
            row.append((lr, 0.9 - (0.9 - 0.8) * h))
        expected.append(row)
    assert_lrs([[v for pair in row for v in pair] for row in seq],
               [[v for pair in row for v in pair] for row in expected])


@pytest.mark.parametrize("scale_mode", ["cycle", "iterations"])
def test_custom_scale_fn(scale_mode):
    opt = sgd()
    sched = CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=2, scale_fn=lambda x: 0.8 ** x,
                     scale_mode=scale_mode, cycle_momentum=False)
    seq = run(opt, sched, 20)

    def scale(cycle, t):
        return 0.8 ** (cycle if scale_mode == "cycle" else t)
    expected = [[cyclic_reference(t, 0.01, 0.1, 2, 2, scale)[0]] * 2 for t in range(20)]
    assert_lrs([[lr for lr, _ in row] for row in seq], expected)
    assert all(m == 0 for row in seq for _, m in row)  # momentum untouched


def test_adam_beta1_cycles_and_beta2_stays():
    opt = Adam([E.zeros(2).requires_grad_()], lr=1.0, betas=(0.5, 0.99))
    sched = CyclicLR(opt, base_lr=0.001, max_lr=0.01, step_size_up=3, base_momentum=0.85,
                     max_momentum=0.95)
    for t in range(12):
        lr, h = cyclic_reference(t, 0.001, 0.01, 3, 3, SCALES["triangular"])
        assert opt.param_groups[0]["lr"] == pytest.approx(lr, rel=1e-12)
        assert opt.param_groups[0]["betas"] == pytest.approx((0.95 - 0.1 * h, 0.99), rel=1e-12)
        opt.step()
        sched.step()


class Halving:
    def __init__(self, base):
        self.base = base

    def __call__(self, x):
        return self.base ** x


def test_state_dict_round_trip_and_scale_fn_object():
    def make(o):
        return CyclicLR(o, 0.01, 0.1, step_size_up=3, step_size_down=2, scale_fn=Halving(0.7),
                        scale_mode="iterations")
    sched = check_round_trip(lambda: sgd(momentum=0.9), make, 7, 10)
    assert sched.state_dict()["_scale_fn_custom"] == {"base": 0.7}
    lam = CyclicLR(sgd(momentum=0.9), 0.01, 0.1, scale_fn=lambda x: 1.0)
    assert lam.state_dict()["_scale_fn_custom"] is None


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(mode="cosine"), ValueError, "mode is invalid and scale_fn is None"),
    (dict(scale_fn=lambda x: 1.0, scale_mode="epoch"), ValueError, "'cycle' or 'iterations'"),
    (dict(scale_fn=3), TypeError, "scale_fn must be callable"),
    (dict(step_size_up=0), ValueError, "positive number of steps step_size_up"),
    (dict(step_size_down=-1), ValueError, "positive number of steps step_size_down"),
    (dict(max_lr=[0.1, 0.2, 0.3]), ValueError, "max_lr must have the same length"),
    (dict(base_momentum=[0.8]), ValueError, "base_momentum must have the same length"),
])
def test_argument_errors_leave_the_optimizer_alone(kwargs, exc, match):
    opt = sgd(momentum=0.5)
    kwargs = {"base_lr": 0.01, "max_lr": 0.1, **kwargs}
    with pytest.raises(exc, match=match):
        CyclicLR(opt, **kwargs)
    assert [(g["lr"], g["momentum"]) for g in opt.param_groups] == [(0.1, 0.5), (0.5, 0.5)]
    assert all("initial_lr" not in g for g in opt.param_groups)


def test_cycle_momentum_needs_momentum_or_betas():
    with pytest.raises(ValueError, match="must support momentum or beta1"):
        CyclicLR(Adagrad([E.zeros(1).requires_grad_()]), 0.01, 0.1)
    CyclicLR(Adagrad([E.zeros(1).requires_grad_()]), 0.01, 0.1, cycle_momentum=False)
    CyclicLR(SGD([E.zeros(1).requires_grad_()]), 0.01, 0.1)  # SGD has a momentum option
