"""interpreter: run_graph on parsed IR gives the eager ops' results; failures name the node."""
import numpy as np
import pytest

import ember as E
from ember.jit.runtime import interpreter
from ember.jit.runtime.interpreter import (JitRuntimeError, register_prim, register_prim_factory,
                                           run_graph, run_node)
from ember.jit.ir.parser import parse_ir
from helpers import assert_close, make, to_np

POINTWISE = """graph(%x : Float(2, 3), %y : Float(2, 3)):
  %one : int = prim::Constant[value=1]()
  %half : float = prim::Constant[value=0.5]()
  %a : Float(2, 3) = ember::mul(%x, %y)
  %b : Float(2, 3) = ember::add(%a, %half, %one)
  %c : Float(2, 3) = ember::sin(%b)
  %d : Float(2, 3) = ember::sub(%c, %x, %one)
  return (%d, %a)"""


def test_pointwise_matches_eager():
    (x, xn), (y, yn) = make((2, 3), E.float32, seed=1), make((2, 3), E.float32, seed=2)
    d, a = run_graph(parse_ir(POINTWISE), [x, y])
    assert_close(d, np.sin(xn * yn + 0.5) - xn, rtol=1e-5, atol=1e-6)
    assert_close(a, xn * yn)
    eager = (x * y + 0.5).sin() - x
    assert to_np(d).tolist() == to_np(eager).tolist()


def test_keyword_only_argument_and_multiple_outputs():
    g = parse_ir("""graph(%x : Float(2, 3)):
      %dim : int = prim::Constant[value=1]()
      %keep : bool = prim::Constant[value=False]()
      %none : NoneType = prim::Constant[value=None]()
      %dims : int[] = prim::ListConstruct(%dim)
      %dt : ScalarType = prim::Constant[value=float64]()
      %s : Double(2) = ember::sum(%x, %dims, %keep, %dt)
      %v : Float(2), %i : Long(2) = ember::max.dim(%x, %dim, %keep)
      return (%s, %v, %i)""")
    x, xn = make((2, 3), E.float32)
    s, v, i = run_graph(g, [x])
    assert s.dtype is E.float64
    assert_close(s, xn.sum(1), rtol=1e-6)
    assert_close(v, xn.max(1))
    assert to_np(i).tolist() == xn.argmax(1).tolist()


def test_tensor_lists():
    g = parse_ir("""graph(%x : Float(4, 2), %y : Float(4, 2)):
      %two : int = prim::Constant[value=2]()
      %zero : int = prim::Constant[value=0]()
      %l : Tensor[] = prim::ListConstruct(%x, %y)
      %c : Float(8, 2) = ember::cat(%l, %zero)
      %parts : Tensor[] = ember::chunk(%c, %two, %zero)
      %p : Tensor, %q : Tensor = prim::ListUnpack(%parts)
      %t : (Tensor, Tensor) = prim::TupleConstruct(%q, %p)
      %r : Tensor, %s : Tensor = prim::TupleUnpack(%t)
      return (%r, %s)""")
    (x, xn), (y, yn) = make((4, 2), E.float32, seed=1), make((4, 2), E.float32, seed=2)
    r, s = run_graph(g, [x, y])
    assert_close(r, yn)
    assert_close(s, xn)


CONTROL = """graph(%x : Float(3), %n : int, %flag : bool):
  %one : int = prim::Constant[value=1]()
  %y : Float(3) = prim::Loop(%n, %flag, %x)
    block0(%i : int, %acc : Float(3)):
      %r : Float(3) = prim::If(%flag)
        block0():
          %s : Float(3) = ember::mul(%acc, %acc)
          -> (%s)
        block1():
          %u : Float(3) = ember::neg(%acc)
          -> (%u)
      %t : Float(3) = ember::add(%r, %acc, %one)
      -> (%flag, %t)
  return (%y)"""


def _control_reference(x, n, flag):
    acc = x.copy()
    if not flag:
        return acc  # the loop condition is false from the start
    for _ in range(n):
        acc = acc * acc + acc
    return acc


@pytest.mark.parametrize("n, flag", [(0, True), (1, True), (3, True), (2, False)])
def test_if_and_loop(n, flag):
    x = E.tensor([0.5, -0.25, 0.1], dtype=E.float64)
    (y,) = run_graph(parse_ir(CONTROL), [x, n, flag])
    assert_close(y, _control_reference(to_np(x), n, flag))


def test_if_takes_the_false_branch():
    g = parse_ir("""graph(%x : Float(3), %c : bool):
      %r : Float(3) = prim::If(%c)
        block0():
          %s : Float(3) = ember::exp(%x)
          -> (%s)
        block1():
          %u : Float(3) = ember::neg(%x)
          -> (%u)
      return (%r)""")
    x, xn = make((3,), E.float32)
    assert_close(run_graph(g, [x, False])[0], -xn)
    assert_close(run_graph(g, [x, True])[0], np.exp(xn), rtol=1e-6)


def test_subgraph_node_runs_inline():
    g = parse_ir("""graph(%x : Float(3)):
      %1 : Float(3) = prim::FusionGroup_0(%x)
      return (%1)
    with prim::FusionGroup_0 = graph(%0 : Float(3)):
      %1 : Float(3) = ember::relu(%0)
      %2 : Float(3) = ember::neg(%1)
      return (%2)""")
    x, xn = make((3,), E.float32)
    assert_close(run_graph(g, [x])[0], -np.maximum(xn, 0))


def test_on_value_sees_every_value():
    seen = {}
    x, y = E.ones(2, 3), E.full((2, 3), 2.0)
    g = parse_ir(POINTWISE)
    run_graph(g, [x, y], on_value=lambda v, obj: seen.__setitem__(v.debug_name, obj))
    assert set(seen) == {"x", "y", "one", "half", "a", "b", "c", "d"}
    assert seen["one"] == 1 and seen["half"] == 0.5
    assert_close(seen["a"], np.full((2, 3), 2.0))


def test_wrong_number_of_inputs():
    with pytest.raises(ValueError, match=r"2 inputs \(%x, %y\), got 1"):
        run_graph(parse_ir(POINTWISE), [E.ones(2, 3)])


def test_error_names_the_node_and_its_source_location():
    g = parse_ir("""graph(%x : Tensor, %y : Tensor):
      %z : Tensor = ember::mm(%x, %y) # loc: model.py:7
      return (%z)""")
    with pytest.raises(JitRuntimeError, match=r"ember::mm failed \(traced at model\.py:7\): "
                                              r"ShapeError") as info:
        run_graph(g, [E.ones(2, 3), E.ones(2, 3)])
    assert isinstance(info.value.__cause__, E.errors.ShapeError)


def test_error_inside_a_block_is_not_wrapped_twice():
    g = parse_ir("""graph(%x : Tensor, %c : bool):
      %r : Tensor = prim::If(%c)
        block0():
          %s : Tensor = ember::mm(%x, %x)
          -> (%s)
        block1():
          -> (%x)
      return (%r)""")
    with pytest.raises(JitRuntimeError) as info:
        run_graph(g, [E.ones(2, 3), True])
    assert str(info.value).startswith("ember::mm failed")
    assert str(info.value).count("failed") == 1


def test_unknown_kind_fails_with_its_name():
    g = parse_ir("""graph(%x : Tensor):
      %y : Tensor = ember::no_such_op(%x)
      return (%y)""")
    with pytest.raises(JitRuntimeError, match="ember::no_such_op"):
        run_graph(g, [E.ones(1)])


def test_register_prim():
    kind = "prim::TestTwice"

    @register_prim(kind)
    def twice(node, args):
        return [args[0] * node.attr("k"), args[0]]

    try:
        g = parse_ir("""graph(%x : Tensor):
          %y : Tensor, %z : Tensor = prim::TestTwice[k=3](%x)
          return (%y, %z)""")
        y, z = run_graph(g, [E.ones(2)])
        assert_close(y, np.full(2, 3.0))
        assert z is not None
    finally:
        interpreter._PRIMS.pop(kind, None)


def test_register_prim_factory_builds_the_op_once_per_node():
    kind = "prim::TestStateful"
    built = []

    @register_prim_factory(kind)
    def factory(node):
        built.append(node)
        return lambda x: [x + 1]

    try:
        g = parse_ir("""graph(%x : Tensor):
          %y : Tensor = prim::TestStateful(%x)
          return (%y)""")
        for _ in range(3):
            (y,) = run_graph(g, [E.zeros(2)])
        assert len(built) == 1
        assert_close(y, np.ones(2))
        node = next(g.block.nodes())
        assert interpreter.runtime_op(node) is not None and len(built) == 2
        assert_close(run_node(node, [E.zeros(1)])[0], np.ones(1))
    finally:
        interpreter._FACTORIES.pop(kind, None)


class _Square(E.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x * x * scale

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g * ctx.scale, None


def test_python_op_node_runs_its_function_with_autograd():
    tf = E.jit.trace(lambda x: _Square.apply(x, 3.0), (E.ones(2),), check_trace=False)
    (node,) = [n for n in tf.graph.block.nodes() if n.kind == "prim::PythonOp"]
    assert node.attr("cconv") == "vc"
    x = E.tensor([1.0, 2.0], requires_grad=True)
    (y,) = run_graph(tf.graph, [x])
    assert_close(y.detach(), np.array([3.0, 12.0]))
    y.sum().backward()
    assert_close(x.grad, np.array([6.0, 12.0]))
