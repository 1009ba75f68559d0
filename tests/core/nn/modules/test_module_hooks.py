"""Module.register_full_backward_hook / register_full_backward_pre_hook (_hooks.py): the
gradients the hooks see against numpy, replacing grad_input and grad_output, removal and
PyTorch's errors."""
import numpy as np
import pytest
from helpers import assert_close, to_np

import ember as E
from ember import nn
from ember.nn import Parameter


class Scale(nn.Module):
    """(x, k, y) -> (x * w * y, x + k): a Tensor, a number and a Tensor in, two outputs."""

    def __init__(self):
        super().__init__()
        self.w = Parameter(E.tensor([1.0, 2.0, 3.0], dtype=E.float64))

    def forward(self, x, k, y):
        return x * self.w * y, x + k


def _inputs():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    return x, y, E.tensor(x, requires_grad=True), E.tensor(y, requires_grad=True)


def test_hook_sees_input_and_output_gradients():
    x, y, tx, ty = _inputs()
    m, seen = Scale(), []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((mod, gi, go)))
    a, b = m(tx, 2.0, ty)
    g = np.arange(6.0).reshape(2, 3)
    E.autograd.backward([a, b], [E.tensor(g), E.ones(2, 3, dtype=E.float64)])
    (mod, gi, go), = seen
    w = np.array([1.0, 2.0, 3.0])
    assert mod is m and len(gi) == 3 and len(go) == 2 and gi[1] is None
    assert_close(go[0], g)
    assert_close(go[1], np.ones((2, 3)))
    assert_close(gi[0], g * w * y + 1)  # d/dx of both outputs
    assert_close(gi[2], g * w * x)
    assert_close(tx.grad, g * w * y + 1)


def test_returned_grad_input_replaces_the_gradient():
    x, y, tx, ty = _inputs()
    m = Scale()
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 10, None, None))
    m(tx, 0.0, ty)[0].sum().backward()
    assert_close(tx.grad, 10 * np.array([1.0, 2.0, 3.0]) * y)
    assert ty.grad is None  # its entry was replaced by None
    assert_close(m.w.grad, (x * y).sum(0))  # parameters inside are not affected


def test_pre_hook_replaces_grad_output_and_runs_first():
    _, y, tx, ty = _inputs()
    m, order = Scale(), []
    m.register_full_backward_hook(lambda mod, gi, go: order.append(("hook", to_np(go[0]))))

    def pre(mod, go):
        order.append("pre")
        return (E.ones_like(go[0]), go[1])
    m.register_full_backward_pre_hook(pre)
    (m(tx, 0.0, ty)[0] * 5).sum().backward()
    assert order[0] == "pre" and np.all(order[1][1] == 1)
    assert_close(tx.grad, np.array([1.0, 2.0, 3.0]) * y)  # the 5 is gone


def test_inputs_without_grad_give_none_and_hooks_can_be_removed():
    lin = nn.Linear(3, 2)
    seen = []
    h = lin.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, go)))
    lin(E.randn(4, 3)).sum().backward()
    (gi, go), = seen
    assert gi == (None,) and go[0].shape == (4, 2)
    h.remove()
    lin(E.randn(4, 3)).sum().backward()
    assert len(seen) == 1
    with E.no_grad():
        lin.register_full_backward_hook(lambda *a: seen.append(a))
        lin(E.randn(1, 3))  # nothing to hook: no error, no call
    assert len(seen) == 1


def test_nested_modules_report_inner_first():
    order = []
    inner = nn.Linear(2, 2)
    outer = nn.Sequential(inner, nn.Linear(2, 1))
    inner.register_full_backward_hook(lambda *a: order.append("inner"))
    outer.register_full_backward_hook(lambda *a: order.append("outer"))
    outer(E.randn(3, 2, requires_grad=True)).sum().backward()
    assert order == ["inner", "outer"]


def test_errors():
    _, _, tx, ty = _inputs()
    m = Scale()
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0],))
    with pytest.raises(RuntimeError, match="invalid number of grad_input, got 1, but expected 3"):
        m(tx, 0.0, ty)[0].sum().backward()
    p = Scale()
    p.register_full_backward_pre_hook(lambda mod, go: (go[0],))
    with pytest.raises(RuntimeError, match="invalid number of grad_output, got 1, but expected 2"):
        p(tx, 0.0, ty)[0].sum().backward()
    q = nn.Linear(2, 2)
    q.register_full_backward_hook(lambda mod, gi, go: (E.ones(1),))
    with pytest.raises(RuntimeError, match="no input requires gradient"):
        q(E.randn(1, 2)).sum().backward()

    class ToDict(nn.Module):
        def forward(self, x):
            return {"y": x}
    d = ToDict()
    d.register_full_backward_hook(lambda *a: None)
    with pytest.raises(TypeError, match="return a Tensor or a tuple, got dict"):
        d(tx)
