"""The autograd engine (``ember/autograd/engine.py`` and ``ember.autograd.backward/grad``):
graph shapes, accumulation, retain_graph, create_graph, errors, ``inputs=``, execution
order and Node hooks. References are numpy float64 values of hand-derived gradients;
semantics follow PyTorch's engine (checked against torch 2.x)."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
from ember.autograd import grad
from helpers import assert_close


def leaf(values, dtype=E.float64):
    return E.tensor(np.asarray(values, dtype=np.float64), dtype=dtype, requires_grad=True)


X = np.array([0.5, -1.25, 2.0])


# --- graph shapes --------------------------------------------------------------------------

def test_diamond_sums_both_paths():
    x = leaf(X)
    a = x * x            # used twice below: its gradient is the sum of both branches
    y = (a.sin() + a * 3.0).sum()
    y.backward()
    assert_close(x.grad, (np.cos(X ** 2) + 3.0) * 2 * X)


def test_leaf_used_twice_in_one_op():
    x = leaf(X)
    (x * x).sum().backward()
    assert_close(x.grad, 2 * X)


def test_shared_leaf_across_two_outputs():
    x, w = leaf(X), leaf([2.0, 3.0, -1.0])
    y1, y2 = (x * w).sum(), (x.exp() * w).sum()
    E.autograd.backward([y1, y2])
    W = np.array([2.0, 3.0, -1.0])
    assert_close(x.grad, W + np.exp(X) * W)
    assert_close(w.grad, X + np.exp(X))


def test_backward_on_several_non_scalar_roots_with_gradients():
    x = leaf(X)
    a, b = x * 3.0, x.exp()
    ga, gb = np.array([1.0, 2.0, 3.0]), np.array([-1.0, 0.5, 2.0])
    E.autograd.backward([a, b], [E.tensor(ga), E.tensor(gb)])
    assert_close(x.grad, 3 * ga + np.exp(X) * gb)


def test_root_that_feeds_another_root_waits_for_it():
    x = leaf(X)
    a = x * 2.0
    b = (a * a).sum()
    E.autograd.backward([a.sum(), b])  # a.sum()'s graph is also inside b's
    assert_close(x.grad, 2.0 + 8 * X)


def test_same_root_twice_counts_twice():
    x = leaf(X)
    y = (x * x).sum()
    E.autograd.backward([y, y])
    assert_close(x.grad, 4 * X)


@pytest.mark.parametrize("dtype", [E.float32, E.float64])
def test_gradient_is_reduced_over_broadcast_dims(dtype):
    x = leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype)
    b = leaf([10.0, 20.0, 30.0], dtype)
    (x * b).sum().backward()
    assert_close(b.grad, np.array([5.0, 7.0, 9.0]), dtype)
    assert_close(x.grad, np.tile([10.0, 20.0, 30.0], (2, 1)), dtype)


def test_deep_chain_has_no_recursion_limit():
    x = leaf([1.0, 2.0])
    y = x
    for _ in range(10000):
        y = y * 1.0001
    y.sum().backward()
    assert_close(x.grad, np.full(2, 1.0001 ** 10000), rtol=1e-9)


@pytest.mark.parametrize("dtype", [E.float16, E.float32])
def test_gradient_is_cast_back_to_the_leaf_dtype(dtype):
    x = leaf([1.0, 2.0], dtype)
    (x.to(E.float64) * 3.0).sum().backward()
    assert_close(x.grad, np.full(2, 3.0), dtype)


def test_backward_on_a_leaf_itself():
    x = leaf([1.0, 2.0])
    x.backward(E.tensor([3.0, 4.0]))
    assert_close(x.grad, np.array([3.0, 4.0]))


@pytest.mark.parametrize("make", [lambda x: x, lambda x: x * 2.0])
def test_grad_of_tensor_wrt_itself_is_grad_output(make):
    y = make(leaf([1.0, 2.0]))
    assert grad([y, y], [y], [E.tensor([5.0, 6.0]), E.tensor([1.0, 1.0])])[0].tolist() == \
        [6.0, 7.0]


# --- accumulation and retain_graph ---------------------------------------------------------

@pytest.mark.parametrize("calls", [1, 2, 3])
def test_grad_accumulates_across_calls(calls):
    x = leaf(X)
    for _ in range(calls):
        (x * x).sum().backward()
    assert_close(x.grad, calls * 2 * X)


def test_accumulated_grad_is_not_the_incoming_gradient():
    # a + b hands the same gradient to both leaves: each must own its .grad
    a, b = leaf(X), leaf(X)
    (a + b).sum().backward()
    a.grad.mul_(10.0)
    assert_close(b.grad, np.ones(3))


def test_second_backward_without_retain_graph_raises():
    x = leaf(X)
    y = x.exp().sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second "
                                           "time.*ExpBackward0.*retain_graph=True"):
        y.backward()


def test_second_backward_with_retain_graph_works():
    x = leaf(X)
    y = x.exp().sum()
    y.backward(retain_graph=True)
    y.backward()
    assert_close(x.grad, 2 * np.exp(X))


def test_grad_frees_graph_unless_retained():
    x = leaf(X)
    y = (x * x).sum()
    (g1,) = grad(y, x, retain_graph=True)
    (g2,) = grad(y, x)
    assert_close(g1, 2 * X)
    assert_close(g2, 2 * X)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        grad(y, x)


# --- create_graph ----------------------------------------------------------------------------

def test_create_graph_gives_second_derivative_of_cube():
    x = leaf(X)
    (g,) = grad((x ** 3).sum(), x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    assert_close(g, 3 * X ** 2)
    (gg,) = grad(g.sum(), x)
    assert_close(gg, 6 * X)


def test_create_graph_backward_leaves_differentiable_grad():
    x = leaf(X)
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    (gg,) = grad(x.grad.sum(), x)
    assert_close(gg, 6 * X)


def test_third_derivative():
    x = leaf(X)
    (g1,) = grad(x.sin().sum(), x, create_graph=True)
    (g2,) = grad(g1.sum(), x, create_graph=True)
    (g3,) = grad(g2.sum(), x)
    assert_close(g3, -np.cos(X))


def test_without_create_graph_grad_has_no_history():
    x = leaf(X)
    (g,) = grad((x ** 3).sum(), x)
    assert not g.requires_grad and g.grad_fn is None


# --- errors ----------------------------------------------------------------------------------

def test_non_scalar_output_without_gradient_raises():
    x = leaf(X)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar "
                                           "outputs"):
        (x * 2.0).backward()


def test_output_that_does_not_require_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad and does not have a "
                                           "grad_fn"):
        E.tensor([1.0, 2.0]).sum().backward()


def test_output_made_under_no_grad_raises():
    x = leaf(X)
    with E.no_grad():
        y = (x * 2.0).sum()
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.backward()


@pytest.mark.parametrize("shape", [(2,), (3, 1), (1, 3)])
def test_grad_outputs_shape_mismatch_raises(shape):
    x = leaf(X)
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape "
                                           r"of \[" + ", ".join(map(str, shape))):
        grad(x * 2.0, x, E.ones(shape, dtype=E.float64))


def test_wrong_number_of_grad_outputs_raises():
    x = leaf(X)
    with pytest.raises(RuntimeError, match="2 gradients for 1 outputs"):
        grad([x * 2.0], [x], [E.ones(3), E.ones(3)])


def test_grad_outputs_shape_mismatch_is_a_shape_error_with_the_way_out():
    x = leaf(X)
    with pytest.raises(E.ShapeError, match=r"output\[0\] has a shape of \[3\]; pass a gradient "
                                           r"of the output's shape$"):
        (x * 2.0).backward(E.ones(4, dtype=E.float64))


@pytest.mark.parametrize("given", [2.0, "ones", {0: E.ones(3)}], ids=["number", "str", "dict"])
def test_gradients_that_are_not_tensors_raise_type_error(given):
    x = leaf(X)
    with pytest.raises(TypeError, match=r"gradients must be a Tensor, a sequence of Tensors "
                                        r"\(None for scalar outputs\) or None, got \w+; .*"
                                        r"ember\.full_like\(output, value\)"):
        (x * 2.0).backward(given)


# --- caller-given gradients: dtype and device (PyTorch's validate_outputs on the roots) ---

GIVEN_DTYPES = [E.float64, E.float16, E.int64, E.bool_]


@pytest.mark.parametrize("given", GIVEN_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("root", ["leaf", "op"])
def test_given_gradient_is_cast_to_the_output_dtype(root, given):
    # as torch: x.backward(torch.ones(3, dtype=torch.float64)) leaves x.grad float32
    x = leaf([1.0, 2.0, 3.0], E.float32)
    out = x if root == "leaf" else x * 2.0
    seen = []
    out.register_hook(lambda g: seen.append(g.dtype))
    out.backward(E.ones(3, dtype=given))
    assert seen == [E.float32]   # the hook on the root already sees it cast
    assert x.grad.dtype is E.float32
    assert_close(x.grad, np.full(3, 1.0 if root == "leaf" else 2.0), E.float32)


@pytest.mark.parametrize("root", ["leaf", "op"])
def test_grad_outputs_are_cast_to_the_output_dtype(root):
    x = leaf([1.0, 2.0], E.float64)
    out = x if root == "leaf" else x * 3.0
    seen = []
    out.register_hook(lambda g: seen.append(g.dtype))
    (g,) = grad(out, x, E.tensor([0.5, 0.25], dtype=E.float32))
    assert g.dtype is E.float64 and seen == [E.float64]
    assert_close(g, np.array([0.5, 0.25]) * (1.0 if root == "leaf" else 3.0))


@pytest.mark.parametrize("call", [
    lambda out, g: out.backward(g),
    lambda out, g: E.autograd.backward([out], [g]),
    lambda out, g: grad(out, out.grad_fn.next_functions[0][0].variable, g),
], ids=["Tensor.backward", "autograd.backward", "autograd.grad"])
def test_given_gradient_on_another_device_raises(alt, call):
    x = leaf(X)
    with pytest.raises(E.DeviceMismatchError, match=r"^invalid gradient at index 0 - expected "
                                                    r"device cpu but got alt; .*"
                                                    r"\.to\('cpu'\)$"):
        call(x * 2.0, E.ones(3, dtype=E.float64, device="alt"))
    assert x.grad is None


def test_index_in_the_device_error_is_the_outputs(alt):
    x = leaf(X)
    a, b = x * 2.0, x * 3.0
    with pytest.raises(E.DeviceMismatchError, match="invalid gradient at index 1 - expected "
                                                    "device cpu but got alt"):
        E.autograd.backward([a, b], [E.ones(3, dtype=E.float64),
                                     E.ones(3, dtype=E.float64, device="alt")])


@pytest.mark.parametrize("where", ["cpu", "alt"])
def test_zero_dim_given_gradient_is_moved_to_the_output_device(alt, where):
    other = "alt" if where == "cpu" else "cpu"
    x = E.tensor([1.0, -2.0], dtype=E.float64, device=where, requires_grad=True)
    (x * x).sum().backward(E.tensor(0.5, dtype=E.float32, device=other))
    assert x.grad.device == E.Device(where) and x.grad.dtype is E.float64
    assert_close(x.grad.to("cpu"), np.array([1.0, -2.0]))
    (g,) = grad((x * x).sum(), x, E.tensor(2.0, device=other))
    assert g.device == E.Device(where)
    assert_close(g.to("cpu"), np.array([4.0, -8.0]))
    s = E.tensor(1.5, device=where, requires_grad=True)
    s.backward(E.tensor(3, device=other))   # a leaf root: straight into .grad
    assert s.grad.device == E.Device(where) and s.grad.dtype is E.float32
    assert s.grad.item() == 3.0


def test_grad_input_not_requiring_grad_raises():
    x = leaf(X)
    c = E.tensor(X)
    with pytest.raises(RuntimeError, match="does not require grad"):
        grad((x * c).sum(), [x, c])


# --- ember.autograd.grad: unused inputs --------------------------------------------------------

def test_grad_unused_input_raises_without_allow_unused():
    x, u = leaf(X), leaf([1.0])
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        grad((x * 2.0).sum(), [x, u])


def test_grad_allow_unused_gives_none():
    x, u = leaf(X), leaf([1.0])
    gx, gu = grad((x * 2.0).sum(), [x, u], allow_unused=True)
    assert_close(gx, np.full(3, 2.0))
    assert gu is None


def test_grad_materialize_grads_gives_zeros():
    x, u = leaf(X), leaf([[1.0, 2.0]])
    gx, gu = grad((x * 2.0).sum(), [x, u], materialize_grads=True)
    assert_close(gx, np.full(3, 2.0))
    assert_close(gu, np.zeros((1, 2)))


def test_grad_materialize_grads_with_allow_unused_false_raises():
    x, u = leaf(X), leaf([1.0])
    with pytest.raises(ValueError, match="allow_unused to be True or not passed when "
                                         "materialize_grads=True"):
        grad((x * 2.0).sum(), [x, u], allow_unused=False, materialize_grads=True)


def test_grad_does_not_touch_dot_grad():
    x = leaf(X)
    grad((x * x).sum(), x)
    assert x.grad is None


def test_grad_wrt_non_leaf():
    x = leaf(X)
    h = x.exp()
    (gh,) = grad((h * h).sum(), h)
    assert_close(gh, 2 * np.exp(X))
    assert x.grad is None and h.grad is None


def test_grad_wrt_non_leaf_and_upstream_leaf():
    x = leaf(X)
    h = x * 3.0
    gh, gx = grad((h * h).sum(), [h, x])
    assert_close(gh, 6 * X)  # d/dh h^2 = 2h = 6x
    assert_close(gx, 18 * X)


# --- backward(inputs=...) --------------------------------------------------------------------

def test_backward_inputs_accumulates_only_there():
    x, w = leaf(X), leaf([2.0, 3.0, 4.0])
    (x * w).sum().backward(inputs=[x])
    assert_close(x.grad, np.array([2.0, 3.0, 4.0]))
    assert w.grad is None


def test_backward_inputs_on_non_leaf_sets_its_grad_only():
    x = leaf(X)
    h = x * 2.0
    (h * h).sum().backward(inputs=[h])
    assert_close(h.grad, 4 * X)
    assert x.grad is None


def test_backward_inputs_accumulates_across_calls():
    x, w = leaf(X), leaf([2.0, 3.0, 4.0])
    y = (x * w).sum()
    y.backward(inputs=[w], retain_graph=True)
    y.backward(inputs=[w, x])
    assert_close(w.grad, 2 * X)
    assert_close(x.grad, np.array([2.0, 3.0, 4.0]))


def test_backward_empty_inputs_raises():
    x = leaf(X)
    with pytest.raises(RuntimeError, match="'inputs' must not be empty"):
        (x * 2.0).sum().backward(inputs=[])


def test_backward_inputs_unused_leaf_stays_none():
    x, u = leaf(X), leaf([1.0])
    (x * 2.0).sum().backward(inputs=[u])
    assert u.grad is None and x.grad is None


# --- execution order -------------------------------------------------------------------------

def test_later_created_nodes_run_first():
    x = leaf(X)
    order = []
    a = x * 2.0
    b = a.exp()
    c = x * 3.0
    for name, t in (("a", a), ("b", b), ("c", c)):
        t.register_hook(lambda g, name=name: order.append(name))
    x.register_hook(lambda g: order.append("x"))
    (b + c).sum().backward()
    assert order == ["c", "b", "a", "x"]  # as PyTorch's engine


@pytest.mark.parametrize("first", ["a", "b"])
def test_sibling_order_follows_creation(first):
    x = leaf(X)
    made = {}
    for name in (first, "b" if first == "a" else "a"):
        made[name] = x * 2.0
    order = []
    for name, t in made.items():
        t.register_hook(lambda g, name=name: order.append(name))
    (made["a"] + made["b"]).sum().backward()
    assert order == [n for n in reversed(list(made))]


# --- Node hooks ------------------------------------------------------------------------------

def test_node_post_hook_gets_grad_inputs_and_outputs_and_may_replace():
    x = leaf(X)
    y = x * 2.0
    seen = {}

    def hook(grad_inputs, grad_outputs):
        seen["in"], seen["out"] = grad_inputs, grad_outputs
        return (grad_inputs[0] * 100.0, grad_inputs[1])

    y.grad_fn.register_hook(hook)
    y.backward(E.tensor([1.0, 2.0, 3.0]))
    assert len(seen["in"]) == 2 and seen["in"][1] is None  # the scalar 2.0 gets none
    assert_close(seen["in"][0], np.array([2.0, 4.0, 6.0]))
    assert len(seen["out"]) == 1
    assert_close(seen["out"][0], np.array([1.0, 2.0, 3.0]))
    assert_close(x.grad, np.array([200.0, 400.0, 600.0]))


def test_node_prehook_gets_grad_outputs_and_may_replace():
    x = leaf(X)
    y = x * 2.0
    seen = []
    y.grad_fn.register_prehook(lambda go: seen.append(go) or (go[0] * 7.0,))
    y.sum().backward()
    assert len(seen) == 1 and len(seen[0]) == 1
    assert_close(seen[0][0], np.ones(3))
    assert_close(x.grad, np.full(3, 14.0))


def test_node_hook_returning_none_keeps_gradients_and_handle_removes():
    x = leaf(X)
    y = (x * 2.0).sum()
    calls = []
    h = y.grad_fn.register_hook(lambda gi, go: calls.append(1))
    h2 = y.grad_fn.register_prehook(lambda go: calls.append(2))
    y.backward(retain_graph=True)
    assert calls == [2, 1]
    assert_close(x.grad, np.full(3, 2.0))
    h.remove()
    h2.remove()
    h.remove()  # removing twice is harmless
    y.backward()
    assert calls == [2, 1]
    assert_close(x.grad, np.full(3, 4.0))


def test_node_called_directly_runs_backward_formula():
    x = leaf(X)
    y = x.exp()
    (gx,) = y.grad_fn(E.ones(3, dtype=E.float64))
    assert_close(gx, np.exp(X))


def test_next_functions_lead_to_accumulate_grad_of_leaves():
    x, w = leaf(X), leaf([1.0, 1.0, 1.0])
    y = x * w
    (nx, ix), (nw, iw) = y.grad_fn.next_functions
    assert isinstance(nx, E.autograd.AccumulateGrad) and nx.variable is x and ix == 0
    assert isinstance(nw, E.autograd.AccumulateGrad) and nw.variable is w and iw == 0



# --- devices ---------------------------------------------------------------------------------
# (the multi-device behaviour, on two fake GPUs: tests/plugins/cuda/test_devices_end_to_end.py)

def test_single_device_backend_does_no_device_work(monkeypatch):
    """The cpu hot path: no device index is recorded or compared and no guard entered,
    also where a gradient is converted (float32 -> float64) or a tensor hook runs."""
    from ember.autograd.function import InputMetadata, input_metadata
    from ember.backends import registry

    def boom(*args):
        raise AssertionError("device work on a single-device backend")
    cpu = registry.get_backend("cpu")
    x = leaf(X)
    y = x.float()
    y.retain_grad()
    assert input_metadata(x).device_index is None
    assert InputMetadata(*y.grad_fn._out_meta[0]).device_index is None
    monkeypatch.setattr(cpu, "device_of", boom)
    monkeypatch.setattr(cpu, "on_device", boom)
    (y.exp() * y).sum().backward()
    y32 = X.astype(np.float32)
    assert_close(x.grad, np.exp(y32) * (1 + y32), rtol=1e-6, atol=1e-6)
    assert y.grad.dtype is E.float32


def test_queued_callback_runs_after_the_last_node_before_backward_returns():
    from ember.autograd.engine import queue_callback
    from ember.autograd.function import grad_accumulator
    a = E.randn(3, requires_grad=True)
    b = E.randn(3, requires_grad=True)
    seen = []
    # a's gradient is written first (its accumulator runs before b's branch is done)
    grad_accumulator(a).register_hook(
        lambda gi, go: (seen.append(("a", b.grad is None)), queue_callback(
            lambda: seen.append(("callback", b.grad is not None)))))
    grad_accumulator(b).register_hook(lambda gi, go: seen.append("b"))
    ((b.exp() * 3).sin().sum() + (a * 2).sum()).backward()
    assert seen[0] == ("a", True)  # queued before b's branch ran
    assert seen[-1] == ("callback", True)  # run after every node
    assert len(seen) == 3


def test_callbacks_run_in_order_and_may_queue_more():
    from ember.autograd.engine import queue_callback
    x = E.randn(2, requires_grad=True)
    order = []
    x.register_hook(lambda g: queue_callback(
        lambda: (order.append(1), queue_callback(lambda: order.append(3)))) or
        queue_callback(lambda: order.append(2)))
    (x * x).sum().backward()
    assert order == [1, 2, 3]
    (x * x).sum().backward()  # queued per backward: nothing left over from the first
    assert order == [1, 2, 3, 1, 2, 3]


def test_queue_callback_outside_backward_raises():
    from ember.autograd.engine import queue_callback
    with pytest.raises(RuntimeError, match="no backward pass is running"):
        queue_callback(lambda: None)


def test_a_failing_backward_runs_no_callback_and_leaves_no_state():
    from ember.autograd.engine import queue_callback
    x = E.randn(2, requires_grad=True)
    ran = []

    def hook(g):
        queue_callback(lambda: ran.append(1))
        raise ValueError("boom")
    h = x.register_hook(hook)
    with pytest.raises(ValueError, match="boom"):
        (x * 2).sum().backward()
    assert ran == []
    h.remove()
    with pytest.raises(RuntimeError, match="no backward pass is running"):
        queue_callback(lambda: None)
    (x * 2).sum().backward()  # the next backward is not disturbed
    assert ran == []
