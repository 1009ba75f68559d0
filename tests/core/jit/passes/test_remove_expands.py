"""remove_expands: an expand goes only where every use broadcasts to the same shape."""
import pytest

from ember.jit.ir.parser import parse_ir
from ember.jit.passes import canonicalize
from ember.jit.passes.remove_expands import remove_expands


def check(before: str, after: str) -> None:
    g = parse_ir(before)
    assert remove_expands(g) is None
    g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(after)))


def test_docstring_example():
    check("""graph(%a : Float(2, 3), %b : Float(3)):
      %s : int[] = prim::Constant[value=[2, 3]]()
      %one : int = prim::Constant[value=1]()
      %e : Float(2, 3) = ember::expand(%b, %s)
      %y : Float(2, 3) = ember::add(%a, %e, %one)
      %z : Float(2, 3) = ember::mul(%e, %y)
      return (%z)""", """graph(%a : Float(2, 3), %b : Float(3)):
      %one : int = prim::Constant[value=1]()
      %y : Float(2, 3) = ember::add(%a, %b, %one)
      %z : Float(2, 3) = ember::mul(%b, %y)
      return (%z)""")


TEMPLATE = """graph(%x : {tx}, %o : {to}, %k : bool):
  %s : int[] = prim::Constant[value={sizes}]()
  %c : float = prim::Constant[value=2.0]()
  %e : {te} = ember::expand(%x, %s)
  %y : Tensor = {use}
  return (%y)"""


@pytest.mark.parametrize("tx, to, sizes, te, use", [
    ("Float(1, 3)", "Float(2, 1)", "[2, 3]", "Float(2, 3)", "ember::maximum(%e, %o)"),
    ("Float(3)", "Float(2, 3)", "[2, -1]", "Tensor", "ember::div(%o, %e, %c)"),
    ("Float(3)", "Float(4, 2, 3)", "[2, 3]", "Float(2, 3)", "ember::pow(%e, %o)"),
    ("Bool(2, 1)", "Float(2, 3)", "[2, 3]", "Float(2, 3)", "ember::where(%e, %o, %c)"),
    ("Float(2, 3)", "Float(2, 3)", "[2, 3]", "Float(2, 3)", "ember::mul(%e, %e)"),
    ("Float()", "Float(3)", "[]", "Float()", "ember::mul(%e, %o)"),
])
def test_removed(tx, to, sizes, te, use):
    before = TEMPLATE.format(tx=tx, to=to, sizes=sizes, te=te, use=use)
    after = f"""graph(%x : {tx}, %o : {to}, %k : bool):
      %c : float = prim::Constant[value=2.0]()
      %y : Tensor = {use.replace("%e", "%x")}
      return (%y)"""
    check(before, after)


@pytest.mark.parametrize("tx, to, sizes, te, use", [
    # the result would lose the expanded shape
    ("Float(3)", "Float(3)", "[2, 3]", "Float(2, 3)", "ember::add(%e, %o, %c)"),
    ("Float(2, 1)", "Float(2, 3)", "[2, 3]", "Float(2, 3)", "ember::mul(%e, %c)"),
    ("Float(3)", "Float(2, 3)", "[2, 3]", "Float(2, 3)", "ember::mul(%e, %e)"),
    # shapes unknown
    ("Float(3)", "Tensor", "[2, 3]", "Float(2, 3)", "ember::add(%o, %e, %c)"),
    ("Tensor", "Float(2, 3)", "[2, 3]", "Float(2, 3)", "ember::add(%o, %e, %c)"),
    # not a broadcasting op, or not a broadcasting operand
    ("Float(3)", "Float(2, 3)", "[2, 3]", "Float(2, 3)", "ember::relu(%e)"),
    ("Float(3)", "Float(2, 3)", "[2, 3]", "Float(2, 3)", "ember::mm(%o, %e)"),
    # a 0-dim tensor promotes below a dimensioned one: float64 0-dim + float32 (3,)
    ("Double()", "Float(3)", "[3]", "Double(3)", "ember::add(%o, %e, %c)"),
    # the op does not broadcast as written: keep its error
    ("Float(3)", "Float(4)", "[3]", "Float(3)", "ember::add(%o, %e, %c)"),
])
def test_kept(tx, to, sizes, te, use):
    before = TEMPLATE.format(tx=tx, to=to, sizes=sizes, te=te, use=use)
    check(before, before)


def test_kept_when_also_returned():
    before = """graph(%x : Float(3), %o : Float(2, 3)):
      %s : int[] = prim::Constant[value=[2, 3]]()
      %e : Float(2, 3) = ember::expand(%x, %s)
      %y : Float(2, 3) = ember::mul(%o, %e)
      return (%y, %e)"""
    check(before, before)


def test_nested_blocks_and_list_construct():
    check("""graph(%x : Float(3), %o : Float(2, 3), %k : bool, %n : int):
      %two : int = prim::Constant[value=2]()
      %m1 : int = prim::Constant[value=-1]()
      %s : int[] = prim::ListConstruct(%two, %m1)
      %e : Tensor = ember::expand(%x, %s)
      %r : Float(2, 3) = prim::If(%k)
        block0():
          %s2 : int[] = prim::Constant[value=[2, 3]]()
          %e2 : Float(2, 3) = ember::expand(%x, %s2)
          %a : Float(2, 3) = ember::sub(%o, %e2, %two)
          -> (%a)
        block1():
          %l : Float(2, 3) = prim::Loop(%n, %k, %o)
            block0(%i : int, %v : Float(2, 3)):
              %q : Float(2, 3) = ember::mul(%v, %e)
              -> (%k, %q)
          -> (%l)
      return (%r)""", """graph(%x : Float(3), %o : Float(2, 3), %k : bool, %n : int):
      %two : int = prim::Constant[value=2]()
      %r : Float(2, 3) = prim::If(%k)
        block0():
          %a : Float(2, 3) = ember::sub(%o, %x, %two)
          -> (%a)
        block1():
          %l : Float(2, 3) = prim::Loop(%n, %k, %o)
            block0(%i : int, %v : Float(2, 3)):
              %q : Float(2, 3) = ember::mul(%v, %x)
              -> (%k, %q)
          -> (%l)
      return (%r)""")
