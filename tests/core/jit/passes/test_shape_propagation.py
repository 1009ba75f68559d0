"""propagate_shapes: the types it gives against eager results, and IR text."""
import importlib
import textwrap

import pytest

import ember as E
from ember.jit.runtime.interpreter import JitRuntimeError
from ember.jit.ir.graph import ListType, TensorType
from ember.jit.ir.parser import parse_ir
from ember.jit.passes import canonicalize
from ember.jit.passes.shape_propagation import propagate_shapes


def check(before: str, after: str, inputs=None, **kwargs):
    g = parse_ir(before)
    assert propagate_shapes(g, inputs, **kwargs) is None
    g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(after)))
    return g


def types_by_name(g):
    out = {v.debug_name: v.type for v in g.inputs}
    for n in g.all_nodes():
        out.update((v.debug_name, v.type) for b in n.blocks for v in b.inputs)
        out.update((o.debug_name, o.type) for o in n.outputs)
    return out


def test_docstring_example():
    doc = importlib.import_module("ember.jit.passes.shape_propagation").__doc__
    before, after = [textwrap.dedent(b.split("\n\n")[0]) for b in doc.split("::\n\n")[1:3]]
    check(before, after, [E.ones(2, 3), E.ones(3, 4)])
    check(after, after)  # complete input types: runs on zeros


GRAPH = """graph(%x : Tensor, %w : Tensor, %c : bool):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %m1 : int = prim::Constant[value=-1]()
  %f : bool = prim::Constant[value=False]()
  %none : NoneType = prim::Constant[value=None]()
  %m : Tensor = ember::matmul(%x, %w)
  %sz : int[] = prim::ListConstruct(%m1)
  %flat : Tensor = ember::view(%m, %sz)
  %s : Tensor = ember::sum(%m, %none, %f, %none)
  %v : Tensor, %i : Tensor = ember::max.dim(%m, %one, %f)
  %l : Tensor[] = prim::ListConstruct(%flat, %v)
  %k : Tensor = ember::cat(%l, %zero)
  %y : Tensor = prim::If(%c)
    block0():
      %a : Tensor = ember::relu(%k)
      -> (%a)
    block1():
      %b : Tensor = ember::sum(%k, %none, %f, %none)
      -> (%b)
  return (%y, %s, %i, %l)"""


@pytest.mark.parametrize("cond", [True, False])
@pytest.mark.parametrize("dtype", [E.float32, E.float64])
def test_types_match_eager_results(cond, dtype):
    x = E.randn(2, 3, dtype=dtype, requires_grad=True)
    w = E.randn(3, 4, dtype=dtype)
    m = E.matmul(x, w)
    flat = m.view(-1)
    v, i = E.max(m, 1)
    k = E.cat([flat, v], 0)
    eager = {"x": x, "w": w, "m": m, "flat": flat, "s": E.sum(m), "v": v, "i": i, "k": k}
    eager["a" if cond else "b"] = E.relu(k) if cond else E.sum(k)
    eager["y"] = eager["a" if cond else "b"]

    g = parse_ir(GRAPH)
    propagate_shapes(g, [x, w, cond])
    g.lint()
    types = types_by_name(g)
    for name, t in eager.items():
        assert types[name] == TensorType.from_tensor(t), name
    assert types["i"].dtype is E.int64 and types["i"].requires_grad is False
    assert types["l"] == ListType(TensorType.from_tensor(flat).merge(TensorType.from_tensor(v)))
    assert str(types["b" if cond else "a"]) == "Tensor"  # the branch that did not run
    assert str(types["sz"]) == "int[]" and str(types["c"]) == "bool"


def test_keep_sizes_false_keeps_only_the_rank():
    g = parse_ir(GRAPH)
    propagate_shapes(g, [E.randn(2, 3), E.randn(3, 4), True], keep_sizes=False)
    types = types_by_name(g)
    assert str(types["m"]) == "Float(*, *, requires_grad=0, device=cpu)"
    assert str(types["s"]) == "Float(requires_grad=0, device=cpu)"
    assert str(types["i"]) == "Long(*, requires_grad=0, device=cpu)"
    assert str(types["l"]) == "Float(*, requires_grad=0, device=cpu)[]"


def test_loop_values_get_what_all_iterations_share():
    check("""graph(%x : Tensor):
      %n : int = prim::Constant[value=3]()
      %t : bool = prim::Constant[value=True]()
      %zero : int = prim::Constant[value=0]()
      %y : Tensor, %same : Tensor = prim::Loop(%n, %t, %x, %x)
        block0(%i : int, %acc : Tensor, %s : Tensor):
          %l : Tensor[] = prim::ListConstruct(%acc, %x)
          %acc2 : Tensor = ember::cat(%l, %zero)
          %s2 : Tensor = ember::neg(%s)
          -> (%t, %acc2, %s2)
      return (%y, %same)""", """graph(%x : Double(2, requires_grad=0, device=cpu)):
      %n : int = prim::Constant[value=3]()
      %t : bool = prim::Constant[value=True]()
      %zero : int = prim::Constant[value=0]()
      %y : Double(8, requires_grad=0, device=cpu),
      %same : Double(2, requires_grad=0, device=cpu) = prim::Loop(%n, %t, %x, %x)
        block0(%i : int, %acc : Double(*, requires_grad=0, device=cpu),
               %s : Double(2, requires_grad=0, device=cpu)):
          %l : Double(*, requires_grad=0, device=cpu)[] = prim::ListConstruct(%acc, %x)
          %acc2 : Double(*, requires_grad=0, device=cpu) = ember::cat(%l, %zero)
          %s2 : Double(2, requires_grad=0, device=cpu) = ember::neg(%s)
          -> (%t, %acc2, %s2)
      return (%y, %same)""", [E.ones(2, dtype=E.float64)])


def test_tuples_get_one_type_per_element():
    check("""graph(%x : Tensor, %n : int):
      %t : (Tensor, int) = prim::TupleConstruct(%x, %n)
      return (%t)""", """graph(%x : Long(3, requires_grad=0, device=cpu), %n : int):
      %t : (Long(3, requires_grad=0, device=cpu), int) = prim::TupleConstruct(%x, %n)
      return (%t)""", [E.arange(3), 4])


@pytest.mark.parametrize("annotation", ["Tensor", "Float(2, 3)", "Float(2, *, requires_grad=0, "
                                        "device=cpu)", "Float(2, 3, device=cpu)"])
def test_incomplete_input_types_without_inputs_leave_the_graph_unchanged(annotation):
    text = f"""graph(%x : {annotation}):
      %y : Tensor = ember::exp(%x)
      return (%y)"""
    check(text, text)
    text = """graph(%x : Float(2, requires_grad=0, device=cpu), %n : int):
      %y : Tensor = ember::exp(%x)
      return (%y)"""
    check(text, text)


def test_zero_inputs_that_fail_leave_the_graph_unchanged_given_inputs_raise():
    text = """graph(%x : Long(2, requires_grad=0, device=cpu)):
      %y : Tensor = ember::floor_divide(%x, %x)
      return (%y)"""
    check(text, text)  # integer division by zero on the made-up zeros
    with pytest.raises(JitRuntimeError, match="ember::mm"):
        g = parse_ir("""graph(%x : Tensor):
          %y : Tensor = ember::mm(%x, %x)
          return (%y)""")
        propagate_shapes(g, [E.ones(2, 3)])
    with pytest.raises(ValueError, match="inputs"):
        propagate_shapes(g, [])


def test_requires_grad_inputs_from_complete_types():
    check("""graph(%x : Float(2, requires_grad=1, device=cpu)):
      %y : Tensor = ember::exp(%x)
      return (%y)""", """graph(%x : Float(2, requires_grad=1, device=cpu)):
      %y : Float(2, requires_grad=1, device=cpu) = ember::exp(%x)
      return (%y)""")


def test_caller_tensors_and_random_stream_are_untouched():
    g = parse_ir("""graph(%x : Tensor):
      %one : int = prim::Constant[value=1]()
      %p : float = prim::Constant[value=0.5]()
      %t : bool = prim::Constant[value=True]()
      %d : Tensor = ember::dropout(%x, %p, %t)
      %y : Tensor = ember::add_(%x, %d, %one)
      return (%y)""")
    x = E.ones(4)
    E.manual_seed(3)
    propagate_shapes(g, [x])
    after = E.rand(3).numpy().tolist()
    E.manual_seed(3)
    assert E.rand(3).numpy().tolist() == after
    assert x.numpy().tolist() == [1.0] * 4
    assert str(g.outputs[0].type) == "Float(4, requires_grad=0, device=cpu)"
