"""A misused custom ``Function`` (issue 35, class 12): PyTorch's errors, not AttributeErrors.

``backward`` returning something that is not a gradient (a number, a string, a list, a
numpy array), the wrong number of values or a tensor whose shape does not sum to the
input's; ``ctx.save_for_backward``, ``mark_non_differentiable`` and ``mark_dirty`` given
non-tensors. Messages as torch 2.x words them ("function FBackward returned an incorrect
number of gradients (expected 1, got 2)", "save_for_backward can only save variables, but
argument 0 is of type int", "Function FBackward returned an invalid gradient at index 0 -
got [2] but expected shape compatible with [3]"), each with the way out.
"""
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
from ember.autograd import Function


def _function(backward, forward_extra=None):
    """A Function ``F`` computing ``2 * x`` (of its first input) whose backward is
    ``backward(ctx, g)``; ``forward_extra(ctx, *inputs)`` runs inside forward."""
    class F(Function):
        @staticmethod
        def forward(ctx, *args):
            if forward_extra is not None:
                forward_extra(ctx, *args)
            return args[0] * 2

        @staticmethod
        def backward(ctx, g):
            return backward(ctx, g)
    return F


def _leaf(*shape):
    return E.ones(*shape, requires_grad=True)


@pytest.mark.parametrize("value", [2.0, 3, "a", [E.ones(3)], {"g": 1},
                                   np.ones(3, np.float32), np.float32(1.0), True, object()])
def test_backward_returning_a_non_tensor_names_index_and_type(value):
    F = _function(lambda ctx, g: value)
    x = _leaf(3)
    y = F.apply(x).sum()
    want = (f"function FBackward returned an invalid gradient at index 0 - expected Tensor "
            f"or None (got {type(value).__name__})")
    with pytest.raises(RuntimeError, match=re.escape(want)) as info:
        y.backward()
    assert "shape [3]" in str(info.value)
    assert x.grad is None


def test_the_index_is_the_input_position():
    F = _function(lambda ctx, g: (g, "x", None))
    x, w = _leaf(3), _leaf(3)
    with pytest.raises(RuntimeError, match=r"invalid gradient at index 1 - expected Tensor or "
                                           r"None \(got str\)"):
        F.apply(x, w, 5).sum().backward()


def test_a_number_for_a_non_tensor_input_is_a_type_error_too():
    # PyTorch checks the type first: "expected Variable or None (got float)"
    F = _function(lambda ctx, g: (g, 3.0))
    with pytest.raises(RuntimeError, match=r"index 1 - expected Tensor or None \(got float\); "
                                           r"return None"):
        F.apply(_leaf(3), 7).sum().backward()


def test_a_tensor_for_a_non_tensor_input_is_refused():
    F = _function(lambda ctx, g: (g, E.ones(1)))
    with pytest.raises(RuntimeError, match="returned a gradient different than None at "
                                           "position 2, but the corresponding forward input "
                                           "was not a Tensor"):
        F.apply(_leaf(3), 7).sum().backward()


@pytest.mark.parametrize("n_inputs, returned", [(1, 2), (1, 0), (2, 1), (2, 3), (3, 5)])
def test_wrong_number_of_gradients(n_inputs, returned):
    F = _function(lambda ctx, g: tuple(E.ones(3) for _ in range(returned)))
    args = [_leaf(3) for _ in range(n_inputs)]
    with pytest.raises(RuntimeError, match=re.escape(
            f"function FBackward returned an incorrect number of gradients (expected "
            f"{n_inputs}, got {returned})")):
        F.apply(*args).sum().backward()


def test_trailing_nones_are_allowed():
    F = _function(lambda ctx, g: (g, None, None))
    x = _leaf(3)
    F.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1, 1, 1])


_SHAPES = st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple)


def _expandable(shape, to):
    n = len(shape)
    return n <= len(to) and all(s == d or s == 1 for s, d in zip(shape, to[len(to) - n:]))


@settings(max_examples=60, deadline=None)
@given(input_shape=_SHAPES, grad_shape=_SHAPES)
def test_gradient_shape_must_sum_to_the_input(input_shape, grad_shape):
    """A gradient whose shape the input broadcasts to is summed down (as PyTorch); any
    other shape raises, naming the index and both shapes."""
    F = _function(lambda ctx, g: E.ones(*grad_shape))
    x = E.ones(*input_shape, requires_grad=True)
    y = F.apply(x).sum()
    if _expandable(input_shape, grad_shape):
        y.backward()
        assert tuple(x.grad.shape) == input_shape
        n = int(np.prod(grad_shape)) // max(int(np.prod(input_shape)), 1)
        np.testing.assert_allclose(x.grad.numpy(), np.full(input_shape, n, np.float32))
    else:
        with pytest.raises(RuntimeError, match=re.escape(
                f"Function FBackward returned an invalid gradient at index 0 - got "
                f"{list(grad_shape)} but expected shape compatible with "
                f"{list(input_shape)}")):
            y.backward()


def test_a_wrong_shape_for_an_input_that_needs_no_gradient_is_not_checked():
    # PyTorch validates only the edges that lead somewhere
    F = _function(lambda ctx, g: (g, E.ones(5)))
    x = _leaf(3)
    F.apply(x, E.ones(3)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1, 1, 1])


@pytest.mark.parametrize("dtype", [E.float64, E.int64, E.bool])
def test_another_dtype_is_cast_to_the_inputs(dtype):
    F = _function(lambda ctx, g: E.ones(3, dtype=dtype))
    x = _leaf(3)
    F.apply(x).sum().backward()
    assert x.grad.dtype == E.float32
    np.testing.assert_allclose(x.grad.numpy(), [1, 1, 1])


@pytest.mark.parametrize("value", [3, 2.5, "t", [1], (E.ones(1),)])
def test_save_for_backward_refuses_non_tensors(value):
    F = _function(lambda ctx, g: g, forward_extra=lambda ctx, x: ctx.save_for_backward(
        x, value) if not isinstance(value, tuple) else ctx.save_for_backward(value))
    index = 0 if isinstance(value, tuple) else 1
    with pytest.raises(TypeError, match=re.escape(
            f"save_for_backward can only save variables, but argument {index} is of type "
            f"{type(value).__name__}")):
        F.apply(_leaf(3))


def test_save_for_backward_takes_none_and_tensors():
    def extra(ctx, x):
        ctx.save_for_backward(None, x)

    F = _function(lambda ctx, g: g * ctx.saved_tensors[1], forward_extra=extra)
    x = _leaf(3)
    F.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1, 1, 1])


@pytest.mark.parametrize("mark, err, words", [
    ("mark_non_differentiable", RuntimeError,
     "mark_non_differentiable only accepts variable arguments"),
    ("mark_dirty", RuntimeError, "mark_dirty can only accept variables"),
])
@pytest.mark.parametrize("value", [3, None, "x", [1.0]])
def test_marks_refuse_non_tensors(mark, err, words, value):
    F = _function(lambda ctx, g: g, forward_extra=lambda ctx, x: getattr(ctx, mark)(value))
    with pytest.raises(err, match=re.escape(
            f"{words}, but argument 0 is of type {type(value).__name__}")):
        F.apply(_leaf(3))


def test_mark_dirty_of_a_tensor_is_still_not_implemented():
    F = _function(lambda ctx, g: g, forward_extra=lambda ctx, x: ctx.mark_dirty(x))
    with pytest.raises(NotImplementedError, match="in-place custom Functions"):
        F.apply(_leaf(3))


def test_mark_non_differentiable_of_an_output_still_works():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            y, idx = x * 2, E.arange(3)
            ctx.mark_non_differentiable(idx)
            return y, idx

        @staticmethod
        def backward(ctx, g, gi):
            return g

    x = _leaf(3)
    y, idx = F.apply(x)
    assert not idx.requires_grad
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1, 1, 1])
