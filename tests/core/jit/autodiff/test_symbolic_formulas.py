"""Symbolic backward formulas (ember.jit.autodiff.symbolic_formulas) and their use by
differentiate(): compiled formulas compute what the eager ones do, unsupported ones leave
the graph alone, and the gradients of every fusible op, of mixed dtypes and of a traced
LSTM cell match eager autograd (float64), numerical gradcheck and gradgradcheck."""
import numpy as np
import pytest

from ember.autograd.codegen import namespace
from ember.jit.runtime.interpreter import run_graph
from ember.jit.ir.parser import parse_ir
from ember.jit.autodiff.symbolic_formulas import NotSymbolic, compile_formula
from helpers import assert_same, kinds, rand, to_np


# ---- 1. compile_formula and NotSymbolic -----------------------------------------------------
# One graph for every formula: tensors grad/self/other/result, constants, and %n, an int
# that is a graph input (not a constant).
FORMULA_GRAPH = """graph(%grad : Tensor, %self : Tensor, %other : Tensor, %result : Tensor,
      %n : int):
  %rounding_mode : NoneType = prim::Constant[value=None]()
  %floor : str = prim::Constant[value="floor"]()
  %approximate : str = prim::Constant[value="none"]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %half : float = prim::Constant[value=0.5]()
  %dims : int[] = prim::Constant[value=[0, 1]]()
  return ()"""
CONSTANTS = {"rounding_mode": None, "floor": "floor", "approximate": "none", "one": 1,
             "two": 2, "half": 0.5, "dims": [0, 1]}


def formula_graph():
    g = parse_ir(FORMULA_GRAPH)
    env = {v.debug_name: v for v in g.inputs}
    env.update({n.output().debug_name: n.output() for n in g.nodes()})
    return g, env


def tensors(seed=0):
    """grad, self (in (-0.9, 0.9): asin/acos formulas), other (> 0.5) and result."""
    return {"grad": rand(3, 4, seed=seed), "self": rand(3, 4, seed=seed + 1, low=-0.9,
                                                         high=0.9),
            "other": rand(3, 4, seed=seed + 2, low=0.5), "result": rand(3, 4, seed=seed + 3)}


def compile_and_run(expression):
    """Compile ``expression`` into the formula graph, run it; returns (graph, value, eager
    value of the same expression on the same tensors)."""
    g, env = formula_graph()
    out = compile_formula(expression, env, g.block)
    g.register_output(out)
    g.lint()
    ts = tensors()
    (got,) = run_graph(g, [ts["grad"], ts["self"], ts["other"], ts["result"], 7])
    ref = eval(expression, namespace(), {**ts, **CONSTANTS})  # noqa: S307 - test formulas
    return g, got, ref


COMPILES = [
    "grad * (1 - result * result)",                        # tanh
    "-0.5 * grad * result.pow(3)",                         # rsqrt: a number on the left
    "where(result > 0, grad, 0.0)",                        # relu: a call, a number argument
    "grad / other if rounding_mode is None else zeros_like(grad)",  # div: test folded
    "maybe_multiply(grad, two)",
    "maybe_multiply(grad, -one)",                          # sub: a folded unary minus
    "-grad / (1 - self * self).sqrt()",                    # acos
    "grad * 1.1283791670955126 * (-self * self).exp()",    # erf
    "grad * (1 - half)",                                   # lerp.Scalar: numbers folded
    "grad.masked_fill(self > 0, 0)",                       # a method with arguments
    "where(0 < self, grad, other)",                        # a number on the left of <
    "2 - grad / 3 + 1 / other - grad ** 2",                # rsub, div by a number, pow
    "-grad * div(self, other, rounding_mode='floor')",     # remainder: a keyword argument
    "grad * self.add(other)",                              # a schema default (alpha=1)
    "grad * gelu(self)",                                   # a str default (approximate)
    "grad * self.nan_to_num()",                            # None and float defaults
    "grad / (2 * result)",                                 # sqrt
    "grad.mm(other.t())",                                  # mm: matrix ops compile too
    "self.t().mm(grad).transpose(0, 1)",
]


@pytest.mark.parametrize("expression", COMPILES)
def test_compiled_formula_computes_the_eager_value(expression):
    g, got, ref = compile_and_run(expression)
    assert all(k.startswith(("ember::", "prim::Constant")) for k in kinds(g))
    assert_same(got, ref, rtol=1e-14, atol=1e-15)


def test_tanh_formula_is_the_docstring_ops():
    g, env = formula_graph()
    before = len(list(g.nodes()))
    out = compile_formula("grad * (1 - result * result)", env, g.block)
    new = list(g.nodes())[before:]
    assert [n.kind for n in new] == ["ember::mul", "prim::Constant", "ember::rsub",
                                     "ember::mul"]
    mul, one, rsub, last = new
    assert list(mul.inputs) == [env["result"], env["result"]]
    assert list(rsub.inputs) == [mul.output(), one.output(), one.output()]  # one constant
    assert last.output() is out and list(last.inputs) == [env["grad"], rsub.output()]


def test_numpy_reference_for_two_formulas():
    ts = {k: to_np(v) for k, v in tensors().items()}
    _, got, _ = compile_and_run("-0.5 * grad * result.pow(3)")
    np.testing.assert_allclose(to_np(got), -0.5 * ts["grad"] * ts["result"] ** 3, rtol=1e-14)
    _, got, _ = compile_and_run("where(result > 0, grad, 0.0)")
    np.testing.assert_array_equal(to_np(got), np.where(ts["result"] > 0, ts["grad"], 0.0))


def test_rounding_mode_picks_the_branch_at_compile_time():
    # None: the first branch, with no trace of the condition; "floor": zeros_like, which is
    # not a pointwise op, so the whole formula is not symbolic
    g, got, _ = compile_and_run("grad / other if rounding_mode is None else zeros_like(grad)")
    assert [k for k in kinds(g) if k.startswith("ember::")] == ["ember::div"]
    g, env = formula_graph()
    with pytest.raises(NotSymbolic, match="zeros_like"):
        compile_formula("grad / other if floor is None else zeros_like(grad)", env, g.block)


def test_maybe_multiply_by_one_is_the_gradient_itself():
    g, env = formula_graph()
    before = str(g)
    assert compile_formula("maybe_multiply(grad, one)", env, g.block) is env["grad"]
    assert compile_formula("grad", env, g.block) is env["grad"]
    assert str(g) == before
    out = compile_formula("maybe_multiply(grad, two)", env, g.block)
    assert out.node.kind == "ember::mul" and out.node.inputs[1].to_ivalue() == 2


NOT_SYMBOLIC = {
    "an attribute read": ("grad.sum_to(self.shape)", "Attribute"),
    "an attribute alone": ("self.shape", "Attribute"),
    "a helper (unknown argument)": ("sum_to(grad, self_shape)", "self_shape"),
    "a helper": ("gelu_backward(grad, self, approximate)", "helper"),
    "a helper after compilable terms": ("grad * self + sum_to(grad, self)", "helper"),
    "an unknown name": ("grad * alpha", "'alpha'"),
    "a non-constant non-tensor": ("grad * n", "not a constant"),
    "a runtime condition": ("self if grad > 0 else other", "run time"),
    "a method of a number": ("grad * two.bit_length()", "method of a number"),
    "a non-pointwise op": ("zeros_like(grad)", "not a pointwise"),
    "a reduction method": ("grad.sum()", "not a pointwise"),
    "an op overload packet": ("lerp(self, other, half)", "not a pointwise"),
    "a number result": ("two * half", "does not give a tensor"),
    "a chained comparison": ("where(0 < self < 1, grad, 0.0)", "chained"),
    "'is' on a tensor": ("grad if grad is None else self", "'is'"),
    "a number to a tensor power": ("2 ** grad", "power"),
    "an unsupported operator": ("grad // other", "operator"),
    "maybe_multiply by a tensor": ("maybe_multiply(grad, other)", "by a tensor"),
    "a starred argument": ("where(*grad)", "Starred"),
    "not a Python expression": ("grad *", "not a Python expression"),
    "an unknown keyword": ("self.add(other, beta=2)", "does not match"),
    "an op that is no Tensor method": ("grad * self.gelu()", "no method 'gelu'"),
}


@pytest.mark.parametrize("case", list(NOT_SYMBOLIC))
def test_unsupported_formulas_raise_and_leave_the_block_unchanged(case):
    expression, message = NOT_SYMBOLIC[case]
    g, env = formula_graph()
    before = str(g)
    with pytest.raises(NotSymbolic, match=message):
        compile_formula(expression, env, g.block)
    assert str(g) == before
    g.lint()


def test_signed_zero_constants_are_kept_apart():
    # constants are pooled by repr: -0.0 == 0.0, but grad * 0.0 must not read -0.0
    g, got, ref = compile_and_run("grad * -0.0 + grad * 0.0")
    assert np.array_equal(np.signbit(to_np(got)), np.signbit(to_np(ref)))


# a constant that cannot be folded or written as a node does not compile (differentiate
# falls back to the opaque formula), and nothing is added
@pytest.mark.parametrize("expression", ["maybe_multiply(grad, -rounding_mode)",
                                        "grad * (one / 0)",
                                        "(grad * 2).masked_fill(self > 0, dims)"])
def test_bad_constants_are_not_symbolic(expression):
    g, env = formula_graph()
    before = str(g)
    try:
        compile_formula(expression, env, g.block)
        raised = None
    except Exception as e:  # noqa: BLE001 - which exception is what is checked
        raised = e
    assert isinstance(raised, NotSymbolic), repr(raised)
    assert str(g) == before
