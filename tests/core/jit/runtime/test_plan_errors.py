"""Errors inside ExecutionPlans are eager mode's errors, located at the user's traced line;
every plan's and op wrapper's generated source is readable through ``linecache``."""
import gc
from contextlib import nullcontext
import inspect
import linecache
import traceback
import warnings

import numpy as np
import pytest

import ember as E
from ember.jit.runtime import fuser as F
from ember.jit.runtime.executor import (GraphExecutor, autodiff_subgraph_inlining,
                                        debug_set_autodiff_subgraph_inlining)
from ember.jit.runtime.interpreter import JitRuntimeError, run_graph
from ember.jit.runtime.op_registry import register_python_op
from ember.jit.ir.parser import parse_ir
from ember.jit.runtime.plan import ExecutionPlan
from ember.ops.codegen import source_of

C = E.randn(3)           # captured by a traced function: a constant of its graph
IDX = E.tensor([0, 2, 4])


class NeedsThreeRows(E.autograd.Function):
    """A custom Function (traced as a prim::PythonOp) that refuses other shapes."""

    @staticmethod
    def forward(ctx, x):
        if x.shape[0] != 3:
            raise ValueError(f"NeedsThreeRows: expected 3 rows, got {x.shape[0]}")
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def chunk_pair(x):
    a, b = x.chunk(2)  # <- op
    return a + b


def randn(*shape):
    return E.randn(*shape)


def ints(*shape):
    return E.ones(*shape, dtype=E.int64)


# name: (fn, example inputs, bad inputs); each lambda starts on the line of its op
CASES = {
    "broadcast_vs_captured_constant": (lambda x: x + C, [randn(3)], [randn(4)]),
    "integer_only_op_on_floats": (lambda x, y: x & y, [ints(3), ints(3)],
                                  [randn(3), randn(3)]),
    "matmul_inner_dims": (lambda x, y: x @ y, [randn(2, 3), randn(3, 4)],
                          [randn(2, 3), randn(5, 4)]),
    "bmm_batch": (lambda x, y: E.bmm(x, y), [randn(2, 2, 3), randn(2, 3, 4)],
                  [randn(2, 2, 3), randn(3, 3, 4)]),
    "index_out_of_range": (lambda x: x[5] * 2, [randn(10)], [randn(3)]),
    "select_out_of_range": (lambda x: x.select(0, 4) + 1, [randn(5)], [randn(2)]),
    "gather_index_out_of_range": (lambda x: x.gather(0, IDX), [randn(5)], [randn(3)]),
    "view_impossible_shape": (lambda x: x.view(3, 2) + 1, [randn(6)], [randn(8)]),
    "reshape_inferred_dim": (lambda x: x.reshape(-1, 4), [randn(8)], [randn(6)]),
    "cat_mismatched": (lambda x, y: E.cat([x, y], 1), [randn(2, 3), randn(2, 4)],
                       [randn(2, 3), randn(3, 4)]),
    "stack_mismatched": (lambda x, y: E.stack([x, y]), [randn(3), randn(3)],
                         [randn(3), randn(4)]),
    "expand_incompatible": (lambda x: x.expand(2, 3) * 2, [randn(1, 3)], [randn(1, 4)]),
    "sum_dim_out_of_range": (lambda x: x.sum(2), [randn(2, 3, 4)], [randn(2, 3)]),
    "softmax_dim_out_of_range": (lambda x: x.softmax(1), [randn(2, 3)], [randn(3)]),
    "where_broadcast": (lambda x, y: E.where(x > 0, x, y), [randn(2, 3), randn(2, 3)],
                        [randn(2, 3), randn(4, 3)]),
    "linear_in_features": (lambda x, w: E.nn.functional.linear(x, w).relu(),
                           [randn(2, 3), randn(4, 3)], [randn(2, 3), randn(4, 5)]),
    "pointwise_chain": (lambda x, y: ((x * y + 1).sin() * y).exp(), [randn(3), randn(3)],
                        [randn(3), randn(4)]),
    "python_op": (lambda x: NeedsThreeRows.apply(x) + 1, [randn(3)], [randn(4)]),
    "tensor_list_unpack": (chunk_pair, [randn(4)], [randn(1)]),
}
# the indexing op of a trace skips eager's bounds check (see the xfail's reason)
XFAIL = {"index_out_of_range": "ember::index (op_registry) runs the kernel without "
                               "_indexing's bounds check: numpy's 'axis 0' wording"}

# grad mode, whether floating inputs require grad, and whether every differentiable node
# becomes its own prim::DifferentiableGraph (no inlining)
MODES = {"no_grad": (False, False, False), "grad": (True, False, False),
         "requires_grad": (True, True, False), "subgraphs": (True, True, True)}


def op_line(fn) -> int:
    """The line of ``fn``'s offending op: a lambda's first line, or the ``# <- op`` line."""
    lines, first = inspect.getsourcelines(fn)
    marked = [i for i, text in enumerate(lines) if "# <- op" in text]
    return first + marked[0] if marked else fn.__code__.co_firstlineno


def prepared(args, requires_grad: bool) -> list:
    return [a.detach().requires_grad_() if requires_grad and a.is_floating_point() else a
            for a in args]


def error_of(fn, args) -> BaseException:
    with pytest.raises(Exception) as info:
        fn(*args)
    return info.value


def plan_error(fn, example, bad, mode):
    """The error the plan of ``fn``'s trace raises on ``bad``, and eager's."""
    grad, requires_grad, subgraphs = MODES[mode]
    previous = autodiff_subgraph_inlining()
    debug_set_autodiff_subgraph_inlining(not subgraphs)
    try:
        with E.set_grad_enabled(grad), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # TracerWarnings; a pass that fails on `bad`
            example = prepared(example, requires_grad)
            traced = E.jit.trace(fn, tuple(example))
            # the executor of the trace runs its plan on any sizes (a traced function
            # itself may trace again for new sizes: then the error comes from fn itself)
            executor = GraphExecutor(traced.graph)
            executor(*example)
            bad = prepared(bad, requires_grad)
            return error_of(executor, bad), error_of(fn, bad)
    finally:
        debug_set_autodiff_subgraph_inlining(previous)


def location_notes(err) -> list:
    return [n for n in getattr(err, "__notes__", ()) if n.startswith("in the traced code")]


def message(err) -> str:
    return str(err)  # str() of an exception never includes its notes


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(
    reason=XFAIL[n], strict=True)) if n in XFAIL else n for n in CASES])
def test_plan_raises_eager_error_at_the_user_line(name, mode):
    fn, example, bad = CASES[name]
    got, eager = plan_error(fn, example, bad, mode)
    assert type(got) is type(eager), (got, eager)
    assert message(got) == message(eager)
    notes = location_notes(got)
    assert len(notes) == 1, notes  # located once, by the innermost plan
    assert notes[0].startswith(f"in the traced code at {__file__}:{op_line(fn)} ("), notes


def test_the_briefs_example_raises_eager_shape_error():
    t = E.jit.trace(lambda x: x + C, (E.ones(3),))
    t(E.ones(3))
    got = error_of(t, [E.ones(4)])
    eager = error_of(lambda x: x + C, [E.ones(4)])
    assert type(got) is E.ShapeError is type(eager) and str(got) == str(eager)


def test_unpack_note_says_the_trace_fixed_the_count():
    got, _ = plan_error(chunk_pair, [randn(4)], [randn(1)], "no_grad")
    assert "prim::ListUnpack of ember::chunk's 2 results" in location_notes(got)[0]


# ---- graphs written as text: fusion groups, Python ops, tensor mode --------------------
GROUP = """graph(%x : Float(2, 3, device=cpu), %y : Float(2, 3, device=cpu)):
  %c : Float(2, 3, device=cpu) = prim::FusionGroup_0[device=device("cpu")](%x, %y)
  return (%c)
with prim::FusionGroup_0 = graph(%a : Float(2, 3, device=cpu), %b : Float(2, 3, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %m : Float(2, 3, device=cpu) = ember::mul(%a, %b) # loc: model.py:4
  %s : Float(2, 3, device=cpu) = ember::add(%m, %a, %one) # loc: model.py:5
  return (%s)"""


class NumpyKernelFuser(F.Fuser):
    """A 'fused kernel' that computes on arrays and so fails with numpy's words."""

    name, device_type = "numpy-kernel", "cpu"

    def compile(self, subgraph):
        def kernel(a, b):
            return [E.tensor(a.numpy() * b.numpy() + a.numpy())]
        return kernel


@pytest.mark.parametrize("fuser", [None, NumpyKernelFuser()], ids=["unfused", "kernel"])
def test_fusion_group_error_is_eager_error_of_the_inner_node(fuser):
    x, y = E.randn(2, 3), E.randn(4, 3)
    g = parse_ir(GROUP if fuser else GROUP.replace('device("cpu")', 'device("meta")'))
    # no fuser for the group's device: it runs unfused (the interpreter) from the start
    with F.using_fuser("cpu", fuser) if fuser else nullcontext():
        plan = ExecutionPlan(g, array_mode=True)
        got = error_of(plan.run, [[x, y]])
    eager = error_of(E.mul, [x, y])
    assert type(got) is type(eager) and str(got) == str(eager)
    assert location_notes(got) == ["in the traced code at model.py:4 (ember::mul)"]
    assert not isinstance(got, JitRuntimeError)


def test_python_op_kind_with_an_int_output_is_located():
    def dim_size(x, d):
        return x.shape[d]   # IndexError for a dim x has not
    register_python_op("ember::_test_plan_errors_size", dim_size)
    g = parse_ir("""graph(%x : Tensor, %d : int):
      %n : int = ember::_test_plan_errors_size(%x, %d) # loc: model.py:9
      return (%n)""")
    for array_mode in (True, False):
        plan = ExecutionPlan(g, array_mode=array_mode)
        assert plan.run([E.ones(2, 3), 1]) == (3,)
        got = error_of(plan.run, [[E.ones(2, 3), 5]])
        eager = error_of(dim_size, [E.ones(2, 3), 5])
        assert type(got) is type(eager) and str(got) == str(eager)
        assert location_notes(got) == [
            "in the traced code at model.py:9 (ember::_test_plan_errors_size)"]


CHAIN = """graph(%x : Float(2, 3, device=cpu), %y : Float(2, 3, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %a : Float(2, 3, device=cpu) = ember::mul(%x, %y) # loc: model.py:7
  %b : Float(2, 3, device=cpu) = ember::sin(%a)
  return (%b)"""


@pytest.mark.parametrize("array_mode", [True, False])
def test_traceback_shows_the_generated_line(array_mode):
    plan = ExecutionPlan(parse_ir(CHAIN), array_mode=array_mode)
    got = error_of(plan.run, [[E.randn(2, 3), E.randn(4, 3)]])
    text = "".join(traceback.format_exception(got))
    assert f'File "{plan.filename}", line ' in text
    line = next(ln for ln in plan.code.splitlines() if ln.endswith("# ember::mul"))
    assert line.strip() in text, text  # the plan's line that raised, read from linecache
    assert "in the traced code at model.py:7 (ember::mul)" in text
    assert "could not be broadcast" not in text  # numpy's error is not shown under it


def test_node_without_a_location_is_named_by_its_kind():
    plan = ExecutionPlan(parse_ir(CHAIN.replace(" # loc: model.py:7", "")), array_mode=True)
    got = error_of(plan.run, [[E.randn(2, 3), E.randn(4, 3)]])
    assert location_notes(got) == [
        "in the traced code (ember::mul; no source location was recorded)"]


def test_interpreter_error_keeps_the_failing_node():
    g = parse_ir(CHAIN)
    got = error_of(run_graph, [g, [E.randn(2, 3), E.randn(4, 3)]])
    assert isinstance(got, JitRuntimeError) and got.node.kind == "ember::mul"
    assert isinstance(got.__cause__, E.ShapeError)


# ---- linecache --------------------------------------------------------------------------
def test_plan_source_is_in_linecache_until_the_plan_goes():
    plan = ExecutionPlan(parse_ir(CHAIN), array_mode=True)
    name = plan.filename
    assert name.startswith("<ember-plan-") and plan.fn.__code__.co_filename == name
    assert linecache.getline(name, 1) == plan.code.splitlines(True)[0]
    assert inspect.getsource(plan.fn) == plan.code
    del plan
    gc.collect()
    assert name not in linecache.cache


def test_plan_numbers_are_unique():
    a, b = (ExecutionPlan(parse_ir(CHAIN)) for _ in range(2))
    assert a.filename != b.filename


def test_op_wrapper_source_is_in_linecache():
    fn = E.add
    name = fn.__code__.co_filename
    assert name.startswith("<ember.ops generated: add from ")
    assert linecache.getline(name, 1) == source_of("add").splitlines(True)[0]
    assert inspect.getsource(fn) == source_of("add")


def test_plan_results_are_unchanged_by_the_handler():
    plan = ExecutionPlan(parse_ir(CHAIN), array_mode=True)
    x, y = E.randn(2, 3), E.randn(2, 3)
    (out,) = plan.run([x, y])
    np.testing.assert_allclose(out.numpy(), np.sin(x.numpy() * y.numpy()), rtol=1e-6)
