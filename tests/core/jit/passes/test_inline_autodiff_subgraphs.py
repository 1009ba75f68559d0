"""inline_autodiff_subgraphs: small groups go back inline, before/after IR text."""
import numpy as np

import ember as E
from ember.jit.autodiff.differentiation import differentiate
from ember.jit.autodiff.differentiable_graph import pack_gradient
from ember.jit.runtime.interpreter import run_graph
from ember.jit.ir.parser import parse_ir
from ember.jit.passes import canonicalize
from ember.jit.passes.inline_autodiff_subgraphs import inline_autodiff_subgraphs
from helpers import to_np


def check(before: str, after: str, threshold: int = 5, inputs=None) -> None:
    g = parse_ir(before)
    assert inline_autodiff_subgraphs(g, threshold) is None
    g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(after)))
    if inputs is not None:
        for a, b in zip(run_graph(g, inputs), run_graph(parse_ir(before), inputs)):
            np.testing.assert_allclose(to_np(a), to_np(b))


SMALL = """graph(%x : Tensor, %y : Tensor):
      %c : Tensor = prim::DifferentiableGraph_0(%x, %y)
      return (%c)
    with prim::DifferentiableGraph_0 = graph(%x : Tensor, %y : Tensor):
      %one : int = prim::Constant[value=1]()
      %c : Tensor = ember::add(%x, %y, %one)
      return (%c)"""


def test_docstring_example():
    check(SMALL, """graph(%x : Tensor, %y : Tensor):
      %one : int = prim::Constant[value=1]()
      %c : Tensor = ember::add(%x, %y, %one)
      return (%c)""", inputs=[E.randn(3), E.randn(3)])


def test_threshold_counts_working_nodes_only():
    check(SMALL, SMALL, threshold=1)
    big = """graph(%x : Tensor):
      %r : Tensor = prim::DifferentiableGraph_0(%x)
      return (%r)
    with prim::DifferentiableGraph_0 = graph(%x : Tensor):
      %a : Tensor = ember::exp(%x)
      %b : Tensor = ember::sin(%a)
      %c : Tensor = ember::cos(%b)
      %d : Tensor = ember::tanh(%c)
      %e : Tensor = ember::neg(%d)
      return (%e)"""
    check(big, big, threshold=5)
    check(big, """graph(%x : Tensor):
      %a : Tensor = ember::exp(%x)
      %b : Tensor = ember::sin(%a)
      %c : Tensor = ember::cos(%b)
      %d : Tensor = ember::tanh(%c)
      %r : Tensor = ember::neg(%d)
      return (%r)""", threshold=6)


def test_a_differentiated_group_drops_its_temporaries():
    g = parse_ir("""graph(%x : Tensor, %y : Tensor):
      %w : Tensor = prim::DifferentiableGraph_0(%x, %y)
      return (%w)
    with prim::DifferentiableGraph_0 = graph(%x : Tensor, %y : Tensor):
      %one : int = prim::Constant[value=1]()
      %z : Tensor = ember::add(%x, %y, %one)
      %w : Tensor = ember::exp(%z)
      return (%w)""")
    node = next(g.nodes())
    pack_gradient(differentiate(node.g("Subgraph")), node)
    assert len(node.g("Subgraph").outputs) == 3  # w and the inputs' TensorMetas
    inline_autodiff_subgraphs(g)
    g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir("""graph(%x : Tensor,
          %y : Tensor):
      %one : int = prim::Constant[value=1]()
      %z : Tensor = ember::add(%x, %y, %one)
      %w : Tensor = ember::exp(%z)
      return (%w)""")))


def test_nested_blocks_and_fusion_groups():
    check("""graph(%x : Tensor, %k : bool):
      %r : Tensor = prim::If(%k)
        block0():
          %s : Tensor = prim::DifferentiableGraph_0(%x)
          -> (%s)
        block1():
          %f : Tensor = prim::DifferentiableGraph_1(%x)
          -> (%f)
      return (%r)
    with prim::DifferentiableGraph_0 = graph(%x : Tensor):
      %s : Tensor = ember::sin(%x)
      return (%s)
    with prim::DifferentiableGraph_1 = graph(%x : Tensor):
      %f : Tensor = prim::FusionGroup_2(%x)
      return (%f)
    with prim::FusionGroup_2 = graph(%x : Tensor):
      %f : Tensor = ember::cos(%x)
      return (%f)""", """graph(%x : Tensor, %k : bool):
      %r : Tensor = prim::If(%k)
        block0():
          %s : Tensor = ember::sin(%x)
          -> (%s)
        block1():
          %f : Tensor = ember::cos(%x)
          -> (%f)
      return (%r)""")  # a small group's FusionGroup is inlined unfused, under autograd
