"""batch_mm: products sharing an operand become one product split into views, sums of
products one product of concatenated operands; the numbers stay the same."""
import importlib

import numpy as np
import pytest

import ember as E
from ember.jit.runtime.interpreter import run_graph
from ember.jit.ir.graph import TensorType
from ember.jit.ir.parser import parse_ir
from ember.jit.passes import canonicalize
from ember.jit.passes.batch_mm import batch_mm
from helpers import literal_blocks, to_np


def random_inputs(g, seed=0):
    rng = np.random.default_rng(seed)
    return [E.tensor(rng.standard_normal(v.type.concrete_sizes()), dtype=v.type.dtype)
            if isinstance(v.type, TensorType) else 3 for v in g.inputs]


def check(before: str, after: str) -> None:
    g = parse_ir(before)
    assert batch_mm(g) is None
    g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(after)))
    if after != before:
        inputs = random_inputs(g)
        for want, got in zip(run_graph(parse_ir(before), inputs), run_graph(g, inputs)):
            assert got.dtype is want.dtype and got.shape == want.shape
            np.testing.assert_allclose(to_np(got), to_np(want), rtol=1e-5, atol=1e-5)


def unchanged(before: str) -> None:
    check(before, before)


def test_docstring_example():
    # the module docstring's own before/after, so the example stays true
    before, after = literal_blocks(importlib.import_module(
        "ember.jit.passes.batch_mm").__doc__)
    check(before, after)


def test_shared_right_operand_three_products():
    check("""graph(%a1 : Double(2, 3), %a2 : Double(4, 3), %a3 : Double(1, 3),
                   %b : Double(3, 5)):
      %y1 : Double(2, 5) = ember::mm(%a1, %b)
      %y2 : Double(4, 5) = ember::mm(%a2, %b)
      %y3 : Double(1, 5) = ember::mm(%a3, %b)
      return (%y1, %y2, %y3)""", """graph(%a1 : Double(2, 3), %a2 : Double(4, 3),
                   %a3 : Double(1, 3), %b : Double(3, 5)):
      %l : Tensor[] = prim::ListConstruct(%a1, %a2, %a3)
      %zero : int = prim::Constant[value=0]()
      %c : Double(7, 3) = ember::cat(%l, %zero)
      %m : Double(7, 5) = ember::mm(%c, %b)
      %s : int[] = prim::Constant[value=[2, 4, 1]]()
      %p : Tensor[] = ember::split.sizes(%m, %s, %zero)
      %y1 : Double(2, 5), %y2 : Double(4, 5), %y3 : Double(1, 5) = prim::ListUnpack(%p)
      return (%y1, %y2, %y3)""")


def test_dependent_product_waits_for_the_next_group():
    # %b2 is computed from %y1, so mm(%a, %b2) cannot join; mm(%a, %b3) joins %y1 instead
    check("""graph(%a : Float(3, 3), %b1 : Float(3, 3), %b3 : Float(3, 3)):
      %y1 : Float(3, 3) = ember::mm(%a, %b1)
      %b2 : Float(3, 3) = ember::exp(%y1)
      %y2 : Float(3, 3) = ember::mm(%a, %b2)
      %y3 : Float(3, 3) = ember::mm(%a, %b3)
      return (%y2, %y3)""", """graph(%a : Float(3, 3), %b1 : Float(3, 3),
                                    %b3 : Float(3, 3)):
      %l : Tensor[] = prim::ListConstruct(%b1, %b3)
      %one : int = prim::Constant[value=1]()
      %c : Float(3, 6) = ember::cat(%l, %one)
      %m : Float(3, 6) = ember::mm(%a, %c)
      %s : int[] = prim::Constant[value=[3, 3]]()
      %p : Tensor[] = ember::split.sizes(%m, %s, %one)
      %y1 : Float(3, 3), %y3 : Float(3, 3) = prim::ListUnpack(%p)
      %b2 : Float(3, 3) = ember::exp(%y1)
      %y2 : Float(3, 3) = ember::mm(%a, %b2)
      return (%y2, %y3)""")


def test_operand_computed_after_a_read_is_moved_up():
    # two linear layers after decompose_ops: t(%w2) runs after %y1 is read
    check("""graph(%x : Float(5, 3), %w1 : Float(4, 3), %w2 : Float(6, 3)):
      %t1 : Float(3, 4) = ember::t(%w1)
      %y1 : Float(5, 4) = ember::mm(%x, %t1)
      %z1 : Float(5, 4) = ember::relu(%y1)
      %t2 : Float(3, 6) = ember::t(%w2)
      %y2 : Float(5, 6) = ember::mm(%x, %t2)
      return (%z1, %y2)""", """graph(%x : Float(5, 3), %w1 : Float(4, 3),
                                     %w2 : Float(6, 3)):
      %t1 : Float(3, 4) = ember::t(%w1)
      %t2 : Float(3, 6) = ember::t(%w2)
      %l : Tensor[] = prim::ListConstruct(%t1, %t2)
      %one : int = prim::Constant[value=1]()
      %c : Float(3, 10) = ember::cat(%l, %one)
      %m : Float(5, 10) = ember::mm(%x, %c)
      %s : int[] = prim::Constant[value=[4, 6]]()
      %p : Tensor[] = ember::split.sizes(%m, %s, %one)
      %y1 : Float(5, 4), %y2 : Float(5, 6) = prim::ListUnpack(%p)
      %z1 : Float(5, 4) = ember::relu(%y1)
      return (%z1, %y2)""")


def test_kept_when_an_operand_cannot_move():
    # %b2 comes from a node with side effects placed after the read of %y1
    unchanged("""graph(%a : Float(2, 3), %b1 : Float(3, 2), %b : Float(3, 2)):
      %y1 : Float(2, 2) = ember::mm(%a, %b1)
      %z : Float(2, 2) = ember::exp(%y1)
      %b2 : Float(3, 2) = prim::PythonOp[cconv="v", fn=pyobj("ember.relu")](%b)
      %y2 : Float(2, 2) = ember::mm(%a, %b2)
      return (%z, %y2)""")


@pytest.mark.parametrize("b1, b2", [
    ("Float(3, 2)", "Double(3, 2)"),  # cat would promote: the float product would change
    ("Float(3, 2)", "Float(3, *)"),  # split sizes unknown
    ("Float(3, 2)", "Tensor"),
])
def test_kept_when_operands_differ_or_are_unknown(b1, b2):
    unchanged(f"""graph(%a : Float(4, 3), %b1 : {b1}, %b2 : {b2}):
      %y1 : Tensor = ember::mm(%a, %b1)
      %y2 : Tensor = ember::mm(%a, %b2)
      return (%y1, %y2)""")


def test_read_inside_a_block_before_the_second_product():
    check("""graph(%a : Float(2, 3), %b1 : Float(3, 2), %b2 : Float(3, 2)):
      %y1 : Float(2, 2) = ember::mm(%a, %b1)
      %k : bool = prim::Constant[value=True]()
      %r : Float(2, 2) = prim::If(%k)
        block0():
          %e : Float(2, 2) = ember::exp(%y1)
          -> (%e)
        block1():
          -> (%y1)
      %y2 : Float(2, 2) = ember::mm(%a, %b2)
      return (%r, %y2)""", """graph(%a : Float(2, 3), %b1 : Float(3, 2), %b2 : Float(3, 2)):
      %l : Tensor[] = prim::ListConstruct(%b1, %b2)
      %one : int = prim::Constant[value=1]()
      %c : Float(3, 4) = ember::cat(%l, %one)
      %m : Float(2, 4) = ember::mm(%a, %c)
      %s : int[] = prim::Constant[value=[2, 2]]()
      %p : Tensor[] = ember::split.sizes(%m, %s, %one)
      %y1 : Float(2, 2), %y2 : Float(2, 2) = prim::ListUnpack(%p)
      %k : bool = prim::Constant[value=True]()
      %r : Float(2, 2) = prim::If(%k)
        block0():
          %e : Float(2, 2) = ember::exp(%y1)
          -> (%e)
        block1():
          -> (%y1)
      return (%r, %y2)""")


def test_kept_in_a_graph_with_inplace_ops():
    unchanged("""graph(%a : Float(2, 3), %b1 : Float(3, 2), %b2 : Float(3, 2)):
      %y1 : Float(2, 2) = ember::mm(%a, %b1)
      %one : int = prim::Constant[value=1]()
      %w : Float(3, 2) = ember::add_(%b2, %one, %one)
      %y2 : Float(2, 2) = ember::mm(%a, %b2)
      return (%y1, %y2)""")


def test_products_in_a_loop_body():
    check("""graph(%a : Float(2, 3), %b1 : Float(3, 2), %b2 : Float(3, 2), %n : int):
      %k : bool = prim::Constant[value=True]()
      %r : Float(2, 2) = prim::Loop(%n, %k, %a)
        block0(%i : int, %h : Float(2, 3)):
          %y1 : Float(2, 2) = ember::mm(%h, %b1)
          %y2 : Float(2, 2) = ember::mm(%h, %b2)
          %one : int = prim::Constant[value=1]()
          %s : Float(2, 2) = ember::mul(%y1, %y2)
          -> (%k, %h)
      return (%r)""", """graph(%a : Float(2, 3), %b1 : Float(3, 2), %b2 : Float(3, 2),
                                %n : int):
      %k : bool = prim::Constant[value=True]()
      %r : Float(2, 2) = prim::Loop(%n, %k, %a)
        block0(%i : int, %h : Float(2, 3)):
          %l : Tensor[] = prim::ListConstruct(%b1, %b2)
          %d : int = prim::Constant[value=1]()
          %c : Float(3, 4) = ember::cat(%l, %d)
          %m : Float(2, 4) = ember::mm(%h, %c)
          %sz : int[] = prim::Constant[value=[2, 2]]()
          %p : Tensor[] = ember::split.sizes(%m, %sz, %d)
          %y1 : Float(2, 2), %y2 : Float(2, 2) = prim::ListUnpack(%p)
          %one : int = prim::Constant[value=1]()
          %s : Float(2, 2) = ember::mul(%y1, %y2)
          -> (%k, %h)
      return (%r)""")


def test_tree_reduce():
    check("""graph(%a1 : Float(4, 3), %b1 : Float(3, 2), %a2 : Float(4, 5),
                   %b2 : Float(5, 2), %a3 : Float(4, 1), %b3 : Float(1, 2)):
      %one : int = prim::Constant[value=1]()
      %y1 : Float(4, 2) = ember::mm(%a1, %b1)
      %y2 : Float(4, 2) = ember::mm(%a2, %b2)
      %y3 : Float(4, 2) = ember::mm(%a3, %b3)
      %s : Float(4, 2) = ember::add(%y1, %y2, %one)
      %t : Float(4, 2) = ember::add(%y3, %s, %one)
      return (%t)""", """graph(%a1 : Float(4, 3), %b1 : Float(3, 2), %a2 : Float(4, 5),
                   %b2 : Float(5, 2), %a3 : Float(4, 1), %b3 : Float(1, 2)):
      %one : int = prim::Constant[value=1]()
      %zero : int = prim::Constant[value=0]()
      %la : Tensor[] = prim::ListConstruct(%a3, %a1, %a2)
      %ca : Float(4, 9) = ember::cat(%la, %one)
      %lb : Tensor[] = prim::ListConstruct(%b3, %b1, %b2)
      %cb : Float(9, 2) = ember::cat(%lb, %zero)
      %t : Float(4, 2) = ember::mm(%ca, %cb)
      return (%t)""")


@pytest.mark.parametrize("alpha, extra_use", [("2", ""), ("1", ", %y1")])
def test_tree_reduce_kept(alpha, extra_use):
    # alpha 2 scales a product; a product read elsewhere must stay
    unchanged(f"""graph(%a1 : Float(4, 3), %b1 : Float(3, 2), %a2 : Float(4, 5),
                         %b2 : Float(5, 2)):
      %c : int = prim::Constant[value={alpha}]()
      %y1 : Float(4, 2) = ember::mm(%a1, %b1)
      %y2 : Float(4, 2) = ember::mm(%a2, %b2)
      %s : Float(4, 2) = ember::add(%y1, %y2, %c)
      return (%s{extra_use})""")
