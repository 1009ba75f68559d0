"""IR value types: construction, printing, parsing back, merge and unify."""
import re

import pytest

import ember as E
from ember.jit.ir.ir_types import (AnyType, BoolType, DeviceType, FloatType, IntType, ListType,
                                   NoneType, OptionalType, ScalarTypeType, StringType, TensorType,
                                   TupleType, unify_types)
from ember.jit.ir.parser import IRParseError, parse_type

T = TensorType
CASES = [
    (T(), "Tensor"),
    (T(E.float32, sizes=(2, 3)), "Float(2, 3)"),
    (T(E.float64, rank=2), "Double(*, *)"),
    (T(E.float32, sizes=(2, None)), "Float(2, *)"),
    (T(E.float32, sizes=(2, 3), requires_grad=True), "Float(2, 3, requires_grad=1)"),
    (T(E.int64, E.Device("cpu"), sizes=(4,), requires_grad=False),
     "Long(4, requires_grad=0, device=cpu)"),
    (T(E.float16, "cuda:1", rank=1), "Half(*, device=cuda:1)"),
    (T(E.bool_, rank=0), "Bool()"),
    (T(E.float32, rank=0, requires_grad=True), "Float(requires_grad=1)"),
    (T(E.bfloat16), "BFloat16"),
    (T(E.float32, requires_grad=False), "Float(..., requires_grad=0)"),
    (T(sizes=(1, 2)), "Tensor(1, 2)"),
    (IntType(), "int"), (FloatType(), "float"), (BoolType(), "bool"),
    (NoneType(), "NoneType"), (StringType(), "str"), (DeviceType(), "Device"),
    (ScalarTypeType(), "ScalarType"), (AnyType(), "Any"),
    (ListType(IntType()), "int[]"), (ListType(T()), "Tensor[]"),
    (ListType(T(E.float32, sizes=(2,))), "Float(2)[]"),
    (TupleType((T(), IntType())), "(Tensor, int)"), (TupleType(()), "()"),
    (OptionalType(T()), "Tensor?"), (OptionalType(ListType(IntType())), "int[]?"),
    (ListType(TupleType((IntType(), OptionalType(FloatType())))), "(int, float?)[]"),
]


@pytest.mark.parametrize("t, text", CASES, ids=[c[1] for c in CASES])
def test_print_and_parse(t, text):
    assert str(t) == text
    assert parse_type(text) == t
    assert parse_type(" " + text.replace(", ", " ,  ") + "\n") == t  # whitespace-lenient


def test_tensor_type_fields_and_errors():
    t = T(E.float32, sizes=(2, 3))
    assert t.rank == 2 and t.concrete_sizes() == (2, 3) and not t.is_complete
    assert T(rank=2).sizes == (None, None) and T(rank=2) == T(sizes=(None, None))
    assert T(rank=2).concrete_sizes() is None
    assert t.with_sizes([4]).sizes == (4,) and t.with_sizes(None).rank is None
    assert t.with_dtype(E.int32).dtype is E.int32
    assert t.with_device("cpu").device == E.Device("cpu")
    assert t.with_requires_grad(True).requires_grad is True
    with pytest.raises(ValueError, match="rank=3 but 2 sizes"):
        T(rank=3, sizes=(1, 2))
    with pytest.raises(ValueError, match="non-negative"):
        T(sizes=(-1,))
    with pytest.raises(TypeError, match="ember dtype"):
        T(dtype="float32")
    assert hash(T(E.float32, rank=1)) == hash(T(E.float32, sizes=(None,)))
    assert IntType() == IntType() and IntType() != FloatType() and len({IntType(), IntType()}) == 1


def test_from_tensor():
    t = TensorType.from_tensor(E.ones(2, 3, dtype=E.float64, requires_grad=True))
    assert t == T(E.float64, E.Device("cpu"), sizes=(2, 3), requires_grad=True)
    assert t.is_complete and str(t) == "Double(2, 3, requires_grad=1, device=cpu)"
    assert TensorType.from_tensor(E.tensor(1.0)).rank == 0


def test_merge_and_unify():
    a = T(E.float32, E.Device("cpu"), sizes=(2, 3), requires_grad=False)
    b = T(E.float32, E.Device("cpu"), sizes=(2, 4), requires_grad=True)
    assert a.merge(b) == T(E.float32, E.Device("cpu"), sizes=(2, None))
    assert a.merge(T(E.float64, sizes=(2,))) == T()
    assert unify_types(a, a) is a and unify_types(a, b) == a.merge(b)
    assert unify_types(NoneType(), T()) == OptionalType(T())
    assert unify_types(OptionalType(a), b) == OptionalType(a.merge(b))
    assert unify_types(ListType(a), ListType(b)) == ListType(a.merge(b))
    assert unify_types(TupleType((a, IntType())), TupleType((b, IntType()))) == \
        TupleType((a.merge(b), IntType()))
    assert unify_types(IntType(), FloatType()) is None
    assert unify_types(TupleType((IntType(),)), TupleType((StringType(),))) is None
    assert unify_types(AnyType(), IntType()) == AnyType()
    assert ListType(T()).contains_tensor and not ListType(IntType()).contains_tensor
    assert TupleType((IntType(), OptionalType(T()))).contains_tensor


@pytest.mark.parametrize("text, msg", [
    ("Floaty", "expected a type"), ("Float(2, x=1)", "expected a size"),
    ("int[", "expected ']'"), ("Float(2, 3", "expected ',' or ')'"), ("int int", "end of the"),
])
def test_parse_type_errors(text, msg):
    with pytest.raises(IRParseError, match=re.escape(msg)):
        parse_type(text)
