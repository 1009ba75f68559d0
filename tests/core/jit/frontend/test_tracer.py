"""The tracer: what a traced function records (composites as one node, PythonOps, inlined
traced calls, hand-written ops), TracerWarnings, and nested traces."""
import threading
import warnings

import numpy as np
import pytest

import ember as E
import ember.jit
import ember.nn as nn
import ember.nn.functional as F
from ember.jit import TracerWarning
from ember.jit.frontend.tracer import STATE, TracingState, open_trace, pause
from helpers import assert_close, to_np


def kinds(graph) -> list:
    return [n.kind for n in graph.block.nodes() if n.kind != "prim::Constant"]


def trace(fn, *args, **kwargs):
    kwargs.setdefault("check_trace", False)
    return ember.jit.trace(fn, args, **kwargs)


@pytest.mark.parametrize("fn, args, op", [
    (lambda x, w, b: F.linear(x, w, b), ((3, 4), (5, 4), (5,)), "ember::linear"),
    (lambda x, y: x.type_as(y), ((3, 4), (2,)), "ember::type_as"),
    (lambda x, w, b: F.layer_norm(x, (4,), w, b), ((3, 4), (4,), (4,)), "ember::layer_norm"),
])
def test_composite_is_one_node(fn, args, op):
    inputs = [E.randn(*s) for s in args]
    if op == "ember::type_as":
        inputs[1] = inputs[1].to(E.float64)
    tf = trace(fn, *inputs)
    assert kinds(tf.graph) == [op]
    out = tf(*inputs)
    np.testing.assert_allclose(to_np(out), to_np(fn(*inputs)), rtol=1e-6, atol=1e-6)


def test_composites_inside_a_module_keep_their_inner_nodes_out():
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.LayerNorm(8), nn.Linear(8, 2))
    tm = trace(net, E.randn(3, 4))
    assert kinds(tm.graph) == ["ember::linear", "ember::relu", "ember::layer_norm",
                               "ember::linear"]
    scopes = [n.scope for n in tm.graph.block.nodes() if n.kind != "prim::Constant"]
    assert scopes == ["0", "1", "2", "3"]


def test_nodes_carry_the_user_source_location():
    tf = trace(lambda x: x.exp(), E.randn(2))
    (node,) = [n for n in tf.graph.block.nodes() if n.kind == "ember::exp"]
    assert node.source_location.startswith(__file__ + ":")


def test_arguments_in_schema_order_with_constants():
    tf = trace(lambda x, y: E.add(x, y, alpha=3).sum(1, keepdim=True).view(2, 1), E.ones(2, 3),
               E.ones(2, 3))
    nodes = {n.kind: n for n in tf.graph.block.nodes()}
    const = [v.node.attr("value") for v in nodes["ember::add"].inputs[2:]]
    assert const == [3]
    assert [v.node.attr("value") for v in nodes["ember::sum"].inputs[1:]] == [1, True, None]
    assert nodes["ember::view"].inputs[1].node.attr("value") == [2, 1]


def test_handwritten_ops_in_place_ops_and_multiple_outputs():
    def fn(x):
        y = x.clone()
        y[0] = 1.0
        y.add_(2)
        a, b = x.chunk(2, 1)
        v, i = x.max(1)
        return y.to(E.float64).view(3, 4), a * b, v, i

    x = E.randn(2, 6)
    tf = trace(fn, x)
    assert kinds(tf.graph) == ["ember::clone", "ember::index_put_", "ember::add_",
                               "ember::chunk", "prim::ListUnpack", "ember::max.dim",
                               "ember::_to_copy", "ember::view", "ember::mul"]
    x2 = E.randn(2, 6)
    for got, want in zip(tf(x2), fn(x2)):
        assert got.dtype is want.dtype
        np.testing.assert_array_equal(to_np(got), to_np(want))
    assert_close(x2, to_np(x2))  # the input was not written


def test_indexing_is_recorded():
    tf = trace(lambda x: x[1:, 0] * 2, E.randn(3, 2))
    assert "ember::index" in kinds(tf.graph)
    x = E.randn(4, 2)
    assert_close(tf(x), to_np(x)[1:, 0] * 2)


def test_detach_keeps_the_data_flow():
    tf = trace(lambda x: (x * 2).detach() + x, E.randn(3))
    assert "ember::detach" in kinds(tf.graph)
    x = E.randn(3, requires_grad=True)
    y = tf(x)
    assert_close(y, to_np(x.detach()) * 3)
    y.sum().backward()
    assert_close(x.grad, np.ones(3))            # no gradient through the detached branch


def test_tensor_indices_stay_graph_values():
    # an index tensor computed from the inputs (a mask, an argsort) must not be baked in;
    # a constant index (a list) is a constant
    def f(x, i):
        return x[i] + x[:, [0, 2]].sum() + x[x > 0.5].sum() + x[x[:, 0].argsort()][0]
    x, i = E.rand(4, 3), E.tensor([2, 0])
    tf = trace(f, x, i)
    x2, i2 = E.rand(4, 3), E.tensor([1, 3])
    assert_close(tf(x2, i2), to_np(f(x2, i2)))
    gt = next(n for n in tf.graph.nodes() if n.kind == "ember::gt")
    assert any(u.user.kind == "prim::ListConstruct" for u in gt.output().uses)


@pytest.mark.parametrize("convert, what", [
    (bool, "bool"), (int, "int"), (float, "float"),
    (lambda t: t.item(), "number"), (lambda t: t.tolist(), "list"),
])
def test_python_value_of_a_traced_tensor_warns(convert, what):
    def fn(x):
        s = x.sum()
        convert(s)
        return s * 2

    with pytest.warns(TracerWarning, match=f"converting a tensor to a Python {what}"):
        trace(fn, E.ones(3))


@pytest.mark.parametrize("convert", [bool, int, float, lambda t: t.item(),
                                     lambda t: t.tolist()])
def test_python_value_of_an_untraced_tensor_does_not_warn(convert):
    outside = E.ones(1)

    def fn(x):
        convert(outside)  # not part of the trace
        convert(E.zeros(1))  # a factory result: not recorded
        return x * 2

    with warnings.catch_warnings():
        warnings.simplefilter("error", TracerWarning)
        trace(fn, E.ones(3))
        convert(E.ones(1))  # no trace open at all


def test_tensor_requiring_grad_captured_as_constant_warns():
    w = E.ones(3, requires_grad=True)
    with pytest.warns(TracerWarning, match="captured as a constant"):
        tf = trace(lambda x: x * w, E.ones(3))
    assert kinds(tf.graph) == ["ember::mul"]
    x = E.tensor([1.0, 2.0, 3.0], requires_grad=True)
    tf(x).sum().backward()
    assert w.grad is None and x.grad is not None


def test_custom_function_node_attributes():
    class Scale(E.autograd.Function):
        @staticmethod
        def forward(ctx, x, k, y):
            return x * k + y

        @staticmethod
        def backward(ctx, g):
            return g, None, g

    tf = trace(lambda x, y: Scale.apply(x, 2.5, y).exp(), E.ones(2), E.ones(2))
    (node,) = [n for n in tf.graph.block.nodes() if n.kind == "prim::PythonOp"]
    assert node.attr("cconv") == "vcv" and list(node.attr("scalar_args")) == [2.5]
    assert len(node.inputs) == 2
    assert_close(tf(E.ones(2), E.zeros(2)), np.exp([2.5, 2.5]), rtol=1e-6)


def test_traced_call_is_inlined_not_a_call():
    inner = ember.jit.trace(lambda a, b: (a * b).relu(), (E.ones(2), E.ones(2)))
    outer = trace(lambda x: inner(x, x + 1).neg(), E.ones(2))
    assert kinds(outer.graph) == ["ember::add", "ember::mul", "ember::relu", "ember::neg"]


def test_nested_traces_both_record():
    a = E.tensor([1.0, 2.0])
    s1, s2 = TracingState(), TracingState()
    s1.set_value(a, s1.graph.add_input("a"))
    with open_trace(s1):
        b = a.exp()
        s2.set_value(b, s2.graph.add_input("b"))
        with open_trace(s2):
            assert STATE.current() is s2
            c = b * a
        d = c.neg()
    assert STATE.current() is None
    assert kinds(s1.graph) == ["ember::exp", "ember::mul", "ember::neg"]
    assert kinds(s2.graph) == ["ember::mul"]
    # the inner trace saw ``a`` for the first time: a constant there, an input in s1
    (mul2,) = [n for n in s2.graph.block.nodes() if n.kind == "ember::mul"]
    assert mul2.inputs[0] is s2.graph.inputs[0]
    assert mul2.inputs[1].node.kind == "prim::Constant"
    (mul1,) = [n for n in s1.graph.block.nodes() if n.kind == "ember::mul"]
    assert mul1.inputs[1] is s1.graph.inputs[0]
    assert_close(d, -np.exp([1.0, 2.0]) * [1.0, 2.0], rtol=1e-6)


def test_pause_stops_recording():
    state = TracingState()
    x = E.ones(2)
    state.set_value(x, state.graph.add_input("x"))
    with open_trace(state):
        y = x * 2
        with pause():
            x * 3
        y.neg()
    assert kinds(state.graph) == ["ember::mul", "ember::neg"]


def test_a_trace_records_only_its_own_thread():
    state = TracingState()
    x = E.ones(2)
    state.set_value(x, state.graph.add_input("x"))
    started, done = threading.Event(), threading.Event()

    def other():
        started.wait()
        E.ones(2).exp()  # another thread, same moment: not part of the trace
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with open_trace(state):
        started.set()
        done.wait()
        x.sin()
    t.join()
    assert kinds(state.graph) == ["ember::sin"]


def test_threads_trace_at_the_same_time():
    barrier = threading.Barrier(6)
    found, errors = {}, []

    def work(k):
        def fn(x):
            return x.exp() * k if k % 2 else x.sin() - k

        try:
            barrier.wait()
            for _ in range(10):
                tf = trace(fn, E.randn(3))
                found.setdefault(k, set()).add(tuple(kinds(tf.graph)))
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert found == {k: {("ember::exp", "ember::mul") if k % 2 else ("ember::sin", "ember::sub")}
                     for k in range(6)}
