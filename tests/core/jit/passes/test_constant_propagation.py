"""constant_propagation: before/after IR text, and the same numbers before and after."""
import importlib
import textwrap

import numpy as np
import pytest

import ember as E
from ember.jit.runtime.interpreter import JitRuntimeError, run_graph
from ember.jit.ir.parser import parse_ir
from ember.jit.passes import canonicalize
from ember.jit.passes.constant_propagation import MAX_FOLDED_NUMEL, constant_propagation


def check(before: str, after: str):
    g = parse_ir(before)
    assert constant_propagation(g) is None
    g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(after)))
    return g


def unchanged(text: str) -> None:
    check(text, text)


def values(outs):
    """Runtime outputs as plain nested Python/numpy values, for comparison."""
    if isinstance(outs, E.Tensor):
        return ("T", str(outs.dtype), outs.numpy().tolist())
    if isinstance(outs, (list, tuple)):
        return [values(o) for o in outs]
    return outs


def check_numbers(text: str, inputs) -> None:
    g = parse_ir(text)
    E.manual_seed(0)  # random ops stay in the graph and draw the same numbers
    expected = run_graph(g, inputs)
    constant_propagation(g)
    g.lint()
    E.manual_seed(0)
    assert values(run_graph(g, inputs)) == values(expected)


def test_docstring_example():
    doc = importlib.import_module("ember.jit.passes.constant_propagation").__doc__
    blocks = [textwrap.dedent(b.split("\n\n")[0]) for b in doc.split("::\n\n")[1:3]]
    check(*blocks)
    check_numbers(blocks[0], [E.ones(3, 2)])


def test_scalar_ops_lists_and_tuples_fold():
    check("""graph(%x : Tensor):
      %one : int = prim::Constant[value=1]()
      %two : int = prim::Constant[value=2]()
      %l : int[] = prim::ListConstruct(%one, %two)
      %t : (int, int[]) = prim::TupleConstruct(%two, %l)
      %a : int, %b : int[] = prim::TupleUnpack(%t)
      %c : int, %d : int = prim::ListUnpack(%b)
      %e : int[] = prim::ListConstruct()
      %v : Tensor = ember::view(%x, %l)
      return (%v, %a, %c, %d, %t, %e)""", """graph(%x : Tensor):
      %l : int[] = prim::Constant[value=[1, 2]]()
      %t : (int, int[]) = prim::Constant[value=(2, [1, 2])]()
      %a : int = prim::Constant[value=2]()
      %c : int = prim::Constant[value=1]()
      %d : int = prim::Constant[value=2]()
      %e : int[] = prim::Constant[value=[]]()
      %v : Tensor = ember::view(%x, %l)
      return (%v, %a, %c, %d, %t, %e)""")


def test_small_tensor_ops_fold_in_chains_and_keep_numbers():
    text = """graph(%x : Float(2)):
      %one : int = prim::Constant[value=1]()
      %w : Tensor = prim::Constant[value=tensor([1.0, 2.0], dtype=float32)]()
      %w2 : Tensor = ember::mul(%w, %w)
      %w3 : Tensor = ember::add(%w2, %w, %one)
      %y : Tensor = ember::mul(%x, %w3)
      return (%y)"""
    check(text, """graph(%x : Float(2)):
      %w3 : Float(2, requires_grad=0, device=cpu) =
          prim::Constant[value=tensor([2.0, 6.0], dtype=float32)]()
      %y : Tensor = ember::mul(%x, %w3)
      return (%y)""")
    check_numbers(text, [E.tensor([0.5, -3.0])])


def test_multi_output_ops_none_arguments_and_tensor_lists():
    text = """graph():
      %one : int = prim::Constant[value=1]()
      %zero : int = prim::Constant[value=0]()
      %f : bool = prim::Constant[value=False]()
      %none : NoneType = prim::Constant[value=None]()
      %w : Tensor = prim::Constant[value=tensor([[1.0, 5.0], [3.0, 2.0]], dtype=float32)]()
      %v : Tensor, %i : Tensor = ember::max.dim(%w, %one, %f)
      %s : Tensor = ember::sum(%w, %none, %f, %none)
      %parts : Tensor[] = ember::split(%w, %one, %zero)
      %a : Tensor, %b : Tensor = prim::ListUnpack(%parts)
      return (%v, %i, %s, %a, %b)"""
    g = check(text, """graph():
      %v : Float(2, requires_grad=0, device=cpu) =
          prim::Constant[value=tensor([5.0, 3.0], dtype=float32)]()
      %i : Long(2, requires_grad=0, device=cpu) =
          prim::Constant[value=tensor([1, 0], dtype=int64)]()
      %s : Float(requires_grad=0, device=cpu) =
          prim::Constant[value=tensor(11.0, dtype=float32)]()
      %a : Float(1, 2, requires_grad=0, device=cpu) =
          prim::Constant[value=tensor([[1.0, 5.0]], dtype=float32)]()
      %b : Float(1, 2, requires_grad=0, device=cpu) =
          prim::Constant[value=tensor([[3.0, 2.0]], dtype=float32)]()
      return (%v, %i, %s, %a, %b)""")
    check_numbers(text, [])
    # a ``prim::Constant()`` without a value attribute is None, too
    g = parse_ir(text.replace("prim::Constant[value=None]()", "prim::Constant()"))
    constant_propagation(g)
    assert all(v.is_constant for v in g.outputs)
    assert g.outputs[2].to_ivalue().item() == 11.0


def test_folded_tensors_are_copies():
    g = parse_ir("""graph():
      %two : int = prim::Constant[value=2]()
      %l : int[] = prim::ListConstruct(%two, %two)
      %w : Tensor = prim::Constant[value=tensor([1.0, 2.0, 3.0, 4.0], dtype=float32)]()
      %v : Tensor = ember::view(%w, %l)
      return (%w, %v)""")
    constant_propagation(g)
    w, v = (o.to_ivalue() for o in g.outputs)
    assert not np.shares_memory(w.numpy(), v.numpy())


def test_large_tensor_results_are_not_folded():
    n = MAX_FOLDED_NUMEL + 1
    data = ", ".join(["1.0"] * n)
    unchanged(f"""graph():
      %w : Tensor = prim::Constant[value=tensor([{data}], dtype=float32)]()
      %y : Tensor = ember::exp(%w)
      return (%y)""")
    # known result sizes over the limit: not even run
    unchanged("""graph():
      %w : Tensor = prim::Constant[value=tensor([1.0], dtype=float32)]()
      %y : Float(5, 5) = ember::exp(%w)
      return (%y)""")
    # a small (scalar) result of a large constant folds
    check(f"""graph():
      %none : NoneType = prim::Constant[value=None]()
      %f : bool = prim::Constant[value=False]()
      %w : Tensor = prim::Constant[value=tensor([{data}], dtype=float32)]()
      %y : Tensor = ember::sum(%w, %none, %f, %none)
      return (%y)""", f"""graph():
      %y : Float(requires_grad=0, device=cpu) =
          prim::Constant[value=tensor({float(n)}, dtype=float32)]()
      return (%y)""")


def test_random_side_effecting_and_unknown_nodes_are_not_folded():
    unchanged("""graph():
      %p : float = prim::Constant[value=0.5]()
      %t : bool = prim::Constant[value=True]()
      %w : Tensor = prim::Constant[value=tensor([1.0, 2.0], dtype=float32)]()
      %d : Tensor = ember::dropout(%w, %p, %t)
      %q : Tensor = prim::PythonOp[fn=pyobj("mod.Fn"), cconv="v"](%w)
       = prim::Print(%w)
      %u : Tensor = ember::not_an_op(%w)
      %k : Tensor = prim::Unknown(%w)
      return (%d, %q, %u, %k)""")


def test_in_place_ops_stop_tensor_folding_but_not_scalar_folding():
    check("""graph(%x : Tensor):
      %one : int = prim::Constant[value=1]()
      %w : Tensor = prim::Constant[value=tensor([1.0, 2.0], dtype=float32)]()
      %a : Tensor = ember::add_(%w, %x, %one)
      %b : Tensor = ember::mul(%w, %w)
      %l : int[] = prim::ListConstruct(%one, %one)
      return (%b, %l)""", """graph(%x : Tensor):
      %one : int = prim::Constant[value=1]()
      %w : Tensor = prim::Constant[value=tensor([1.0, 2.0], dtype=float32)]()
      %a : Tensor = ember::add_(%w, %x, %one)
      %b : Tensor = ember::mul(%w, %w)
      %l : int[] = prim::Constant[value=[1, 1]]()
      return (%b, %l)""")


def test_a_node_that_raises_is_left_for_run_time():
    text = """graph():
      %four : int = prim::Constant[value=4]()
      %l : int[] = prim::ListConstruct(%four)
      %w : Tensor = prim::Constant[value=tensor([1.0, 2.0, 3.0], dtype=float32)]()
      %v : Tensor = ember::view(%w, %l)
      return (%v)"""
    g = check(text, """graph():
      %l : int[] = prim::Constant[value=[4]]()
      %w : Tensor = prim::Constant[value=tensor([1.0, 2.0, 3.0], dtype=float32)]()
      %v : Tensor = ember::view(%w, %l)
      return (%v)""")
    with pytest.raises(JitRuntimeError, match="ember::view"):
        run_graph(g, [])


IF_TEXT = """graph(%x : Tensor):
  %c : bool = prim::Constant[value={cond}]()
  %one : int = prim::Constant[value=1]()
  %y : Tensor = prim::If(%c)
    block0():
      %t : Tensor = prim::Constant[value=tensor([2.0], dtype=float32)]()
      %u : Tensor = ember::mul(%t, %t)
      %a : Tensor = ember::add(%x, %u, %one)
      -> (%a)
    block1():
      %b : Tensor = ember::neg(%x)
      -> (%b)
  return (%y)"""


def test_if_with_constant_condition_is_inlined():
    check(IF_TEXT.format(cond="True"), """graph(%x : Tensor):
      %one : int = prim::Constant[value=1]()
      %u : Float(1, requires_grad=0, device=cpu) =
          prim::Constant[value=tensor([4.0], dtype=float32)]()
      %a : Tensor = ember::add(%x, %u, %one)
      return (%a)""")
    check(IF_TEXT.format(cond="False"), """graph(%x : Tensor):
      %b : Tensor = ember::neg(%x)
      return (%b)""")
    for cond in ("True", "False"):
        check_numbers(IF_TEXT.format(cond=cond), [E.tensor([1.0, -2.0])])


def test_if_with_unknown_condition_folds_inside_and_drops_unchanged_outputs():
    text = """graph(%x : Tensor, %c : bool):
      %one : int = prim::Constant[value=1]()
      %y : Tensor, %z : Tensor, %k : int, %m : int = prim::If(%c)
        block0():
          %two : int = prim::Constant[value=2]()
          %l : int[] = prim::ListConstruct(%one, %two)
          %a : Tensor = ember::view(%x, %l)
          %k1 : int = prim::Constant[value=3]()
          -> (%a, %x, %k1, %one)
        block1():
          %k2 : int = prim::Constant[value=3]()
          %k3 : int = prim::Constant[value=4]()
          -> (%x, %x, %k2, %k3)
      return (%y, %z, %k, %m)"""
    check(text, """graph(%x : Tensor, %c : bool):
      %one : int = prim::Constant[value=1]()
      %k : int = prim::Constant[value=3]()
      %y : Tensor, %m : int = prim::If(%c)
        block0():
          %l : int[] = prim::Constant[value=[1, 2]]()
          %a : Tensor = ember::view(%x, %l)
          -> (%a, %one)
        block1():
          %k3 : int = prim::Constant[value=4]()
          -> (%x, %k3)
      return (%y, %x, %k, %m)""")
    for c in (True, False):
        check_numbers(text, [E.tensor([[1.0, 2.0]]), c])


LOOP_TEXT = """graph(%x : Tensor):
  %n : int = prim::Constant[value={trips}]()
  %go : bool = prim::Constant[value={go}]()
  %one : int = prim::Constant[value=1]()
  %y : Tensor, %z : Tensor = prim::Loop(%n, %go, %x, %x)
    block0(%i : int, %acc : Tensor, %same : Tensor):
      %t : bool = prim::Constant[value=True]()
      %w : Tensor = prim::Constant[value=tensor([1.0], dtype=float32)]()
      %w2 : Tensor = ember::add(%w, %w, %one)
      %acc2 : Tensor = ember::add(%acc, %w2, %one)
      -> (%t, %acc2, %same)
  return (%y, %z)"""


@pytest.mark.parametrize("trips, go", [(0, "True"), (-1, "True"), (3, "False")])
def test_a_loop_that_does_not_run_is_removed(trips, go):
    check(LOOP_TEXT.format(trips=trips, go=go), """graph(%x : Tensor):
      return (%x, %x)""")


def test_a_loop_that_runs_folds_inside_and_drops_pass_through_values():
    text = LOOP_TEXT.format(trips=3, go="True")
    check(text, """graph(%x : Tensor):
      %n : int = prim::Constant[value=3]()
      %go : bool = prim::Constant[value=True]()
      %one : int = prim::Constant[value=1]()
      %y : Tensor = prim::Loop(%n, %go, %x)
        block0(%i : int, %acc : Tensor):
          %t : bool = prim::Constant[value=True]()
          %w2 : Float(1, requires_grad=0, device=cpu) =
              prim::Constant[value=tensor([2.0], dtype=float32)]()
          %acc2 : Tensor = ember::add(%acc, %w2, %one)
          -> (%t, %acc2)
      return (%y, %x)""")
    check_numbers(text, [E.tensor([0.5, 1.5])])
