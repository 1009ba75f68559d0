"""ExecutionPlan: generated Python that calls kernels on arrays where no gradient can be
needed (array mode) and the op wrappers on Tensors otherwise (tensor mode)."""
import re

import numpy as np
import pytest

import ember as E
from ember.jit.runtime.interpreter import run_graph
from ember.jit.runtime.op_registry import op_info
from ember.jit.ir.parser import parse_ir
from ember.jit.runtime.plan import ExecutionPlan
from helpers import assert_close, make, to_np

CHAIN = """graph(%x : Float(2, 3, device=cpu), %y : Float(2, 3, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %a : Float(2, 3, device=cpu) = ember::mul(%x, %y)
  %b : Float(2, 3, device=cpu) = ember::add(%a, %one, %one)
  %c : Float(2, 3, device=cpu) = ember::sin(%b)
  %d : Float(2, 3, device=cpu) = ember::sub(%c, %x, %one)
  %e : Float(2, 3, device=cpu) = ember::exp(%d)
  return (%e)"""


def calls(plan) -> list:
    """(node kind, what the plan calls) for every op line of ``plan.code``."""
    out = []
    for line in plan.code.splitlines():
        m = re.match(r"\s*[\w, ]+ = (\w+)\(.*# (ember::\S+)$", line)
        if m:
            out.append((m.group(2), plan.fn.__globals__[m.group(1)]))
    return out


def wrapper_calls(plan) -> list:
    """The node kinds a plan runs by calling the op's generated wrapper on Tensors."""
    return [kind for kind, fn in calls(plan) if fn is op_info(kind).fn]


def inputs(seed=0, shape=(2, 3), dtype=E.float32):
    (x, xn), (y, yn) = make(shape, dtype, seed=seed), make(shape, dtype, seed=seed + 1)
    return x, y, xn, yn


def test_array_mode_calls_kernels():
    plan = ExecutionPlan(parse_ir(CHAIN), array_mode=True)
    assert wrapper_calls(plan) == []
    assert len(calls(plan)) == 5
    assert plan.code.startswith("def plan(x, y):")
    x, y, xn, yn = inputs()
    (e,) = plan.run([x, y])
    assert isinstance(e, E.Tensor) and e.dtype is E.float32 and e.device == x.device
    assert_close(e, np.exp(np.sin(xn * yn + 1) - xn), rtol=1e-5, atol=1e-6)
    assert to_np(e).tolist() == to_np(((x * y + 1).sin() - x).exp()).tolist()


def test_tensor_mode_calls_wrappers_and_records_autograd():
    plan = ExecutionPlan(parse_ir(CHAIN), array_mode=False)
    assert wrapper_calls(plan) == [k for k, _ in calls(plan)]
    assert len(calls(plan)) == 5
    x, y, xn, yn = inputs(dtype=E.float64)
    x.requires_grad_(True)
    (e,) = plan.fn(x, y)
    assert e.grad_fn is not None
    e.sum().backward()
    expected = np.exp(np.sin(xn * yn + 1) - xn) * (np.cos(xn * yn + 1) * yn - 1)
    assert_close(x.grad, expected)


def test_array_mode_matches_the_interpreter_on_other_shapes():
    # array mode bakes dtype/device/rank, not sizes: any (m, n) float32 inputs run
    plan = ExecutionPlan(parse_ir(CHAIN), array_mode=True)
    for shape in [(2, 3), (4, 1), (1, 5)]:
        x, y, _, _ = inputs(shape=shape, seed=3)
        (a,) = plan.run([x, y])
        (b,) = run_graph(parse_ir(CHAIN), [x, y])
        assert to_np(a).tolist() == to_np(b).tolist()


@pytest.mark.parametrize("text, kind", [
    # mixed dtypes: the wrapper promotes
    ("""graph(%x : Float(2, 3, device=cpu), %y : Double(2, 3, device=cpu)):
      %one : int = prim::Constant[value=1]()
      %a : Double(2, 3, device=cpu) = ember::add(%x, %y, %one)
      return (%a)""", "add"),
    # a float scalar promotes an integer tensor
    ("""graph(%x : Long(2, 3, device=cpu), %y : Long(2, 3, device=cpu)):
      %h : float = prim::Constant[value=0.5]()
      %a : Float(2, 3, device=cpu) = ember::mul(%x, %h)
      return (%a)""", "mul"),
    # a composite runs through its wrapper
    ("""graph(%x : Float(2, 3, device=cpu), %w : Float(4, 3, device=cpu)):
      %none : NoneType = prim::Constant[value=None]()
      %a : Float(2, 4, device=cpu) = ember::linear(%x, %w, %none)
      return (%a)""", "linear"),
    # an in-place op runs through its wrapper
    ("""graph(%x : Float(2, 3, device=cpu), %y : Float(2, 3, device=cpu)):
      %c : Float(2, 3, device=cpu) = ember::clone(%x)
      %a : Float(2, 3, device=cpu) = ember::mul_(%c, %y)
      return (%a)""", "mul_"),
    # unknown operand types: the wrapper checks them at run time
    ("""graph(%x : Tensor, %y : Tensor):
      %a : Tensor = ember::mul(%x, %y)
      return (%a)""", "mul"),
])
def test_array_mode_falls_back_to_the_wrapper(text, kind):
    g = parse_ir(text)
    plan = ExecutionPlan(g, array_mode=True)
    assert f"ember::{kind}" in wrapper_calls(plan), plan.code
    dtypes = [v.type.dtype or E.float32 for v in g.inputs]
    args = [make(tuple(v.type.sizes or (2, 3)), dt, seed=i)[0]
            for i, (v, dt) in enumerate(zip(g.inputs, dtypes))]
    (got,) = plan.run(args)
    (want,) = run_graph(parse_ir(text), args)
    assert got.dtype is want.dtype
    assert to_np(got).tolist() == to_np(want).tolist()


def test_inplace_fallback_keeps_the_write():
    plan = ExecutionPlan(parse_ir("""graph(%x : Float(3, device=cpu)):
      %two : int = prim::Constant[value=2]()
      %c : Float(3, device=cpu) = ember::clone(%x)
      %a : Float(3, device=cpu) = ember::mul_(%c, %two)
      %b : Float(3, device=cpu) = ember::neg(%c)
      return (%b)"""), array_mode=True)
    x = E.tensor([1.0, 2.0, 3.0])
    (b,) = plan.run([x])
    assert_close(b, np.array([-2.0, -4.0, -6.0]))
    assert_close(x, np.array([1.0, 2.0, 3.0]))


def test_array_mode_dims_constants_and_multiple_outputs():
    g = parse_ir("""graph(%x : Float(2, 3, device=cpu)):
      %dim : int = prim::Constant[value=-1]()
      %keep : bool = prim::Constant[value=True]()
      %c : Float(3, device=cpu) = prim::Constant[value=tensor([1.0, 2.0, 3.0], dtype=float32)]()
      %v : Float(2, 1, device=cpu), %i : Long(2, 1, device=cpu) = ember::max.dim(%x, %dim, %keep)
      %s : Float(2, 3, device=cpu) = ember::mul(%x, %c)
      return (%v, %i, %s)""")
    plan = ExecutionPlan(g, array_mode=True)
    assert wrapper_calls(plan) == [], plan.code
    x, xn = make((2, 3), E.float32)
    v, i, s = plan.run([x])
    assert_close(v, xn.max(-1, keepdims=True))
    assert i.dtype is E.int64 and to_np(i).ravel().tolist() == xn.argmax(-1).tolist()
    assert_close(s, xn * np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("array_mode", [True, False])
def test_tensor_lists(array_mode):
    g = parse_ir("""graph(%x : Float(4, 2, device=cpu), %y : Float(4, 2, device=cpu)):
      %two : int = prim::Constant[value=2]()
      %zero : int = prim::Constant[value=0]()
      %l : Tensor[] = prim::ListConstruct(%x, %y)
      %c : Float(8, 2, device=cpu) = ember::cat(%l, %zero)
      %parts : Tensor[] = ember::chunk(%c, %two, %zero)
      %p : Float(4, 2, device=cpu), %q : Float(4, 2, device=cpu) = prim::ListUnpack(%parts)
      %r : Float(4, 2, device=cpu) = ember::sub(%q, %p, %two)
      return (%r, %parts)""")
    x, y, xn, yn = inputs(shape=(4, 2))
    r, parts = ExecutionPlan(g, array_mode=array_mode).run([x, y])
    assert_close(r, yn - 2 * xn, atol=1e-6)
    assert [type(p) for p in parts] == [E.Tensor, E.Tensor]
    assert_close(parts[1], yn)


CONTROL = """graph(%x : Float(3, device=cpu), %n : int, %flag : bool):
  %one : int = prim::Constant[value=1]()
  %y : Float(3, device=cpu) = prim::Loop(%n, %flag, %x)
    block0(%i : int, %acc : Float(3, device=cpu)):
      %r : Float(3, device=cpu) = prim::If(%flag)
        block0():
          %s : Float(3, device=cpu) = ember::mul(%acc, %acc)
          -> (%s)
        block1():
          -> (%acc)
      %t : Float(3, device=cpu) = ember::add(%r, %acc, %one)
      -> (%flag, %t)
  return (%y)"""


@pytest.mark.parametrize("array_mode", [True, False])
@pytest.mark.parametrize("n, flag", [(0, True), (1, True), (3, True), (2, False)])
def test_if_and_loop(array_mode, n, flag):
    g = parse_ir(CONTROL)
    plan = ExecutionPlan(g, array_mode=array_mode)
    assert "while " in plan.code and "if flag:" in plan.code
    x = E.tensor([0.5, -0.25, 0.1])
    (got,) = plan.run([x, n, flag])
    (want,) = run_graph(g, [x, n, flag])
    assert isinstance(got, E.Tensor)
    assert to_np(got).tolist() == to_np(want).tolist()


@pytest.mark.parametrize("array_mode", [True, False])
def test_loop_carries_ints_and_tensors(array_mode):
    g = parse_ir("""graph(%x : Float(2, device=cpu), %n : int):
      %t : bool = prim::Constant[value=True]()
      %three : int = prim::Constant[value=3]()
      %minus : int = prim::Constant[value=-1]()
      %y : Float(2, device=cpu), %k : int = prim::Loop(%n, %t, %x, %minus)
        block0(%i : int, %acc : Float(2, device=cpu), %m : int):
          %d : Float(2, device=cpu) = ember::mul(%acc, %three)
          -> (%t, %d, %i)
      return (%y, %k)""")
    plan = ExecutionPlan(g, array_mode=array_mode)
    y, k = plan.run([E.tensor([1.0, 2.0]), 4])
    assert k == 3
    assert_close(y, np.array([81.0, 162.0]))
    assert plan.run([E.tensor([1.0, 2.0]), 0])[1] == -1


def test_autograd_prims():
    g = parse_ir("""graph(%g : Tensor, %h : Tensor):
      %z : Tensor = prim::AutogradZero()
      %any : bool = prim::AutogradAnyNonZero(%g, %z)
      %s : Tensor = prim::AutogradAdd(%h, %z)
      return (%any, %s, %z)""")
    import ember.jit.runtime.autograd_prims  # noqa: F401 - registers how the prims run
    plan = ExecutionPlan(g)
    h = E.ones(2)
    anyv, s, z = plan.run([None, h])
    assert anyv is False and z is None and s is h
    assert plan.run([h, None])[0] is True


def test_runtime_op_nodes_and_python_ops():
    class Twice(E.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    tf = E.jit.trace(lambda x: Twice.apply(x).exp(), (E.ones(2),), check_trace=False)
    plan = ExecutionPlan(tf.graph, array_mode=True)
    assert len(plan.runtime_ops) == 1 and plan.runtime_ops[0][0].kind == "prim::PythonOp"
    assert "# prim::PythonOp" in plan.code
    (y,) = plan.run([E.tensor([0.0, 1.0])])
    assert_close(y, np.exp([0.0, 2.0]), rtol=1e-6)


def test_value_names_become_identifiers():
    g = parse_ir("""graph(%0.weight : Float(2, device=cpu), %lambda : Float(2, device=cpu),
                          %_x : Float(2, device=cpu)):
      %one : int = prim::Constant[value=1]()
      %class : Float(2, device=cpu) = ember::mul(%0.weight, %lambda)
      %1 : Float(2, device=cpu) = ember::add(%class, %_x, %one)
      return (%1)""")
    for array_mode in (True, False):
        plan = ExecutionPlan(g, array_mode=array_mode)
        (y,) = plan.run([E.tensor([1.0, 2.0]), E.tensor([3.0, 4.0]), E.tensor([1.0, 1.0])])
        assert_close(y, np.array([4.0, 9.0]))


def test_unlowered_block_node_is_rejected():
    g = parse_ir("""graph(%g : Tensor, %x : Tensor):
      %gx : Tensor = prim::GradOf[name="ember::neg"](%g)
        block0():
          %a : Tensor = ember::neg(%g)
          -> (%a)
      return (%gx)""")
    with pytest.raises(NotImplementedError, match="prim::GradOf"):
        ExecutionPlan(g)


def test_debug_state():
    plan = ExecutionPlan(parse_ir(CHAIN), array_mode=True)
    state = plan.debug_state()
    assert state["code"] == plan.code and state["array_mode"] is True
    assert state["graph"] is plan.graph


# ---- errors: array mode raises what eager mode raises ------------------------------------

SHAPE_MISMATCHES = {
    # fn, example shapes, mismatched shapes
    "add_relu_mul": (lambda x, y: (x + y).relu() * 2, [(2, 3), (2, 3)], [(2, 3), (4, 5)]),
    "where": (lambda x, y: E.where(x > 0, x, y), [(2, 3), (2, 3)], [(2, 3), (4, 5)]),
    "sub_alpha": (lambda x, y: E.sub(x, y, alpha=2), [(2, 3), (2, 3)], [(2, 3), (4, 5)]),
    "matmul_inner": (lambda x, y: (x @ y).relu(), [(2, 3), (3, 4)], [(2, 3), (5, 4)]),
    "matmul_batch": (lambda x, y: x @ y, [(2, 2, 3), (2, 3, 4)], [(2, 2, 3), (3, 3, 4)]),
    "bmm_batch": (lambda x, y: E.bmm(x, y), [(2, 2, 3), (2, 3, 4)], [(2, 2, 3), (3, 3, 4)]),
    "reshape": (lambda x, y: x.reshape(3, 2) + y, [(2, 3), (3, 2)], [(2, 4), (3, 2)]),
}


def _error_of(fn, args):
    with pytest.raises(Exception) as info:
        fn(*args)
    return info.type, str(info.value)


@pytest.mark.parametrize("name", list(SHAPE_MISMATCHES))
def test_traced_shape_errors_match_eager(name):
    fn, example, bad = SHAPE_MISMATCHES[name]
    tf = E.jit.trace(fn, tuple(E.randn(*s) for s in example))
    tf(*[E.randn(*s) for s in example])  # compile and run the array-mode plan once
    assert "_raise_as_eager" in tf.code, tf.code  # kernels run on arrays
    args = [E.randn(*s) for s in bad]
    eager = _error_of(fn, args)
    assert issubclass(eager[0], E.ShapeError) or eager[0] is RuntimeError, eager
    assert _error_of(tf, args) == eager


def test_array_mode_broadcast_error_is_shape_error_with_eager_message():
    plan = ExecutionPlan(parse_ir(CHAIN), array_mode=True)
    x, y = E.randn(2, 3), E.randn(4, 5)
    with pytest.raises(E.ShapeError, match=r"mul\(\): shapes do not broadcast: 'self' \[2, 3\], "
                                           r"'other' \[4, 5\]") as info:
        plan.run([x, y])
    assert info.value.__suppress_context__  # numpy's message is not shown under it
    assert _error_of(lambda: plan.run([x, y]), []) == _error_of(lambda: x * y, [])


def test_array_mode_shape_error_inside_control_flow():
    g = parse_ir("""graph(%x : Float(3, device=cpu), %y : Float(3, device=cpu), %flag : bool):
      %one : int = prim::Constant[value=1]()
      %r : Float(3, device=cpu) = prim::If(%flag)
        block0():
          %s : Float(3, device=cpu) = ember::mul(%x, %y)
          -> (%s)
        block1():
          -> (%x)
      %t : Float(3, device=cpu) = ember::add(%r, %y, %one)
      return (%t)""")
    plan = ExecutionPlan(g, array_mode=True)
    x, y = E.randn(3), E.randn(4)
    with pytest.raises(E.ShapeError, match=r"^mul\(\): shapes do not broadcast"):
        plan.run([x, y, True])
    with pytest.raises(E.ShapeError, match=r"^add\(\): shapes do not broadcast"):
        plan.run([x, y, False])


def test_errors_of_wrapper_nodes_pass_through_unchanged():
    # linear runs through its wrapper even in array mode: its own ShapeError comes out as is
    g = parse_ir("""graph(%x : Float(2, 3, device=cpu), %w : Float(4, 3, device=cpu)):
      %none : NoneType = prim::Constant[value=None]()
      %a : Float(2, 4, device=cpu) = ember::linear(%x, %w, %none)
      %b : Float(2, 4, device=cpu) = ember::relu(%a)
      return (%b)""")
    plan = ExecutionPlan(g, array_mode=True)
    x, w = E.randn(2, 3), E.randn(4, 5)
    assert _error_of(plan.run, [[x, w]]) == _error_of(E.nn.functional.linear, [x, w])


def test_every_plan_gets_the_error_handler():
    # tensor-mode plans too: their errors get the user's traced line (test_plan_errors.py)
    for array_mode in (True, False):
        assert "except Exception" in ExecutionPlan(parse_ir(CHAIN), array_mode=array_mode).code
    x, y, xn, yn = inputs()
    (e,) = ExecutionPlan(parse_ir(CHAIN), array_mode=True).run([x, y])
    assert_close(e, np.exp(np.sin(xn * yn + 1) - xn), rtol=1e-5, atol=1e-6)


def test_array_mode_plans_warn_no_more_than_eager():
    # log(0), log(-1), 1 / 0: the plan calls numpy's ufuncs directly, and like eager's
    # kernels it shows no floating-point RuntimeWarning (inf/nan, as in PyTorch)
    from helpers import no_warnings
    fn = lambda a: (a.log() * 2).reciprocal().sqrt()  # noqa: E731
    x = E.tensor([-1.0, 0.0, 2.0])
    traced = E.jit.trace(fn, (x,))
    with no_warnings():
        for _ in range(2):  # the second call runs the optimized (array-mode) plan
            got = traced(x)
        want = fn(x)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert traced.get_debug_state()["execution_plans"]


def test_array_mode_calls_the_form_the_backends_kernel_declares(monkeypatch):
    # issue 38: a plan asks the kernel of the operands' Type for its array-level form
    # (ember.backends.kernels.array_form) instead of keeping a table of numpy names
    from ember.backends.kernels.array_form import UfuncForm
    kernel = E.randn(1)._type.kernels["mul"]
    x, y, xn, yn = inputs()
    plan = ExecutionPlan(parse_ir(CHAIN), array_mode=True)
    assert dict(calls(plan))["ember::mul"] is kernel.array_form.ufunc
    # a kernel without a form is called itself
    monkeypatch.delattr(kernel, "array_form")
    plan = ExecutionPlan(parse_ir(CHAIN), array_mode=True)
    assert dict(calls(plan))["ember::mul"] is kernel
    assert to_np(plan.run([x, y])[0]).tolist() == to_np(((x * y + 1).sin() - x).exp()).tolist()
    # what it declares is what the plan calls (here a wrong form, to tell them apart)
    monkeypatch.setattr(kernel, "array_form", UfuncForm(np.subtract), raising=False)
    plan = ExecutionPlan(parse_ir(CHAIN), array_mode=True)
    assert dict(calls(plan))["ember::mul"] is np.subtract
    assert_close(plan.run([x, y])[0], np.exp(np.sin(xn - yn + 1) - xn), rtol=1e-5, atol=1e-6)


def test_array_mode_forms_hold_only_for_the_declared_arguments():
    # add's form is np.add only while alpha is 1; with alpha 2 the kernel itself runs
    plan = ExecutionPlan(parse_ir(CHAIN.replace("ember::add(%a, %one, %one)",
                                                "ember::add(%a, %one, %two)").replace(
        "%one : int = prim::Constant[value=1]()",
        "%one : int = prim::Constant[value=1]()\n  %two : int = prim::Constant[value=2]()")),
        array_mode=True)
    kernel = E.randn(1)._type.kernels["add"]
    assert dict(calls(plan))["ember::add"] is kernel
    x, y, xn, yn = inputs()
    assert_close(plan.run([x, y])[0], np.exp(np.sin(xn * yn + 2) - xn), rtol=1e-5, atol=1e-6)
