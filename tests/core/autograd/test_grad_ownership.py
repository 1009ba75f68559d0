"""AccumulateGrad keeps a gradient only the engine holds as ``.grad`` (no copy), and copies
every gradient something else holds: a second leaf, the caller, a custom Function, a view
(PyTorch's use_count rule in accumulate_grad.h). Values are checked against numpy."""
from __future__ import annotations

import weakref

import numpy as np
import pytest

import ember as E
from ember.autograd import grad_ownership
from helpers import assert_close

X = np.array([0.5, -1.25, 2.0])


def leaf():
    return E.tensor(X.copy(), requires_grad=True)


def formula_output(y):
    """A weak reference to the gradient y's grad_fn hands its first input, taken by a Node
    post-hook that keeps no strong reference."""
    refs = []
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs:
                            refs.append(weakref.ref(grad_inputs[0])))
    return refs


def test_the_measured_counts_tell_a_held_gradient_apart():
    plain, views = grad_ownership.sole_counts()
    assert len(plain) == 2 and all(isinstance(n, int) and n > 0 for n in plain)
    assert len(views) == 3 and all(isinstance(n, int) and n > 0 for n in views)


def test_a_linear_weight_gradient_is_kept_row_major_not_copied(monkeypatch):
    from ember.autograd import function
    copies = []
    real = function._own
    monkeypatch.setattr(function, "_own", lambda g: copies.append(g.shape) or real(g))
    x = E.tensor(np.arange(12.0).reshape(4, 3) / 7)
    w = E.tensor(np.arange(6.0).reshape(2, 3) / 5 - 0.5, requires_grad=True)
    b = E.zeros(2, dtype=E.float64, requires_grad=True)
    E.nn.functional.linear(x, w, b).square().sum().backward()
    y = x._data @ w.detach()._data.T
    assert_close(w.grad, 2 * y.T @ x._data)
    assert w.grad.is_contiguous() and copies == []  # neither the weight's nor the bias's
    E.nn.functional.linear(x, w, b).square().sum().backward()  # adds in place
    assert_close(w.grad, 4 * y.T @ x._data)


def test_a_whole_view_of_memory_something_else_holds_is_copied():
    kept = E.tensor([4.0, 5.0, 6.0])

    def hands_a_plain_view(g):
        t = E.zeros(3, dtype=E.float64)
        t._data = kept._data[...]  # spans kept's memory exactly; only the engine holds t
        return t

    x = leaf()
    identity_with_backward(hands_a_plain_view).apply(x).sum().backward()
    kept.mul_(0.0)
    assert_close(x.grad, np.array([4.0, 5.0, 6.0]))


def test_with_no_base_count_a_whole_view_is_never_kept(monkeypatch):
    monkeypatch.setattr(grad_ownership, "_sole", (grad_ownership.sole_counts()[0], ()))
    x = E.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    E.nn.functional.linear(E.ones(1, 3, dtype=E.float64), x).sum().backward()
    assert x.grad._data.base is None  # a copy
    assert_close(x.grad, np.ones((2, 3)))


def test_a_fresh_gradient_becomes_grad_itself():
    x = leaf()
    y = x * 3.0
    refs = formula_output(y)
    y.sum().backward()
    assert refs[0]() is x.grad  # kept: MulBackward made it and only the engine held it
    assert_close(x.grad, np.full(3, 3.0))
    (x * 3.0).sum().backward()  # the next backward adds into it in place
    assert_close(x.grad, np.full(3, 6.0))


def test_one_gradient_for_two_leaves_is_copied_for_each():
    a, b = leaf(), leaf()
    (a + b).sum().backward()
    assert a.grad is not b.grad
    a.grad.mul_(10.0)
    assert_close(b.grad, np.ones(3))


def test_a_seed_the_caller_holds_is_copied():
    x = leaf()
    seed = E.tensor([1.0, 2.0, 3.0])
    (x + 0.0).backward(seed)  # AddBackward passes the seed itself on
    x.backward(seed)           # and a leaf's own backward receives it directly
    seed.mul_(0.0)
    assert_close(x.grad, 2 * np.array([1.0, 2.0, 3.0]))


def identity_with_backward(backward):
    """A custom Function: the identity forward, ``backward(g)`` as its backward."""
    class Identity(E.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            return backward(g)
    return Identity


def test_a_tensor_a_custom_function_keeps_is_copied():
    kept = E.tensor([4.0, 5.0, 6.0])
    x = leaf()
    identity_with_backward(lambda g: kept).apply(x).sum().backward()
    assert x.grad is not kept
    kept.add_(1.0)
    assert_close(x.grad, np.array([4.0, 5.0, 6.0]))


def test_a_gradient_sharing_memory_is_copied():
    view_of = []

    def hands_a_view(g):
        view_of.append(g * 2.0)
        return view_of[0][:]  # a view: its memory belongs to the product

    x = leaf()
    identity_with_backward(hands_a_view).apply(x).sum().backward()
    view_of[0].mul_(0.0)
    assert_close(x.grad, np.full(3, 2.0))


def test_with_counts_that_tell_nothing_every_gradient_is_copied(monkeypatch):
    monkeypatch.setattr(grad_ownership, "_sole", ())
    x = leaf()
    y = x * 3.0
    refs = formula_output(y)
    y.sum().backward()
    assert refs[0]() is None or refs[0]() is not x.grad
    assert_close(x.grad, np.full(3, 3.0))


@pytest.mark.parametrize("create_graph", [False, True])
def test_create_graph_keeps_the_recorded_gradient(create_graph):
    x = leaf()
    (x * x).sum().backward(create_graph=create_graph)
    assert x.grad.requires_grad is create_graph
    assert_close(x.grad, 2 * X)
