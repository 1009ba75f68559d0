"""Overload dispatch (``ops/overloads.py``): the first overload, in declaration order, whose
arguments bind and whose kinds match is called; a positional-only call remembers its choice
by argument types. Values are compared with numpy."""
import numpy as np
import pytest

import ember as E
from ember.ops import overloads

X = np.array([[1.0, 5.0], [3.0, 2.0]])


def test_every_overload_of_max_is_reached_again_from_the_remembered_choice():
    x, y = E.tensor(X), E.tensor(X[::-1].copy())
    for _ in range(2):  # the second round takes the remembered choices
        assert x.max().item() == 5.0
        values, indices = x.max(1)
        assert values.tolist() == [5.0, 3.0] and indices.tolist() == [1, 0]
        assert E.max(x, y).tolist() == np.maximum(X, X[::-1]).tolist()
        assert E.max(x, 1, True).values.shape == (2, 1)
        assert x.max(dim=0, keepdim=True).values.tolist() == [[3.0, 5.0]]
    assert E.Tensor.max.chosen[E.Tensor] is E.ops.codegen.NAMESPACE["max"]
    assert E.max.chosen[E.Tensor, E.Tensor] is E.ops.codegen.NAMESPACE["max__other"]


def test_keyword_calls_are_matched_every_time():
    x = E.tensor(X)
    before = dict(E.Tensor.min.chosen)
    assert x.min(dim=1).values.tolist() == [1.0, 2.0]
    assert E.Tensor.min.chosen == before


def test_a_remembered_choice_still_checks_the_values():
    x = E.ones(2)
    x.max(0)
    with pytest.raises(IndexError, match=r"max\(\): dimension out of range"):
        x.max(5)


def test_a_call_that_fits_no_overload_raises_every_time():
    for _ in range(2):
        with pytest.raises(TypeError, match=r"max\(\) received an invalid combination of "
                                            r"arguments - got \(Tensor, str\)"):
            E.max(E.ones(2), "x")


def test_only_so_many_choices_are_remembered():
    class Int(int):
        pass
    x = E.tensor(X)
    for i in range(overloads._MAX_CHOSEN + 5):
        dim = type(f"Int{i}", (Int,), {})(1)
        assert x.max(dim).values.tolist() == [5.0, 3.0]
    assert len(E.Tensor.max.chosen) <= overloads._MAX_CHOSEN


def test_an_argument_whose_class_is_not_its_type_is_not_remembered_by_type():
    class Proxy:  # isinstance() sees both its type and the class it claims
        __class__ = property(lambda self: int)
    assert not overloads._plain_types((E.ones(1), Proxy()))
    assert overloads._plain_types((E.ones(1), 1, "fro", [1]))
