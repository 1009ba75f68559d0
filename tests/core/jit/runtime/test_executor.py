"""GraphExecutor: a plan per ArgumentSpec, counters, graph_for, the last executed graph,
get_debug_state, the autodiff-subgraph debug flag, and the full pipeline without pass
failures."""
import re
import threading

import numpy as np
import pytest

import ember as E
import ember.jit
from ember.jit import JitPassWarning
from ember.jit.runtime.executor import GraphExecutor
from ember.jit.runtime.interpreter import run_graph
from ember.jit.runtime.op_registry import op_info
from ember.jit.ir.parser import parse_ir
from helpers import assert_close, to_np

NO_PASS_FAILURES = pytest.mark.filterwarnings("error::ember.jit.JitPassWarning")

SIMPLE = """graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = ember::mul(%x, %one)
  %b : Tensor = ember::exp(%a)
  return (%b)"""


def op_kinds(graph) -> list:
    return [n.kind for n in graph.block.nodes() if n.kind != "prim::Constant"]


def wrapper_calls(code: str, globals_: dict) -> list:
    """Node kinds the plan code runs by calling the op's generated wrapper."""
    out = []
    for line in code.splitlines():
        m = re.match(r"\s*[\w, ]+ = (\w+)\(.*# (ember::\S+)$", line)
        if m and globals_[m.group(1)] is op_info(m.group(2)).fn:
            out.append(m.group(2))
    return out


def test_runs_a_parsed_graph():
    ex = GraphExecutor(parse_ir(SIMPLE))
    (y,) = ex(E.tensor([0.0, 1.0]))
    assert_close(y, np.exp([0.0, 1.0]), rtol=1e-6)
    with pytest.raises(ValueError, match="takes 1 inputs, got 2"):
        ex(E.ones(1), E.ones(1))


def test_counters():
    ember.jit.reset_counters()
    assert set(ember.jit.counters().values()) == {0}
    ex = GraphExecutor(parse_ir(SIMPLE))
    for shape in [(2,), (3,), (2, 2), (4,)]:
        ex(E.ones(*shape))
    c = ember.jit.counters()
    assert c["executors_constructed"] == 1 and c["invocations"] == 4
    assert c["plan_cache_misses"] == 2 and c["plan_cache_hits"] == 2
    assert c["pass_failures"] == 0
    c["invocations"] = 99  # a snapshot, not the live table
    assert ember.jit.counters()["invocations"] == 4


@NO_PASS_FAILURES
def test_graph_for_is_the_optimized_specialized_graph():
    ex = GraphExecutor(parse_ir(SIMPLE))
    g = ex.graph_for(E.ones(2, 3))
    assert op_kinds(g) == ["ember::exp"]  # peephole dropped x * 1
    assert g.inputs[0].type.rank == 2 and g.inputs[0].type.dtype is E.float32
    assert op_kinds(ex.graph) == ["ember::mul", "ember::exp"]  # the original is kept
    assert ex.graph_for(E.ones(5, 1)) is g  # same spec, same plan


def test_last_executed_optimized_graph_is_per_thread():
    ex = GraphExecutor(parse_ir(SIMPLE))
    ex(E.ones(2))
    mine = ember.jit.last_executed_optimized_graph()
    assert mine is ex.graph_for(E.ones(2))
    seen = []

    def other():
        seen.append(ember.jit.last_executed_optimized_graph())
        ex(E.ones(2, 2))
        seen.append(ember.jit.last_executed_optimized_graph())

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen[0] is None
    assert seen[1] is ex.graph_for(E.ones(2, 2)) and seen[1] is not mine
    assert ember.jit.last_executed_optimized_graph() is mine


@NO_PASS_FAILURES
def test_array_mode_plan_for_a_float32_pointwise_chain():
    def fn(x, y):
        return ((x * y + 1).sin() - x).exp() / 2

    x, y = E.randn(3, 4), E.randn(3, 4)
    tf = ember.jit.trace(fn, (x, y))
    state = tf.get_debug_state()
    (plan,) = [p for k, p in state["execution_plans"].items() if "grad on" in k]
    assert plan["array_mode"] is True
    ns = tf.executor._plan_for([x, y]).fn.__globals__
    assert wrapper_calls(plan["code"], ns) == []
    assert plan["code"] == tf.code
    x2, y2 = E.randn(5, 4), E.randn(5, 4)
    np.testing.assert_allclose(to_np(tf(x2, y2)), to_np(fn(x2, y2)), rtol=1e-6, atol=1e-6)


@NO_PASS_FAILURES
def test_debug_state_of_a_grad_plan_has_its_backward_executors():
    tf = ember.jit.trace(lambda x, w: ((x * w).sin() * x).tanh().sum(-1), (E.ones(2, 3),
                                                                           E.ones(3)))
    x = E.randn(2, 3, requires_grad=True)
    w = E.randn(3, requires_grad=True)
    tf(x, w).sum().backward()
    state = ember.jit.get_debug_state(tf)
    assert set(state) >= {"graph", "optimize", "execution_plans", "fallback", "pass_failures"}
    assert state["fallback"] is None and state["pass_failures"] == {}
    grad_plans = [p for k, p in state["execution_plans"].items() if "requires_grad" in k]
    assert len(grad_plans) == 1
    (plan,) = grad_plans
    assert plan["array_mode"] is False
    assert "prim::DifferentiableGraph" in plan["code"]
    (backward,) = plan["backward_executors"]
    assert len(backward["execution_plans"]) == 1  # the backward ran once, through its plan
    x2 = x.detach().requires_grad_(True)
    w2 = w.detach().requires_grad_(True)
    ((x2 * w2).sin() * x2).tanh().sum(-1).sum().backward()
    assert_close(x.grad, to_np(x2.grad))
    assert_close(w.grad, to_np(w2.grad))


@NO_PASS_FAILURES
def test_debug_flag_keeps_small_differentiable_graphs():
    def fn(x):
        return (x.sin() * 2).exp()

    x = E.randn(3, requires_grad=True)
    tf = ember.jit.trace(fn, (x,))
    kinds = op_kinds(tf.graph_for(x))
    assert "prim::DifferentiableGraph" not in kinds  # three nodes: inlined again
    ember.jit.debug_set_autodiff_subgraph_inlining(False)
    try:
        assert not ember.jit.runtime.executor.autodiff_subgraph_inlining()
        g = tf.graph_for(x)  # plans were recompiled for the new setting
        assert op_kinds(g) == ["prim::DifferentiableGraph"]
        (gx,) = E.autograd.grad(tf(x).sum(), [x], create_graph=True)
        (ggx,) = E.autograd.grad(gx.sum(), [x])
        xe = x.detach().requires_grad_(True)
        (ge,) = E.autograd.grad(fn(xe).sum(), [xe], create_graph=True)
        (gge,) = E.autograd.grad(ge.sum(), [xe])
        np.testing.assert_allclose(to_np(gx.detach()), to_np(ge.detach()), rtol=1e-5)
        np.testing.assert_allclose(to_np(ggx), to_np(gge), rtol=1e-5, atol=1e-6)
    finally:
        ember.jit.debug_set_autodiff_subgraph_inlining(True)
    assert "prim::DifferentiableGraph" not in op_kinds(tf.graph_for(x))


@NO_PASS_FAILURES
def test_full_pipeline_for_grad_nograd_and_modules():
    net = E.nn.Sequential(E.nn.Linear(3, 4), E.nn.Tanh(), E.nn.Linear(4, 1))
    tm = ember.jit.trace(net, (E.randn(2, 3),))
    x = E.randn(5, 3, requires_grad=True)
    tm(x).sum().backward()
    with E.no_grad():
        tm(E.randn(2, 2, 3))
    assert tm.get_debug_state()["pass_failures"] == {}


def test_optimize_false_executor():
    ex = GraphExecutor(parse_ir(SIMPLE), optimize=False)
    ember.jit.reset_counters()
    (y,) = ex(E.zeros(2))
    ex(E.zeros(2, 2))
    assert_close(y, np.ones(2))
    c = ember.jit.counters()
    assert c["plan_cache_misses"] == c["plan_cache_hits"] == 0
    state = ex.get_debug_state()
    assert state["execution_plans"] == {} and state["fallback"] is not None
    assert op_kinds(ex.graph_for(E.zeros(2))) == ["ember::mul", "ember::exp"]  # unoptimized


CONTROL = """graph(%x : Tensor, %n : int, %flag : bool):
  %one : int = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %t : bool = prim::Constant[value=True]()
  %y : Tensor = prim::Loop(%three, %t, %x)
    block0(%i : int, %acc : Tensor):
      %r : Tensor = prim::If(%flag)
        block0():
          %s : Tensor = ember::mul(%acc, %acc)
          -> (%s)
        block1():
          %u : Tensor = ember::exp(%acc)
          -> (%u)
      %v : Tensor = ember::add(%r, %acc, %one)
      -> (%t, %v)
  %z : Tensor = prim::Loop(%n, %t, %y)
    block0(%j : int, %acc2 : Tensor):
      %w : Tensor = ember::sin(%acc2)
      -> (%t, %w)
  return (%z)"""


@NO_PASS_FAILURES
@pytest.mark.parametrize("n, flag", [(0, True), (2, True), (1, False)])
def test_control_flow_graph_matches_the_interpreter(n, flag):
    ex = GraphExecutor(parse_ir(CONTROL))
    x = E.tensor([0.5, -0.25, 0.1])
    (got,) = ex(x, n, flag)
    (want,) = run_graph(parse_ir(CONTROL), [x, n, flag])
    np.testing.assert_allclose(to_np(got), to_np(want), rtol=1e-6)
    xg = E.tensor([0.5, -0.25, 0.1], dtype=E.float64, requires_grad=True)
    (g,) = E.autograd.grad(ex(xg, n, flag)[0].sum(), [xg])
    xe = xg.detach().requires_grad_(True)
    (ge,) = E.autograd.grad(run_graph(parse_ir(CONTROL), [xe, n, flag])[0].sum(), [xe])
    np.testing.assert_allclose(to_np(g), to_np(ge), rtol=1e-10)


@NO_PASS_FAILURES
def test_scalar_inputs_are_not_baked_into_a_plan():
    ex = GraphExecutor(parse_ir(CONTROL))
    ember.jit.reset_counters()
    for n, flag in [(0, True), (2, True), (1, False), (3, False), (2, True)]:
        x = E.tensor([0.5, -0.25, 0.1])
        with E.no_grad():
            (got,) = ex(x, n, flag)
        (want,) = run_graph(parse_ir(CONTROL), [x, n, flag])
        np.testing.assert_allclose(to_np(got), to_np(want), rtol=1e-6)
    assert ember.jit.counters()["plan_cache_misses"] == 1  # the key holds types, not values


def test_registering_a_pass_recompiles_plans():
    ex = GraphExecutor(parse_ir(SIMPLE))
    ex(E.ones(2))
    seen = []
    with ember.jit.register_pass(lambda g: seen.append(g), stage="final"):
        before = ember.jit.counters()["plan_cache_misses"]
        ex(E.ones(2))
        assert ember.jit.counters()["plan_cache_misses"] == before + 1
        assert len(seen) == 1
        ex(E.ones(3))
        assert len(seen) == 1
    before = ember.jit.counters()["plan_cache_misses"]
    ex(E.ones(2))  # removed: stale again
    assert ember.jit.counters()["plan_cache_misses"] == before + 1 and len(seen) == 1


def test_pass_failure_is_recorded_in_debug_state():
    def broken(graph):
        raise RuntimeError("no luck")

    ex = GraphExecutor(parse_ir(SIMPLE))
    with ember.jit.register_pass(broken, stage="optimization", name="broken_pass"):
        before = ember.jit.counters()["pass_failures"]
        with pytest.warns(JitPassWarning, match="broken_pass"):
            (y,) = ex(E.zeros(2))
        assert_close(y, np.ones(2))
        assert ember.jit.counters()["pass_failures"] == before + 1
        (msg,) = ex.get_debug_state()["pass_failures"].values()
        assert "broken_pass" in msg and "no luck" in msg
