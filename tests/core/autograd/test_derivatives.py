"""``ember/autograd/derivatives.py`` (the loader of ``derivatives.yaml``) and the Node
classes ``autograd/codegen.py`` generates from it: malformed entries fail with their
file:line, node names follow PyTorch's, and the engine reduces and casts each gradient to
its input's shape and dtype."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

import ember as E
from ember import ops
from ember.autograd import codegen, derivatives
from ember.autograd.derivatives import DerivativeError
from helpers import assert_close

MUL = """\
- name: mul(Tensor self, Tensor other) -> Tensor
  self: grad * other
  other: grad * self
"""


def load(text: str):
    return derivatives.load("test.yaml", text=textwrap.dedent(text))


def test_loads_an_entry_with_its_location():
    d = load("# a comment\n" + MUL)["mul"]
    assert str(d.location) == "test.yaml:2"
    assert d.differentiable_inputs == ["self", "other"]
    assert [f.expression for f in d.formulas] == ["grad * other", "grad * self"]
    assert str(d.formulas[1].location) == "test.yaml:4"


def test_the_shipped_file_loads_and_matches_native_functions():
    derivs = derivatives.load()
    derivatives.check_against(ops.FUNCTIONS, derivs)
    assert derivs.keys() == ops.DERIVATIVES.keys()


@pytest.mark.parametrize("text, where, match", [
    (("- name: mul(Tensor self, Tensor other) -> Tensor\n  self: grad * other\n"
      "  othr: grad * self\n"), 3, "has no argument 'othr'.*self, other"),
    (("- name: add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n  self: grad\n"
      "  other: grad\n  alpha: grad\n"), 4, "'alpha' of add is not a Tensor"),
    ("- name: mul(Tensor self, Tensor other) -> Tensor\n  self: grad * other\n", 1,
     "no formula for Tensor input.*other.*'other: non_differentiable'"),
    ("- name: mul(Tensor self, Tensor other) -> Tensor\n  self: grad *\n  other: grad\n", 2,
     "formula for 'self' is not a Python expression"),
    (MUL + "\n" + MUL, 5, "derivative for 'mul' given twice \\(first at test.yaml:1\\)"),
    (("- name: sort(Tensor self, int dim=-1) -> (Tensor values, Tensor indices)\n"
      "  self: grad\n  output_differentiability: [true]\n"), 1,
     "output_differentiability must list true/false for each of the 2 outputs"),
    (("- name: sort(Tensor self, int dim=-1) -> (Tensor values, Tensor indices)\n"
      "  self: grad\n  output_differentiability: [true, maybe]\n"), 1,
     "output_differentiability"),
    ("- name: mul(Tensor self, Tensor other) -> Tensor\n  self: grad\n  self, other: grad\n",
     3, "two formulas for 'self'"),
    ("- name: mul(Tensor self, Tensor other) -> Tensor\n  self: grad\n  other: ''\n", 3,
     "must be a Python expression or 'non_differentiable'"),
    (("- name: eq(Tensor self, Tensor other) -> Tensor\n  not_differentiable: true\n"
      "  self: grad\n  other: grad\n"), 1, "marked not_differentiable but also gives formulas"),
    ("- name: eq(Tensor self, Tensor other) -> Tensor\n  not_differentiable: yes please\n", 1,
     "not_differentiable must be true or false"),
    ("- name: cat(Tensor[] tensors, Tensor other) -> Tensor\n  tensors: grad\n  other: grad\n",
     1, "Tensor\\[\\] input \\(tensors\\) must be the op's only Tensor input"),
    ("- name: neg(Tensor self) -> Tensor\n  handwritten: 1.5\n  self: -grad\n", 1,
     "handwritten must be true or false"),
], ids=["unknown_argument", "formula_for_scalar", "missing_tensor_formula", "syntax_error",
        "duplicate_entry", "output_differentiability_length", "output_differentiability_value",
        "two_formulas_for_one_input", "empty_formula", "not_differentiable_with_formulas",
        "not_differentiable_value", "tensor_list_with_other_tensors", "handwritten_value"])
def test_malformed_entry_names_file_and_line(text, where, match):
    with pytest.raises(DerivativeError, match=f"^test.yaml:{where}: .*{match}"):
        derivatives.load("test.yaml", text=text)


@pytest.mark.parametrize("text, match", [
    ("- name: mul(Tensor self, Tensor other\n  self: grad\n", "test.yaml"),
    ("- name: [1, 2\n", "not valid YAML"),
    ("name: mul(Tensor self) -> Tensor\n", "expected a list"),
    ("- self: grad\n", "each entry must be a mapping starting with 'name: <schema>'"),
], ids=["bad_schema", "bad_yaml", "not_a_list", "no_name"])
def test_malformed_file_is_rejected(text, match):
    with pytest.raises(DerivativeError, match=match):
        derivatives.load("test.yaml", text=text)


def _check(text):
    derivatives.check_against(ops.FUNCTIONS, load(text))


def test_schema_mismatch_with_native_functions_names_both_places():
    text = "- name: mul(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n" \
           "  self: grad\n  other: grad\n"
    with pytest.raises(DerivativeError, match=r"(?s)^test.yaml:1: the schema of 'mul' differs "
                       r"from its declaration at native_functions.yaml:\d+.*here: .*alpha.*"
                       r"declared: mul\(Tensor self, Tensor other\) -> Tensor"):
        _check(text)


def test_undeclared_op_must_be_marked_handwritten():
    with pytest.raises(DerivativeError, match="^test.yaml:1: no op 'frobnicate' in "
                       "native_functions.yaml.*handwritten: true"):
        _check("- name: frobnicate(Tensor self) -> Tensor\n  self: grad\n")
    _check("- name: frobnicate(Tensor self) -> Tensor\n  handwritten: true\n  self: grad\n")


def test_declared_op_may_not_be_marked_handwritten():
    with pytest.raises(DerivativeError, match="^test.yaml:1: 'mul' is declared in "
                       "native_functions.yaml.*drop 'handwritten: true'"):
        _check(MUL.replace("-> Tensor\n", "-> Tensor\n  handwritten: true\n"))


@pytest.mark.parametrize("formula, name", [
    ("grad * othr", "othr"),
    ("no_such_helper(grad, self)", "no_such_helper"),
    ("grad * __import__('os')", "__import__"),
], ids=["misspelt_argument", "unknown_helper", "unsafe_builtin"])
def test_unknown_name_in_formula_is_rejected_at_codegen(formula, name):
    d = load(MUL.replace("grad * other", formula))["mul"]
    with pytest.raises(DerivativeError, match=f"^test.yaml:2: formula for self of mul uses "
                       f"unknown name '{name}'"):
        codegen.generate(d, "MulBackwardTest", codegen.namespace())


def test_generated_code_reads_only_what_it_saves():
    src = codegen.generate(load(MUL)["mul"], "MulBackwardTest", codegen.namespace())
    assert "class MulBackwardTest(_GeneratedNode):" in src
    assert "def record_MulBackwardTest(_inplace, self, other):" in src
    assert "_r[0] = grad * other" in src and "_r[1] = grad * self" in src


# --- generated nodes in use ------------------------------------------------------------------

def leaf(x, dtype=E.float64):
    return E.tensor(np.asarray(x, dtype=np.float64), dtype=dtype, requires_grad=True)


X = np.array([[0.5, -1.5, 2.0], [1.0, 0.25, -0.75]])


@pytest.mark.parametrize("f, name", [
    (lambda x: x * 2, "MulBackward0"),
    (lambda x: x + x, "AddBackward0"),
    (lambda x: x.sum(), "SumBackward0"),
    (lambda x: x.max(), "MaxBackward0"),
    (lambda x: x.max(1)[0], "MaxBackward1"),
    (lambda x: E.max(x, x * 2), "MaxBackward2"),
    (lambda x: x.norm("fro"), "NormBackward0"),
    (lambda x: x.norm(3), "NormBackward1"),
    (lambda x: E.lerp(x, x, 0.5), "LerpBackward1"),
    (lambda x: x.t(), "TBackward0"),
    (lambda x: x.split(1)[1], "SplitBackward0"),
    (lambda x: x.to(E.float32), "ToCopyBackward0"),
    (lambda x: x[0], "IndexBackward0"),
    (lambda x: x.clone().exp_(), "ExpBackward0"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_generated_node_names(f, name):
    assert f(leaf(X)).grad_fn.name() == name


def test_leaf_edges_are_accumulate_grad_and_constants_get_none():
    x = leaf(X)
    y = x * E.tensor(X)
    assert y.grad_fn.next_functions[0][0].name() == "AccumulateGrad"
    assert y.grad_fn.next_functions[1] is None


def test_non_differentiable_outputs_do_not_require_grad():
    x = leaf(X)
    values, indices = x.max(1)  # output_differentiability: [true, false]
    assert values.requires_grad and not indices.requires_grad
    assert not (x > 0).requires_grad  # not_differentiable: true
    assert x.argmax().grad_fn is None


@pytest.mark.parametrize("a_shape, a_dtype, b_shape, b_dtype", [
    ((3, 1), E.float32, (4,), E.float64),
    ((4,), E.float64, (3, 1), E.float32),
    ((2, 1, 4), E.float32, (3, 1), E.float32),
    ((), E.float32, (2, 3), E.float64),
], ids=["f32_col_f64_row", "f64_row_f32_col", "3d_with_2d", "0d_f32_with_f64"])
def test_gradients_are_reduced_to_operand_shape_and_dtype(a_shape, a_dtype, b_shape, b_dtype):
    rng = np.random.default_rng(0)
    an, bn = rng.uniform(-2, 2, a_shape), rng.uniform(-2, 2, b_shape)
    a, b = leaf(an, a_dtype), leaf(bn, b_dtype)
    an, bn = (t.detach().numpy().astype(np.float64) for t in (a, b))  # values as stored
    out = a * b
    assert out.dtype is (E.float64 if E.float64 in (a_dtype, b_dtype) else E.float32)
    out.sum().backward()
    ones = np.ones(np.broadcast_shapes(a_shape, b_shape))
    expected_a = (ones * bn).sum(tuple(range(len(ones.shape) - len(a_shape))))
    expected_b = (ones * an).sum(tuple(range(len(ones.shape) - len(b_shape))))
    for g, exp, shape, dtype in ((a.grad, expected_a, a_shape, a_dtype),
                                 (b.grad, expected_b, b_shape, b_dtype)):
        exp = exp.sum(tuple(i for i, s in enumerate(shape) if s == 1), keepdims=True)
        assert tuple(g.shape) == shape
        assert_close(g, exp.reshape(shape), dtype=dtype)
