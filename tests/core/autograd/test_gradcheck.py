"""``gradcheck`` / ``gradgradcheck`` themselves (``ember/autograd/gradcheck.py``): they
pass on correct functions, and catch deliberately wrong custom Function backwards (first
and second order), naming the worst element. Follows ``torch.autograd.gradcheck``."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
from ember.autograd import Function, GradcheckError, gradcheck, gradgradcheck
from core.autograd.test_custom_function import times_two
from helpers import assert_close

RNG = np.random.default_rng(0)


def leaf(shape=(4,), seed=0, low=0.3, high=1.5):
    arr = np.random.default_rng(seed).uniform(low, high, shape)
    return E.tensor(arr, dtype=E.float64, requires_grad=True)


def scaled(bump: np.ndarray):
    """A Function computing ``2 x`` whose backward is off by ``bump`` (per element)."""
    class Scaled(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            return g * E.tensor(2.0 + bump)
    return Scaled


class Square(Function):
    """x * x with a correct first derivative; ``mode`` picks what backward gets wrong."""

    @staticmethod
    def forward(ctx, x, mode):
        ctx.save_for_backward(x)
        ctx.mode = mode
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        if ctx.mode == "detach_x":       # second derivative w.r.t. x is lost
            return 2.0 * g * x.detach(), None
        if ctx.mode == "detach_g":       # derivative w.r.t. grad_output is lost
            return 2.0 * g.detach() * x, None
        if ctx.mode == "slope":          # right value (the extra term is 0), wrong slope
            return 2.0 * g * x + 5.0 * g * (x - x.detach()), None
        return 2.0 * g * x, None


# --- passes on correct functions ---------------------------------------------------------------

@pytest.mark.parametrize("fn, shapes", [
    (lambda x: x.exp(), [(3,)]),
    (lambda x: (x * x).sum(), [(2, 3)]),
    (lambda x, y: x * y + x.sin(), [(2, 3), (3,)]),
    (lambda x, y: x @ y, [(2, 3), (3, 2)]),
    (lambda x: x.transpose(0, 1).reshape(6)[1:4], [(2, 3)]),
    (lambda x: (x.exp(), x.sum()), [(3,)]),       # several outputs
    (lambda x, y: x / y, [(3,), (3,)]),
])
def test_gradcheck_passes_on_correct_functions(fn, shapes):
    inputs = tuple(leaf(s, seed=i) for i, s in enumerate(shapes))
    assert gradcheck(fn, inputs) is True
    assert gradgradcheck(fn, inputs) is True


@pytest.mark.parametrize("fn", [
    lambda x: x,
    lambda x: x[0],
    lambda x: x.transpose(0, 1),
    lambda x: x.view(6),
    lambda x: (x.detach(), x[1:]),              # an output not requiring grad, and a view
], ids=["identity", "select", "transpose", "view", "detached_and_view"])
def test_gradcheck_on_outputs_that_alias_inputs(fn):
    # outputs that are views of an input must not follow the finite-difference steps
    x = leaf((2, 3))
    if fn(x).__class__ is tuple:
        with pytest.raises(GradcheckError, match="numerical 1 vs analytical 0"):
            gradcheck(fn, (x,))
    else:
        assert gradcheck(fn, (x,))
        assert gradgradcheck(fn, (x,))


def test_gradcheck_accepts_single_tensor_and_non_tensor_arguments():
    x = leaf()
    assert gradcheck(lambda t: t.exp(), x)
    assert gradcheck(lambda t, k, name: t ** k, (x, 3, "ignored"))


def test_gradcheck_skips_inputs_not_requiring_grad_and_integral_outputs():
    x, c = leaf(), E.tensor([1.0, 2.0, 3.0, 4.0], dtype=E.float64)
    assert gradcheck(lambda a, b: (a * b, a.argmax()), (x, c))


def test_gradcheck_leaves_inputs_and_grads_untouched():
    x = leaf()
    before = x.detach().clone()
    gradcheck(lambda t: t.sin() * t, (x,))
    assert x.grad is None
    assert_close(x.detach(), before.numpy())


def test_gradcheck_on_custom_function():
    assert gradcheck(lambda t: Square.apply(t, "right"), (leaf(),))


# --- catches wrong first derivatives -----------------------------------------------------------

def test_wrong_backward_raises_naming_worst_element():
    bump = np.array([0.0, 0.01, 0.5, -0.1])
    with pytest.raises(GradcheckError, match=r"Jacobian mismatch for output 0 with respect to "
                                             r"input 0: worst element \(output element 2, "
                                             r"input element 2\) numerical 2 vs analytical "
                                             r"2\.5"):
        gradcheck(scaled(bump).apply, (leaf(),))


def test_gradcheck_error_is_a_runtime_error():
    assert issubclass(GradcheckError, RuntimeError)


def test_raise_exception_false_returns_false():
    bad = scaled(np.array([0.0, 0.0, 0.0, 1.0]))
    assert gradcheck(bad.apply, (leaf(),), raise_exception=False) is False
    good = scaled(np.zeros(4))
    assert gradcheck(good.apply, (leaf(),), raise_exception=False) is True


def test_names_the_wrong_input_of_several():
    class Mul(Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, g):
            _, y = ctx.saved_tensors
            return g * y, g * y     # second one should be g * x

    with pytest.raises(GradcheckError, match="with respect to input 1"):
        gradcheck(Mul.apply, (leaf(seed=1), leaf(seed=2)))


def test_names_the_wrong_output_of_several():
    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0, x * 3.0

        @staticmethod
        def backward(ctx, ga, gb):
            return ga * 2.0 + gb * 4.0

    with pytest.raises(GradcheckError, match="for output 1 with respect to input 0"):
        gradcheck(Two.apply, (leaf(),))


def test_catches_a_detached_forward():
    x = leaf()
    worst = 2 * x.detach().numpy()[0]      # d(x * x)/dx = 2x; autograd sees only x
    with pytest.raises(GradcheckError, match=rf"element 0, input element 0\) numerical "
                                             rf"{worst:.6g} vs analytical {worst / 2:.6g}"):
        gradcheck(lambda t: t * t.detach(), (x,))


@pytest.mark.parametrize("rtol, ok", [(1e-3, True), (1e-6, False)])
def test_tolerance_is_respected(rtol, ok):
    small = scaled(np.full(4, 1e-5))   # 2.00001 vs 2: relative error 5e-6
    assert gradcheck(small.apply, (leaf(),), atol=0.0, rtol=rtol,
                     raise_exception=False) is ok


def test_no_input_requiring_grad_raises():
    with pytest.raises(ValueError, match="at least one input tensor with requires_grad=True"):
        gradcheck(lambda t: t * 2.0, (E.tensor([1.0, 2.0], dtype=E.float64),))


def test_wrong_gradient_shape_is_reported():
    Flat = times_two(lambda ctx, g: (g * 2.0).sum(0), "Flat")  # (3,) for a (2, 3) input

    with pytest.raises(RuntimeError, match=r"FlatBackward returned an invalid gradient at "
                                           r"index 0 - got \[3\] but expected shape "
                                           r"compatible with \[2, 3\]"):
        gradcheck(Flat.apply, (leaf((2, 3)),))


# --- gradgradcheck ------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["detach_x", "detach_g", "slope"])
def test_gradgradcheck_catches_wrong_double_backward(mode):
    x = leaf()
    f = lambda t: Square.apply(t, mode)      # noqa: E731
    assert gradcheck(f, (x,))                # first derivatives are right
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradgradcheck(f, (x,))
    assert gradgradcheck(f, (x,), raise_exception=False) is False


def test_gradgradcheck_passes_on_right_double_backward():
    assert gradgradcheck(lambda t: Square.apply(t, "right"), (leaf(),))


def test_gradgradcheck_with_explicit_grad_outputs():
    x = leaf((2, 3))
    go = E.tensor(RNG.standard_normal((2, 3)), dtype=E.float64, requires_grad=True)
    assert gradgradcheck(lambda t: t.sin() * t, (x,), (go,))
    with pytest.raises(GradcheckError):
        gradgradcheck(lambda t: Square.apply(t, "detach_x"), (leaf((2, 3)),), (go,))
