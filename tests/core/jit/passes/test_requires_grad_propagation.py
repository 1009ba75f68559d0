"""propagate_requires_grad: before/after IR text, and agreement with eager autograd."""
import importlib
import textwrap

import pytest

import ember as E
from ember.jit.runtime.interpreter import run_graph
from ember.jit.ir.parser import parse_ir
from ember.jit.passes import canonicalize
from ember.jit.passes.requires_grad_propagation import propagate_requires_grad


def check(before: str, after: str):
    g = parse_ir(before)
    assert propagate_requires_grad(g) is None
    g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(after)))
    return g


def test_docstring_example():
    doc = importlib.import_module("ember.jit.passes.requires_grad_propagation").__doc__
    before, after = [textwrap.dedent(b.split("\n\n")[0]) for b in doc.split("::\n\n")[1:3]]
    g = check(before, after)
    # eager autograd agrees, but for %y, which requires grad only when %c is False
    x, w = E.randn(2, requires_grad=True), E.randn(2)
    for c in (True, False):
        outs = run_graph(g, [x, w, c])
        assert [o.requires_grad for o in outs] == [not c, False, True, False]


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge", "logical_and"])
def test_comparisons_never_require_grad(op):
    check(f"""graph(%x : Float(2, requires_grad=1), %y : Tensor):
      %r : Tensor = ember::{op}(%x, %y)
      return (%r)""", f"""graph(%x : Float(2, requires_grad=1), %y : Tensor):
      %r : Tensor(..., requires_grad=0) = ember::{op}(%x, %y)
      return (%r)""")


def test_non_differentiable_ops_inputs_outputs_and_dtypes():
    check("""graph(%x : Float(2, requires_grad=1), %c : Tensor(..., requires_grad=1),
                   %w : Float(2, requires_grad=0)):
      %none : NoneType = prim::Constant[value=None]()
      %f : bool = prim::Constant[value=False]()
      %zero : int = prim::Constant[value=0]()
      %long : ScalarType = prim::Constant[value=int64]()
      %am : Tensor = ember::argmax(%x, %none, %f)
      %d : Tensor = ember::detach(%x)
      %wh : Tensor = ember::where(%c, %w, %w)
      %v : Tensor, %i : Tensor = ember::max.dim(%x, %zero, %f)
      %s : Tensor = ember::sign(%x)
      %l : Long(2) = ember::_to_copy(%x, %long, %none)
      return (%am, %d, %wh, %v, %i, %s, %l)""", """graph(%x : Float(2, requires_grad=1),
                   %c : Tensor(..., requires_grad=1), %w : Float(2, requires_grad=0)):
      %none : NoneType = prim::Constant[value=None]()
      %f : bool = prim::Constant[value=False]()
      %zero : int = prim::Constant[value=0]()
      %long : ScalarType = prim::Constant[value=int64]()
      %am : Tensor(..., requires_grad=0) = ember::argmax(%x, %none, %f)
      %d : Tensor(..., requires_grad=0) = ember::detach(%x)
      %wh : Tensor(..., requires_grad=0) = ember::where(%c, %w, %w)
      %v : Tensor(..., requires_grad=1), %i : Tensor(..., requires_grad=0) =
          ember::max.dim(%x, %zero, %f)
      %s : Tensor(..., requires_grad=1) = ember::sign(%x)
      %l : Long(2, requires_grad=0) = ember::_to_copy(%x, %long, %none)
      return (%am, %d, %wh, %v, %i, %s, %l)""")


@pytest.mark.parametrize("op", ["view_as", "reshape_as", "expand_as", "type_as"])
def test_shape_only_composites_follow_their_first_input(op):
    g = check(f"""graph(%x : Float(2, requires_grad=1), %w : Float(2, requires_grad=0)):
      %one : int = prim::Constant[value=1]()
      %a : Tensor = ember::{op}(%w, %x)
      %b : Tensor = ember::{op}(%x, %w)
      %c : Tensor = ember::rsub(%w, %x, %one)
      return (%a, %b)""", f"""graph(%x : Float(2, requires_grad=1),
                                    %w : Float(2, requires_grad=0)):
      %one : int = prim::Constant[value=1]()
      %a : Tensor(..., requires_grad=0) = ember::{op}(%w, %x)
      %b : Tensor(..., requires_grad=1) = ember::{op}(%x, %w)
      %c : Tensor(..., requires_grad=1) = ember::rsub(%w, %x, %one)
      return (%a, %b)""")
    x, w = E.randn(2, requires_grad=True), E.randn(2)
    assert [o.requires_grad for o in run_graph(g, [x, w])] == [False, True]


def test_unknown_inputs_stay_unknown_unless_true_or_ruled_out():
    check("""graph(%x : Tensor, %y : Float(2, requires_grad=1), %w : Float(2, requires_grad=0)):
      %one : int = prim::Constant[value=1]()
      %a : Tensor = ember::mul(%x, %w)
      %b : Float(2, requires_grad=0) = ember::mul(%x, %x)
      %c : Tensor = ember::add(%x, %y, %one)
      %d : Tensor = ember::eq(%x, %w)
      %k : Tensor = prim::Constant[value=tensor([1.0], dtype=float32)]()
      return (%a, %b, %c, %d, %k)""", """graph(%x : Tensor, %y : Float(2, requires_grad=1),
                                             %w : Float(2, requires_grad=0)):
      %one : int = prim::Constant[value=1]()
      %a : Tensor = ember::mul(%x, %w)
      %b : Float(2, requires_grad=0) = ember::mul(%x, %x)
      %c : Tensor(..., requires_grad=1) = ember::add(%x, %y, %one)
      %d : Tensor(..., requires_grad=0) = ember::eq(%x, %w)
      %k : Tensor(..., requires_grad=0) = prim::Constant[value=tensor([1.0], dtype=float32)]()
      return (%a, %b, %c, %d, %k)""")


def test_lists_and_tuples_pass_the_flag_through():
    check("""graph(%x : Float(2, requires_grad=1), %w : Float(2, requires_grad=0), %n : int):
      %zero : int = prim::Constant[value=0]()
      %l : Tensor[] = prim::ListConstruct(%x, %w)
      %lw : Tensor[] = prim::ListConstruct(%w, %w)
      %cat : Tensor = ember::cat(%l, %zero)
      %catw : Tensor = ember::cat(%lw, %zero)
      %a : Tensor, %b : Tensor = prim::ListUnpack(%l)
      %t : (Tensor, Tensor, int) = prim::TupleConstruct(%w, %x, %n)
      %t0 : Tensor, %t1 : Tensor, %t2 : int = prim::TupleUnpack(%t)
      return (%cat, %catw, %a, %b, %t0, %t1, %t2)""", """graph(%x : Float(2, requires_grad=1),
          %w : Float(2, requires_grad=0), %n : int):
      %zero : int = prim::Constant[value=0]()
      %l : Tensor(..., requires_grad=1)[] = prim::ListConstruct(%x, %w)
      %lw : Tensor(..., requires_grad=0)[] = prim::ListConstruct(%w, %w)
      %cat : Tensor(..., requires_grad=1) = ember::cat(%l, %zero)
      %catw : Tensor(..., requires_grad=0) = ember::cat(%lw, %zero)
      %a : Tensor(..., requires_grad=1), %b : Tensor(..., requires_grad=1) = prim::ListUnpack(%l)
      %t : (Tensor(..., requires_grad=0), Tensor(..., requires_grad=1), int) =
          prim::TupleConstruct(%w, %x, %n)
      %t0 : Tensor(..., requires_grad=0), %t1 : Tensor(..., requires_grad=1), %t2 : int =
          prim::TupleUnpack(%t)
      return (%cat, %catw, %a, %b, %t0, %t1, %t2)""")


def test_loop_carried_values_reach_a_fixed_point():
    # %b picks up %x's flag in the first iteration, %a only in the second (it reads %b);
    # %k never depends on %x.
    g = check("""graph(%x : Float(2, requires_grad=1), %w : Float(2, requires_grad=0)):
      %n : int = prim::Constant[value=3]()
      %t : bool = prim::Constant[value=True]()
      %one : int = prim::Constant[value=1]()
      %ra : Tensor, %rb : Tensor, %rk : Tensor = prim::Loop(%n, %t, %w, %w, %w)
        block0(%i : int, %a : Tensor, %b : Tensor, %k : Tensor):
          %a2 : Tensor = ember::neg(%b)
          %b2 : Tensor = ember::add(%b, %x, %one)
          %k2 : Tensor = ember::mul(%k, %k)
          -> (%t, %a2, %b2, %k2)
      return (%ra, %rb, %rk)""", """graph(%x : Float(2, requires_grad=1),
                                        %w : Float(2, requires_grad=0)):
      %n : int = prim::Constant[value=3]()
      %t : bool = prim::Constant[value=True]()
      %one : int = prim::Constant[value=1]()
      %ra : Tensor(..., requires_grad=1), %rb : Tensor(..., requires_grad=1),
      %rk : Tensor(..., requires_grad=0) = prim::Loop(%n, %t, %w, %w, %w)
        block0(%i : int, %a : Tensor(..., requires_grad=1), %b : Tensor(..., requires_grad=1),
               %k : Tensor(..., requires_grad=0)):
          %a2 : Tensor(..., requires_grad=1) = ember::neg(%b)
          %b2 : Tensor(..., requires_grad=1) = ember::add(%b, %x, %one)
          %k2 : Tensor(..., requires_grad=0) = ember::mul(%k, %k)
          -> (%t, %a2, %b2, %k2)
      return (%ra, %rb, %rk)""")
    outs = run_graph(g, [E.randn(2, requires_grad=True), E.randn(2)])
    assert [o.requires_grad for o in outs] == [True, True, False]


def test_if_inside_a_loop_and_int_tensors():
    check("""graph(%x : Float(2, requires_grad=1), %c : bool, %j : Long(2, requires_grad=0)):
      %n : int = prim::Constant[value=2]()
      %one : int = prim::Constant[value=1]()
      %r : Tensor, %rj : Long(2) = prim::Loop(%n, %c, %x, %j)
        block0(%i : int, %acc : Tensor, %ji : Long(2)):
          %y : Tensor = prim::If(%c)
            block0():
              %e : Tensor = ember::exp(%acc)
              -> (%e)
            block1():
              -> (%acc)
          %j2 : Long(2) = ember::add(%ji, %j, %one)
          -> (%c, %y, %j2)
      return (%r, %rj)""", """graph(%x : Float(2, requires_grad=1), %c : bool,
                                   %j : Long(2, requires_grad=0)):
      %n : int = prim::Constant[value=2]()
      %one : int = prim::Constant[value=1]()
      %r : Tensor(..., requires_grad=1), %rj : Long(2, requires_grad=0) =
          prim::Loop(%n, %c, %x, %j)
        block0(%i : int, %acc : Tensor(..., requires_grad=1), %ji : Long(2, requires_grad=0)):
          %y : Tensor(..., requires_grad=1) = prim::If(%c)
            block0():
              %e : Tensor(..., requires_grad=1) = ember::exp(%acc)
              -> (%e)
            block1():
              -> (%acc)
          %j2 : Long(2, requires_grad=0) = ember::add(%ji, %j, %one)
          -> (%c, %y, %j2)
      return (%r, %rj)""")


def test_other_nodes_with_blocks_are_entered():
    check("""graph(%g : Float(2, requires_grad=0), %x : Float(2, requires_grad=1)):
      %r : Tensor = prim::GradOf[name="ember::mul"](%g)
        block0():
          %a : Tensor = ember::mul(%g, %x)
          -> (%a)
      return (%r)""", """graph(%g : Float(2, requires_grad=0), %x : Float(2, requires_grad=1)):
      %r : Tensor(..., requires_grad=1) = prim::GradOf[name="ember::mul"](%g)
        block0():
          %a : Tensor(..., requires_grad=1) = ember::mul(%g, %x)
          -> (%a)
      return (%r)""")
