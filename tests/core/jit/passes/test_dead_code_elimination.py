"""eliminate_dead_code: before/after IR text."""
import importlib
import re
import textwrap

import pytest

from ember.jit.ir.parser import parse_ir
from ember.jit.passes import canonicalize
from ember.jit.passes.dead_code_elimination import eliminate_dead_code


def check(before: str, after: str) -> None:
    g = parse_ir(before)
    assert eliminate_dead_code(g) is None
    g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(after)))
    eliminate_dead_code(g)  # a second run finds nothing more
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(after)))


def test_a_dead_chain_dies_in_one_run():
    check("""graph(%x : Tensor):
      %one : int = prim::Constant[value=1]()
      %a : Tensor = ember::exp(%x)
      %b : Tensor = ember::mul(%a, %x)
      %c : Tensor = ember::add(%b, %a, %one)
      %y : Tensor = ember::neg(%x)
      return (%y)""", """graph(%x : Tensor):
      %y : Tensor = ember::neg(%x)
      return (%y)""")


def test_a_live_graph_is_unchanged():
    text = """graph(%x : Tensor, %unused : Tensor):
      %one : int = prim::Constant[value=1]()
      %a : Tensor = ember::exp(%x)
      %c : Tensor = ember::add(%a, %x, %one)
      return (%c, %a)"""
    check(text, text)


def test_the_tracer_dce_trick_leaves_the_composite_node():
    # A traced composite records itself and its inner ops; only the composite is read.
    check("""graph(%x : Tensor):
      %dim : int = prim::Constant[value=1]()
      %keep : bool = prim::Constant[value=True]()
      %e : Tensor = ember::exp(%x)
      %s : Tensor = ember::sum(%e, %dim, %keep)
      %q : Tensor = ember::div(%e, %s)
      %none : NoneType = prim::Constant[value=None]()
      %y : Tensor = ember::softmax(%x, %dim, %none)
      return (%y)""", """graph(%x : Tensor):
      %dim : int = prim::Constant[value=1]()
      %none : NoneType = prim::Constant[value=None]()
      %y : Tensor = ember::softmax(%x, %dim, %none)
      return (%y)""")


def test_side_effects_are_kept_with_what_they_read():
    check("""graph(%x : Tensor):
      %one : int = prim::Constant[value=1]()
      %a : Tensor = ember::exp(%x)
       = prim::Print(%a)
      %b : Tensor = ember::add_(%x, %a, %one)
      %p : Tensor = prim::PythonOp[fn=pyobj("mod.Fn")](%x)
      %q : Tensor = prim::PythonOp[fn=pyobj("mod.Pure"), has_side_effects=False](%x)
      %r : Tensor = ember::neg(%x)
      return (%x)""", """graph(%x : Tensor):
      %one : int = prim::Constant[value=1]()
      %a : Tensor = ember::exp(%x)
       = prim::Print(%a)
      %b : Tensor = ember::add_(%x, %a, %one)
      %p : Tensor = prim::PythonOp[fn=pyobj("mod.Fn")](%x)
      return (%x)""")


def test_a_node_with_several_outputs_lives_while_one_is_used():
    check("""graph(%x : Tensor):
      %d : int = prim::Constant[value=0]()
      %k : bool = prim::Constant[value=False]()
      %v : Tensor, %i : Tensor = ember::max(%x, %d, %k)
      %v2 : Tensor, %i2 : Tensor = ember::min(%x, %d, %k)
      return (%i)""", """graph(%x : Tensor):
      %d : int = prim::Constant[value=0]()
      %k : bool = prim::Constant[value=False]()
      %v : Tensor, %i : Tensor = ember::max(%x, %d, %k)
      return (%i)""")


def test_dead_nodes_inside_blocks_and_unused_if_outputs_are_removed():
    check("""graph(%x : Tensor, %c : bool):
      %e : Tensor = ember::exp(%x)
      %r : Tensor, %k : Tensor = prim::If(%c)
        block0():
          %dead : Tensor = ember::sin(%x)
          %n : Tensor = ember::neg(%e)
          -> (%x, %n)
        block1():
          %m : Tensor = ember::cos(%x)
          -> (%m, %e)
      return (%r)""", """graph(%x : Tensor, %c : bool):
      %r : Tensor = prim::If(%c)
        block0():
          -> (%x)
        block1():
          %m : Tensor = ember::cos(%x)
          -> (%m)
      return (%r)""")


def test_an_unused_pure_if_goes_and_one_with_a_print_stays():
    check("""graph(%x : Tensor, %c : bool):
      %a : Tensor = prim::If(%c)
        block0():
          %n : Tensor = ember::neg(%x)
          -> (%n)
        block1():
          -> (%x)
      %b : Tensor = prim::If(%c)
        block0():
          %s : Tensor = ember::sin(%x)
           = prim::Print(%s)
          -> (%s)
        block1():
          -> (%x)
      return (%x)""", """graph(%x : Tensor, %c : bool):
       = prim::If(%c)
        block0():
          %s : Tensor = ember::sin(%x)
           = prim::Print(%s)
          -> ()
        block1():
          -> ()
      return (%x)""")


LOOP_BEFORE = """graph(%x : Tensor, %n : int):
  %t : bool = prim::Constant[value=True]()
  %one : int = prim::Constant[value=1]()
  %e : Tensor = ember::exp(%x)
  %a : Tensor, %b : Tensor, %acc : Tensor = prim::Loop(%n, %t, %x, %e, %x)
    block0(%i : int, %a.1 : Tensor, %b.1 : Tensor, %acc.1 : Tensor):
      %a.2 : Tensor = ember::add(%a.1, %b.1, %one)
      %b.2 : Tensor = ember::neg(%b.1)
      %acc.2 : Tensor = ember::mul(%acc.1, %acc.1)
      -> (%t, %a.2, %b.2, %acc.2)
  return (%a)"""


def test_loop_carried_values_nobody_needs_are_pruned():
    # %b is unused after the loop but feeds %a, which is used: it stays. %acc only feeds
    # its own update: it goes, with the nodes computing it.
    check(LOOP_BEFORE, """graph(%x : Tensor, %n : int):
      %t : bool = prim::Constant[value=True]()
      %one : int = prim::Constant[value=1]()
      %e : Tensor = ember::exp(%x)
      %a : Tensor, %b : Tensor = prim::Loop(%n, %t, %x, %e)
        block0(%i : int, %a.1 : Tensor, %b.1 : Tensor):
          %a.2 : Tensor = ember::add(%a.1, %b.1, %one)
          %b.2 : Tensor = ember::neg(%b.1)
          -> (%t, %a.2, %b.2)
      return (%a)""")


def test_an_unused_loop_without_side_effects_goes_entirely():
    check(LOOP_BEFORE.replace("return (%a)", "return (%x)"), """graph(%x : Tensor, %n : int):
      return (%x)""")


@pytest.mark.parametrize("side_effect", [" = prim::Print(%acc.2)",
                                         "%w : Tensor = ember::add_(%x, %acc.1, %one)"])
def test_a_loop_keeps_carried_values_its_side_effects_read(side_effect):
    before = LOOP_BEFORE.replace("      -> (%t, %a.2", f"      {side_effect}\n      -> (%t, %a.2")
    g = parse_ir(before.replace("return (%a)", "return (%x)"))
    eliminate_dead_code(g)
    g.lint()
    loop = [n for n in g.nodes() if n.kind == "prim::Loop"]
    assert len(loop) == 1 and len(loop[0].outputs) == 1  # only %acc is carried
    assert [n.kind for n in loop[0].blocks[0].nodes()][0] == "ember::mul"


def test_the_module_docstring_example_holds():
    # The module name is also the function's name: import the module itself.
    doc = importlib.import_module("ember.jit.passes.dead_code_elimination").__doc__
    before, after = (textwrap.dedent(b) for b in re.findall(r"::\n\n(.*?)\n\n", doc, re.S)[:2])
    check(before, after)
