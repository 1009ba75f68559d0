"""canonicalize_ops: aliases become their canonical op; constants move right in x op c."""
import importlib

import pytest

from ember.jit.ir.parser import parse_ir
from ember.jit.passes import canonicalize
from ember.jit.passes.canonicalize_ops import canonicalize_ops
from helpers import literal_blocks


def check(before: str, after: str) -> None:
    g = parse_ir(before)
    assert canonicalize_ops(g) is None
    g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(after)))


def test_docstring_example():
    # the module docstring's own before/after, so the example stays true
    before, after = literal_blocks(importlib.import_module(
        "ember.jit.passes.canonicalize_ops").__doc__)
    check(before, after)


@pytest.mark.parametrize("before, after", [
    ("ember::swapdims(%x, %i, %j)", "ember::transpose(%x, %i, %j)"),
    ("ember::moveaxis(%x, %i, %j)", "ember::movedim(%x, %i, %j)"),
    ("ember::rsub(%x, %y, %i)", "ember::sub(%y, %x, %i)"),
    ("ember::add(%c, %x, %one)", "ember::add(%x, %c, %one)"),
    ("ember::add(%c, %x, %onef)", "ember::add(%x, %c, %onef)"),
    ("ember::eq(%c, %x)", "ember::eq(%x, %c)"),
    ("ember::ne(%c, %y)", "ember::ne(%y, %c)"),
    # kept: alpha is not 1, the op does not commute, or both / neither operand is constant
    ("ember::add(%c, %x, %i)", "ember::add(%c, %x, %i)"),
    ("ember::add(%c, %x, %two)", "ember::add(%c, %x, %two)"),
    ("ember::add(%c, %x, %true)", "ember::add(%c, %x, %true)"),
    ("ember::sub(%c, %x, %one)", "ember::sub(%c, %x, %one)"),
    ("ember::sub(%x, %c, %one)", "ember::sub(%x, %c, %one)"),
    ("ember::div(%c, %x, %none)", "ember::div(%c, %x, %none)"),
    ("ember::mul(%c, %c)", "ember::mul(%c, %c)"),
    ("ember::mul(%y, %x)", "ember::mul(%y, %x)"),
    ("ember::transpose(%x, %i, %j)", "ember::transpose(%x, %i, %j)"),
])
def test_one_node(before, after):
    head = """graph(%x : Float(2, 3), %y : Tensor, %i : int, %j : int):
      %c : float = prim::Constant[value=0.5]()
      %one : int = prim::Constant[value=1]()
      %onef : float = prim::Constant[value=1.0]()
      %two : int = prim::Constant[value=2]()
      %true : bool = prim::Constant[value=True]()
      %none : NoneType = prim::Constant[value=None]()
"""
    check(head + f"  %r : Tensor = {before} # loc: model.py:7\n  return (%r)",
          head + f"  %r : Tensor = {after} # loc: model.py:7\n  return (%r)")


def test_clamp_max_gets_a_none_min():
    check("""graph(%x : Float(2, 3), %y : Tensor):
      %r : Tensor = ember::clamp_max(%x, %y)
      return (%r)""", """graph(%x : Float(2, 3), %y : Tensor):
      %none : NoneType = prim::Constant[value=None]()
      %r : Tensor = ember::clamp(%x, %none, %y)
      return (%r)""")


def test_keeps_names_types_and_source_info():
    g = parse_ir("""graph(%x : Float(2, 3)):
      %i : int = prim::Constant[value=0]()
      %j : int = prim::Constant[value=1]()
      %t.1 : Float(3, 2) = ember::swapaxes(%x, %i, %j) # scope: block.0; loc: m.py:3
      return (%t.1)""")
    canonicalize_ops(g)
    g.lint()
    assert ("%t.1 : Float(3, 2) = ember::transpose(%x, %i, %j) # scope: block.0; loc: m.py:3"
            in str(g))


def test_nested_blocks():
    check("""graph(%x : Tensor, %k : bool, %n : int):
      %two : int = prim::Constant[value=2]()
      %r : Tensor = prim::If(%k)
        block0():
          %a : Tensor = ember::true_divide(%x, %x)
          -> (%a)
        block1():
          %l : Tensor = prim::Loop(%n, %k, %x)
            block0(%i : int, %v : Tensor):
              %q : Tensor = ember::mul(%two, %v)
              %w : Tensor = ember::clamp_min(%q, %v)
              -> (%k, %w)
          -> (%l)
      return (%r)""", """graph(%x : Tensor, %k : bool, %n : int):
      %two : int = prim::Constant[value=2]()
      %r : Tensor = prim::If(%k)
        block0():
          %none : NoneType = prim::Constant[value=None]()
          %a : Tensor = ember::div(%x, %x, %none)
          -> (%a)
        block1():
          %l : Tensor = prim::Loop(%n, %k, %x)
            block0(%i : int, %v : Tensor):
              %q : Tensor = ember::mul(%v, %two)
              %none.1 : NoneType = prim::Constant[value=None]()
              %w : Tensor = ember::clamp(%q, %v, %none.1)
              -> (%k, %w)
          -> (%l)
      return (%r)""")
