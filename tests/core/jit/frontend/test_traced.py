"""ember.jit.trace: traced functions and modules give eager's outputs and gradients (first
and second order) on inputs that hit the plan cache and on ones that miss it; nested
input/output structures; check_trace; modules' parameters as graph inputs."""
import threading
import warnings

import numpy as np
import pytest

import ember as E
import ember.jit
import ember.nn as nn
import ember.nn.functional as F
from ember.jit import TracerWarning, TracingCheckError
from helpers import assert_close, to_np


def rand(*shape, seed=0, dtype=E.float64, requires_grad=False):
    rng = np.random.default_rng(seed)
    return E.tensor(rng.uniform(-2, 2, size=shape).astype(dtype.numpy),
                    requires_grad=requires_grad)


def same(a, b, tol=1e-12):
    assert a.shape == b.shape and a.dtype is b.dtype
    np.testing.assert_allclose(to_np(a), to_np(b), rtol=tol, atol=tol)


def first_and_second_grads(fn, inputs):
    """Output, d(sum out)/d inputs, and the gradients of sum(g * g) (second order)."""
    out = fn(*inputs)
    g1 = E.autograd.grad(out.sum(), inputs, create_graph=True)
    g2 = E.autograd.grad(sum((g * g).sum() for g in g1), inputs, allow_unused=True,
                         materialize_grads=True)
    return [out.detach()] + [g.detach() for g in g1] + list(g2)


def pointwise(x, y):
    return ((x * y + 1).sin() * x.tanh() - y.exp() / 4).sum(-1)


def mixed(x, w):
    h = F.linear(x, w).tanh()
    return (h * h).mean(-1) + x.sigmoid().sum(-1)


@pytest.mark.parametrize("fn, shapes, others", [
    (pointwise, ((3, 4), (4,)), [((5, 4), (4,)), ((2, 3, 4), (4,)), ((3, 4), (3, 4))]),
    (mixed, ((3, 4), (5, 4)), [((6, 4), (5, 4)), ((2, 3, 4), (5, 4))]),
])
def test_function_matches_eager_first_and_second_order(fn, shapes, others):
    example = [rand(*s, seed=i, requires_grad=True) for i, s in enumerate(shapes)]
    tf = ember.jit.trace(fn, tuple(example))
    # the example shapes twice (the second time every plan, backward ones included, is a
    # cache hit), then other shapes: a new rank misses
    for k, case in enumerate([shapes, shapes] + others):
        inputs = [rand(*s, seed=10 * k + i, requires_grad=True) for i, s in enumerate(case)]
        before = ember.jit.counters()
        got = first_and_second_grads(tf, inputs)
        after = ember.jit.counters()
        misses = after["plan_cache_misses"] - before["plan_cache_misses"]
        assert after["plan_cache_hits"] > before["plan_cache_hits"] or misses
        if k == 1:
            assert misses == 0
        elif [len(s) for s in case] != [len(s) for s in shapes]:
            assert misses >= 1
        want = first_and_second_grads(fn, inputs)
        for g, w in zip(got, want):
            same(g, w)


def test_plan_cache_hits_and_misses():
    tf = ember.jit.trace(pointwise, (rand(3, 4), rand(4)))
    ember.jit.reset_counters()
    cases = [((3, 4), E.float64, "hit"),   # compiled at trace time
             ((7, 4), E.float64, "hit"),   # same rank: the key holds no sizes
             ((2, 7, 4), E.float64, "miss"),
             ((2, 5, 4), E.float64, "hit"),
             ((3, 4), E.float32, "miss"),
             ((3, 4), E.float32, "hit")]
    for shape, dtype, expected in cases:
        before = ember.jit.counters()
        x, y = rand(*shape, dtype=dtype), rand(4, dtype=dtype, seed=1)
        same(tf(x, y), pointwise(x, y), tol=1e-6)
        after = ember.jit.counters()
        delta = {k: after[k] - before[k] for k in after}
        assert delta["invocations"] == 1
        assert delta["plan_cache_hits"] == (expected == "hit"), (shape, dtype, delta)
        assert delta["plan_cache_misses"] == (expected == "miss"), (shape, dtype, delta)
        assert delta["executors_constructed"] == 0 and delta["pass_failures"] == 0
    before = ember.jit.counters()
    with E.no_grad():  # grad mode is part of the key: rank 3 was compiled with grad on
        tf(rand(2, 7, 4), rand(4))
    assert ember.jit.counters()["plan_cache_misses"] == before["plan_cache_misses"] + 1


def test_requires_grad_is_part_of_the_key_and_backward_plans_are_cached():
    tf = ember.jit.trace(pointwise, (rand(3, 4), rand(4)))
    x, y = rand(3, 4, requires_grad=True), rand(4)
    before = ember.jit.counters()
    tf(x, y).sum().backward()
    assert ember.jit.counters()["plan_cache_misses"] > before["plan_cache_misses"]
    x.grad = None
    before = ember.jit.counters()
    tf(x, y).sum().backward()
    after = ember.jit.counters()
    assert after["plan_cache_misses"] == before["plan_cache_misses"]
    assert after["plan_cache_hits"] > before["plan_cache_hits"]
    x2 = x.detach().requires_grad_(True)
    pointwise(x2, y).sum().backward()
    same(x.grad, x2.grad)


def test_nested_tuple_and_list_inputs_and_outputs():
    def fn(pair, items):
        a, (b, c) = pair
        return [a * b, (c.exp(), items[0] - items[1])], a.sum()

    args = ((rand(2, 3, seed=1), (rand(2, 3, seed=2), rand(3, seed=3))),
            [rand(3, seed=4), rand(3, seed=5)])
    tf = ember.jit.trace(fn, args)
    assert len(tf.graph.inputs) == 5 and len(tf.graph.outputs) == 4
    args2 = ((rand(4, 3, seed=6), (rand(4, 3, seed=7), rand(3, seed=8))),
             [rand(3, seed=9), rand(3, seed=10)])
    got, want = tf(*args2), fn(*args2)
    assert type(got) is tuple and type(got[0]) is list and type(got[0][1]) is tuple
    for g, w in zip([got[0][0], got[0][1][0], got[0][1][1], got[1]],
                    [want[0][0], want[0][1][0], want[0][1][1], want[1]]):
        same(g, w)


@pytest.mark.parametrize("bad", [
    lambda a, b, c, d, e: (((a, b), c), [d, e]),      # nesting differs
    lambda a, b, c, d, e: ((a, [b, c]), [d, e]),      # list where a tuple was
    lambda a, b, c, d, e: ((a, (b, c)), (d, e)),      # tuple where a list was
    lambda a, b, c, d, e: ((a, (b, c)), [d]),         # fewer tensors
    lambda a, b, c, d, e: ((a, (b, c)),),             # fewer arguments
])
def test_wrong_input_structure(bad):
    def fn(pair, items):
        a, (b, c) = pair
        return a + b + c + items[0] + items[1]

    ts = [rand(3, seed=i) for i in range(5)]
    tf = ember.jit.trace(fn, ((ts[0], (ts[1], ts[2])), [ts[3], ts[4]]))
    with pytest.raises(TracingCheckError, match="traced with inputs structured as"):
        tf(*bad(*ts))


def test_wrong_number_of_flat_tensor_inputs():
    tf = ember.jit.trace(lambda x, y: x * y, (rand(2), rand(2)))
    with pytest.raises(TracingCheckError):
        tf(rand(2))
    with pytest.raises(TracingCheckError):
        tf(rand(2), rand(2), rand(2))


def test_non_tensor_inputs_and_outputs_are_rejected():
    with pytest.raises(TypeError, match="functools.partial"):
        ember.jit.trace(lambda x, k: x * k, (rand(2), 3))
    with pytest.raises(TypeError, match="outputs"):
        ember.jit.trace(lambda x: (x, 3), (rand(2),))


def test_single_tensor_example_input():
    tf = ember.jit.trace(lambda x: x.exp(), rand(3))
    same(tf(rand(3, seed=1)), rand(3, seed=1).exp())


def test_check_trace_warns_for_randomness():
    with pytest.warns(TracerWarning, match="trace check: tracing the function twice gave "
                                           "different graphs"):
        ember.jit.trace(lambda x: x + E.rand(3), (rand(3, dtype=E.float32),))


def test_check_trace_warns_for_global_state():
    calls = []

    def fn(x):
        calls.append(1)
        return x * len(calls)

    with pytest.warns(TracerWarning, match="different graphs"):
        ember.jit.trace(fn, (rand(3),))


def test_check_trace_warns_for_data_dependent_control_flow():
    def fn(x):
        if x.sum() > 0:
            return x * 2
        return -x

    with pytest.warns(TracerWarning, match="Python bool"):
        tf = ember.jit.trace(fn, (E.tensor([1.0, 2.0]),))
    # the trace followed one branch: it does not generalize, as the warning said
    same(tf(E.tensor([-1.0, -2.0])), E.tensor([-2.0, -4.0]))


@pytest.mark.filterwarnings("error::ember.jit.TracerWarning")
def test_no_warning_for_a_clean_function():
    tf = ember.jit.trace(pointwise, (rand(3, 4), rand(4)))
    tf(rand(3, 4), rand(4))


def test_check_trace_false_skips_the_check():
    with warnings.catch_warnings():
        warnings.simplefilter("error", TracerWarning)
        ember.jit.trace(lambda x: x + E.rand(3), (rand(3, dtype=E.float32),),
                        check_trace=False)


def test_calling_a_traced_function_while_tracing_inlines_it():
    inner = ember.jit.trace(lambda a: a.exp() * 2, (rand(3),))

    def outer(a, b):
        return inner(a) + inner(b).sin()

    to = ember.jit.trace(outer, (rand(3), rand(3, seed=1)))
    kinds = [n.kind for n in to.graph.block.nodes() if n.kind != "prim::Constant"]
    assert kinds == ["ember::exp", "ember::mul", "ember::exp", "ember::mul", "ember::sin",
                     "ember::add"]
    inputs = [rand(5, seed=2, requires_grad=True), rand(5, seed=3, requires_grad=True)]
    for g, w in zip(first_and_second_grads(to, inputs), first_and_second_grads(outer, inputs)):
        same(g, w)


class StraightThroughRound(E.autograd.Function):
    """round() forward, identity backward times 3: a gradient eager ops would not give."""

    @staticmethod
    def forward(ctx, x):
        return x.round()

    @staticmethod
    def backward(ctx, g):
        return g * 3


def test_custom_function_is_a_python_op_and_its_backward_runs():
    def fn(x):
        return StraightThroughRound.apply(x * 2).sin()

    x = rand(4, requires_grad=True)
    tf = ember.jit.trace(fn, (x,))
    kinds = [n.kind for n in tf.graph.block.nodes()]
    assert "prim::PythonOp" in kinds
    assert not any(k == "ember::round" for k in kinds)
    for inputs in ([rand(4, seed=1, requires_grad=True)], [rand(2, 3, requires_grad=True)]):
        out = tf(*inputs)
        (g,) = E.autograd.grad(out.sum(), inputs)
        want = np.cos(np.round(2 * to_np(inputs[0]))) * 3 * 2
        assert_close(g, want)
        same(out.detach(), fn(*inputs).detach())


class SplitScale(E.autograd.Function):
    """Two outputs, x * 2 and x ** 2, with a hand-written (differentiable) backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2, x * x

    @staticmethod
    def backward(ctx, g1, g2):
        (x,) = ctx.saved_tensors
        return g1 * 2 + g2 * 2 * x


def test_custom_function_with_two_outputs_second_order():
    def fn(x):
        a, b = SplitScale.apply(x.sin())
        return (a * b).tanh() + b

    tf = ember.jit.trace(fn, (rand(4, requires_grad=True),))
    assert sum(n.kind == "prim::PythonOp" for n in tf.graph.block.nodes()) == 1
    for inputs in ([rand(4, seed=1, requires_grad=True)], [rand(2, 2, requires_grad=True)]):
        inputs = [(i * 0.3).detach().requires_grad_(True) for i in inputs]
        for g, w in zip(first_and_second_grads(tf, inputs), first_and_second_grads(fn, inputs)):
            same(g, w)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 6)
        self.fc2 = nn.Linear(6, 3)
        self.register_buffer("scale", E.tensor(2.0))

    def forward(self, x):
        return self.fc2(self.fc1(x).tanh()) * self.scale


def test_module_parameters_and_buffers_are_graph_inputs():
    E.manual_seed(0)
    net = Net()
    tm = ember.jit.trace(net, (E.randn(5, 4),))
    names = [v.debug_name for v in tm.graph.inputs]
    assert names[0] == "x"
    assert sorted(names[1:]) == ["fc1.bias", "fc1.weight", "fc2.bias", "fc2.weight", "scale"]
    assert isinstance(tm, ember.jit.TracedModule)
    assert list(tm.parameters()) == list(net.parameters())
    net.scale.fill_(3.0)  # buffers are read at every call
    x = E.randn(2, 4)
    same(tm(x), net(x), tol=1e-6)


def test_module_matches_eager_and_trains():
    E.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3)).to(E.float64)
    tm = ember.jit.trace(net, (rand(5, 4),))
    opt = E.optim.SGD(tm.parameters(), lr=0.1)
    x = rand(5, 4, seed=1)
    for shape in [(5, 4), (7, 4), (2, 5, 4)]:  # hits, then a miss
        xs = rand(*shape, seed=2, requires_grad=True)
        params = [xs] + list(net.parameters())
        got = first_and_second_grads(lambda *a: tm(a[0]), params)
        want = first_and_second_grads(lambda *a: net(a[0]), params)
        for g, w in zip(got, want):
            same(g, w)
    before = tm(x).detach()
    opt.zero_grad()
    tm(x).pow(2).sum().backward()
    opt.step()
    after = tm(x).detach()
    assert not np.allclose(to_np(before), to_np(after))
    same(after, net(x).detach())


def test_batch_norm_training_updates_running_stats_like_eager():
    E.manual_seed(0)
    bn, twin = nn.BatchNorm1d(4), nn.BatchNorm1d(4)
    twin.load_state_dict(bn.state_dict())
    tm = ember.jit.trace(bn, (rand(8, 4, dtype=E.float32),), check_trace=False)
    bn.load_state_dict(twin.state_dict())  # undo the trace's own update
    for k in range(3):
        x = rand(8, 4, seed=k, dtype=E.float32) * 3 + 1
        same(tm(x), twin(x), tol=1e-6)
        for name in ("running_mean", "running_var", "num_batches_tracked"):
            np.testing.assert_allclose(to_np(getattr(bn, name)), to_np(getattr(twin, name)),
                                       rtol=1e-6)
    assert int(bn.num_batches_tracked) == 3


def test_module_in_eval_mode_with_dropout_is_deterministic():
    net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error", TracerWarning)
        tm = ember.jit.trace(net, (rand(3, 4, dtype=E.float32),))
    x = rand(3, 4, seed=1, dtype=E.float32)
    same(tm(x), net(x), tol=1e-6)


def test_concurrent_calls_from_8_threads():
    tf = ember.jit.trace(pointwise, (rand(3, 4), rand(4)))
    barrier = threading.Barrier(8)
    errors = []

    def work(k):
        try:
            barrier.wait()
            for i in range(15):
                # ranks 2 and 3 and both dtypes: threads compile and hit plans together
                shape = (k + 1, 4) if k % 2 else (2, k + 1, 4)
                dtype = E.float32 if k % 4 < 2 else E.float64
                x, y = rand(*shape, seed=100 * k + i, dtype=dtype), rand(4, seed=k, dtype=dtype)
                want = pointwise(x, y)
                got = tf(x, y)
                assert got.dtype is want.dtype
                np.testing.assert_allclose(to_np(got), to_np(want), rtol=1e-6, atol=1e-6)
                if k >= 4:
                    xg = x.detach().requires_grad_(True)
                    (g,) = E.autograd.grad(tf(xg, y).sum(), [xg])
                    xe = x.detach().requires_grad_(True)
                    (ge,) = E.autograd.grad(pointwise(xe, y).sum(), [xe])
                    np.testing.assert_allclose(to_np(g), to_np(ge), rtol=1e-6, atol=1e-6)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append((k, e))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_optimize_false_runs_the_fallback_plan():
    x = rand(3, 4, requires_grad=True)
    tf = ember.jit.trace(pointwise, (x, rand(4)), optimize=False)
    ember.jit.reset_counters()
    for inputs in ([rand(3, 4, requires_grad=True), rand(4, requires_grad=True)],
                   [rand(2, 2, 4, requires_grad=True), rand(4, requires_grad=True)]):
        for g, w in zip(first_and_second_grads(tf, inputs),
                        first_and_second_grads(pointwise, inputs)):
            same(g, w)
    c = ember.jit.counters()
    assert c["plan_cache_hits"] == c["plan_cache_misses"] == 0
    state = tf.get_debug_state()
    assert state["optimize"] is False and state["execution_plans"] == {}
    assert state["fallback"]["array_mode"] is False
    assert "def plan(" in state["fallback"]["code"]


def test_trace_code_is_the_plan_for_the_example():
    tf = ember.jit.trace(lambda x, y: (x * y).exp(), (rand(3), rand(3)))
    assert tf.code.startswith("def plan(")
    assert "# ember::exp" in tf.code


def test_cat_and_stack():
    def fn(x, y):
        return E.cat([x, y]) * 2, E.stack([x, y], 1).sum(0)

    tf = ember.jit.trace(fn, (rand(2, 3), rand(2, 3, seed=1)))
    with E.no_grad():
        for g, w in zip(tf(rand(4, 3), rand(4, 3, seed=1)), fn(rand(4, 3), rand(4, 3, seed=1))):
            same(g, w)
