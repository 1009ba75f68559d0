"""The symbolic table (``ember/onnx/registry.py``): lookup by opset, user entries shadowing
ember's, handles, validation."""
from __future__ import annotations

import pytest

import ember.onnx as eo
from ember.onnx import registry


def test_builtin_table_covers_the_digits_model():
    ops = eo.registered_ops(17)
    for op in ("ember::_convolution", "ember::relu", "ember::max_pool2d", "ember::flatten",
               "ember::linear", "ember::chunk", "ember::select", "ember::type_as"):
        assert ops[op] == "ember", op


def test_user_entries_shadow_and_remove():
    mine = lambda g, x: g.op("Neg", x)
    handle = eo.register_symbolic("relu", mine)   # bare name means ember::relu
    try:
        assert registry.lookup("ember::relu", 17).fn is mine
        assert eo.registered_ops()["ember::relu"] == "user"
    finally:
        handle.remove()
        handle.remove()                            # a second remove does nothing
    assert registry.lookup("ember::relu", 17).origin == "ember"


def test_opset_versions_pick_the_highest_fitting():
    old, new = (lambda g, x: x), (lambda g, x: x)
    handles = [eo.register_symbolic("my::op", old, opset=13),
               eo.register_symbolic("my::op", new, opset=18)]
    try:
        assert registry.lookup("my::op", 17).fn is old
        assert registry.lookup("my::op", 18).fn is new
        assert registry.lookup("my::op", 21).fn is new
        assert registry.lookup("my::op", 12) is None
    finally:
        for h in handles:
            h.remove()
    assert registry.lookup("my::op", 21) is None


def test_decorator_form():
    @eo.register_symbolic("my::dec")
    def sym(g, x):
        return x
    try:
        assert registry.lookup("my::dec", 17).fn is sym
    finally:
        registry._user.pop("my::dec")


@pytest.mark.parametrize("args, err", [
    (("", lambda g: g), TypeError), ((3, lambda g: g), TypeError),
    (("ember::x", "notcallable"), TypeError),
])
def test_bad_entries(args, err):
    with pytest.raises(err):
        eo.register_symbolic(*args)
    with pytest.raises(ValueError, match="positive int"):
        eo.register_symbolic("ember::x", lambda g: g, opset=0)


def test_as_symbolic_accepts_the_hook_forms():
    fn = lambda g, x: x
    assert registry.as_symbolic(("ember::a", fn)).opset == eo.MIN_OPSET
    assert registry.as_symbolic(("a", fn, 18)).op == "ember::a"
    assert registry.as_symbolic(eo.Symbolic("a", fn), origin="plugin:p").origin == "plugin:p"
    with pytest.raises(TypeError, match="ember_onnx_symbolics must return"):
        registry.as_symbolic(["a", fn])
