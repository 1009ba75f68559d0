"""Custom autograd Functions (``ember/autograd/custom.py``): forward/backward, saved
tensors, needs_input_grad, non-differentiable outputs, materialized grads, gradient-count
and shape errors, double backward and ``once_differentiable``. Semantics follow
``torch.autograd.Function`` (checked against torch 2.x); values against numpy float64."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
from ember.autograd import Function, grad, gradcheck, gradgradcheck, once_differentiable
from helpers import assert_close

X = np.array([0.5, -1.25, 2.0])


def leaf(values=X):
    return E.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


class Exp(Function):
    """Saves its output; backward in ember ops, so it is twice differentiable."""

    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class Scale(Function):
    """Saves its inputs; takes a non-Tensor argument."""

    @staticmethod
    def forward(ctx, x, w, k):
        ctx.save_for_backward(x, w)
        ctx.k = k
        return x * w * k

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w * ctx.k, g * x * ctx.k, None


# --- forward / backward ------------------------------------------------------------------------

def test_forward_value_and_backward_through_saved_output():
    x = leaf()
    y = Exp.apply(x)
    assert_close(y, np.exp(X))
    y.sum().backward()
    assert_close(x.grad, np.exp(X))


def test_saved_inputs_and_non_tensor_argument():
    x, w = leaf(), leaf([2.0, 3.0, 4.0])
    y = Scale.apply(x, w, 0.5)
    y.backward(E.tensor([1.0, 2.0, 3.0]))
    g = np.array([1.0, 2.0, 3.0])
    assert_close(x.grad, g * np.array([2.0, 3.0, 4.0]) * 0.5)
    assert_close(w.grad, g * X * 0.5)


def test_gradcheck_and_gradgradcheck_pass():
    x, w = leaf(), leaf([2.0, 3.0, 4.0])
    assert gradcheck(Exp.apply, (x,))
    assert gradgradcheck(Exp.apply, (x,))
    assert gradcheck(lambda a, b: Scale.apply(a, b, 1.5), (x, w))
    assert gradgradcheck(lambda a, b: Scale.apply(a, b, 1.5), (x, w))


def test_double_backward_through_ember_backward():
    x = leaf()
    (g,) = grad(Exp.apply(x).sum(), x, create_graph=True)
    assert g.requires_grad
    (gg,) = grad(g.sum(), x)
    assert_close(gg, np.exp(X))


def test_grad_fn_name_and_edges():
    x = leaf()
    y = Exp.apply(x)
    assert y.grad_fn.name() == "ExpBackward" and type(y.grad_fn).__name__ == "ExpBackward"
    assert isinstance(y.grad_fn, E.autograd.graph.Node)
    (node, nr), = y.grad_fn.next_functions
    assert type(node).__name__ == "AccumulateGrad" and node.variable is x and nr == 0
    z = Scale.apply(x, E.tensor(X), 2.0)
    assert z.grad_fn.name() == "ScaleBackward"
    assert z.grad_fn.next_functions[1:] == (None, None)


def test_composes_with_builtin_ops():
    x = leaf()
    y = (Exp.apply(x * 2.0) + 1.0).sin().sum()
    y.backward()
    assert_close(x.grad, np.cos(np.exp(2 * X) + 1.0) * np.exp(2 * X) * 2.0)


def test_no_history_without_grad_inputs_or_under_no_grad():
    y = Exp.apply(E.tensor(X))
    assert not y.requires_grad and y.grad_fn is None
    with E.no_grad():
        y = Exp.apply(leaf())
    assert not y.requires_grad and y.grad_fn is None


def test_forward_runs_without_recording():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2.0
            seen.append((E.is_grad_enabled(), y.requires_grad))
            return y

        @staticmethod
        def backward(ctx, g):
            return g * 2.0

    Probe.apply(leaf())
    assert seen == [(False, False)]


def test_input_returned_as_is_gets_new_history():
    class Ident(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3.0

    x = leaf()
    y = Ident.apply(x)
    assert y is not x and x.is_leaf and y.grad_fn.name() == "IdentBackward"
    y.sum().backward()
    assert_close(x.grad, np.full(3, 3.0))


# --- ctx ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("flags", [(True, True), (True, False), (False, True)])
def test_needs_input_grad(flags):
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, k, b):
            seen.append(ctx.needs_input_grad)
            return a * b * k

        @staticmethod
        def backward(ctx, g):
            return g, None, g

    a = E.tensor(X, requires_grad=flags[0])
    b = E.tensor(X, requires_grad=flags[1])
    Probe.apply(a, 2.0, b)
    assert seen == [(flags[0], False, flags[1])]


def test_save_none_and_read_saved_tensors_twice():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(None, x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            none, x = ctx.saved_tensors
            assert none is None
            (x2,) = ctx.saved_tensors[1:]
            assert x2 is x                   # the same input Tensor each time
            return 2 * g * x2

    x = leaf()
    F.apply(x).sum().backward()
    assert_close(x.grad, 2 * X)


def test_saved_tensors_freed_after_backward():
    x = leaf()
    y = Exp.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second "
                                           "time.*ExpBackward"):
        _ = y.grad_fn.saved_tensors


def test_retain_graph_keeps_saved_tensors():
    x = leaf()
    y = Exp.apply(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert_close(x.grad, 2 * np.exp(X))


@pytest.mark.parametrize("what", ["input", "output"])
def test_modifying_saved_tensor_in_place_raises(what):
    class Save(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2.0
            ctx.save_for_backward(x if what == "input" else y)
            return y

        @staticmethod
        def backward(ctx, g):
            (s,) = ctx.saved_tensors
            return g * s

    b = leaf() * 1.0
    y = Save.apply(b)
    (b if what == "input" else y).add_(1.0)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*saved by "
                                           r"SaveBackward as 'saved_tensors\[0\]'.*after "
                                           r"Save\(\) used it"):
        y.sum().backward()


def test_mark_dirty_is_not_supported():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x

    with pytest.raises(NotImplementedError, match="mark_dirty"):
        F.apply(leaf())


# --- several outputs ---------------------------------------------------------------------------

class Split(Function):
    """Two outputs: 2x and 3x; records the gradients backward receives."""

    seen: list = []

    @staticmethod
    def forward(ctx, x, materialize=True):
        ctx.set_materialize_grads(materialize)
        return x * 2.0, x * 3.0

    @staticmethod
    def backward(ctx, ga, gb):
        Split.seen.append((ga, gb))
        out = 0.0
        if ga is not None:
            out = out + ga * 2.0
        if gb is not None:
            out = out + gb * 3.0
        return out, None


@pytest.mark.parametrize("materialize", [True, False])
def test_unused_output_gets_zeros_or_none(materialize):
    Split.seen = []
    x = leaf()
    _, b = Split.apply(x, materialize)
    b.sum().backward()
    (ga, gb), = Split.seen
    if materialize:
        assert_close(ga, np.zeros(3))
    else:
        assert ga is None
    assert_close(gb, np.ones(3))
    assert_close(x.grad, np.full(3, 3.0))


def test_both_outputs_used():
    x = leaf()
    a, b = Split.apply(x)
    assert a.grad_fn is b.grad_fn
    (a * b).sum().backward()
    assert_close(x.grad, 12.0 * X)


def test_mark_non_differentiable():
    class Sort(Function):
        @staticmethod
        def forward(ctx, x):
            idx = x.argsort()
            mask = x > 0.0
            y = x * 1.0
            ctx.mark_non_differentiable(mask, y)
            return x * 2.0, idx, mask, y

        @staticmethod
        def backward(ctx, g, gidx, gmask, gy):
            ctx.got = (gidx, gmask, gy)
            return g * 2.0

    x = leaf()
    out, idx, mask, y = Sort.apply(x)
    assert out.requires_grad
    assert not idx.requires_grad and not mask.requires_grad and not y.requires_grad
    assert y.grad_fn is None
    out.sum().backward()
    assert_close(x.grad, np.full(3, 2.0))
    gidx, gmask, gy = out.grad_fn.got
    # PyTorch materializes zeros for every Tensor output, integral ones included
    assert gidx.dtype is E.int64 and gidx.shape == (3,) and not gidx.numpy().any()
    assert gmask.dtype is E.bool_ and gmask.shape == (3,) and not gmask.numpy().any()
    assert_close(gy, np.zeros(3))


# --- errors -------------------------------------------------------------------------------------

@pytest.mark.parametrize("returned", [0, 1, 3])
def test_wrong_number_of_gradients_raises(returned):
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, w):
            return x * w

        @staticmethod
        def backward(ctx, g):
            return (g,) * returned   # 3: the extra one is not None, so it is an error

    with pytest.raises(RuntimeError, match=rf"function BadBackward returned an incorrect "
                                           rf"number of gradients \(expected 2, got "
                                           rf"{returned}\)"):
        Bad.apply(leaf(), leaf()).sum().backward()


def times_two(backward, name: str = "F"):
    """A Function class ``name`` computing ``2 x``, with ``backward(ctx, g)`` as given."""
    return type(name, (Function,), {"forward": staticmethod(lambda ctx, x: x * 2.0),
                                    "backward": staticmethod(backward)})


def test_extra_trailing_none_gradients_are_allowed():
    F = times_two(lambda ctx, g: (g * 2.0, None, None))
    x = leaf()
    F.apply(x).sum().backward()
    assert_close(x.grad, np.full(3, 2.0))


def test_gradient_for_non_tensor_argument_raises():
    class F(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * 2.0, g

    with pytest.raises(RuntimeError, match="gradient different than None at position 2, but "
                                           "the corresponding forward input was not a "
                                           "Tensor"):
        F.apply(leaf(), 2.0).sum().backward()


def test_gradient_for_tensor_not_requiring_grad_is_dropped():
    class F(Function):
        @staticmethod
        def forward(ctx, x, c):
            return x * c

        @staticmethod
        def backward(ctx, g):
            return g, g

    x, c = leaf(), E.ones(3, dtype=E.float64)
    F.apply(x, c).sum().backward()
    assert_close(x.grad, np.ones(3))
    assert c.grad is None


def test_gradient_of_wrong_shape_raises():
    F = times_two(lambda ctx, g: E.ones(4, dtype=E.float64))

    with pytest.raises(RuntimeError, match=r"Function FBackward returned an invalid gradient "
                                           r"at index 0 - got \[4\] but expected shape "
                                           r"compatible with \[3\]"):
        F.apply(leaf()).sum().backward()


def test_base_function_backward_not_implemented():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

    with pytest.raises(NotImplementedError, match="backward"):
        F.apply(leaf()).sum().backward()


# --- once_differentiable ------------------------------------------------------------------------

class OnceSquare(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        assert not E.is_grad_enabled()
        return 2.0 * g * x


def test_once_differentiable_first_derivative():
    x = leaf()
    OnceSquare.apply(x).sum().backward(create_graph=True)
    assert_close(x.grad, 2 * X)
    assert gradcheck(OnceSquare.apply, (leaf(),))


def test_once_differentiable_raises_on_double_backward():
    x = leaf()
    y = OnceSquare.apply(x)
    go = E.ones(3, dtype=E.float64, requires_grad=True)
    (g,) = grad(y, x, go, create_graph=True)
    assert g.requires_grad
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that "
                                           "was marked with @once_differentiable"):
        g.sum().backward()


def test_gradgradcheck_reports_once_differentiable():
    with pytest.raises(RuntimeError, match="once_differentiable"):
        gradgradcheck(OnceSquare.apply, (leaf(),))
