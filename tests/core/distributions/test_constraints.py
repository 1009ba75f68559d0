"""Constraints: check() values and shapes for each constraint, reprs, dependent
placeholders."""
import math

import numpy as np
import pytest
from core.distributions.helpers import t

import ember
from ember.distributions import Uniform, constraints as C


def _check(constraint, values):
    return constraint.check(t(values)).numpy().tolist()


def test_elementwise_constraints():
    v = [-1.0, 0.0, 0.5, 1.0, 2.0, math.nan]
    assert _check(C.real, v) == [True] * 5 + [False]
    assert _check(C.positive, v) == [False, False, True, True, True, False]
    assert _check(C.nonnegative, v) == [False, True, True, True, True, False]
    assert _check(C.unit_interval, v) == [False, True, True, True, False, False]
    assert _check(C.boolean, v) == [False, True, False, True, False, False]
    assert _check(C.nonnegative_integer, v) == [False, True, False, True, True, False]
    assert _check(C.positive_integer, v) == [False, False, False, True, True, False]
    assert _check(C.integer_interval(0, 1), v) == [False, True, False, True, False, False]
    assert _check(C.interval(-1, 1), v) == [True, True, True, True, False, False]
    assert _check(C.half_open_interval(-1, 1), v) == [True, True, True, False, False, False]
    assert _check(C.greater_than(0.5), v) == [False, False, False, True, True, False]
    assert _check(C.greater_than_eq(0.5), v) == [False, False, True, True, True, False]
    assert _check(C.less_than(0.5), v) == [True, True, False, False, False, False]
    ints = ember.tensor([0, 1, 3])
    assert C.integer_interval(0, 2).check(ints).numpy().tolist() == [True, True, False]


def test_event_constraints_reduce_event_dims():
    assert _check(C.simplex, [[0.2, 0.8], [0.5, 0.6], [-0.1, 1.1]]) == [True, False, False]
    assert _check(C.one_hot, [[0, 1], [1, 1], [0.5, 0.5]]) == [True, False, False]
    assert _check(C.real_vector, [[0.0, 1.0], [math.nan, 0.0]]) == [True, False]
    assert _check(C.multinomial(3), [[1, 2], [2, 2], [-1, 1]]) == [True, False, False]
    assert C.independent(C.positive, 2).check(ember.ones(4, 2, 3)).shape == (4,)
    assert C.independent(C.positive, 1).event_dim == 1
    eye = np.eye(2)
    mats = np.stack([eye, [[1.0, 0.0], [2.0, 3.0]], [[1.0, 2.0], [0.0, 1.0]], [[-1.0, 0], [0, 1]]])
    assert _check(C.lower_triangular, mats) == [True, True, False, True]
    assert _check(C.lower_cholesky, mats) == [True, True, False, False]
    assert _check(C.symmetric, mats) == [True, False, False, True]
    assert _check(C.positive_definite, mats[[0, 3]]) == [True, False]
    assert _check(C.positive_semidefinite, np.stack([eye, np.zeros((2, 2)), -eye])) == \
        [True, True, False]
    assert _check(C.square, np.zeros((3, 2, 2))) == [True] * 3
    assert not bool(C.square.check(ember.zeros(2, 3)))


def test_cat_and_stack():
    c = C.cat([C.positive, C.real], dim=0, lengths=[2, 1])
    assert _check(c, [1.0, -1.0, -5.0]) == [True, False, True]
    s = C.stack([C.positive, C.unit_interval], dim=-1)
    assert _check(s, [[1.0, 0.5], [-1.0, 2.0]]) == [[True, True], [False, False]]


def test_reprs_and_dependent():
    assert repr(C.positive) == "GreaterThan(lower_bound=0.0)"
    assert repr(C.integer_interval(0, 3)) == "IntegerInterval(lower_bound=0, upper_bound=3)"
    assert repr(C.real) == "Real()"
    assert repr(C.independent(C.real, 1)) == "IndependentConstraint(Real(), 1)"
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    with pytest.raises(ValueError, match="dependent constraint"):
        C.dependent.check(ember.ones(1))
    with pytest.raises(NotImplementedError, match="statically"):
        C.dependent.event_dim
    assert C.dependent(is_discrete=True, event_dim=1).event_dim == 1
    # a dependent_property is a placeholder on the class and the constraint on an instance
    assert C.is_dependent(Uniform.support) and Uniform.support.event_dim == 0
    assert isinstance(Uniform(0.0, 1.0).support, C.interval)
    with pytest.raises(TypeError, match="expected a Constraint"):
        C.independent(3, 1)
