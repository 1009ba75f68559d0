"""Versions, views and in-place ops under autograd (``ember/autograd/views.py``): the
shared version counter, saved-tensor checks, PyTorch's in-place errors, CopySlices
rebasing, chunk outputs, setitem into buffers and failed in-place ops. Gradients are
checked with gradcheck/gradgradcheck (float64) and against numpy references."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
from ember.autograd import gradcheck, gradgradcheck
from helpers import assert_close

RNG = np.random.default_rng(0)
XA = RNG.uniform(0.2, 1.5, (3, 4))
WA = RNG.uniform(0.2, 1.5, (4,))


def leaf(values):
    return E.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


VIEWS = {
    "view": lambda t: t.view(12),
    "select": lambda t: t[0],
    "slice": lambda t: t[:, 1:3],
    "transpose": lambda t: t.transpose(0, 1),
    "view_of_view": lambda t: t[1:].transpose(0, 1)[2],
    "unsqueeze": lambda t: t.unsqueeze(0),
    "chunk0": lambda t: t.chunk(2, 1)[0],
}

INPLACE = {
    "add_": lambda t: t.add_(1.0),
    "mul_": lambda t: t.mul_(2.0),
    "zero_": lambda t: t.zero_(),
    "fill_": lambda t: t.fill_(3.0),
    "exp_": lambda t: t.exp_(),
    "iadd": lambda t: t.__iadd__(1.0),
    "setitem": lambda t: t.__setitem__(0, 5.0),
}


# --- the version counter -----------------------------------------------------------------------

def test_new_tensor_is_at_version_zero():
    assert E.zeros(3)._version == 0


@pytest.mark.parametrize("op", list(INPLACE))
def test_inplace_op_bumps_version(op):
    t = E.zeros(3, 4)
    INPLACE[op](t)
    assert t._version == 1
    INPLACE[op](t)
    assert t._version == 2


def test_out_of_place_op_does_not_bump_version():
    t = E.ones(3)
    _ = t + 1.0, t.exp(), t[0], t.view(3, 1)
    assert t._version == 0


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("write_base", [True, False])
def test_views_share_version_counter(view, write_base):
    base = E.zeros(3, 4)
    v = VIEWS[view](base)
    other = base.transpose(0, 1)
    (base if write_base else v).add_(1.0)
    assert base._version == v._version == other._version == 1


def test_detach_shares_version_and_memory():
    base = E.zeros(3)
    d = base.detach()
    d.add_(2.0)
    assert base._version == 1
    assert_close(base, np.full(3, 2.0))


# --- saved tensors modified in place ---------------------------------------------------------

@pytest.mark.parametrize("forward, node, slot", [
    (lambda b, c: b.exp(), "ExpBackward0", "result"),      # saves its output
    (lambda b, c: b.sin(), "SinBackward0", "self"),        # saves its input
    (lambda b, c: c * b, "MulBackward0", "other"),
    (lambda b, c: b * c, "MulBackward0", "self"),
])
def test_saved_tensor_modified_in_place_raises_naming_node(forward, node, slot):
    x = leaf(XA)
    b = x * 1.0
    c = x * 2.0
    y = forward(b, c)
    if slot == "result":
        y.add_(1.0)
    else:
        b.mul_(2.0)
    with pytest.raises(RuntimeError, match=rf"modified by an inplace operation: .*saved by "
                                           rf"{node} as '{slot}', is at version 1; expected "
                                           rf"version 0 instead"):
        y.sum().backward()


@pytest.mark.parametrize("view", ["select", "slice", "transpose", "view"])
def test_saved_tensor_modified_through_a_view_raises(view):
    x = leaf(XA)
    b = x * 1.0
    y = b.sin()
    VIEWS[view](b).mul_(2.0)
    with pytest.raises(RuntimeError, match="SinBackward0"):
        y.sum().backward()


def test_saved_view_modified_through_its_base_raises():
    x = leaf(XA)
    b = x * 1.0
    y = b[1:].sin()
    b.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inplace_on_unsaved_tensor_is_fine():
    x = leaf(XA)
    b = x * 3.0          # MulBackward0 saves only the scalar's partner, x
    y = b + 1.0          # AddBackward0 saves nothing
    b.mul_(2.0)
    y.sum().backward()
    assert_close(x.grad, np.full((3, 4), 3.0))


# --- in-place on leaves -----------------------------------------------------------------------

@pytest.mark.parametrize("op", list(INPLACE))
def test_inplace_on_leaf_requiring_grad_raises(op):
    x = leaf(XA)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                           "in an in-place operation"):
        INPLACE[op](x)
    assert x._version == 0 and x.grad_fn is None
    assert_close(x.detach(), XA)


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("op", ["add_", "mul_", "setitem"])
def test_inplace_on_view_of_leaf_raises(view, op):
    x = leaf(XA)
    v = VIEWS[view](x)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is "
                                           "being used in an in-place operation"):
        INPLACE[op](v)
    assert_close(x.detach(), XA)


def test_inplace_on_leaf_not_requiring_grad_with_grad_operand():
    buf = E.zeros(4, dtype=E.float64)
    w = leaf(WA)
    buf.add_(w * w)
    assert buf.requires_grad and buf.grad_fn.name() == "AddBackward0"
    buf.sum().backward()
    assert_close(w.grad, 2 * WA)


# --- in-place on views of non-leaves: CopySlices ----------------------------------------------

def test_inplace_on_view_rebases_base_on_copy_slices():
    x, w = leaf(XA), leaf(WA)
    b = x * 2.0
    v = b[1]
    v.mul_(w)
    assert b.grad_fn.name() == "CopySlices"
    assert not b.is_leaf and v.requires_grad
    g = np.array([1.0, 2.0, 3.0])[:, None] * np.ones(4)
    b.backward(E.tensor(g))
    expected = 2.0 * g
    expected[1] *= WA
    assert_close(x.grad, expected)
    assert_close(w.grad, 2.0 * XA[1] * g[1])


def test_view_sees_base_values_and_history_after_inplace_on_base():
    x = leaf(XA)
    b = x * 1.0
    v = b[0]
    b.mul_(3.0)
    assert_close(v.detach(), 3.0 * XA[0])
    (v * v).sum().backward()
    expected = np.zeros((3, 4))
    expected[0] = 18.0 * XA[0]
    assert_close(x.grad, expected)


CASES = {
    "row_mul": lambda b, w: b[1].mul_(w),
    "col_add": lambda b, w: b[:, 2].add_(w[:3], alpha=2.5),
    "transpose_slice_exp": lambda b, w: b.transpose(0, 1)[1:3].exp_(),
    "view_chain_sin": lambda b, w: b.view(2, 6)[1].view(2, 3)[0].sin_(),
    "chunk0_div": lambda b, w: b.chunk(2, 1)[0].div_(w[:2]),
    "copy_": lambda b, w: b[2].copy_(w * 3.0),
    "zero_": lambda b, w: b[:2, 1:].zero_(),
    "sigmoid_": lambda b, w: b[0].sigmoid_(),
    "pow_": lambda b, w: b[1:, ::2].pow_(3),
    "two_ops": lambda b, w: (b[0].mul_(w), b[:, 1].add_(b[2, :3].clone())),
    "setitem": lambda b, w: b.__setitem__((slice(None), 1), w[:3] ** 2),
    "setitem_into_view": lambda b, w: b[1:].__setitem__(0, w),
    "iadd_view": lambda b, w: b[0].__iadd__(w),
}


@pytest.mark.parametrize("case", list(CASES))
def test_inplace_on_view_gradcheck(case):
    def f(x, w):
        b = x * 1.0
        CASES[case](b, w)
        return b * x      # uses x again: the base's old history must still be right

    x, w = leaf(XA), leaf(WA)
    assert gradcheck(f, (x, w))


@pytest.mark.parametrize("case", ["row_mul", "transpose_slice_exp", "copy_", "pow_",
                                  "setitem_into_view"])
def test_inplace_on_view_double_backward(case):
    def f(x, w):
        b = x * 1.0
        CASES[case](b, w)
        return b * x

    assert gradgradcheck(f, (leaf(XA), leaf(WA)))


def test_inplace_on_view_matches_numpy():
    x, w = leaf(XA), leaf(WA)
    b = x.sin()
    b[1:, 1].mul_(w[:2])
    (b * b).sum().backward()
    s = np.sin(XA)
    out = s.copy()
    out[1:, 1] *= WA[:2]
    dout = 2 * out
    dx = dout * np.cos(XA)
    dx[1:, 1] = dout[1:, 1] * WA[:2] * np.cos(XA[1:, 1])
    dw = np.zeros(4)
    dw[:2] = dout[1:, 1] * s[1:, 1]
    assert_close(x.grad, dx)
    assert_close(w.grad, dw)


def test_inplace_on_base_then_view_used():
    def f(x, w):
        b = x * 1.0
        v = b[0]
        b.mul_(2.0)      # the view's history must be refreshed from the base's
        return v * w
    assert gradcheck(f, (leaf(XA), leaf(WA)))


# --- chunk outputs ----------------------------------------------------------------------------

@pytest.mark.parametrize("index", [1, 2])
def test_inplace_on_later_chunk_raises(index):
    b = leaf(XA) * 1.0
    parts = b.chunk(3, 0)
    with pytest.raises(RuntimeError, match=rf"output {index} of chunk\(\) is a view and is "
                                           rf"being modified in place"):
        parts[index].mul_(2.0)
    assert b.grad_fn.name() == "MulBackward0"
    assert_close(b.detach(), XA)


def test_inplace_on_first_chunk_works():
    x = leaf(XA)
    b = x * 1.0
    first, _ = b.chunk(2, 1)
    first.mul_(3.0)
    b.sum().backward()
    expected = np.ones((3, 4))
    expected[:, :2] = 3.0
    assert_close(x.grad, expected)


# --- setitem into buffers ---------------------------------------------------------------------

def test_setitem_grad_tensor_into_zeros_buffer():
    w = leaf(WA)
    buf = E.zeros(3, 4, dtype=E.float64)
    assert not buf.requires_grad
    buf[1] = w * w
    assert buf.requires_grad and buf.grad_fn is not None
    scale = np.arange(12.0).reshape(3, 4)
    (buf * E.tensor(scale)).sum().backward()
    assert_close(w.grad, 2 * WA * scale[1])


def test_setitem_several_times_into_buffer_gradcheck():
    def f(x, w):
        buf = E.ones(3, 4, dtype=E.float64)
        buf[:, 1] = x[:, 0] * w[1]
        buf[0] = w                      # overwrites part of the first assignment
        buf[2, 2:] *= x[0, :2]
        return buf.exp()
    assert gradcheck(f, (leaf(XA), leaf(WA)))
    assert gradgradcheck(f, (leaf(XA), leaf(WA)))


def test_inplace_on_view_of_buffer_makes_buffer_require_grad():
    w = leaf(WA)
    buf = E.zeros(3, 4, dtype=E.float64)
    v = buf[1:]
    v[0].add_(w)
    assert buf.requires_grad and buf.grad_fn.name() == "CopySlices"
    (buf * 2.0).sum().backward()
    assert_close(w.grad, np.full(4, 2.0))


@pytest.mark.parametrize("write", ["base", "other_view"])
def test_view_made_before_base_requires_grad_follows_base(write):
    w = leaf(WA)
    buf = E.zeros(4, dtype=E.float64)
    r = buf.view(2, 2)
    (buf if write == "base" else buf[:]).add_(w)
    assert r.requires_grad   # PyTorch: a view requires grad when its base does
    (r * 3.0).sum().backward()
    assert_close(w.grad, np.full(4, 3.0))


# --- failed in-place ops change nothing -------------------------------------------------------

@pytest.mark.parametrize("target", ["base", "view"])
@pytest.mark.parametrize("op", [
    lambda t: t.add_(E.ones(7, dtype=E.float64)),
    lambda t: t.mul_(E.ones(2, 7, dtype=E.float64)),
    lambda t: t.copy_(E.ones(9, dtype=E.float64)),
    lambda t: t.__setitem__(0, E.ones(9, dtype=E.float64)),
])
def test_failed_inplace_leaves_tensor_and_history_unchanged(target, op):
    x = leaf(XA)
    b = x * 2.0
    fn = b.grad_fn
    t = b if target == "base" else b[1:]
    t_fn = t.grad_fn
    with pytest.raises((RuntimeError, ValueError)):
        op(t)
    assert b.grad_fn is fn and t.grad_fn is t_fn
    assert b._version == 0
    assert_close(b.detach(), 2.0 * XA)
    b.sum().backward()
    assert_close(x.grad, np.full((3, 4), 2.0))
