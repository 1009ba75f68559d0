"""In-place view ops (ops/inplace_views.py): unsqueeze_, squeeze_, t_, transpose_ and the
aliases swapaxes_ / swapdims_ change self's layout, share its memory, bump the version,
record autograd (also on views, through CopySlices) and trace as the out-of-place op;
PyTorch's refusals, and ember's one extra refusal, leave self unchanged."""
import numpy as np
import pytest

import ember as E

A = np.arange(6.0).reshape(2, 3)


@pytest.mark.parametrize("call, ref", [
    (lambda t: t.unsqueeze_(0), lambda a: a[None]),
    (lambda t: t.unsqueeze_(-1), lambda a: a[..., None]),
    (lambda t: t.t_(), lambda a: a.T),
    (lambda t: t.transpose_(0, -1), lambda a: a.T),
    (lambda t: t.swapaxes_(0, 1), lambda a: a.T),
    (lambda t: t.swapdims_(1, 0), lambda a: a.T),
    (lambda t: t.unsqueeze_(1).squeeze_(), lambda a: a),
    (lambda t: t.unsqueeze_(1).squeeze_(1), lambda a: a),
])
def test_layout_changes_in_place_and_bumps_the_version(call, ref):
    x = E.tensor(A.copy())
    data = x._data
    v = x._version
    assert call(x) is x
    np.testing.assert_array_equal(x.numpy(), ref(A))
    assert x._version > v
    assert np.shares_memory(x._data, data)


def test_squeeze_keeps_other_dims_and_t_keeps_vectors():
    x = E.zeros(3, 1, 2, 1)
    assert x.squeeze_((1, 2)).shape == (3, 2, 1)
    v = E.zeros(3)
    assert v.t_().shape == (3,)


def test_autograd_on_a_non_leaf():
    x = E.tensor(A, requires_grad=True)
    y = x * 2
    y.t_()
    assert y.grad_fn.name().startswith("T")
    (y * E.tensor(np.arange(6.0).reshape(3, 2))).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * np.arange(6.0).reshape(3, 2).T)


def test_autograd_on_a_view_reaches_the_base():
    x = E.tensor(A, requires_grad=True)
    base = x * 1
    row = base[1]
    row.unsqueeze_(0)
    assert row.shape == (1, 3)
    row.mul_(3)  # an in-place write on the reshaped view must land in base's row 1
    np.testing.assert_array_equal(base.detach().numpy(), [[0, 1, 2], [9, 12, 15]])
    base.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 1, 1], [3, 3, 3]])


def test_a_saved_tensor_changed_in_place_raises_at_backward():
    x = E.tensor(A, requires_grad=True)
    y = x * 1
    z = y * y  # saves y
    y.unsqueeze_(0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_no_grad_changes_a_leaf():
    x = E.tensor(A, requires_grad=True)
    with E.no_grad():
        x.unsqueeze_(0)
    assert x.shape == (1, 2, 3) and x.is_leaf
    (x * 2).sum().backward()
    assert x.grad.shape == (1, 2, 3)


def test_refusals_leave_self_unchanged():
    x = E.tensor(A, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.t_()
    assert x.shape == (2, 3) and x._version == 0
    y = x * 1
    parts = y.chunk(2, dim=1)
    with pytest.raises(RuntimeError, match="output 1 of chunk"):
        parts[1].unsqueeze_(0)
    assert parts[1].shape == (2, 1)
    z = x * 1
    alias = z[0]  # a view of z: its recorded view function assumes z's layout
    with pytest.raises(RuntimeError, match=r"out-of-place y = x\.unsqueeze"):
        z.unsqueeze_(0)
    assert z.shape == (2, 3) and alias.shape == (3,)
    with pytest.raises(RuntimeError, match="<= 2 dim|2-d|more than 2"):
        E.zeros(2, 2, 2).t_()
    w = E.zeros(2, 3)
    with pytest.raises(IndexError):
        w.unsqueeze_(5)
    assert w.shape == (2, 3) and w._version == 0


def test_traces_as_the_out_of_place_op():
    def f(x):
        y = x * 2
        y.unsqueeze_(0)
        y.transpose_(0, 2)
        return y + 1
    traced = E.jit.trace(f, (E.tensor(A),))
    text = str(traced.graph)
    assert "ember::unsqueeze" in text and "ember::transpose" in text
    other = np.arange(6.0, 12.0).reshape(2, 3)
    np.testing.assert_array_equal(traced(E.tensor(other)).numpy(),
                                  (other * 2)[None].transpose(2, 1, 0) + 1)
