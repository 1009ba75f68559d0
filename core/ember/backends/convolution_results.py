"""What the convolution dispatcher checks in an algorithm's results before it trusts them.

The dispatcher (``convolution.py``) knows what a call must return before any algorithm
runs: ``ConvParams.output_shape`` for the forward; ``input_shape``, ``weight_shape`` and
``(out_channels,)`` for the three gradients of the backward; the input's dtype for all of
them; the backend's ``array_type``. An algorithm (plugin code) that returns anything else -
a list, None, another shape or dtype - would otherwise hand autograd a wrong result
silently (the seeds' ``at::_convolution`` likewise checks its output with
``check_output_size``). ``Checked`` wraps an algorithm so each of its calls is checked
against the ``ConvParams`` it was given, also per group when the dispatcher splits groups;
a bad result raises ``BadResult``, which the dispatcher turns into a fallback.
"""
from __future__ import annotations

__all__ = ["BadResult", "Checked", "array_problem", "backward_problem"]

GRADS = ("grad_input", "grad_weight", "grad_bias")


class BadResult(Exception):
    """An algorithm returned something that is not the result it was asked for; the message
    says what it returned and what was expected (caught by the dispatcher)."""


def _type_name(t) -> str:
    return f"{t.__module__.split('.')[0]}.{t.__qualname__}"


def array_problem(value, array_type, shape: tuple, dtype) -> str | None:
    """How ``value`` differs from a ``shape`` array of ``dtype`` of ``array_type``, or None
    when it is one."""
    if value is None:
        return f"None, expected a {_type_name(array_type)} of shape {shape}"
    if not isinstance(value, array_type):
        return (f"a {type(value).__name__}, expected a {_type_name(array_type)} of shape "
                f"{shape}")
    if tuple(value.shape) != tuple(shape):
        return f"shape {tuple(value.shape)}, expected {tuple(shape)}"
    if value.dtype != dtype:
        return f"dtype {value.dtype}, expected {dtype} (the input's)"
    return None


def backward_problem(got, array_type, params, dtype, output_mask) -> str | None:
    """How a backward's result differs from ``(grad_input, grad_weight, grad_bias)`` of
    ``params``' shapes in ``dtype`` (None allowed only where ``output_mask`` is False)."""
    if not isinstance(got, (tuple, list)) or len(got) != 3:
        what = f"{len(got)} values" if isinstance(got, (tuple, list)) else \
            f"a {type(got).__name__}"
        return f"{what}, expected a tuple (grad_input, grad_weight, grad_bias)"
    shapes = (params.input_shape, params.weight_shape, (params.out_channels,))
    for name, value, shape, wanted in zip(GRADS, got, shapes, output_mask):
        if value is None and not wanted:
            continue
        why = array_problem(value, array_type, shape, dtype)
        if why is not None:
            return f"{why} for {name}"
    return None


class Checked:
    """``algo`` with its ``forward`` and ``backward`` results checked against the params of
    each call; raises BadResult naming the direction and what was wrong."""

    __slots__ = ("algo", "array_type", "dtype", "name", "supports_groups")

    def __init__(self, algo, array_type, dtype):
        self.algo, self.array_type, self.dtype = algo, array_type, dtype
        self.name, self.supports_groups = algo.name, algo.supports_groups

    def forward(self, input, weight, bias, params):
        out = self.algo.forward(input, weight, bias, params)
        why = array_problem(out, self.array_type, params.output_shape, self.dtype)
        if why is not None:
            raise BadResult(f"its forward returned {why}")
        return out

    def backward(self, grad_output, input, weight, params, output_mask):
        got = self.algo.backward(grad_output, input, weight, params, output_mask)
        why = backward_problem(got, self.array_type, params, self.dtype, output_mask)
        if why is not None:
            raise BadResult(f"its backward returned {why}")
        return tuple(got)
