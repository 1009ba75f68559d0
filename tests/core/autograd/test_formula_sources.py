"""One source per backward formula: ``derivatives.yaml`` (and the helpers of
``autograd/formulas/`` it calls) states the math once. The JIT's symbolic forms are
lowered from those texts (``jit/autodiff/symbolic_formulas.py``), the kernel forms of pointwise
formulas are compiled from them (``autograd/kernel_forms.py``), and a hand-written kernel
form names the exact yaml expression it computes, which ``codegen`` checks."""
from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import ember as E
from ember.autograd import codegen, fast_formulas
from ember.autograd.derivatives import DerivativeError
from ember.autograd.kernel_forms import NotKernelForm, kernel_form
from ember.ops import DERIVATIVES
from helpers import rand

PACKAGE = Path(E.__file__).parent


def _docstrings(tree) -> set:
    return {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)}


def _fast_tags(tree) -> set:
    """The ``formula=`` strings of ``@fast(...)`` (checked against the yaml below)."""
    return {id(k.value) for n in ast.walk(tree) if isinstance(n, ast.Call)
            for k in n.keywords if k.arg == "formula"}


def _formula_strings(path: Path) -> list:
    """String constants of ``path`` that are backward formulas: they parse as an
    expression that computes something from ``grad`` (docstrings and fast tags aside)."""
    text = path.read_text()
    if "grad" not in text:
        return []
    tree = ast.parse(text)
    skip = _docstrings(tree) | _fast_tags(tree)
    out = []
    for n in ast.walk(tree):
        if not (isinstance(n, ast.Constant) and isinstance(n.value, str)) or \
                "grad" not in n.value or id(n) in skip:
            continue
        try:
            body = ast.parse(n.value, mode="eval").body
        except SyntaxError:
            continue
        called = {id(x.func) for x in ast.walk(body) if isinstance(x, ast.Call)}
        if not isinstance(body, ast.Name) and any(
                isinstance(x, ast.Name) and x.id == "grad" and id(x) not in called
                for x in ast.walk(body)):
            out.append(f"{path.relative_to(PACKAGE)}:{n.lineno}: {n.value!r}")
    return out


def test_no_module_restates_a_formula():
    """No module of autograd/ or jit/ (where formulas are run, compiled and lowered) holds a
    formula as text: formulas live in derivatives.yaml, helpers in autograd/formulas/ as
    code."""
    found = [s for d in ("autograd", "jit") for p in sorted((PACKAGE / d).rglob("*.py"))
             for s in _formula_strings(p)]
    assert found == []


def test_the_finder_sees_a_restated_formula(tmp_path, monkeypatch):
    f = PACKAGE / "_probe_not_a_module.py"
    monkeypatch.setattr(Path, "read_text",
                        lambda self: 'X = {"grad()": "grad * (1 - x)", "grad": 1}')
    assert _formula_strings(f) == [f"{f.name}:1: 'grad * (1 - x)'"]


def _formula(op, inputs):
    return next(f for f in DERIVATIVES[op].formulas if f.inputs == inputs)


@pytest.mark.parametrize("key", sorted(fast_formulas.FAST), ids=lambda k: k[0])
def test_each_fast_form_computes_its_yaml_formula(key):
    assert fast_formulas.FAST[key].formula == _formula(*key).expression


@pytest.mark.parametrize("key", sorted(fast_formulas.FAST), ids=lambda k: k[0])
def test_only_underivable_formulas_have_hand_written_kernel_forms(key):
    """A formula the kernel-form compiler can read is derived (``DERIVED``); one written by
    hand calls a helper of formulas/ that no expression compiler sees through."""
    fn = fast_formulas.FAST[key]
    d = DERIVATIVES[key[0]]
    tensors = ["grad", *(a.name for a in d.schema.arguments if a.type.base == "Tensor"),
               *(r.name or "result" for r in d.schema.returns)]
    if key in fast_formulas.DERIVED:
        assert fn.__code__.co_filename.startswith("<ember.autograd kernel form")
    else:
        with pytest.raises(NotKernelForm):
            kernel_form(fn.formula, tensors, "_probe")


def test_a_fast_form_of_another_formula_is_refused(monkeypatch):
    """When derivatives.yaml changes, a kernel form written for the old text is refused at
    code generation with the formula's file:line, instead of computing stale math."""
    key = ("sum", ("self",))
    monkeypatch.setattr(fast_formulas.FAST[key], "formula", "grad.expand(self.shape)")
    d = DERIVATIVES["sum"]
    with pytest.raises(DerivativeError, match=r"derivatives.yaml:\d+: .*sum_backward"):
        codegen._fast_call(d, _formula(*key), ["self_shape", "dim", "keepdim"], False)


@pytest.mark.parametrize("expression,value", [
    ("grad * (1 - result * result)", lambda g, r: g * (1 - r * r)),
    ("-grad * result / 2.0 + 0.5 * grad", lambda g, r: -g * r / 2.0 + 0.5 * g),
    ("where(0 < result, grad, 0.0) - grad", lambda g, r: np.where(0 < r, g, 0.0) - g),
])
def test_a_derived_kernel_form_equals_the_ops_bit_for_bit(expression, value):
    fn = kernel_form(expression, ["grad", "result"], "_probe")
    g, r = rand(3, 4, seed=1, dtype=E.float32), rand(3, 4, seed=2, dtype=E.float32)
    with E.no_grad():
        got = fn(grad=g, result=r)
        ref = eval(expression, {"where": E.where}, {"grad": g, "result": r})  # noqa: S307
    assert got.dtype is ref.dtype and np.array_equal(got._data, ref._data)
    np.testing.assert_allclose(got._data, value(g._data, r._data), rtol=1e-6)
    assert fn(grad=g, result=r) is None  # grad mode on: the ops must record, the form declines


@pytest.mark.parametrize("expression", ["grad.sum()", "2 / grad", "self.shape", "grad[0]",
                                        "where(grad > 0, 1.0, 0.0)", "grad ** 2"])
def test_what_does_not_compile_to_kernels_says_so(expression):
    with pytest.raises(NotKernelForm):
        kernel_form(expression, ["grad"], "_probe")
