"""lower_grad_of: prim::GradOf -> prim::AutogradAnyNonZero + prim::If."""
import importlib

import numpy as np
import pytest

import ember as E
from ember.jit.runtime.interpreter import run_graph
from ember.jit.ir.parser import parse_ir
from ember.jit.passes import canonicalize
from ember.jit.passes.lower_grad_of import lower_grad_of
from helpers import literal_blocks


def check(before: str, after: str) -> None:
    g = parse_ir(before)
    assert lower_grad_of(g) is None
    g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(after)))


DOC = importlib.import_module("ember.jit.passes.lower_grad_of").__doc__


def test_docstring_example():
    before, after = literal_blocks(DOC)
    check(before, after)


@pytest.mark.parametrize("defined", [True, False])
def test_lowered_graph_computes_the_same(defined):
    before, _ = literal_blocks(DOC)
    x = E.tensor(np.linspace(-1, 1, 6).reshape(2, 3))
    g_in = E.tensor(np.arange(6.0).reshape(2, 3)) if defined else None
    g = parse_ir(before)
    lower_grad_of(g)
    (got,) = run_graph(g, [g_in, x])
    if defined:
        np.testing.assert_allclose(got.numpy(), np.arange(6.0).reshape(2, 3)
                                   * np.exp(x.numpy()))
    else:
        assert got is None


def test_several_outputs_share_one_zero_and_keep_types():
    check("""graph(%ga : Tensor, %gb : Tensor, %x : Float(3), %y : Float(3)):
  %gx : Float(3), %gy : Float(3) = prim::GradOf[name="ember::mul"](%ga, %gb)
    block0():
      %a : Float(3) = ember::mul(%ga, %y)
      %b : Float(3) = ember::mul(%ga, %x)
      -> (%a, %b)
  return (%gx, %gy)""", """graph(%ga : Tensor, %gb : Tensor, %x : Float(3), %y : Float(3)):
  %c : bool = prim::AutogradAnyNonZero(%ga, %gb)
  %gx : Float(3), %gy : Float(3) = prim::If(%c)
    block0():
      %a : Float(3) = ember::mul(%ga, %y)
      %b : Float(3) = ember::mul(%ga, %x)
      -> (%a, %b)
    block1():
      %z : Tensor = prim::AutogradZero()
      -> (%z, %z)
  return (%gx, %gy)""")


def test_nested_grad_ofs_are_lowered():
    check("""graph(%g : Tensor, %k : bool):
  %r : Tensor = prim::If(%k)
    block0():
      %o : Tensor = prim::GradOf[name="ember::neg"](%g)
        block0():
          %i : Tensor = prim::GradOf[name="ember::neg"](%g)
            block0():
              %n : Tensor = ember::neg(%g)
              -> (%n)
          -> (%i)
      -> (%o)
    block1():
      -> (%g)
  return (%r)""", """graph(%g : Tensor, %k : bool):
  %r : Tensor = prim::If(%k)
    block0():
      %c1 : bool = prim::AutogradAnyNonZero(%g)
      %o : Tensor = prim::If(%c1)
        block0():
          %c2 : bool = prim::AutogradAnyNonZero(%g)
          %i : Tensor = prim::If(%c2)
            block0():
              %n : Tensor = ember::neg(%g)
              -> (%n)
            block1():
              %z2 : Tensor = prim::AutogradZero()
              -> (%z2)
          -> (%i)
        block1():
          %z1 : Tensor = prim::AutogradZero()
          -> (%z1)
      -> (%o)
    block1():
      -> (%g)
  return (%r)""")


def test_names_are_kept():
    g = parse_ir("""graph(%g : Tensor):
  %gx : Tensor = prim::GradOf[name="ember::neg"](%g)
    block0():
      %n : Tensor = ember::neg(%g)
      -> (%n)
  return (%gx)""")
    lower_grad_of(g)
    assert g.outputs[0].debug_name == "gx" and g.outputs[0].node.kind == "prim::If"


def test_no_grad_of_no_change():
    text = """graph(%x : Tensor):
  %n : Tensor = ember::neg(%x)
  return (%n)"""
    check(text, text)


def test_list_gradients_get_a_list_typed_zero():
    check("""graph(%g : Tensor, %xs : Tensor[]):
  %gl : Tensor[], %gx : Float(3) = prim::GradOf[name="ember::cat"](%g)
    block0():
      %n : Float(3) = ember::neg(%g)
      -> (%xs, %n)
  return (%gl, %gx)""", """graph(%g : Tensor, %xs : Tensor[]):
  %c : bool = prim::AutogradAnyNonZero(%g)
  %gl : Tensor[], %gx : Float(3) = prim::If(%c)
    block0():
      %n : Float(3) = ember::neg(%g)
      -> (%xs, %n)
    block1():
      %zl : Tensor[] = prim::AutogradZero()
      %z : Tensor = prim::AutogradZero()
      -> (%zl, %z)
  return (%gl, %gx)""")
