"""Schema parser: PyTorch syntax in, frozen dataclasses out; malformed text fails with file:line."""
import pytest

from ember.ops.schema import Location, SchemaError, parse_schema


def test_full_syntax_round_trips():
    text = ("conv(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, "
            "bool[2] mask=[True, False], *, ScalarType? dtype=None) -> Tensor")
    s = parse_schema(text)
    assert s.name == "conv" and s.overload == ""
    bias, stride, mask, dtype = s.arguments[2:]
    assert bias.type.optional and bias.default == "None"
    assert stride.type.is_list and stride.type.size == 2 and stride.default == "1"
    assert mask.type.base == "bool" and mask.type.size == 2
    assert dtype.kwarg_only and not stride.kwarg_only
    assert str(s) == text


def test_overload_alias_and_tuple_returns():
    s = parse_schema("max.dim(Tensor self, int dim, bool keepdim=False) -> "
                     "(Tensor values, Tensor indices)")
    assert s.qualified_name == "max.dim"
    assert [r.name for r in s.returns] == ["values", "indices"]
    view = parse_schema("view(Tensor(a) self, int[] size) -> Tensor(a)")
    assert view.is_view and not view.is_inplace
    inplace = parse_schema("add_(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)")
    assert inplace.is_inplace and inplace.arguments[0].alias.is_write
    out = parse_schema("add.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)")
    assert out.out_argument.name == "out"
    lst = parse_schema("cat(Tensor[] tensors, int dim=0) -> Tensor")
    assert lst.arguments[0].type.is_tensor_list
    chunk = parse_schema("chunk(Tensor(a) self, int chunks, int dim=0) -> Tensor(a)[]")
    assert chunk.returns[0].type.is_tensor_list and chunk.is_view


@pytest.mark.parametrize("text, words", [
    ("add(Tensor self, Tensor other) Tensor", "no '->'"),
    ("add(Tensr self) -> Tensor", "unknown type 'Tensr'"),
    ("add(Tensor self, int x=1, int y) -> Tensor", "has no default but follows one"),
    ("add(Tensor self, Tensor self) -> Tensor", "repeated argument name 'self'"),
    ("add(Tensor) -> Tensor", "must be 'Type name'"),
    ("add(Tensor self, int x=foo) -> Tensor", "not a Python literal"),
    ("1add(Tensor self) -> Tensor", "bad op name"),
    ("add(Tensor self, *, *, int a) -> Tensor", "'*' appears twice"),
])
def test_malformed_schemas_name_their_location(text, words):
    with pytest.raises(SchemaError) as err:
        parse_schema(text, Location("native_functions.yaml", 42))
    assert str(err.value).startswith("native_functions.yaml:42: ")
    assert words in str(err.value)
