"""specialize_autograd_zero: undefined gradients (NoneType inputs) simplify the autograd
prims; before/after IR text, and the same results before and after."""
import importlib

import numpy as np
import pytest

import ember as E
from ember.jit.runtime.interpreter import run_graph
from ember.jit.ir.parser import parse_ir
from ember.jit.passes import canonicalize
from ember.jit.passes.specialize_autograd_zero import specialize_autograd_zero
from helpers import literal_blocks


def runtime_inputs(graph, seed=0):
    """None for a NoneType input, a random (2, 3) float64 tensor for the others."""
    rng = np.random.default_rng(seed)
    return [None if str(v.type) == "NoneType" else E.tensor(rng.uniform(-1, 1, (2, 3)))
            for v in graph.inputs]


def same(a, b):
    if a is None or b is None:
        return a is b
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    return np.allclose(a.numpy(), b.numpy())


def check(before: str, after: str, run: bool = True) -> None:
    g = parse_ir(before)
    assert specialize_autograd_zero(g) is None
    g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(after)))
    if run:
        args = runtime_inputs(g)
        got, want = run_graph(g, args), run_graph(parse_ir(before), args)
        assert all(same(a, b) for a, b in zip(got, want)), (got, want)


def test_docstring_example():
    module = importlib.import_module("ember.jit.passes.specialize_autograd_zero")
    before, after = literal_blocks(module.__doc__)
    check(before, after)


T = "Float(2, 3)"


def test_autograd_add_of_two_defined_becomes_ember_add():
    check(f"""graph(%a : {T}, %b : {T}):
  %s : {T} = prim::AutogradAdd(%a, %b)
  return (%s)""", f"""graph(%a : {T}, %b : {T}):
  %one : int = prim::Constant[value=1]()
  %s : {T} = ember::add(%a, %b, %one)
  return (%s)""")


@pytest.mark.parametrize("order", ["%z, %b", "%b, %z"])
def test_autograd_add_with_a_zero(order):
    check(f"""graph(%g : NoneType, %b : Tensor?):
  %z : Tensor = prim::AutogradZero()
  %s : Tensor = prim::AutogradAdd({order})
  return (%s)""", """graph(%g : NoneType, %b : Tensor?):
  return (%b)""", run=False)


def test_unknown_operands_are_kept():
    # Tensor? inputs and If outputs may be None at run time: nothing is known
    text = """graph(%a : Tensor?, %b : Tensor, %k : bool):
  %c : Tensor = prim::If(%k)
    block0():
      -> (%b)
    block1():
      %z : Tensor = prim::AutogradZero()
      -> (%z)
  %s : Tensor = prim::AutogradAdd(%a, %c)
  %any : bool = prim::AutogradAnyNonZero(%a, %c)
  return (%s, %any)"""
    check(text, text, run=False)


def test_any_nonzero_drops_known_zeros_and_folds():
    check("""graph(%a : Tensor?, %u : NoneType, %d : Float(2, 3)):
  %z : Tensor = prim::AutogradZero()
  %x : bool = prim::AutogradAnyNonZero(%u, %a, %z)
  %y : bool = prim::AutogradAnyNonZero(%u, %z)
  %w : bool = prim::AutogradAnyNonZero(%a, %d)
  return (%x, %y, %w)""", """graph(%a : Tensor?, %u : NoneType, %d : Float(2, 3)):
  %x : bool = prim::AutogradAnyNonZero(%a)
  %f : bool = prim::Constant[value=False]()
  %t : bool = prim::Constant[value=True]()
  return (%x, %f, %t)""", run=False)


def test_lowered_grad_of_on_a_zero_input_folds_to_zero():
    # what lower_grad_of produces, specialized for an undefined incoming gradient
    check(f"""graph(%g : NoneType, %x : {T}):
  %c : bool = prim::AutogradAnyNonZero(%g)
  %gx : Tensor = prim::If(%c)
    block0():
      %m : Tensor = ember::mul(%g, %x)
      -> (%m)
    block1():
      %z : Tensor = prim::AutogradZero()
      -> (%z)
  return (%gx)""", f"""graph(%g : NoneType, %x : {T}):
  %z : Tensor = prim::AutogradZero()
  return (%z)""")


def test_grad_of_with_one_defined_input_is_inlined_and_visited():
    # %gb is undefined but %ga is defined, so the block runs; inside it the AutogradAdd
    # meets the zero and folds away
    check(f"""graph(%ga : {T}, %gb : NoneType):
  %gx : Tensor = prim::GradOf[name="ember::add"](%ga, %gb)
    block0():
      %s : Tensor = prim::AutogradAdd(%ga, %gb)
      %n : {T} = ember::neg(%s)
      -> (%n)
  return (%gx)""", f"""graph(%ga : {T}, %gb : NoneType):
  %n : {T} = ember::neg(%ga)
  return (%n)""")


def test_grad_of_with_unknown_inputs_is_kept_but_its_block_specialized():
    check("""graph(%ga : Tensor?, %gb : NoneType):
  %gx : Tensor = prim::GradOf[name="ember::add"](%ga, %gb)
    block0():
      %s : Tensor = prim::AutogradAdd(%ga, %gb)
      -> (%s)
  return (%gx)""", """graph(%ga : Tensor?, %gb : NoneType):
  %z : Tensor = prim::AutogradZero()
  %gx : Tensor = prim::GradOf[name="ember::add"](%ga, %z)
    block0():
      -> (%ga)
  return (%gx)""", run=False)


def test_nested_blocks_are_specialized():
    check(f"""graph(%g : NoneType, %x : {T}, %k : bool):
  %r : Tensor = prim::If(%k)
    block0():
      %gx : Tensor = prim::GradOf[name="ember::neg"](%g)
        block0():
          %n : Tensor = ember::neg(%g)
          -> (%n)
      -> (%gx)
    block1():
      -> (%x)
  return (%r)""", f"""graph(%g : NoneType, %x : {T}, %k : bool):
  %r : Tensor = prim::If(%k)
    block0():
      %z : Tensor = prim::AutogradZero()
      -> (%z)
    block1():
      -> (%x)
  return (%r)""", run=False)


def test_unused_none_input_adds_nothing():
    text = f"""graph(%g : NoneType, %x : {T}):
  %n : {T} = ember::neg(%x)
  return (%n)"""
    check(text, text)


def test_zero_grad_of_outputs_get_typed_zeros():
    check("""graph(%g : NoneType, %xs : Tensor[]):
  %gl : Tensor[], %gx : Float(3), %gy : Tensor = prim::GradOf[name="ember::cat"](%g)
    block0():
      %n : Float(3) = ember::neg(%g)
      -> (%xs, %n, %n)
  return (%gl, %gx, %gy)""", """graph(%g : NoneType, %xs : Tensor[]):
  %zl : Tensor[] = prim::AutogradZero()
  %z : Tensor = prim::AutogradZero()
  return (%zl, %z, %z)""", run=False)


CHUNK_FORMULA = ('prim::AutogradFormula[mask=[True], num_grads=1, op="ember::chunk", '
                 'param_inputs=[1, 2, 3, 3, 3], params=["dim", "result_shape", "self_device", '
                 '"self_dtype", "self_shape"], reduce=[-1]]')


def test_chunk_formula_of_defined_pieces_becomes_cat():
    check(f"""graph(%a : {T}, %b : {T}, %rm : Any, %sm : Any):
  %dim : int = prim::Constant[value=1]()
  %l : Tensor[] = prim::ListConstruct(%a, %b)
  %g : Float = {CHUNK_FORMULA}(%l, %dim, %rm, %sm)
  %n : Float = ember::neg(%g)
  return (%n)""", f"""graph(%a : {T}, %b : {T}, %rm : Any, %sm : Any):
  %dim : int = prim::Constant[value=1]()
  %l : Tensor[] = prim::ListConstruct(%a, %b)
  %g : Float = ember::cat(%l, %dim)
  %n : Float = ember::neg(%g)
  return (%n)""", run=False)


@pytest.mark.parametrize("piece", ["%z", "%u"])
def test_chunk_formula_with_a_missing_or_unknown_piece_is_kept(piece):
    # %z is undefined (the formula fills zeros), %u may be either: no cat
    text = f"""graph(%a : {T}, %z : NoneType, %u : Tensor?, %rm : Any, %sm : Any):
  %dim : int = prim::Constant[value=1]()
  %l : Tensor[] = prim::ListConstruct(%a, {piece})
  %g : Float = {CHUNK_FORMULA}(%l, %dim, %rm, %sm)
  return (%g)"""
    g = parse_ir(text)
    specialize_autograd_zero(g)
    g.lint()
    assert [n.kind for n in g.nodes() if n.kind != "prim::Constant"][-1] == \
        "prim::AutogradFormula"
