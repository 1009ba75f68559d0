"""ArgumentSpec keys plans: equal for calls that may share a plan, different otherwise."""
from __future__ import annotations

import ember as E
from ember.jit.runtime.argument_spec import ArgumentSpec, TensorArg, TensorListArg, ValueArg, \
            flatten_inputs
from ember.types import Device


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


def test_entries_have_field_names():
    x = E.zeros(2, 3, dtype=E.float64, requires_grad=True)
    (t, tl, v, none) = spec(x, [x, E.zeros(1)], 3, None).inputs
    assert t == TensorArg(dtype=E.float64, device=Device("cpu"), rank=2, requires_grad=True)
    assert (t.dtype, t.device, t.rank, t.requires_grad) == (E.float64, Device("cpu"), 2, True)
    assert tl.items == (t, TensorArg(E.float32, Device("cpu"), 1, False))
    assert isinstance(tl, TensorListArg)
    assert v == ValueArg("int") and v.type_name == "int" and none == ValueArg("NoneType")
    # entries of different kinds never compare equal, so specs of them never collide
    assert ValueArg("Tensor") != TensorListArg(("Tensor",))
    assert spec(x, grad=False).inputs[0].requires_grad is False
