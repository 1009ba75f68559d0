"""ReduceLROnPlateau against lr sequences worked out by hand from its rules."""
import warnings

import pytest
from core.optim.lr_scheduler.sched_cases import check_round_trip, lr_sequence, sgd

import ember as E
from ember.optim.lr_scheduler import ReduceLROnPlateau


def test_min_mode_cuts_after_patience():
    # epochs 3, 4, 5 do not beat 4 by 1e-4 (relative): the third bad epoch cuts
    metrics = [5, 4, 4, 4, 4, 3, 3, 3, 3, 3]
    opt = sgd((1.0, 0.2))
    seq = lr_sequence(opt, ReduceLROnPlateau(opt, factor=0.5, patience=2), 10, metrics)
    seq.append([g["lr"] for g in opt.param_groups])
    expected = [1, 1, 1, 1, 1, .5, .5, .5, .5, .25, .25]
    assert seq == [[e, 0.2 * e] for e in expected]


def test_relative_threshold_ignores_small_gains():
    # 0.99 is a 1% gain on 1.0: below threshold=0.05, so still a bad epoch
    metrics = [1.0, 0.99, 0.98, 0.90, 0.89, 0.88]
    opt = sgd((1.0,))
    sched = ReduceLROnPlateau(opt, factor=0.1, patience=1, threshold=0.05)
    seq = lr_sequence(opt, sched, 6, metrics) + [[opt.param_groups[0]["lr"]]]
    assert seq == [[1.0], [1.0], [1.0], [0.1], [0.1], [0.1], [0.010000000000000002]]


def test_max_mode_absolute_threshold_cooldown_and_min_lr():
    # a gain must exceed 0.5; after a cut, cooldown=2 epochs do not count as bad
    metrics = [1.0, 1.2, 1.4, 2.0, 2.1, 2.2, 2.3, 2.4, 2.5, 2.6, 2.7]
    opt = sgd((1.0, 0.1))
    sched = ReduceLROnPlateau(opt, mode="max", factor=0.5, patience=1, threshold=0.5,
                              threshold_mode="abs", cooldown=2, min_lr=[0.3, 0.08])
    seq = lr_sequence(opt, sched, 11, metrics) + [[g["lr"] for g in opt.param_groups]]
    # epoch 1: best 1.0; 2: bad 1; 3: bad 2 -> cut (0.5, 0.05 clamped to 0.08), cooldown 2;
    # 4: best 2.0, cooldown 1; 5: bad but in cooldown (0 left); 6: bad 1; 7: bad 2 -> cut
    # (0.25 clamped to 0.3); 8, 9: cooldown; 10: 2.6 > 2.0 + 0.5, best; 11: bad 1
    expected = [[1.0, 0.1]] * 3 + [[0.5, 0.08]] * 4 + [[0.3, 0.08]] * 5
    assert seq == expected
    assert sched.best == 2.6 and sched.num_bad_epochs == 1 and sched.last_epoch == 11


def test_cuts_smaller_than_eps_are_skipped():
    opt = sgd((1e-8,))
    sched = ReduceLROnPlateau(opt, patience=0, eps=1e-8)
    lr_sequence(opt, sched, 3, [1.0, 1.0, 1.0])
    assert opt.param_groups[0]["lr"] == 1e-8


def test_metric_may_be_a_tensor_and_nothing_recorded_at_build():
    opt = sgd((0.3,))
    sched = ReduceLROnPlateau(opt)
    assert "initial_lr" not in opt.param_groups[0] and sched.get_last_lr() == [0.3]
    sched.step(E.tensor(2.5))
    assert sched.best == 2.5


def test_epoch_argument_warns():
    sched = ReduceLROnPlateau(sgd())
    with pytest.warns(UserWarning, match="epoch parameter"):
        sched.step(1.0, epoch=4)
    assert sched.last_epoch == 4


def test_state_dict_round_trip():
    metrics = [3, 2, 2, 2, 1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
    check_round_trip(sgd, lambda o: ReduceLROnPlateau(o, patience=1, cooldown=1), 5, 9,
                     metrics=metrics)


def test_new_group_with_per_group_min_lr_raises():
    opt = sgd((1.0,))
    sched = ReduceLROnPlateau(opt, patience=0, min_lr=[0.0])
    opt.add_param_group({"params": [E.zeros(1).requires_grad_()], "lr": 1.0})
    sched.step(1.0)
    with pytest.raises(RuntimeError, match=r"param groups in the `optimizer` \(2\) differs"):
        sched.step(1.0)
    opt2 = sgd((1.0,))
    sched2 = ReduceLROnPlateau(opt2, patience=0, min_lr=0.5)
    opt2.add_param_group({"params": [E.zeros(1).requires_grad_()], "lr": 1.0})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lr_sequence(opt2, sched2, 2, [1.0, 1.0])
    assert [g["lr"] for g in opt2.param_groups] == [0.5, 0.5]


@pytest.mark.parametrize("kwargs, match", [
    (dict(factor=1.0), "Factor should be < 1.0"),
    (dict(factor=-0.5), "Factor should be >= 0"),
    (dict(mode="avg"), "mode 'avg' is unknown"),
    (dict(threshold_mode="pct"), "threshold mode 'pct' is unknown"),
    (dict(min_lr=[0.1]), "expected 2 min_lrs, got 1"),
    (dict(patience=-1), "non-negative integer patience"),
    (dict(cooldown=1.5), "non-negative integer cooldown"),
])
def test_argument_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ReduceLROnPlateau(sgd(), **kwargs)


def test_needs_an_optimizer():
    with pytest.raises(TypeError, match="is not an Optimizer"):
        ReduceLROnPlateau("sgd")
