"""native_functions.yaml loading: entries validated, errors carry file:line."""
import pytest

import ember as E
from ember.ops import native, table
from ember.ops.schema import SchemaError

GOOD = """
- func: add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  variants: function, method
  promote: common
  structured: inplace, out
"""


def test_entry_derives_inplace_and_out_schemas():
    (nf,) = native.load("test.yaml", text=GOOD)
    assert nf.variants == {"function", "method"} and nf.promote_args == ("self", "other")
    assert str(nf.inplace_schema) == \
        "add_(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)"
    assert nf.out_schema.out_argument is not None
    assert str(nf.location) == "test.yaml:2"
    assert nf.number_self is False  # the default: a number self raises (test_codegen.py)


@pytest.mark.parametrize("text, words", [
    ("- func: add(Tensor self) -> Tensor\n  variants: funktion\n", "variants must be"),
    ("- func: add(Tensor self) -> Tensor\n  dispatch: gpu\n", "dispatch must be"),
    ("- func: add(Tensor self) -> Tensor\n  promote: widest\n", "promote must be"),
    ("- func: add(Tensor self) -> Tensor\n  colour: red\n", "unknown key(s) ['colour']"),
    ("- func: add(Tensor self, int n) -> Tensor\n  promote: common\n  promote_args: n\n",
     "not a Tensor argument"),
    ("- func: f(int n) -> Tensor\n  variants: method\n", "needs 'self'"),
    ("- func: add(Tensor self) -> (Tensor a, Tensor b)\n  structured: out\n",
     "single Tensor return"),
    ("- variants: method\n", "needs a 'func: <schema>'"),
    ("- func: a(Tensor self) -> Tensor\n- func: a(Tensor self) -> Tensor\n",
     "declared twice (first at bad.yaml:1)"),
    ("- func: add(Tensor self) -> Tensr\n", "unknown type 'Tensr'"),
    ("- func: sub(Tensor self) -> Tensor\n  check: no_ints\n", "unknown check 'no_ints'"),
    ("- func: f(Tensor self, Tensor other) -> Tensor\n  promote: common\n  number_self: maybe\n",
     "number_self must be false, true or with_tensor, got 'maybe'"),
    ("- func: f(Tensor self, Tensor other) -> Tensor\n  number_self: true\n",
     "number_self needs a promoted 'self'"),
    ("- func: f(Tensor c, Tensor self) -> Tensor\n  promote: common\n  promote_args: c\n"
     "  number_self: true\n", "f promotes ['c']"),
    ("- func: f(Tensor self) -> Tensor\n  promote: float\n  number_self: with_tensor\n",
     "with_tensor needs another promoted operand"),
])
def test_malformed_entries_fail_with_location(text, words):
    with pytest.raises(SchemaError, match="^bad.yaml:") as err:
        native.load("bad.yaml", text="\n" * 0 + text)
    assert words in str(err.value)


def test_real_table_loads_and_every_op_is_documented():
    rows = table()
    assert ("add", "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor") == rows[0][:2]
    for nf in native.load():
        assert nf.doc, f"{nf.location}: {nf.kernel_name} has no doc"


def test_generated_api_has_python_binding_errors():
    x = E.ones(2)
    with pytest.raises(TypeError, match=r"add\(\) got an unexpected keyword argument 'beta'"):
        E.add(x, x, beta=2)
    with pytest.raises(TypeError, match=r"argument 'other' \(position 2\) must be Tensor or "
                                        r"Number, not str"):
        E.add(x, "a")
    with pytest.raises(TypeError, match=r"argument 'alpha' \(position 3\) must be Number"):
        E.add(x, x, alpha="2")
    assert "native_functions.yaml" in E.add.__doc__ and "Tensor self" in E.add.__doc__
