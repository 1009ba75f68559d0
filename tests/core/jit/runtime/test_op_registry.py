"""op_registry: every native op (and its in-place variant) is a node kind with a schema and
a way to call it in schema order."""
import numpy as np
import pytest

import ember as E
from ember.jit.runtime import op_registry
from ember.jit.runtime.op_registry import UnknownOpError, is_op_kind, op_info, register_python_op
from helpers import assert_close, to_np


def test_functional_op_info():
    info = op_info("ember::add")
    assert info.kind == "ember::add"
    assert [a.name for a in info.schema.arguments] == ["self", "other", "alpha"]
    assert info.keyword_names == ("alpha",)
    assert not info.inplace and not info.composite
    assert info.kernel_name == "add"
    assert info.fn is E.add


def test_inplace_variant_is_its_own_kind():
    info = op_info("ember::add_")
    assert info.inplace
    assert info.kernel_name == "add"
    x = E.ones(3)
    out = info.call(x, E.full((3,), 2.0), 1)
    assert out is x
    assert_close(x, np.full(3, 3.0))


def test_overload_kind_and_multiple_returns():
    info = op_info("ember::max.dim")
    assert info.kernel_name == "max.dim"
    assert len(info.schema.returns) == 2
    x = E.tensor([[1.0, 5.0], [7.0, 2.0]])
    values, indices = info.call(x, 1, False)
    assert_close(values, np.array([5.0, 7.0]))
    assert to_np(indices).tolist() == [1, 0]


def test_composite_flag():
    assert op_info("ember::linear").composite
    assert op_info("ember::layer_norm").composite
    assert not op_info("ember::mm").composite


def test_call_passes_keyword_only_arguments_by_name():
    x, y = E.tensor([1.0, 2.0]), E.tensor([10.0, 20.0])
    assert_close(op_info("ember::add").call(x, y, 3), np.array([31.0, 62.0]))
    s = op_info("ember::sum").call(E.ones(2, 3), [1], False, E.float64)
    assert s.dtype is E.float64
    assert_close(s, np.full(2, 3.0))


def test_variadic_list_is_spread():
    info = op_info("ember::view")
    assert info.variadic
    assert info.call(E.arange(6), [2, 3]).shape == (2, 3)
    assert info.call_source("_f", ["x", "s"]) == "_f(x, *s)"


def test_call_source_matches_call():
    info = op_info("ember::add")
    assert info.call_source("_f", ["a", "b", "c"]) == "_f(a, b, alpha=c)"
    assert op_info("ember::mm").call_source("_g", ["a", "b"]) == "_g(a, b)"


def test_handwritten_ops():
    x = E.arange(6, dtype=E.float32).reshape(2, 3)
    to = op_info("ember::_to_copy")
    assert to.schema is None and to.keyword_names == () and not to.variadic
    assert to.call(x, E.float64, None).dtype is E.float64
    assert to.call_source("_f", ["a", "b", "c"]) == "_f(a, b, c)"
    assert op_info("ember::index_put_").inplace
    assert is_op_kind("ember::index")


def test_register_python_op():
    kind = "ember::_test_registry_twice"
    register_python_op(kind, lambda t: t * 2)
    try:
        assert is_op_kind(kind)
        assert_close(op_info(kind).call(E.ones(2)), np.full(2, 2.0))
    finally:
        op_registry._TABLE.pop(kind, None)
    assert not is_op_kind(kind)


def test_unknown_kind():
    assert not is_op_kind("ember::no_such_op")
    assert not is_op_kind("prim::Constant")
    with pytest.raises(UnknownOpError, match="ember::no_such_op"):
        op_info("ember::no_such_op")
    with pytest.raises(KeyError):
        op_info("aten::add")


def test_every_native_function_has_a_kind():
    from ember.ops import FUNCTIONS
    for nf in FUNCTIONS:
        info = op_info("ember::" + nf.kernel_name)
        assert info.nf is nf
        assert info.composite == (nf.dispatch == "composite")
