"""Double backward through an in-place op on a view (issue 35, class 9): the op's node
(``SigmoidBackward0`` for ``y[0].sigmoid_()``) runs inside the base's CopySlices and, in a
create_graph backward, also directly (through the output it saved), so CopySlices must
not free what that node saved. Expected values recorded from torch 2.13."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E

BASE = [0.3, -1.2, 0.7, 2.0]


def issue_example(a):
    y = a * 1
    y[0].sigmoid_()
    g = E.autograd.grad((y * y).sum(), a, create_graph=True)[0]
    return E.autograd.grad(g.sum(), a)[0]


def saved_output_used_directly(a):
    y = a * 1
    v = y[1:3]
    v.exp_()
    g = E.autograd.grad((y * y).sum() + v.sum() ** 2, a, create_graph=True)[0]
    return E.autograd.grad((g * g).sum(), a)[0]


def base_saved_after_the_op(a):
    y = a * 2
    y[2:].tanh_()
    g = E.autograd.grad((y * y * y).sum(), a, create_graph=True)[0]
    return E.autograd.grad(g[0] + g[3], a)[0]


def first_order_twice(a):
    y = a * 1
    y[0].sigmoid_()
    s = (y * y).sum()
    s.backward(retain_graph=True)
    s.backward()
    return a.grad


CASES = {
    issue_example: [0.077704701281817, 2.0, 2.0, 2.0],
    saved_output_used_directly: [2.4, 48.40753921109912, 1177.2847852653906, 16.0],
    base_saved_after_the_op: [14.4, 0.0, 0.0, -0.032074978118926754],
    first_order_twice: [0.5617089912926443, -4.8, 2.8, 8.0],
}


@pytest.mark.parametrize("case", list(CASES), ids=lambda f: f.__name__)
def test_double_backward_through_an_inplace_op_on_a_view(case):
    got = case(E.tensor(BASE, dtype=E.float64, requires_grad=True))
    np.testing.assert_allclose(got.numpy(), CASES[case], rtol=1e-12)


def test_a_second_backward_without_retain_graph_still_raises():
    a = E.tensor(BASE, dtype=E.float64, requires_grad=True)
    y = a * 1
    y[0].sigmoid_()
    s = (y * y).sum()
    s.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        s.backward()
