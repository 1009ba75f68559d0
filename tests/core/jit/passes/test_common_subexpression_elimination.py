"""eliminate_common_subexpression: before/after IR text."""
import importlib
import re
import textwrap

import pytest

from ember.jit.ir.parser import parse_ir
from ember.jit.passes import canonicalize
from ember.jit.passes.common_subexpression_elimination import (
    NONDETERMINISTIC_KINDS, eliminate_common_subexpression)


def check(before: str, after: str) -> None:
    g = parse_ir(before)
    assert eliminate_common_subexpression(g) is None
    g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(after)))


def test_repeated_chains_merge_in_one_run():
    check("""graph(%x : Tensor, %y : Tensor):
      %one : int = prim::Constant[value=1]()
      %a1 : Tensor = ember::exp(%x)
      %b1 : Tensor = ember::add(%a1, %y, %one)
      %a2 : Tensor = ember::exp(%x)
      %b2 : Tensor = ember::add(%a2, %y, %one)
      %c : Tensor = ember::mul(%b1, %b2)
      return (%c, %a2)""", """graph(%x : Tensor, %y : Tensor):
      %one : int = prim::Constant[value=1]()
      %a1 : Tensor = ember::exp(%x)
      %b1 : Tensor = ember::add(%a1, %y, %one)
      %c : Tensor = ember::mul(%b1, %b1)
      return (%c, %a1)""")


def test_different_inputs_order_or_output_types_are_not_merged():
    text = """graph(%x : Tensor, %y : Tensor):
      %a : Tensor = ember::mul(%x, %y)
      %b : Tensor = ember::mul(%y, %x)
      %c : Float(2) = ember::exp(%x)
      %d : Double(2) = ember::exp(%x)
      return (%a, %b, %c, %d)"""
    check(text, text)


def test_constants_merge_only_with_equal_type_and_value():
    check("""graph(%x : Tensor):
      %i : int = prim::Constant[value=1]()
      %f : float = prim::Constant[value=1.0]()
      %b : bool = prim::Constant[value=True]()
      %i2 : int = prim::Constant[value=1]()
      %f2 : float = prim::Constant[value=1.0]()
      %z : float = prim::Constant[value=-0.0]()
      %t : Tensor = prim::Constant[value=tensor([1.0, 2.0], dtype=float32)]()
      %t2 : Tensor = prim::Constant[value=tensor([1.0, 2.0], dtype=float32)]()
      %t3 : Tensor = prim::Constant[value=tensor([1.0, 2.0], dtype=float64)]()
      %r : (int, float, bool, int, float, float, Tensor, Tensor, Tensor) = """
          """prim::TupleConstruct(%i, %f, %b, %i2, %f2, %z, %t, %t2, %t3)
      return (%r)""", """graph(%x : Tensor):
      %i : int = prim::Constant[value=1]()
      %f : float = prim::Constant[value=1.0]()
      %b : bool = prim::Constant[value=True]()
      %z : float = prim::Constant[value=-0.0]()
      %t : Tensor = prim::Constant[value=tensor([1.0, 2.0], dtype=float32)]()
      %t3 : Tensor = prim::Constant[value=tensor([1.0, 2.0], dtype=float64)]()
      %r : (int, float, bool, int, float, float, Tensor, Tensor, Tensor) = """
          """prim::TupleConstruct(%i, %f, %b, %i, %f, %z, %t, %t, %t3)
      return (%r)""")


def test_attributes_must_be_equal():
    check("""graph(%x : Tensor):
      %a : Tensor = ember::foo[k=1](%x)
      %b : Tensor = ember::foo[k=1.0](%x)
      %c : Tensor = ember::foo[k=1](%x)
      %d : Tensor = ember::foo(%x)
      return (%a, %b, %c, %d)""", """graph(%x : Tensor):
      %a : Tensor = ember::foo[k=1](%x)
      %b : Tensor = ember::foo[k=1.0](%x)
      %d : Tensor = ember::foo(%x)
      return (%a, %b, %a, %d)""")


@pytest.mark.parametrize("kind", sorted(NONDETERMINISTIC_KINDS))
def test_random_ops_are_not_merged(kind):
    text = f"""graph(%x : Tensor):
      %a : Tensor = {kind}(%x)
      %b : Tensor = {kind}(%x)
      return (%a, %b)"""
    check(text, text)


def test_dropout_in_a_graph():
    text = """graph(%x : Tensor):
      %p : float = prim::Constant[value=0.5]()
      %train : bool = prim::Constant[value=True]()
      %a : Tensor = ember::dropout(%x, %p, %train)
      %b : Tensor = ember::dropout(%x, %p, %train)
      return (%a, %b)"""
    check(text, text)


def test_nodes_with_side_effects_are_not_merged():
    text = """graph(%x : Tensor):
       = prim::Print(%x)
       = prim::Print(%x)
      %a : Tensor = prim::PythonOp[fn=pyobj("mod.Fn")](%x)
      %b : Tensor = prim::PythonOp[fn=pyobj("mod.Fn")](%x)
      return (%a, %b)"""
    check(text, text)


def test_a_graph_with_in_place_ops_merges_no_tensor_expressions():
    # exp(%x) before and after add_ differ; only the int constants may merge.
    check("""graph(%x : Tensor):
      %one : int = prim::Constant[value=1]()
      %one2 : int = prim::Constant[value=1]()
      %a : Tensor = ember::exp(%x)
      %w : Tensor = ember::add_(%x, %x, %one2)
      %b : Tensor = ember::exp(%x)
      return (%a, %b)""", """graph(%x : Tensor):
      %one : int = prim::Constant[value=1]()
      %a : Tensor = ember::exp(%x)
      %w : Tensor = ember::add_(%x, %x, %one)
      %b : Tensor = ember::exp(%x)
      return (%a, %b)""")


def test_a_block_reuses_from_enclosing_blocks_but_not_from_siblings():
    check("""graph(%x : Tensor, %c : bool):
      %a : Tensor = ember::exp(%x)
      %y : Tensor = prim::If(%c)
        block0():
          %a2 : Tensor = ember::exp(%x)
          %s : Tensor = ember::sin(%a2)
          %z : Tensor = prim::If(%c)
            block0():
              %s2 : Tensor = ember::sin(%a)
              -> (%s2)
            block1():
              -> (%s)
          -> (%z)
        block1():
          %s3 : Tensor = ember::sin(%a)
          -> (%s3)
      %s4 : Tensor = ember::sin(%a)
      return (%y, %s4)""", """graph(%x : Tensor, %c : bool):
      %a : Tensor = ember::exp(%x)
      %y : Tensor = prim::If(%c)
        block0():
          %s : Tensor = ember::sin(%a)
          %z : Tensor = prim::If(%c)
            block0():
              -> (%s)
            block1():
              -> (%s)
          -> (%z)
        block1():
          %s3 : Tensor = ember::sin(%a)
          -> (%s3)
      %s4 : Tensor = ember::sin(%a)
      return (%y, %s4)""")


def test_nodes_with_blocks_are_not_merged():
    text = """graph(%x : Tensor, %c : bool):
      %a : Tensor = prim::If(%c)
        block0():
          -> (%x)
        block1():
          -> (%x)
      %b : Tensor = prim::If(%c)
        block0():
          -> (%x)
        block1():
          -> (%x)
      return (%a, %b)"""
    check(text, text)


def test_multiple_outputs_are_replaced_pairwise():
    check("""graph(%x : Tensor):
      %d : int = prim::Constant[value=0]()
      %k : bool = prim::Constant[value=False]()
      %v : Tensor, %i : Tensor = ember::max(%x, %d, %k)
      %v2 : Tensor, %i2 : Tensor = ember::max(%x, %d, %k)
      return (%i2, %v2, %v)""", """graph(%x : Tensor):
      %d : int = prim::Constant[value=0]()
      %k : bool = prim::Constant[value=False]()
      %v : Tensor, %i : Tensor = ember::max(%x, %d, %k)
      return (%i, %v, %v)""")


def test_the_module_docstring_example_holds():
    # The module name is also the function's name: import the module itself.
    doc = importlib.import_module("ember.jit.passes.common_subexpression_elimination").__doc__
    before, after = (textwrap.dedent(b) for b in re.findall(r"::\n\n(.*?)\n\n", doc, re.S)[:2])
    check(before, after)
