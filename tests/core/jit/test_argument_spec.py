"""ArgumentSpec keys plans: equal for calls that may share a plan, different otherwise."""
from __future__ import annotations

import ember as E
from ember.jit.argument_spec import ArgumentSpec, flatten_inputs


def spec(*args, grad=True):
    return ArgumentSpec.of(args, grad)


def test_shapes_are_not_part_of_the_key():
    assert spec(E.zeros(2, 3)) == spec(E.zeros(5, 7))
    assert hash(spec(E.zeros(2, 3))) == hash(spec(E.zeros(5, 7)))


def test_dtype_rank_and_requires_grad_are():
    base = spec(E.zeros(2, 3))
    assert base != spec(E.zeros(2, 3, dtype=E.float64))
    assert base != spec(E.zeros(6))
    assert base != spec(E.zeros(2, 3, requires_grad=True))


def test_grad_mode_off_ignores_requires_grad():
    x = E.zeros(2, requires_grad=True)
    off = spec(x, grad=False)
    assert off == spec(E.zeros(2), grad=False)
    assert not off.requires_grad and spec(x).requires_grad
    assert off != spec(E.zeros(2), grad=True)


def test_nested_and_non_tensor_inputs():
    x = E.zeros(2)
    assert flatten_inputs((x, (1, [x, None]), "s")) == [x, 1, x, None, "s"]
    assert spec(x, (1, None)) == spec(E.ones(3), (7, None))
    assert spec(x, 1) != spec(x, 1.0)
    assert spec(x, None) != spec(x, x)


def test_str_names_each_input():
    text = str(spec(E.zeros(2, requires_grad=True), 3))
    assert "Tensor(float32" in text and "requires_grad" in text and "int" in text
