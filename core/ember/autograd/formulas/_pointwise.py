"""Backward helpers of pointwise ops: ``pow`` (w.r.t. the base and the exponent),
``gelu``, ``silu``, ``clamp`` (w.r.t. the input and each bound), ``maximum``/``minimum``,
``atan2``, and ``isfinite`` written with ember ops.
"""
from __future__ import annotations

import math

from ...ops import namespace as E


def pow_backward_self(grad, self, exponent):
    """``d/dx x^e = e x^(e-1)`` (0 where ``e == 0``, as PyTorch).

    NOTE: the JIT lowers this source (``jit.symbolic_formulas.HELPERS``), so it is written
    with pointwise ops only: ``where(grad < grad, grad, 0.0)`` is ``zeros_like(grad)``
    (the test is False for NaN too; the zeros take grad's dtype)."""
    if not isinstance(exponent, E.Tensor):
        if exponent == 0:
            return E.where(grad < grad, grad, 0.0)
        return grad * exponent * self.pow(exponent - 1)
    return E.where(exponent == 0, 0.0, grad * exponent * self.pow(exponent - 1))


def pow_backward_exponent(grad, self, exponent, result):
    """``d/de x^e = x^e log x`` (0 where ``x == 0`` and ``e >= 0``, as PyTorch). The JIT
    lowers this source for a tensor base (``jit.symbolic_formulas.HELPERS``)."""
    if not isinstance(self, E.Tensor):
        self = E.tensor(self, dtype=result.dtype, device=result.device)
    cond = (self == 0) & (exponent >= 0)
    return E.where(cond, 0.0, grad * result * self.log())


def gelu_backward(grad, self, approximate):
    """GELU's derivative, exact (erf) or tanh-approximated (Hendrycks & Gimpel, 2016)."""
    if approximate == "tanh":
        k = math.sqrt(2.0 / math.pi)
        inner = k * (self + 0.044715 * self.pow(3))
        t = inner.tanh()
        d_inner = k * (1 + 3 * 0.044715 * self * self)
        return grad * (0.5 * (1 + t) + 0.5 * self * (1 - t * t) * d_inner)
    cdf = 0.5 * (1 + (self * (1 / math.sqrt(2.0))).erf())
    pdf = (-0.5 * self * self).exp() * (1 / math.sqrt(2 * math.pi))
    return grad * (cdf + self * pdf)


def silu_backward(grad, self):
    """``silu(x) = x sigmoid(x)``: ``s (1 + x (1 - s))``."""
    s = self.sigmoid()
    return grad * s * (1 + self * (1 - s))


def clamp_backward(grad, self, min, max):  # noqa: A002 - the op's argument names
    """``clamp``: the gradient where ``min <= self <= max``, 0 elsewhere (the forward
    raises when both are None). The JIT lowers this source (``HELPERS``)."""
    if min is None:
        return E.where(self <= max, grad, 0.0)
    if max is None:
        return E.where(self >= min, grad, 0.0)
    return E.where((self >= min) & (self <= max), grad, 0.0)


def clamp_backward_min(grad, self, min, max):  # noqa: A002
    """``clamp`` w.r.t. ``min``: the gradient where ``min`` was chosen (never when ``min >=
    max``: ``max`` wins that tie, as in PyTorch). The JIT lowers this source."""
    mask = self < min
    if max is not None:
        mask = mask & (min < max)
    return E.where(mask, grad, 0.0)


def clamp_backward_max(grad, self, min, max):  # noqa: A002
    """``clamp`` w.r.t. ``max``: the gradient where ``max`` was chosen (it wins ties with
    ``min``, as in PyTorch). The JIT lowers this source."""
    mask = self > max
    if min is not None:
        mask = mask | (min > max)
    return E.where(mask, grad, 0.0)


def isfinite(x):
    """Elementwise ``isfinite`` from ember ops."""
    return (x == x) & (x.abs() != math.inf)  # noqa: PLR0124 - false for NaN


def maximum_backward(grad, self, other):
    """``maximum(self, other)`` w.r.t. ``self``: ties split the gradient in half; a NaN on
    either side (NaN propagates) passes it to both, as PyTorch."""
    return E.where(self == other, grad / 2, E.where(self < other, 0.0, grad))


def minimum_backward(grad, self, other):
    """``minimum(self, other)`` w.r.t. ``self``: as ``maximum_backward``, mirrored."""
    return E.where(self == other, grad / 2, E.where(self > other, 0.0, grad))


def atan2_backward(grad, self, other):
    """``atan2(self, other)``: ``(other, -self) / (self^2 + other^2)``; 0 at the origin,
    as PyTorch (the angle has no derivative there)."""
    denom = self * self + other * other
    zero = denom == 0
    scale = grad / E.where(zero, 1.0, denom)
    return E.where(zero, 0.0, scale * other), E.where(zero, 0.0, -scale * self)


def logit_backward(grad, self, eps):
    """``logit``: ``1 / (x (1 - x))``; with ``eps``, 0 outside [eps, 1 - eps] (where the
    forward clamped), without it NaN outside [0, 1], as PyTorch's logit_backward."""
    g = grad / (self * (1 - self))
    if eps is None:
        return E.where((self < 0) | (self > 1), math.nan, g)
    return E.where((self < eps) | (self > 1 - eps), 0.0, g)


def xlogy_backward_self(grad, self, other):
    """``xlogy`` w.r.t. ``self``: ``log(other)``; 0 where ``self == 0`` and ``other <= 0``
    (where ``xlogy`` is the constant 0), NaN where ``other`` is (PyTorch 2.x's
    ``grad * xlogy((self != 0) | (other > 0), other)``: the older rule also masked
    ``other > 0``, zeroing e.g. a Gamma log-density's gradient at concentration 1)."""
    return grad * E.xlogy(((self != 0) | (other > 0)).to(grad.dtype), other)


def copysign_backward_self(grad, self, result):
    """``copysign`` w.r.t. ``self``: ``sign(result) * sign(self)``, 0 at ``self == 0``."""
    return E.where(self == 0, 0.0, grad * result / self)


def fmax_fmin_backward(grad, self, other, is_max):
    """``fmax``/``fmin``: the whole gradient to the operand the result came from; ties and
    a NaN ``other`` go to ``self``, as PyTorch."""
    picked = self >= other if is_max else self <= other
    if not isinstance(other, E.Tensor):
        if other != other:  # noqa: PLR0124 - a NaN number: self is always the result
            return grad, None
        return E.where(picked, grad, 0.0), None
    picked = picked | (other != other)  # noqa: PLR0124
    return E.where(picked, grad, 0.0), E.where(picked, 0.0, grad)
