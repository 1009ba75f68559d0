"""create_autodiff_subgraphs: before/after IR text, and the same numbers before and after."""
import importlib

import numpy as np

import ember as E
from ember.jit.runtime.interpreter import run_graph
from ember.jit.ir.parser import parse_ir
from ember.jit.passes import canonicalize
from ember.jit.passes.create_autodiff_subgraphs import create_autodiff_subgraphs
from helpers import literal_blocks, to_np


def check(before: str, after: str, threshold: int = 2, groups: int = None, inputs=None):
    g = parse_ir(before)
    made = create_autodiff_subgraphs(g, threshold)
    g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(after)))
    if groups is not None:
        assert len(made) == groups
        assert all(n.kind == "prim::DifferentiableGraph" and not n.destroyed for n in made)
    if inputs is not None:
        for a, b in zip(run_graph(g, inputs), run_graph(parse_ir(before), inputs)):
            np.testing.assert_allclose(to_np(a), to_np(b))
    return made


def x3():
    return E.randn(3, dtype=E.float64)


def test_docstring_example_a_print_stops_the_merge():
    # the module docstring's own before/after, so the example stays true
    before, after = literal_blocks(importlib.import_module(
        "ember.jit.passes.create_autodiff_subgraphs").__doc__)
    check(before, after, groups=1)


def test_threshold_one_keeps_a_single_op_and_constants_are_copied_in():
    text = """graph(%x : Tensor, %y : Tensor):
      %one : int = prim::Constant[value=1]()
      %c : Tensor = ember::add(%x, %y, %one)
      return (%c)"""
    check(text, text, threshold=2, groups=0)
    check(text, """graph(%x : Tensor, %y : Tensor):
      %one : int = prim::Constant[value=1]()
      %c : Tensor = prim::DifferentiableGraph_0(%x, %y)
      return (%c)
    with prim::DifferentiableGraph_0 = graph(%x : Tensor, %y : Tensor):
      %one : int = prim::Constant[value=1]()
      %c : Tensor = ember::add(%x, %y, %one)
      return (%c)""", threshold=1, groups=1, inputs=[x3(), x3()])


def test_a_reader_in_between_moves_after_the_group():
    check("""graph(%x : Tensor):
      %a : Tensor = ember::exp(%x)
      %c : Tensor = ember::gt(%a, %x)
      %f : Tensor = ember::logical_not(%c)
      %b : Tensor = ember::sin(%a)
      return (%b, %f)""", """graph(%x : Tensor):
      %b : Tensor, %a : Tensor = prim::DifferentiableGraph_0(%x)
      %c : Tensor = ember::gt(%a, %x)
      %f : Tensor = ember::logical_not(%c)
      return (%b, %f)
    with prim::DifferentiableGraph_0 = graph(%x : Tensor):
      %a : Tensor = ember::exp(%x)
      %b : Tensor = ember::sin(%a)
      return (%b, %a)""", groups=1, inputs=[x3()])


def test_no_merge_when_the_group_reads_what_depends_on_the_producer():
    check("""graph(%x : Tensor):
      %a : Tensor = ember::exp(%x)
      %c : Tensor = ember::gt(%a, %x)
      %b : Tensor = ember::where(%c, %a, %x)
      %e : Tensor = ember::sin(%b)
      return (%e)""", """graph(%x : Tensor):
      %a : Tensor = ember::exp(%x)
      %c : Tensor = ember::gt(%a, %x)
      %e : Tensor = prim::DifferentiableGraph_0(%c, %a, %x)
      return (%e)
    with prim::DifferentiableGraph_0 = graph(%c : Tensor, %a : Tensor, %x : Tensor):
      %b : Tensor = ember::where(%c, %a, %x)
      %e : Tensor = ember::sin(%b)
      return (%e)""", groups=1, inputs=[x3()])


def test_a_print_is_crossed_but_an_inplace_write_is_not():
    check("""graph(%x : Tensor, %y : Tensor):
      %a : Tensor = ember::exp(%x)
      %b : Tensor = ember::sin(%y)
       = prim::Print(%b)
      %c : Tensor = ember::mul(%a, %b)
      %d : Tensor = ember::tanh(%c)
      return (%d)""", """graph(%x : Tensor, %y : Tensor):
      %b : Tensor = ember::sin(%y)
       = prim::Print(%b)
      %d : Tensor = prim::DifferentiableGraph_0(%b, %x)
      return (%d)
    with prim::DifferentiableGraph_0 = graph(%b : Tensor, %x : Tensor):
      %a : Tensor = ember::exp(%x)
      %c : Tensor = ember::mul(%a, %b)
      %d : Tensor = ember::tanh(%c)
      return (%d)""", groups=1)
    text = """graph(%x : Tensor, %y : Tensor):
      %one : int = prim::Constant[value=1]()
      %a : Tensor = ember::exp(%x)
      %w : Tensor = ember::add_(%x, %y, %one)
      %c : Tensor = ember::mul(%a, %y)
      return (%c, %w)"""
    check(text, text, groups=0)


def test_groups_merge_and_lists_come_along():
    check("""graph(%x : Tensor, %y : Tensor):
      %d : int = prim::Constant[value=0]()
      %a : Tensor = ember::exp(%x)
      %t : Tensor = ember::tanh(%y)
      %l : Tensor[] = prim::ListConstruct(%a, %t)
      %c : Tensor = ember::cat(%l, %d)
      %s : Tensor = ember::sigmoid(%c)
      return (%s, %t)""", """graph(%x : Tensor, %y : Tensor):
      %d : int = prim::Constant[value=0]()
      %s : Tensor, %t : Tensor = prim::DifferentiableGraph_0(%y, %x)
      return (%s, %t)
    with prim::DifferentiableGraph_0 = graph(%y : Tensor, %x : Tensor):
      %a : Tensor = ember::exp(%x)
      %t : Tensor = ember::tanh(%y)
      %l : Tensor[] = prim::ListConstruct(%a, %t)
      %d : int = prim::Constant[value=0]()
      %c : Tensor = ember::cat(%l, %d)
      %s : Tensor = ember::sigmoid(%c)
      return (%s, %t)""", groups=1, inputs=[x3(), x3()])


def test_nested_blocks_get_their_own_groups():
    made = check("""graph(%x : Tensor, %k : bool):
      %a : Tensor = ember::exp(%x)
      %r : Tensor = prim::If(%k)
        block0():
          %s : Tensor = ember::sin(%a)
          %t : Tensor = ember::cos(%s)
          -> (%t)
        block1():
          %u : Tensor = ember::neg(%a)
          -> (%u)
      %b : Tensor = ember::tanh(%r)
      %c : Tensor = ember::sigmoid(%b)
      return (%c)""", """graph(%x : Tensor, %k : bool):
      %a : Tensor = ember::exp(%x)
      %r : Tensor = prim::If(%k)
        block0():
          %t : Tensor = prim::DifferentiableGraph_0(%a)
          -> (%t)
        block1():
          %u : Tensor = ember::neg(%a)
          -> (%u)
      %c : Tensor = prim::DifferentiableGraph_1(%r)
      return (%c)
    with prim::DifferentiableGraph_0 = graph(%a : Tensor):
      %s : Tensor = ember::sin(%a)
      %t : Tensor = ember::cos(%s)
      return (%t)
    with prim::DifferentiableGraph_1 = graph(%r : Tensor):
      %b : Tensor = ember::tanh(%r)
      %c : Tensor = ember::sigmoid(%b)
      return (%c)""", groups=2, inputs=[x3(), True])
    assert {n.owning_block is n.graph.block for n in made} == {True, False}


def test_composite_and_non_differentiable_ops_stay_outside():
    text = """graph(%x : Tensor, %w : Tensor):
      %n : NoneType = prim::Constant[value=None]()
      %y : Tensor = ember::linear(%x, %w, %n)
      %k : bool = prim::Constant[value=False]()
      %i : Tensor = ember::argmax(%y, %n, %k)
      return (%y, %i)"""
    check(text, text, threshold=1, groups=0)
