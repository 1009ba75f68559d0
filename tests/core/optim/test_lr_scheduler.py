"""LR schedulers: lr sequences against closed forms, momentum cycling, state, errors."""
import math
import warnings

import pytest

import ember as E
from ember.optim import SGD, Adam, Optimizer, RMSprop
from ember.optim.lr_scheduler import CosineAnnealingLR, LRScheduler, OneCycleLR, StepLR


def sgd(lrs=(0.1,), **kw):
    groups = [{"params": [E.zeros(2).requires_grad_()], "lr": lr} for lr in lrs]
    return SGD(groups, **kw)


def lr_sequence(opt, sched, n):
    """The lrs of every group for n training steps (optimizer, then scheduler)."""
    out = []
    for _ in range(n):
        out.append(list(sched.get_last_lr()))
        opt.step()
        sched.step()
    return out


def assert_lrs(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g == pytest.approx(e, rel=1e-12, abs=1e-15)


# --- base ----------------------------------------------------------------------------------
def test_initial_lr_is_recorded_and_base_lrs_follow_it():
    opt = sgd((0.1, 0.5))
    sched = StepLR(opt, step_size=2)
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert sched.base_lrs == [0.1, 0.5] and sched.last_epoch == 0
    assert sched.get_last_lr() == [0.1, 0.5]


def test_resuming_needs_initial_lr():
    with pytest.raises(KeyError, match="initial_lr"):
        StepLR(sgd(), step_size=2, last_epoch=3)


def test_needs_an_optimizer():
    with pytest.raises(TypeError, match="is not an Optimizer"):
        StepLR(object(), step_size=2)


def test_base_get_lr_is_abstract():
    with pytest.raises(NotImplementedError, match="get_lr"):
        LRScheduler(sgd())


def test_stepping_before_the_optimizer_warns():
    opt = sgd()
    sched = StepLR(opt, step_size=2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    opt2 = sgd()
    sched2 = StepLR(opt2, step_size=2)
    opt2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched2.step()


def test_get_lr_outside_step_warns():
    sched = StepLR(sgd(), step_size=2)
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()


def test_state_dict_round_trip():
    opt = sgd((0.1, 0.2))
    sched = CosineAnnealingLR(opt, T_max=10, eta_min=0.01)
    lr_sequence(opt, sched, 4)
    saved = sched.state_dict()
    assert "optimizer" not in saved and saved["last_epoch"] == 4
    opt2 = sgd((0.1, 0.2))
    opt2.load_state_dict(opt.state_dict())
    sched2 = CosineAnnealingLR(opt2, T_max=10, eta_min=0.01, last_epoch=3)
    sched2.load_state_dict(saved)
    opt2.load_state_dict(opt.state_dict())
    assert_lrs(lr_sequence(opt2, sched2, 5), lr_sequence(opt, sched, 5))


# --- StepLR --------------------------------------------------------------------------------
def test_step_lr_closed_form():
    opt = sgd((0.1, 1.0))
    seq = lr_sequence(opt, StepLR(opt, step_size=3, gamma=0.5), 12)
    assert_lrs(seq, [[0.1 * 0.5 ** (e // 3), 1.0 * 0.5 ** (e // 3)] for e in range(12)])


def test_step_lr_epoch_argument_uses_the_closed_form():
    opt = sgd()
    sched = StepLR(opt, step_size=2, gamma=0.1)
    opt.step()
    with pytest.warns(UserWarning, match="epoch parameter"):
        sched.step(5)
    assert sched.get_last_lr() == [pytest.approx(0.1 * 0.1 ** 2)]


def test_step_lr_rejects_bad_step_size():
    with pytest.raises(ValueError, match="positive integer step_size"):
        StepLR(sgd(), step_size=0)


# --- CosineAnnealingLR -----------------------------------------------------------------------
@pytest.mark.parametrize("t_max, eta_min", [(10, 0.0), (7, 0.01), (1, 0.0), (3, 0.05)])
def test_cosine_closed_form_over_several_periods(t_max, eta_min):
    opt = sgd((0.1, 0.3))
    seq = lr_sequence(opt, CosineAnnealingLR(opt, T_max=t_max, eta_min=eta_min), 4 * t_max + 3)
    expected = [[eta_min + (b - eta_min) * (1 + math.cos(math.pi * e / t_max)) / 2
                 for b in (0.1, 0.3)] for e in range(4 * t_max + 3)]
    assert_lrs(seq, expected)


def test_cosine_rejects_bad_t_max():
    with pytest.raises(ValueError, match="positive T_max"):
        CosineAnnealingLR(sgd(), T_max=0)


# --- OneCycleLR ----------------------------------------------------------------------------
def anneal(start, end, pct, strategy):
    if strategy == "cos":
        return end + (start - end) / 2 * (1 + math.cos(math.pi * pct))
    return start + (end - start) * pct


def one_cycle_reference(step, total, max_lr, pct_start=0.3, strategy="cos", div=25.0,
                        final_div=1e4, three_phase=False, m_lo=0.85, m_hi=0.95):
    """(lr, momentum) at ``step`` from the 1cycle policy's phase definitions."""
    lr0, lr_min = max_lr / div, max_lr / div / final_div
    up = pct_start * total - 1
    if three_phase:
        phases = [(up, lr0, max_lr, m_hi, m_lo),
                  (2 * pct_start * total - 2, max_lr, lr0, m_lo, m_hi),
                  (total - 1, lr0, lr_min, m_hi, m_hi)]
    else:
        phases = [(up, lr0, max_lr, m_hi, m_lo), (total - 1, max_lr, lr_min, m_lo, m_hi)]
    start = 0.0
    for i, (end, a, b, ma, mb) in enumerate(phases):
        if step <= end or i == len(phases) - 1:
            pct = (step - start) / (end - start)
            return anneal(a, b, pct, strategy), anneal(ma, mb, pct, strategy)
        start = end


@pytest.mark.parametrize("strategy, three_phase", [("cos", False), ("linear", False),
                                                   ("cos", True), ("linear", True)])
def test_one_cycle_lr_and_momentum(strategy, three_phase):
    opt = sgd((0.1, 0.1), momentum=0.9)
    sched = OneCycleLR(opt, max_lr=[1.0, 2.0], total_steps=20, anneal_strategy=strategy,
                       three_phase=three_phase)
    for step in range(20):
        for group, peak in zip(opt.param_groups, (1.0, 2.0)):
            lr, mom = one_cycle_reference(step, 20, peak, strategy=strategy,
                                          three_phase=three_phase)
            assert group["lr"] == pytest.approx(lr, rel=1e-12)
            assert group["momentum"] == pytest.approx(mom, rel=1e-12)
        last_lr = opt.param_groups[0]["lr"]
        opt.step()
        sched.step()
    assert last_lr == pytest.approx(1.0 / 25 / 1e4)  # the last step reaches min_lr


def test_one_cycle_epochs_times_steps_and_adam_betas():
    opt = Adam([E.zeros(2).requires_grad_()], lr=0.1, betas=(0.9, 0.99))
    sched = OneCycleLR(opt, max_lr=0.01, epochs=3, steps_per_epoch=5, pct_start=0.4,
                       base_momentum=0.8, max_momentum=0.9)
    assert sched.total_steps == 15
    for step in range(15):
        lr, mom = one_cycle_reference(step, 15, 0.01, pct_start=0.4, m_lo=0.8, m_hi=0.9)
        beta1, beta2 = opt.param_groups[0]["betas"]
        assert opt.param_groups[0]["lr"] == pytest.approx(lr, rel=1e-12)
        assert beta1 == pytest.approx(mom, rel=1e-12) and beta2 == 0.99
        opt.step()
        sched.step()


def test_one_cycle_stepping_past_the_end_names_the_numbers():
    opt = sgd(momentum=0.9)
    sched = OneCycleLR(opt, max_lr=1.0, total_steps=3)
    for _ in range(2):
        opt.step()
        sched.step()
    sched.step()  # step 3 == total_steps is still allowed, as in PyTorch
    with pytest.raises(ValueError, match="Tried to step 4 times. The specified number of "
                                         "total steps is 3"):
        sched.step()


def test_one_cycle_without_cycle_momentum_leaves_momentum():
    opt = RMSprop([E.zeros(2).requires_grad_()], momentum=0.0)
    OneCycleLR(opt, max_lr=0.1, total_steps=10, cycle_momentum=False)
    assert opt.param_groups[0]["momentum"] == 0.0


class _NoMomentum(Optimizer):
    def __init__(self, params):
        super().__init__(params, {"lr": 0.1})

    def _step_group(self, group):
        pass


@pytest.mark.parametrize("kwargs, match", [
    (dict(), "either total_steps OR"),
    (dict(total_steps=0), "positive integer total_steps, but got 0"),
    (dict(epochs=2), "either total_steps OR"),
    (dict(epochs=0, steps_per_epoch=3), "positive integer epochs"),
    (dict(epochs=2, steps_per_epoch=1.5), "positive integer steps_per_epoch"),
    (dict(total_steps=10, pct_start=1.5), "between 0 and 1 pct_start"),
    (dict(total_steps=10, anneal_strategy="exp"), "'cos' or 'linear'"),
    (dict(total_steps=10, max_lr=[0.1, 0.2]), "max_lr must have the same length"),
])
def test_one_cycle_argument_errors(kwargs, match):
    kwargs.setdefault("max_lr", 0.1)
    with pytest.raises(ValueError, match=match):
        OneCycleLR(sgd(momentum=0.9), **kwargs)


def test_one_cycle_momentum_needs_momentum_or_betas():
    with pytest.raises(ValueError, match="must support momentum or beta1"):
        OneCycleLR(_NoMomentum([E.zeros(1).requires_grad_()]), max_lr=0.1, total_steps=5)
