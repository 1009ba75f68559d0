"""constant_pooling: before/after IR text."""
import importlib
import re
import textwrap

import pytest

from ember.jit.ir.parser import parse_ir
from ember.jit.passes import canonicalize
from ember.jit.passes.constant_pooling import constant_pooling


def check(before: str, after: str) -> None:
    g = parse_ir(before)
    assert constant_pooling(g) is None
    g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(after)))


def test_duplicates_merge_and_survivors_move_to_the_start_in_order():
    check("""graph(%x : Tensor):
      %e : Tensor = ember::exp(%x)
      %one : int = prim::Constant[value=1]()
      %a : Tensor = ember::add(%e, %x, %one)
      %two : int = prim::Constant[value=2]()
      %one.1 : int = prim::Constant[value=1]()
      %b : Tensor = ember::add(%a, %e, %one.1)
      %c : Tensor = ember::sub(%b, %a, %two)
      return (%c)""", """graph(%x : Tensor):
      %one : int = prim::Constant[value=1]()
      %two : int = prim::Constant[value=2]()
      %e : Tensor = ember::exp(%x)
      %a : Tensor = ember::add(%e, %x, %one)
      %b : Tensor = ember::add(%a, %e, %one)
      %c : Tensor = ember::sub(%b, %a, %two)
      return (%c)""")


def test_constants_in_nested_blocks_are_hoisted_so_they_dominate_every_use():
    check("""graph(%x : Tensor, %c : bool, %n : int):
      %y : Tensor = prim::If(%c)
        block0():
          %k : float = prim::Constant[value=2.0]()
          %m : Tensor = ember::mul(%x, %k)
          -> (%m)
        block1():
          %t : bool = prim::Constant[value=True]()
          %r : Tensor = prim::Loop(%n, %t, %x)
            block0(%i : int, %acc : Tensor):
              %k2 : float = prim::Constant[value=2.0]()
              %acc.1 : Tensor = ember::mul(%acc, %k2)
              -> (%t, %acc.1)
          -> (%r)
      %k3 : float = prim::Constant[value=2.0]()
      %z : Tensor = ember::mul(%y, %k3)
      return (%z)""", """graph(%x : Tensor, %c : bool, %n : int):
      %k : float = prim::Constant[value=2.0]()
      %t : bool = prim::Constant[value=True]()
      %y : Tensor = prim::If(%c)
        block0():
          %m : Tensor = ember::mul(%x, %k)
          -> (%m)
        block1():
          %r : Tensor = prim::Loop(%n, %t, %x)
            block0(%i : int, %acc : Tensor):
              %acc.1 : Tensor = ember::mul(%acc, %k)
              -> (%t, %acc.1)
          -> (%r)
      %z : Tensor = ember::mul(%y, %k)
      return (%z)""")


# (type, value text) pairs that must stay apart although Python's == may say equal.
DISTINCT = [
    ("int", "1"), ("float", "1.0"), ("bool", "True"), ("int", "0"), ("bool", "False"),
    ("float", "0.0"), ("float", "-0.0"), ("float", "nan"), ("str", '"a"'), ("str", '"b"'),
    ("NoneType", "None"), ("ScalarType", "float32"), ("ScalarType", "float64"),
    ("Device", 'device("cpu")'), ("int[]", "[1, 2]"), ("float[]", "[1.0, 2.0]"),
    ("bool[]", "[True, False]"), ("(int, int)", "(1, 2)"), ("int[]", "[]"),
    ("float[]", "[]"),
    ("Tensor", "tensor([1.0, 2.0], dtype=float32)"),
    ("Tensor", "tensor([1.0, 2.0], dtype=float64)"),
    ("Tensor", "tensor([1, 2], dtype=int64)"),
    ("Tensor", "tensor([1.0, 3.0], dtype=float32)"),
    ("Tensor", "tensor([1.0, 2.0, 3.0, 4.0], dtype=float32)"),
    ("Tensor", "tensor([[1.0, 2.0], [3.0, 4.0]], dtype=float32)"),
    ("Tensor", "tensor(1.0, dtype=float32)"),
    ("Tensor", "tensor([1.0], dtype=float32)"),
]


def _graph(consts, uses):
    lines = [f"  %c{i} : {t} = prim::Constant[value={v}]()" for i, (t, v) in enumerate(consts)]
    types = ", ".join(consts[i][0] for i in uses)
    args = ", ".join(f"%c{i}" for i in uses)
    return "graph():\n" + "\n".join(lines) + (f"\n  %r : ({types}) = prim::TupleConstruct("
                                               f"{args})\n  return (%r)")


def test_constants_of_each_kind_stay_apart_from_each_other():
    text = _graph(DISTINCT, range(len(DISTINCT)))
    check(text, text)


@pytest.mark.parametrize("const", DISTINCT, ids=lambda c: f"{c[0]}={c[1]}")
def test_equal_constants_of_each_kind_merge(const):
    before = _graph([const, const], [0, 1, 0])
    after = _graph([const], [0, 0, 0])
    check(before, after)


def test_the_module_docstring_example_holds():
    # The module name is also the function's name: import the module itself.
    doc = importlib.import_module("ember.jit.passes.constant_pooling").__doc__
    before, after = (textwrap.dedent(b) for b in re.findall(r"::\n\n(.*?)\n\n", doc, re.S)[:2])
    check(before, after)
