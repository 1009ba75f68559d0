"""peephole: algebraic identities, only where dtype, shape and value are kept."""
import importlib

import numpy as np
import pytest

from ember.jit.runtime.interpreter import run_graph
from ember.jit.ir.parser import parse_ir
from ember.jit.passes import canonicalize
from ember.jit.passes.peephole import peephole
from helpers import literal_blocks, rand, to_np


def check(before: str, after: str) -> None:
    g = parse_ir(before)
    assert peephole(g) is None
    g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(after)))


def unchanged(before: str) -> None:
    check(before, before)


def test_docstring_example():
    # the module docstring's own before/after, so the example stays true
    before, after = literal_blocks(importlib.import_module(
        "ember.jit.passes.peephole").__doc__)
    check(before, after)


def identity_graph(t, out, c, a, expr):
    """``%y = expr`` on ``%x : t``, with just the constants ``expr`` reads."""
    consts = {"%c": f"%c : {type(c).__name__} = prim::Constant[value={c}]()",
              "%alpha": f"%alpha : {type(a).__name__} = prim::Constant[value={a}]()",
              "%none": "%none : NoneType = prim::Constant[value=None]()",
              "%mode": '%mode : str = prim::Constant[value="floor"]()'}
    lines = [line for name, line in consts.items() if name in expr]
    body = "".join(f"  {line}\n" for line in lines + [f"%y : {out} = {expr}"])
    return f"graph(%x : {t}):\n{body}  return (%y)"


@pytest.mark.parametrize("t, c, a, expr", [
    ("Float(2, 3)", 1, 1, "ember::mul(%x, %c)"),
    ("Float(2, 3)", 1.0, 1, "ember::mul(%c, %x)"),
    ("Long(2, 3)", 1, 1, "ember::mul(%x, %c)"),
    ("Double(*, *)", 1, 1, "ember::div(%x, %c, %none)"),
    ("Float(2)", 1.0, 1, "ember::true_divide(%x, %c)"),
    ("Int(4)", 1, 1, "ember::div(%x, %c, %mode)"),
    ("Float(2, 3)", 0, 2.5, "ember::add(%x, %c, %alpha)"),
    ("Float(2, 3)", 0.0, 3, "ember::sub(%x, %c, %alpha)"),
    ("Long(3)", 0, -2, "ember::sub(%x, %c, %alpha)"),
    ("Half(3)", 0, 1, "ember::add(%c, %x, %alpha)"),
])
def test_arithmetic_identities_fire(t, c, a, expr):
    check(identity_graph(t, t, c, a, expr), f"graph(%x : {t}):\n  return (%x)")


@pytest.mark.parametrize("t, out, c, a, expr", [
    ("Bool(3)", "Long(3)", 1, 1, "ember::mul(%x, %c)"),         # bool * 1 is int64
    ("Long(3)", "Float(3)", 1.0, 1, "ember::mul(%x, %c)"),      # float constant promotes
    ("Tensor", "Tensor", 1, 1, "ember::mul(%x, %c)"),           # dtype unknown
    ("Float(2, 3)", "Float(2, 3)", 2, 1, "ember::mul(%x, %c)"),  # not the identity
    ("Long(3)", "Float(3)", 1, 1, "ember::div(%x, %c, %none)"),  # true division of ints
    ("Float(3)", "Float(3)", 1, 1, "ember::div(%x, %c, %mode)"),  # floor(x) != x
    ("Float(3)", "Float(3)", 0, float("inf"), "ember::add(%x, %c, %alpha)"),  # inf * 0
    ("Long(3)", "Long(3)", 0, 2.0, "ember::add(%x, %c, %alpha)"),  # float alpha raises
    ("Float(3)", "Float(3)", 0, 2, "ember::add(%c, %x, %alpha)"),  # 0 + 2 * x
    ("Float(3)", "Double(3)", 1, 1, "ember::mul(%x, %c)"),      # annotation disagrees
    ("Float(3)", "Float(3)", True, 1, "ember::mul(%x, %c)"),    # a bool constant
])
def test_arithmetic_identities_that_must_not_fire(t, out, c, a, expr):
    unchanged(identity_graph(t, out, c, a, expr))


def test_non_constant_alpha():
    check("""graph(%x : Float(3), %a : int):
      %z : int = prim::Constant[value=0]()
      %y : Float(3) = ember::add(%x, %z, %a)
      return (%y)""", "graph(%x : Float(3), %a : int):\n  return (%x)")
    unchanged("""graph(%x : Float(3), %a : float):
      %z : int = prim::Constant[value=0]()
      %y : Float(3) = ember::add(%x, %z, %a)
      return (%y)""")


def test_no_arithmetic_or_expand_rewrite_in_a_graph_with_mutation():
    # y = x * 1 is a new tensor: after x.add_(1) it must still hold the old values
    unchanged("""graph(%x : Float(3)):
      %one : int = prim::Constant[value=1]()
      %l : int[] = prim::Constant[value=[3]]()
      %y : Float(3) = ember::mul(%x, %one)
      %e : Float(3) = ember::expand(%x, %l)
      %u : Float(3) = ember::add_(%x, %one, %one)
      return (%y, %e)""")


@pytest.mark.parametrize("t, sizes, fires", [
    ("Float(2, 3)", "[2, 3]", True),
    ("Float(2, 3)", "[-1, 3]", True),
    ("Float(*, 3)", "[-1, -1]", True),
    ("Float(1, 3)", "[2, 3]", False),
    ("Float(*, 3)", "[2, 3]", False),
    ("Float(3)", "[2, 3]", False),
    ("Tensor", "[-1]", False),
])
def test_expand(t, sizes, fires):
    before = f"""graph(%x : {t}):
      %s : int[] = prim::Constant[value={sizes}]()
      %y : Tensor = ember::expand(%x, %s)
      %z : Tensor = ember::relu(%y)
      return (%z)"""
    after = f"graph(%x : {t}):\n  %z : Tensor = ember::relu(%x)\n  return (%z)"
    check(before, after if fires else before)


def test_expand_with_list_construct():
    check("""graph(%x : Float(2, 3)):
      %a : int = prim::Constant[value=2]()
      %b : int = prim::Constant[value=-1]()
      %s : int[] = prim::ListConstruct(%a, %b)
      %y : Float(2, 3) = ember::expand(%x, %s)
      return (%y)""", "graph(%x : Float(2, 3)):\n  return (%x)")


@pytest.mark.parametrize("op", ["view", "reshape"])
@pytest.mark.parametrize("t, sizes, fires", [
    ("Float(2, 3)", "[2, 3]", True),
    ("Float(2, 3)", "[-1, 3]", True),
    ("Float(2, 3)", "[3, 2]", False),
    ("Float(2, 3)", "[6]", False),
    ("Float(*, 3)", "[2, 3]", False),
    ("Float(0, 3)", "[0, -1]", False),  # -1 next to 0 cannot be inferred: raises
    ("Float(2, 3)", "[-1, -1]", False),
])
def test_view_and_reshape(op, t, sizes, fires):
    before = f"""graph(%x : {t}):
      %s : int[] = prim::Constant[value={sizes}]()
      %y : Tensor = ember::{op}(%x, %s)
      return (%y)"""
    check(before, f"graph(%x : {t}):\n  return (%x)" if fires else before)


@pytest.mark.parametrize("tx, ty, fires", [
    ("Float(2)", "Float(3, 3)", True),
    ("Float(2)", "Double(2)", False),
    ("Tensor", "Float(2)", False),
    ("Float(2)", "Tensor", False),
])
def test_type_as(tx, ty, fires):
    before = f"""graph(%x : {tx}, %y : {ty}):
      %z : Tensor = ember::type_as(%x, %y)
      return (%z)"""
    after = f"graph(%x : {tx}, %y : {ty}):\n  return (%x)"
    check(before, after if fires else before)


def test_contiguous_chain_and_t_t():
    check("""graph(%x : Tensor):
      %a : Tensor = ember::contiguous(%x)
      %b : Tensor = ember::contiguous(%a)
      %c : Tensor = ember::contiguous(%b)
      %t1 : Tensor = ember::t(%c)
      %t2 : Tensor = ember::t(%t1)
      %t3 : Tensor = ember::t(%t2)
      return (%t3, %t1)""", """graph(%x : Tensor):
      %a : Tensor = ember::contiguous(%x)
      %t1 : Tensor = ember::t(%a)
      %t3 : Tensor = ember::t(%a)
      return (%t3, %t1)""")  # t3 = t(t(t(c))) = t(c): a copy of t1 that CSE can merge


def test_t_t_on_more_than_two_dims_is_kept():
    unchanged("""graph(%x : Float(2, 3, 4)):
      %t1 : Tensor = ember::t(%x)
      %t2 : Tensor = ember::t(%t1)
      return (%t2)""")


def test_transposed_product_becomes_the_product_of_transposes():
    # the weight-gradient pattern t(mm(t(x), g)): mm(t(g), x), a fresh row-major result
    before = """graph(%x : Float(2, 3), %g : Float(2, 4)):
      %xt : Float(3, 2) = ember::t(%x)
      %m : Float(3, 4) = ember::mm(%xt, %g)
      %w : Float(4, 3) = ember::t(%m)
      return (%w)"""
    check(before, """graph(%x : Float(2, 3), %g : Float(2, 4)):
      %gt : Float(4, 2) = ember::t(%g)
      %w : Float(4, 3) = ember::mm(%gt, %x)
      return (%w)""")
    x, g = rand(2, 3), rand(2, 4, seed=1)
    after = parse_ir(before)
    peephole(after)
    (want,), (got,) = run_graph(parse_ir(before), [x, g]), run_graph(after, [x, g])
    np.testing.assert_allclose(to_np(got), to_np(x).T.dot(to_np(g)).T, rtol=1e-12)
    assert to_np(got).flags.c_contiguous and not to_np(want).flags.c_contiguous


MUTATED = """%n : Float(4, 3) = ember::add_(%w, %w, %one)
      return (%n)"""


@pytest.mark.parametrize("extra", ["return (%w, %m)", MUTATED])
def test_transposed_product_read_elsewhere_or_mutated_is_kept(extra):
    unchanged(f"""graph(%a : Float(3, 2), %b : Float(2, 4)):
      %one : int = prim::Constant[value=1]()
      %m : Float(3, 4) = ember::mm(%a, %b)
      %w : Float(4, 3) = ember::t(%m)
      {extra}""")


def test_nested_blocks_and_shared_constants():
    check("""graph(%x : Float(3), %c : bool, %n : int):
      %one : int = prim::Constant[value=1]()
      %r : Float(3) = prim::If(%c)
        block0():
          %a : Float(3) = ember::mul(%x, %one)
          -> (%a)
        block1():
          %b : Float(3) = ember::mul(%x, %one)
          %l : Float(3) = prim::Loop(%n, %c, %b)
            block0(%i : int, %v : Float(3)):
              %w : Float(3) = ember::div(%v, %one)
              %q : Float(3) = ember::neg(%w)
              -> (%c, %q)
          -> (%l)
      %s : Float(3) = ember::add(%r, %x, %one)
      return (%s)""", """graph(%x : Float(3), %c : bool, %n : int):
      %one : int = prim::Constant[value=1]()
      %r : Float(3) = prim::If(%c)
        block0():
          -> (%x)
        block1():
          %l : Float(3) = prim::Loop(%n, %c, %x)
            block0(%i : int, %v : Float(3)):
              %q : Float(3) = ember::neg(%v)
              -> (%c, %q)
          -> (%l)
      %s : Float(3) = ember::add(%r, %x, %one)
      return (%s)""")
