"""decompose_ops: addmm, linear, eval batch_norm and layer_norm become simpler ops with the
same numbers; anything it cannot prove equal is left alone."""
import numpy as np
import pytest

import ember as E
from ember.jit.runtime.interpreter import run_graph
from ember.jit.ir.graph import TensorType
from ember.jit.ir.parser import parse_ir
from ember.jit.passes import canonicalize
from ember.jit.passes.decompose_ops import decompose_ops
from helpers import to_np


def random_inputs(g, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for v in g.inputs:
        t = v.type
        data = rng.uniform(0.5, 2.0, t.concrete_sizes())
        if not t.dtype.is_floating_point:
            data = rng.integers(-3, 4, t.concrete_sizes())
        out.append(E.tensor(data, dtype=t.dtype))
    return out


def check(before: str, after: str, numbers: bool = True) -> None:
    g = parse_ir(before)
    assert decompose_ops(g) is None
    g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(after)))
    if numbers:
        inputs = random_inputs(g)
        for want, got in zip(run_graph(parse_ir(before), inputs), run_graph(g, inputs)):
            assert got.dtype is want.dtype and got.shape == want.shape
            np.testing.assert_allclose(to_np(got), to_np(want), rtol=1e-6, atol=1e-6)


def unchanged(before: str) -> None:
    check(before, before, numbers=False)


def test_docstring_example():
    check("""graph(%b : Float(2, 4), %x : Float(2, 3), %w : Float(3, 4)):
      %one : int = prim::Constant[value=1]()
      %y : Float(2, 4) = ember::addmm(%b, %x, %w, %one, %one)
      %z : Float(2, 4) = ember::relu(%y)
      return (%z)""", """graph(%b : Float(2, 4), %x : Float(2, 3), %w : Float(3, 4)):
      %one : int = prim::Constant[value=1]()
      %m : Float(2, 4) = ember::mm(%x, %w)
      %y : Float(2, 4) = ember::add(%m, %b, %one)
      %z : Float(2, 4) = ember::relu(%y)
      return (%z)""")


ADDMM = """graph(%b : {t}(4), %x : {t}(2, 3), %w : {t}(3, 4)):
  %beta : {bt} = prim::Constant[value={beta}]()
  %alpha : {at} = prim::Constant[value={alpha}]()
  %y : {t}(2, 4) = ember::addmm(%b, %x, %w, %beta, %alpha)
  return (%y)"""


@pytest.mark.parametrize("t, beta, alpha, body", [
    ("Double", 2.5, 0.5, """%m : Double(2, 4) = ember::mm(%x, %w)
      %s : Double(2, 4) = ember::mul(%m, %alpha)
      %y : Double(2, 4) = ember::add(%s, %b, %beta)"""),
    ("Float", 0, 3, """%m : Float(2, 4) = ember::mm(%x, %w)
      %y : Float(2, 4) = ember::mul(%m, %alpha)"""),
    ("Long", 2, 1, """%m : Long(2, 4) = ember::mm(%x, %w)
      %y : Long(2, 4) = ember::add(%m, %b, %beta)"""),
])
def test_addmm_scalars(t, beta, alpha, body):
    kinds = {int: "int", float: "float"}
    before = ADDMM.format(t=t, beta=beta, alpha=alpha, bt=kinds[type(beta)],
                          at=kinds[type(alpha)])
    uses = [name for name in ("%beta", "%alpha") if name in body]
    consts = [line for line in before.splitlines()[1:3] if line.split()[0] in uses]
    after = (f"graph(%b : {t}(4), %x : {t}(2, 3), %w : {t}(3, 4)):\n"
             + "".join(c + "\n" for c in consts) + "  " + body + "\n  return (%y)")
    check(before, after)


def test_addmm_beta_zero_ignores_nan_in_self():
    g = parse_ir(ADDMM.format(t="Float", beta=0, alpha=1, bt="int", at="int"))
    decompose_ops(g)
    x, w = E.randn(2, 3), E.randn(3, 4)
    (got,) = run_graph(g, [E.full((4,), float("nan")), x, w])
    np.testing.assert_allclose(to_np(got), to_np(E.mm(x, w)), rtol=1e-6)


@pytest.mark.parametrize("types, beta, alpha", [
    (("Float", "Double", "Double"), 1, 1),  # addmm promotes before the product
    (("Half", "Half", "Half"), 1, 1),  # one rounding in the kernel, two decomposed
    (("Tensor", "Float", "Float"), 1, 1),  # dtype unknown
    (("Long", "Long", "Long"), 1.5, 1),  # the kernel truncates float scalars for ints
])
def test_addmm_kept(types, beta, alpha):
    tb, tx, tw = types
    kinds = {int: "int", float: "float"}
    unchanged(f"""graph(%b : {tb}, %x : {tx}(2, 3), %w : {tw}(3, 4)):
      %beta : {kinds[type(beta)]} = prim::Constant[value={beta}]()
      %alpha : {kinds[type(alpha)]} = prim::Constant[value={alpha}]()
      %y : Tensor = ember::addmm(%b, %x, %w, %beta, %alpha)
      return (%y)""")


def test_addmm_scalar_not_constant_kept():
    unchanged("""graph(%b : Float(4), %x : Float(2, 3), %w : Float(3, 4), %s : float):
      %one : int = prim::Constant[value=1]()
      %y : Float(2, 4) = ember::addmm(%b, %x, %w, %s, %one)
      return (%y)""")


def test_linear_2d_becomes_mm_and_3d_matmul():
    check("""graph(%x : Float(2, 3), %z : Float(5, 2, 3), %w : Float(4, 3), %b : Float(4)):
      %y : Float(2, 4) = ember::linear(%x, %w, %b)
      %u : Float(5, 2, 4) = ember::linear(%z, %w, %b)
      return (%y, %u)""", """graph(%x : Float(2, 3), %z : Float(5, 2, 3), %w : Float(4, 3),
          %b : Float(4)):
      %t : Float(3, 4) = ember::t(%w)
      %m : Float(2, 4) = ember::mm(%x, %t)
      %one : int = prim::Constant[value=1]()
      %y : Float(2, 4) = ember::add(%m, %b, %one)
      %t2 : Float(3, 4) = ember::t(%w)
      %m2 : Float(5, 2, 4) = ember::matmul(%z, %t2)
      %one2 : int = prim::Constant[value=1]()
      %u : Float(5, 2, 4) = ember::add(%m2, %b, %one2)
      return (%y, %u)""")


def test_linear_without_bias_kept():
    unchanged("""graph(%x : Float(2, 3), %w : Float(4, 3)):
      %none : NoneType = prim::Constant[value=None]()
      %y : Float(2, 4) = ember::linear(%x, %w, %none)
      return (%y)""")


def test_batch_norm_eval():
    check("""graph(%x : Float(2, 3, 4), %m : Float(3), %v : Float(3), %w : Float(3)):
      %none : NoneType = prim::Constant[value=None]()
      %f : bool = prim::Constant[value=False]()
      %mo : float = prim::Constant[value=0.1]()
      %e : float = prim::Constant[value=1e-05]()
      %y : Float(2, 3, 4) = ember::batch_norm(%x, %m, %v, %w, %none, %f, %mo, %e)
      return (%y)""", """graph(%x : Float(2, 3, 4), %m : Float(3), %v : Float(3),
          %w : Float(3)):
      %e : float = prim::Constant[value=1e-05]()
      %s : int[] = prim::Constant[value=[1, -1, 1]]()
      %one : int = prim::Constant[value=1]()
      %m2 : Float(1, 3, 1) = ember::reshape(%m, %s)
      %c : Float(2, 3, 4) = ember::sub(%x, %m2, %one)
      %v2 : Float(1, 3, 1) = ember::reshape(%v, %s)
      %ve : Float(1, 3, 1) = ember::add(%v2, %e, %one)
      %r : Float(1, 3, 1) = ember::rsqrt(%ve)
      %n : Float(2, 3, 4) = ember::mul(%c, %r)
      %w2 : Float(1, 3, 1) = ember::reshape(%w, %s)
      %y : Float(2, 3, 4) = ember::mul(%n, %w2)
      return (%y)""")


@pytest.mark.parametrize("training, x", [("True", "Float(2, 3)"), ("False", "Tensor")])
def test_batch_norm_kept(training, x):
    unchanged(f"""graph(%x : {x}, %m : Float(3), %v : Float(3)):
      %none : NoneType = prim::Constant[value=None]()
      %f : bool = prim::Constant[value={training}]()
      %mo : float = prim::Constant[value=0.1]()
      %e : float = prim::Constant[value=1e-05]()
      %y : Tensor = ember::batch_norm(%x, %m, %v, %none, %none, %f, %mo, %e)
      return (%y)""")


def test_layer_norm_inside_a_block():
    check("""graph(%x : Double(2, 3), %w : Double(3), %b : Double(3)):
      %k : bool = prim::Constant[value=True]()
      %r : Double(2, 3) = prim::If(%k)
        block0():
          %three : int = prim::Constant[value=3]()
          %s : int[] = prim::ListConstruct(%three)
          %e : float = prim::Constant[value=1e-05]()
          %y : Double(2, 3) = ember::layer_norm(%x, %s, %w, %b, %e)
          -> (%y)
        block1():
          -> (%x)
      return (%r)""", """graph(%x : Double(2, 3), %w : Double(3), %b : Double(3)):
      %k : bool = prim::Constant[value=True]()
      %r : Double(2, 3) = prim::If(%k)
        block0():
          %e : float = prim::Constant[value=1e-05]()
          %d : int[] = prim::Constant[value=[-1]]()
          %t : bool = prim::Constant[value=True]()
          %none : NoneType = prim::Constant[value=None]()
          %one : int = prim::Constant[value=1]()
          %mean : Double(2, 1) = ember::mean(%x, %d, %t, %none)
          %c : Double(2, 3) = ember::sub(%x, %mean, %one)
          %sq : Double(2, 3) = ember::mul(%c, %c)
          %var : Double(2, 1) = ember::mean(%sq, %d, %t, %none)
          %ve : Double(2, 1) = ember::add(%var, %e, %one)
          %rs : Double(2, 1) = ember::rsqrt(%ve)
          %n : Double(2, 3) = ember::mul(%c, %rs)
          %nw : Double(2, 3) = ember::mul(%n, %w)
          %y : Double(2, 3) = ember::add(%nw, %b, %one)
          -> (%y)
        block1():
          -> (%x)
      return (%r)""")


def test_decomposed_types_follow_the_node():
    g = parse_ir("""graph(%x : Float(2, 3, requires_grad=1), %w : Float(3, 4),
                          %b : Float(4)):
      %one : int = prim::Constant[value=1]()
      %y : Float(2, 4, requires_grad=1) = ember::addmm(%b, %x, %w, %one, %one)
      return (%y)""")
    decompose_ops(g)
    mm = next(n for n in g.nodes() if n.kind == "ember::mm")
    assert mm.output().type == TensorType(E.float32, sizes=(2, 4), requires_grad=True)
    assert g.outputs[0].debug_name == "y"
