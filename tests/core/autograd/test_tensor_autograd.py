"""The autograd surface of ``ember.Tensor``: requires_grad_, is_leaf, grad_fn names and
next_functions, detach/detach_, retain_grad and register_hook. Expected behaviour and
names are PyTorch's (checked against torch 2.x); values are numpy float64 references."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
from helpers import assert_close

X = np.array([0.5, -1.25, 2.0])


def leaf(values=X, dtype=E.float64):
    return E.tensor(np.asarray(values, dtype=np.float64), dtype=dtype, requires_grad=True)


# --- requires_grad_ and is_leaf ------------------------------------------------------------

def test_requires_grad_is_off_by_default_and_requires_grad_returns_self():
    t = E.tensor(X)
    assert not t.requires_grad
    assert t.requires_grad_() is t and t.requires_grad
    assert t.requires_grad_(False) is t and not t.requires_grad


@pytest.mark.parametrize("dtype", [E.int64, E.int32, E.uint8, E.bool_])
def test_requires_grad_on_non_float_raises(dtype):
    t = E.zeros(3, dtype=dtype)
    with pytest.raises(RuntimeError, match="only tensors of floating point dtype can require "
                                           "gradients"):
        t.requires_grad_()


def test_requires_grad_off_on_non_leaf_raises():
    y = leaf() * 2.0
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf "
                                           "variables.*detach"):
        y.requires_grad_(False)
    assert y.requires_grad


@pytest.mark.parametrize("make, expected", [
    (lambda x: x, True),                       # a leaf that requires grad
    (lambda x: E.tensor(X), True),             # any tensor without history
    (lambda x: E.tensor(X) * 2.0, True),       # an op on tensors without grad
    (lambda x: x * 2.0, False),
    (lambda x: x[0], False),                   # a view with history
    (lambda x: x.detach(), True),
])
def test_is_leaf(make, expected):
    t = make(leaf())
    assert t.is_leaf is expected
    assert (t.grad_fn is None) is expected


def test_ops_on_tensors_without_grad_do_not_require_grad():
    y = E.tensor(X) * E.tensor(X)
    assert not y.requires_grad and y.grad_fn is None


@pytest.mark.parametrize("dtype", [E.float32, E.float64])
def test_op_output_requires_grad_if_any_input_does(dtype):
    y = leaf(dtype=dtype) + E.tensor(X, dtype=dtype)
    assert y.requires_grad and not y.is_leaf


def test_integral_outputs_never_require_grad():
    x = leaf()
    assert not x.argmax().requires_grad
    assert not (x > 0).requires_grad


# --- grad_fn names and next_functions ------------------------------------------------------

@pytest.mark.parametrize("fn, name", [
    (lambda x: x + x, "AddBackward0"),
    (lambda x: x - 1.0, "SubBackward0"),
    (lambda x: x * x, "MulBackward0"),
    (lambda x: x / 2.0, "DivBackward0"),
    (lambda x: -x, "NegBackward0"),
    (lambda x: x.exp(), "ExpBackward0"),
    (lambda x: x.sin(), "SinBackward0"),
    (lambda x: x ** 3, "PowBackward0"),
    (lambda x: x.sum(), "SumBackward0"),
    (lambda x: x.mean(), "MeanBackward0"),
    (lambda x: x.view(3, 1), "ViewBackward0"),
    (lambda x: x.view(3, 1).transpose(0, 1), "TransposeBackward0"),
    (lambda x: x.unsqueeze(0), "UnsqueezeBackward0"),
    (lambda x: x.clone(), "CloneBackward0"),
    (lambda x: x.tanh(), "TanhBackward0"),
    (lambda x: x.to(E.float32), "ToCopyBackward0"),
    (lambda x: E.cat([x, x]), "CatBackward0"),
])
def test_grad_fn_names_follow_pytorch(fn, name):
    y = fn(leaf())
    assert y.grad_fn.name() == name
    assert type(y.grad_fn).__name__ == name
    assert name in repr(y.grad_fn)
    assert f"grad_fn=<{name}>" in repr(y)


def test_next_functions_one_edge_per_input():
    x, w = leaf(), leaf([1.0, 2.0, 3.0])
    c = E.tensor(X)
    y = x * w + c
    add = y.grad_fn
    assert add.name() == "AddBackward0"
    (mul, nr), none = add.next_functions
    assert none is None                      # c needs no gradient
    assert mul.name() == "MulBackward0" and nr == 0
    accs = [e[0] for e in mul.next_functions]
    assert [type(a).__name__ for a in accs] == ["AccumulateGrad", "AccumulateGrad"]
    assert accs[0].variable is x and accs[1].variable is w


def test_leaf_used_twice_shares_one_accumulate_grad():
    x = leaf()
    y = x * 2.0
    z = x.exp()
    assert y.grad_fn.next_functions[0][0] is z.grad_fn.next_functions[0][0]


def test_output_nr_of_multi_output_op():
    x = leaf(np.arange(6.0))
    parts = x.chunk(3)
    edges = [E.autograd.function.gradient_edge(p) for p in parts]
    assert [nr for _, nr in edges] == [0, 1, 2]
    assert edges[0][0] is edges[1][0] is edges[2][0]


# --- detach / detach_ ----------------------------------------------------------------------

def test_detach_shares_memory_and_version_counter():
    x = leaf()
    y = x * 2.0
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    d[0] = 100.0
    assert_close(y.detach(), np.array([100.0, -2.5, 4.0]))
    assert y._version == d._version == 1
    y.add_(1.0)
    assert d._version == 2
    assert_close(d, np.array([101.0, -1.5, 5.0]))


def test_change_through_detach_is_seen_by_saved_tensor_check():
    x = leaf()
    y = x * 1.0
    z = y.sin()         # saves y
    y.detach().mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*SinBackward0"):
        z.sum().backward()


def test_detach_of_leaf_may_be_written_in_place():
    x = leaf()
    x.detach().add_(1.0)  # optimizer-style update, as in PyTorch
    assert_close(x.detach(), X + 1.0)
    assert x.requires_grad and x.is_leaf


def test_detach_inplace_makes_a_leaf():
    x = leaf()
    y = x * 2.0
    assert y.detach_() is y
    assert y.is_leaf and not y.requires_grad and y.grad_fn is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.sum().backward()


def test_detach_inplace_on_view_raises():
    y = leaf() * 2.0
    v = y[1:]
    with pytest.raises(RuntimeError, match="Can't detach views in-place. Use detach\\(\\)"):
        v.detach_()
    assert v.requires_grad


def test_data_is_detached():
    x = leaf()
    d = x.data
    assert not d.requires_grad
    d.mul_(3.0)
    assert_close(x.detach(), 3.0 * X)


# --- retain_grad -----------------------------------------------------------------------------

def test_non_leaf_grad_is_none_without_retain_grad():
    x = leaf()
    y = x * 2.0
    (y * y).sum().backward()
    assert y.grad is None and not y.retains_grad


def test_retain_grad_on_non_leaf():
    x = leaf()
    y = x * 2.0
    y.retain_grad()
    assert y.retains_grad
    (y * y).sum().backward()
    assert_close(y.grad, 4 * X)
    assert not y.grad.requires_grad
    assert_close(x.grad, 8 * X)


def test_retain_grad_accumulates_across_calls():
    y = leaf() * 2.0
    y.retain_grad()
    z = (y * y).sum()
    z.backward(retain_graph=True)
    z.backward()
    assert_close(y.grad, 8 * X)


def test_retain_grad_on_leaf_is_a_noop():
    x = leaf()
    x.retain_grad()
    assert not x.retains_grad
    (x * 3.0).sum().backward()
    assert_close(x.grad, np.full(3, 3.0))


def test_retain_grad_without_requires_grad_raises():
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        E.tensor(X).retain_grad()


def test_retained_grad_sees_hooks_registered_after_it():
    y = leaf() * 2.0
    y.retain_grad()
    y.register_hook(lambda g: g * 10.0)
    y.sum().backward()
    assert_close(y.grad, np.full(3, 10.0))   # PyTorch: retain_grad always runs last


def test_retain_grad_follows_inplace_op():
    x = leaf()
    h = x * 2.0
    h.retain_grad()
    h.mul_(3.0)
    assert h.retains_grad
    (h * h).sum().backward()
    assert_close(h.grad, 12.0 * X)          # d/dh of h^2 for the new h = 6x
    assert_close(x.grad, 72.0 * X)


def test_retain_grad_of_base_follows_inplace_on_view():
    x = leaf()
    b = x * 2.0
    b.retain_grad()
    b[1:].mul_(3.0)
    assert b.grad_fn.name() == "CopySlices" and b.retains_grad
    (b * b).sum().backward()
    expected = 4.0 * X
    expected[1:] *= 3.0
    assert_close(b.grad, expected)


def test_hook_stays_with_value_it_was_registered_on():
    x = leaf()
    h = x * 2.0
    seen = []
    h.register_hook(lambda g: seen.append(g))
    h.mul_(3.0)
    (h * h).sum().backward()
    (g,) = seen
    assert_close(g, 36.0 * X)                # the gradient of the old h (PyTorch too)


# --- register_hook -------------------------------------------------------------------------

def test_hook_on_leaf_modifies_accumulated_grad():
    x = leaf()
    seen = []
    x.register_hook(lambda g: seen.append(g) or g * 2.0)
    (x * 3.0).sum().backward()
    assert len(seen) == 1
    assert_close(seen[0], np.full(3, 3.0))
    assert_close(x.grad, np.full(3, 6.0))


def test_hook_on_leaf_used_twice_runs_once_with_the_sum():
    x = leaf()
    seen = []
    x.register_hook(lambda g: seen.append(g))
    (x * 2.0 + x.exp()).sum().backward()
    assert len(seen) == 1
    assert_close(seen[0], 2.0 + np.exp(X))


def test_hook_on_non_leaf_modifies_upstream_gradient():
    x = leaf()
    y = x * 2.0
    y.register_hook(lambda g: g + 1.0)
    (y * y).sum().backward()
    assert_close(x.grad, (4 * X + 1.0) * 2.0)  # dz/dy = 2y = 4x, then the hook


@pytest.mark.parametrize("on_leaf", [True, False])
def test_several_hooks_run_in_registration_order(on_leaf):
    x = leaf()
    t = x if on_leaf else x * 1.0
    order = []
    t.register_hook(lambda g: order.append("first") or g + 1.0)
    t.register_hook(lambda g: order.append("second") or g * 2.0)
    (t * 1.0).sum().backward()
    assert order == ["first", "second"]
    assert_close(x.grad, np.full(3, 4.0))    # (1 + 1) * 2, not 1 * 2 + 1


@pytest.mark.parametrize("on_leaf", [True, False])
def test_hook_handle_remove(on_leaf):
    x = leaf()
    t = x if on_leaf else x * 1.0
    h = t.register_hook(lambda g: g * 5.0)
    y = (t * 1.0).sum()
    y.backward(retain_graph=True)
    assert_close(x.grad, np.full(3, 5.0))
    h.remove()
    y.backward()
    assert_close(x.grad, np.full(3, 6.0))


def test_hook_returning_none_keeps_gradient():
    x = leaf()
    calls = []
    x.register_hook(lambda g: calls.append(1))
    (x * 2.0).sum().backward()
    assert calls == [1]
    assert_close(x.grad, np.full(3, 2.0))


def test_hook_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                                           "require gradient"):
        E.tensor(X).register_hook(lambda g: g)


def test_hook_sees_gradient_in_grad_call():
    x = leaf()
    y = x.exp()
    y.register_hook(lambda g: g * 0.0)
    (gx,) = E.autograd.grad(y.sum(), x)
    assert_close(gx, np.zeros(3))


def test_leaf_hook_survives_graph_deletion():
    # the hook lives on the leaf's AccumulateGrad, which must outlive the first graph
    x = leaf()
    x.register_hook(lambda g: g * 3.0)
    (x * 1.0).sum().backward()
    import gc
    gc.collect()
    (x * 1.0).sum().backward()
    assert_close(x.grad, np.full(3, 6.0))
