"""Symbolics of the activations with parameters or several branches: ``selu``, ``celu``,
``threshold``, ``prelu``, ``hardsigmoid``, ``hardswish``, ``softsign``, ``softplus``,
``mish``, ``log_sigmoid`` and ``glu`` (the simple ones, ``relu`` ... ``relu6``, are in
``unary.py``). Each traces as one ``ember::<name>`` node (a composite).

Mapping (ONNX operators, https://onnx.ai/onnx/operators/): the ONNX op in float32, where
its float attributes are the constants ember multiplies by and onnxruntime has the
kernel; other floating dtypes compose ember's own formula in their dtype (``softplus``
and ``mish`` in float32 for float16/bfloat16, as ember computes them):

* ``selu`` -> Selu; ``celu`` -> Celu (opset 12); ``hardsigmoid`` -> HardSigmoid
  (alpha = 1/6, beta = 1/2); ``hardswish`` -> HardSwish (opset 14; below, composed) with
  a Where for x <= -3 (HardSwish(-inf) is NaN, ember's 0);
  ``softsign`` -> Softsign; ``mish`` -> Mish (opset 18; below, ``x * Tanh(softplus(x))``);
  ``prelu`` -> PRelu with the weight shaped (C, 1, ..., 1).
* ``softplus`` -> Softplus only when beta == 1 and the threshold branch cannot change a
  float32 result (log1p(exp(-threshold)) is below half an ulp of threshold: threshold
  >= ~15); else ember's ``Where(beta x > threshold, x, log1p(exp(min(beta x,
  threshold))) / beta)`` with ``unary.log1p``.
* ``log_sigmoid``: ``-log1p_exp(-x)`` as ember (accurate at both ends, no overflow);
  ``threshold``: ``Where(x <= threshold, value, x)`` (NaN stays NaN; ONNX's
  ThresholdedRelu differs); ``glu``: two Slices (Split of a dynamic dim), Sigmoid, Mul.

Departures: the ONNX ops compute ``exp(x) - 1`` where ember computes ``expm1`` and
``x * (1/6)`` where ember divides by 6 (absolute errors near 1e-7 in float32).

Reference: PyTorch's ``torch/onnx/symbolic_opset9.py`` ... ``symbolic_opset18.py`` (the
mapping; own code); Klambauer et al. 2017 (SELU), Barron 2017 (CELU), Howard et al. 2019
(hard swish), Misra 2019 (mish), Dauphin et al. 2017 (GLU), He et al. 2015 (PReLU).
"""
from __future__ import annotations

import math

import numpy as np

from ... import types as _t
from ..registry import builtin
from ._operands import _as, _bool, _common, _node, _op, _out, _unary
from ._shapes import _norm
from .slicing import chunk
from .unary import elu, expm1, log1p

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _scalar(g, x, v):
    return g.scalar(v, dtype=x.dtype)


def _where(g, cond, a, b):
    return _node(g, "Where", cond, a, b, dtype=b.dtype)


@builtin("ember::selu")
def selu(g, x):
    """Selu in float32; other dtypes scale * elu(x, alpha) as ember."""
    if x.dtype is _t.float32:
        return _op(g, "Selu", x, alpha=_SELU_ALPHA, gamma=_SELU_SCALE)
    return _op(g, "Mul", g.cast(elu(g, x, _SELU_ALPHA), x.dtype), _scalar(g, x, _SELU_SCALE))


@builtin("ember::celu")
def celu(g, x, alpha=1.0):
    """Celu in float32; other dtypes Where(x > 0, x, expm1(min(x, 0) / alpha) * alpha)."""
    if alpha == 0:
        g.fail("celu: alpha cannot be 0; pass a non-zero alpha, e.g. 1.0")
    if x.dtype is _t.float32:
        return _op(g, "Celu", x, alpha=float(alpha))
    scaled = _op(g, "Div", _op(g, "Min", x, _scalar(g, x, 0)), _scalar(g, x, alpha))
    neg = _op(g, "Mul", g.cast(expm1(g, scaled), x.dtype), _scalar(g, x, alpha))
    return _where(g, _bool(g, "Greater", x, _scalar(g, x, 0)), x, neg)


@builtin("ember::threshold")
def threshold(g, x, threshold, value):
    """Where(x <= threshold, value, x); the comparison in the promoted dtype, value cast
    to x's dtype (truncated for integers), as ember's masked_fill."""
    dt = _common(x, threshold)
    below = _bool(g, "LessOrEqual", g.cast(x, dt), _as(g, threshold, dt))
    return _where(g, below, _scalar(g, x, value), x)


@builtin("ember::prelu")
def prelu(g, x, weight):
    """PRelu in float32 (its slope broadcast from (C, 1, ..., 1), or a scalar); other
    dtypes Where(x > 0, x, x * w)."""
    n = int(np.prod(weight.sizes)) if weight.sizes is not None else 1
    shape = [] if n == 1 else [n] + [1] * (x.rank - 2)
    w = weight
    if weight.sizes is None or list(weight.sizes) != shape:
        w = g.op("Reshape", weight, g.ints(shape), dtype=weight.dtype)
    if x.dtype is _t.float32:
        return g.op("PRelu", x, w, dtype=x.dtype)
    return _where(g, _bool(g, "Greater", x, _scalar(g, x, 0)), x, _op(g, "Mul", x, w))


@builtin("ember::hardsigmoid")
def hardsigmoid(g, x):
    """HardSigmoid(1/6, 1/2) in float32; other dtypes ember's
    Where(x <= -3, 0, Where(x >= 3, 1, x / 6 + 1/2))."""
    if x.dtype is _t.float32:
        return _op(g, "HardSigmoid", x, alpha=1 / 6, beta=0.5)
    mid = _op(g, "Add", _op(g, "Div", x, _scalar(g, x, 6)), _scalar(g, x, 0.5))
    r = _where(g, _bool(g, "GreaterOrEqual", x, _scalar(g, x, 3)), _scalar(g, x, 1), mid)
    return _where(g, _bool(g, "LessOrEqual", x, _scalar(g, x, -3)), _scalar(g, x, 0), r)


def _hardswish_composed(g, x):
    """ember's Where(x <= -3, 0, Where(x < 3, x * (x + 3) / 6, x))."""
    mid = _op(g, "Div", _op(g, "Mul", x, _op(g, "Add", x, _scalar(g, x, 3))), _scalar(g, x, 6))
    r = _where(g, _bool(g, "Less", x, _scalar(g, x, 3)), mid, x)
    return _where(g, _bool(g, "LessOrEqual", x, _scalar(g, x, -3)), _scalar(g, x, 0), r)


@builtin("ember::hardswish")
def hardswish(g, x):
    """Composed below opset 14 (no HardSwish op)."""
    return _hardswish_composed(g, x)


@builtin("ember::hardswish", opset=14)
def hardswish14(g, x):
    """HardSwish in float32, 0 where x <= -3 (HardSwish(-inf) is -inf * 0 = NaN, ember's
    0); other dtypes composed."""
    if x.dtype is _t.float32:
        low = _bool(g, "LessOrEqual", x, _scalar(g, x, -3))
        return _where(g, low, _scalar(g, x, 0), _op(g, "HardSwish", x))
    return _hardswish_composed(g, x)


@builtin("ember::softsign")
def softsign(g, x):
    """Softsign in float32; other dtypes x / (1 + |x|) (integers in the output's float
    dtype)."""
    x = g.cast(x, _out(g, x))
    if x.dtype is _t.float32:
        return _op(g, "Softsign", x)
    return _op(g, "Div", x, _op(g, "Add", _unary(g, "Abs", x), _scalar(g, x, 1)))


def _softplus_is_exact(dtype, beta, threshold) -> bool:
    """Whether ONNX Softplus gives ember's softplus: beta == 1, float32, and above
    threshold log(1 + exp(x)) rounds to x (the branch ember takes there)."""
    if beta != 1 or dtype is not _t.float32 or threshold <= 0:
        return False
    return math.log1p(math.exp(-threshold)) < 0.5 * float(np.spacing(np.float32(threshold)))


def _softplus_composed(g, x, beta, threshold):
    z = x if beta == 1 else _op(g, "Mul", x, _scalar(g, x, beta))
    sp = g.cast(log1p(g, _unary(g, "Exp", _op(g, "Min", z, _scalar(g, z, threshold)))),
                x.dtype)
    if beta != 1:
        sp = _op(g, "Div", sp, _scalar(g, x, beta))
    return _where(g, _bool(g, "Greater", z, _scalar(g, z, threshold)), x, sp)


_HALF = (_t.float16, _t.bfloat16)


def _in_float32(g, x, build):
    """``build(g, x)`` computed in float32 for a float16/bfloat16 ``x`` and cast back, as
    ember's softplus and mish compute them (float16's exp overflows from 11.1)."""
    if x.dtype not in _HALF:
        return build(g, x)
    return g.cast(build(g, g.cast(x, _t.float32)), x.dtype)


@builtin("ember::softplus")
def softplus(g, x, beta=1, threshold=20):
    """Softplus where it equals ember's (see the module docstring), else composed."""
    def build(g, x):
        if _softplus_is_exact(x.dtype, beta, threshold):
            return _op(g, "Softplus", x)
        return _softplus_composed(g, x, beta, threshold)
    return _in_float32(g, x, build)


def _mish_composed(g, x):
    return _op(g, "Mul", x, _unary(g, "Tanh", _softplus_composed(g, x, 1, 20)))


@builtin("ember::mish")
def mish(g, x):
    """x * Tanh(softplus(x)) below opset 18."""
    return _in_float32(g, x, _mish_composed)


@builtin("ember::mish", opset=18)
def mish18(g, x):
    """Mish in float32; float64 composed."""
    return _in_float32(g, x, lambda g, x: _op(g, "Mish", x) if x.dtype is _t.float32
                       else _mish_composed(g, x))


@builtin("ember::log_sigmoid")
def log_sigmoid(g, x):
    """-log1p_exp(-x), with log1p_exp(z) = Where(z > 0, z + log1p(exp(-max(z, 0))),
    log1p(exp(min(z, 0)))): ember's formula (log_sigmoid(50) = -1.9e-22, not 0)."""
    z = _unary(g, "Neg", x)
    zero = _scalar(g, x, 0)
    pos = _op(g, "Add", z, g.cast(log1p(g, _unary(g, "Exp", _unary(g, "Neg", _op(
        g, "Max", z, zero)))), x.dtype))
    neg = g.cast(log1p(g, _unary(g, "Exp", _op(g, "Min", z, zero))), x.dtype)
    return _unary(g, "Neg", _where(g, _bool(g, "Greater", z, zero), pos, neg))


@builtin("ember::glu")
def glu(g, x, dim=-1):
    """a * Sigmoid(b), a and b the halves of x along dim (slicing.chunk's pieces)."""
    a, b = chunk(g, x, 2, _norm(dim, x.rank))
    return _op(g, "Mul", a, _unary(g, "Sigmoid", b))
