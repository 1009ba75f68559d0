"""LambdaLR and MultiplicativeLR against products of the user's factors."""
import math

import pytest
from core.optim.lr_scheduler.sched_cases import (BASE_LRS, assert_lrs, check_round_trip,
                                                 lr_sequence, sgd)

from ember.optim.lr_scheduler import LambdaLR, MultiplicativeLR


class Warmup:
    """A callable object: its attributes are what a state dict saves."""

    def __init__(self, steps):
        self.steps = steps

    def __call__(self, epoch):
        return min(1.0, (epoch + 1) / self.steps)


def test_lambda_lr_one_function_per_group():
    opt = sgd()
    fns = [lambda e: 0.9 ** e, lambda e: 1 / (1 + e)]
    seq = lr_sequence(opt, LambdaLR(opt, fns), 20)
    assert_lrs(seq, [[0.1 * 0.9 ** e, 0.5 / (1 + e)] for e in range(20)])


def test_lambda_lr_one_function_for_all_groups():
    opt = sgd()
    seq = lr_sequence(opt, LambdaLR(opt, Warmup(4)), 20)
    assert_lrs(seq, [[b * min(1.0, (e + 1) / 4) for b in BASE_LRS] for e in range(20)])


def test_multiplicative_lr_multiplies_from_epoch_one():
    opt = sgd()
    fns = [lambda e: 0.95, lambda e: 1 - 0.01 * e]
    seq = lr_sequence(opt, MultiplicativeLR(opt, fns), 20)
    expected = [[0.1 * 0.95 ** e, 0.5 * math.prod(1 - 0.01 * k for k in range(1, e + 1))]
                for e in range(20)]
    assert_lrs(seq, expected)


@pytest.mark.parametrize("cls", [LambdaLR, MultiplicativeLR])
def test_state_dict_saves_callable_objects_not_functions(cls):
    opt = sgd()
    obj = Warmup(5)
    sched = cls(opt, [obj, lambda e: 0.9])
    saved = sched.state_dict()
    assert saved["lr_lambdas"] == [{"steps": 5}, None]
    obj.steps = 99
    sched.load_state_dict(saved)
    assert obj.steps == 5 and sched.lr_lambdas[0] is obj


@pytest.mark.parametrize("cls", [LambdaLR, MultiplicativeLR])
def test_state_dict_round_trip(cls):
    check_round_trip(sgd, lambda o: cls(o, [Warmup(6), lambda e: 0.9]), 4, 6)


@pytest.mark.parametrize("cls", [LambdaLR, MultiplicativeLR])
def test_argument_errors(cls):
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        cls(sgd(), [lambda e: 1.0])
    with pytest.raises(TypeError, match="lr_lambda should be a function, but got float"):
        cls(sgd(), 0.5)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        cls(object(), lambda e: 1.0)
