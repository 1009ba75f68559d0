"""Symbolics of ember's unary elementwise ops: math (``exp``, ``exp2``, ``expm1``,
``log``, ``log2``, ``log10``, ``log1p``, ``sqrt``, ``rsqrt``, ``reciprocal``, ``square``,
trigonometric and (inverse) hyperbolic functions, ``erf``, ``erfc``, ``abs``, ``neg``,
``sign``), rounding (``floor``, ``ceil``, ``trunc``, ``round``), activations (``relu``,
``sigmoid``, ``tanh``, ``silu``, ``gelu``, and with parameters ``leaky_relu``, ``elu``,
``hardtanh``, ``relu6``; the others are in ``activation.py``), ``clamp`` and
``nan_to_num``.

Type promotion, float16/bfloat16 and in-place variants: see ``_operands.py``.

ONNX ops: Abs, Neg, Sign, Exp, Log, Sqrt, Reciprocal, Sin/Cos/Tan, Asin/Acos/Atan,
Sinh/Cosh, Asinh/Acosh/Atanh, Tanh, Sigmoid, Relu, LeakyRelu, Elu, Gelu (opset 20), Erf,
Floor, Ceil, Round, Clip, IsNaN, IsInf.

Compositions where ONNX has no op, or its op differs from ember's:

* ``trunc`` and ``div(rounding_mode='trunc')`` on floats: ``Where(x < 0, Ceil, Floor)``.
* ``log1p`` / ``expm1`` keep full relative precision near 0 (Goldberg's
  ``log(u) * x / (u - 1)`` with ``u = 1 + x``, Kahan's ``(u - 1) * x / log(u)`` with
  ``u = exp(x)``), ``log2`` / ``log10`` divide ``Log`` by ln 2 / ln 10, ``exp2`` is
  ``Pow(2, x)``.
* ``erfc`` is ``1 - Erf(x)`` (ONNX has no Erfc), ``square`` is ``Mul(x, x)``.
* ``sign`` gives 0 for NaN, as ember (ONNX Sign gives NaN); ``nan_to_num`` is
  IsNaN/IsInf + Where.
* ``gelu``: the Gelu op from opset 20; below, ``0.5 * x * (1 + Erf(x / sqrt 2))`` or
  ``0.5 * x * (1 + Tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))``.
* ``leaky_relu`` / ``elu`` use the ONNX ops in float32, whose float attribute holds the
  slope exactly; other floating dtypes compose them in their own dtype.
* ``clamp`` with two number bounds is Clip; with one, Max or Min (Clip's missing bound
  is the dtype's largest finite value, which would clip inf).

Departures: ``elu`` in float32 uses ``exp(x) - 1`` (an absolute error below
1.2e-7 * alpha near 0); ``erfc`` as ``1 - Erf`` keeps an absolute, not a relative,
precision (float32: erfc(4) = 1.5e-8 comes out as 0 or 6e-8).

References: the ONNX operator specifications (https://onnx.ai/onnx/operators/); PyTorch's
``torch/onnx/symbolic_opset9.py`` ... ``symbolic_opset20.py`` as the reference mapping;
D. Goldberg, "What every computer scientist should know about floating-point arithmetic"
(1991), theorem 4 (log1p); W. Kahan's expm1 trick.
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from ... import types as _t
from ..context import OnnxValue
from ..registry import builtin
from ._operands import (_as, _bool, _extremum, _node, _op, _opmath, _out, _trunc, _unary)


# ---- unary ----

_FLOAT_UNARY = {
    "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "sin": "Sin", "cos": "Cos", "tan": "Tan",
    "asin": "Asin", "acos": "Acos", "atan": "Atan", "sinh": "Sinh", "cosh": "Cosh",
    "tanh": "Tanh", "sigmoid": "Sigmoid", "erf": "Erf", "reciprocal": "Reciprocal",
    "asinh": "Asinh", "acosh": "Acosh", "atanh": "Atanh",
}


def _float_unary(op_type):
    def symbolic(g, x):
        dt = _out(g, x)
        return _unary(g, op_type, g.cast(x, dt))
    symbolic.__name__ = op_type.lower()
    symbolic.__doc__ = f"ONNX {op_type}; integral inputs computed in the output's float dtype."
    return symbolic


for _name, _op_type in _FLOAT_UNARY.items():
    builtin(f"ember::{_name}")(_float_unary(_op_type))


def _float_in(g, x):
    """x cast to the output dtype's opmath type, and the output dtype."""
    dt = _out(g, x)
    return g.cast(x, _opmath(dt)), dt


@builtin("ember::exp2")
def exp2(g, x):
    x, dt = _float_in(g, x)
    return g.cast(_op(g, "Pow", g.scalar(2, dtype=x.dtype), x), dt)


def _log_base(g, x, base):
    x, dt = _float_in(g, x)
    return g.cast(_op(g, "Div", _unary(g, "Log", x), g.scalar(math.log(base), dtype=x.dtype)), dt)


@builtin("ember::log2")
def log2(g, x):
    return _log_base(g, x, 2)


@builtin("ember::log10")
def log10(g, x):
    return _log_base(g, x, 10)


@builtin("ember::log1p")
def log1p(g, x):
    """log(1 + x) accurate near 0: with u = 1 + x, x where u == 1, else
    log(u) * (x / (u - 1)) (Goldberg); +inf stays +inf."""
    x, dt = _float_in(g, x)
    ct = x.dtype
    u = _op(g, "Add", g.scalar(1, dtype=ct), x)
    d = _op(g, "Sub", u, g.scalar(1, dtype=ct))
    r = _op(g, "Mul", _unary(g, "Log", u), _op(g, "Div", x, d))
    r = _node(g, "Where", _bool(g, "Equal", d, g.scalar(0, dtype=ct)), x, r, dtype=ct)
    r = _node(g, "Where", _unary(g, "IsInf", x, _t.bool_, detect_negative=0), x, r, dtype=ct)
    return g.cast(r, dt)


@builtin("ember::expm1")
def expm1(g, x):
    """exp(x) - 1 accurate near 0: with u = exp(x), x where u == 1, -1 where u - 1 == -1,
    else (u - 1) * (x / log(u)) (Kahan); +inf stays +inf."""
    x, dt = _float_in(g, x)
    ct = x.dtype
    u = _unary(g, "Exp", x)
    um1 = _op(g, "Sub", u, g.scalar(1, dtype=ct))
    r = _op(g, "Mul", um1, _op(g, "Div", x, _unary(g, "Log", u)))
    r = _node(g, "Where", _unary(g, "IsInf", u, _t.bool_, detect_negative=0), u, r, dtype=ct)
    minus_one = g.scalar(-1, dtype=ct)
    r = _node(g, "Where", _bool(g, "Equal", um1, minus_one), minus_one, r, dtype=ct)
    r = _node(g, "Where", _bool(g, "Equal", u, g.scalar(1, dtype=ct)), x, r, dtype=ct)
    return g.cast(r, dt)


@builtin("ember::erfc")
def erfc(g, x):
    """1 - Erf(x) (ONNX has no Erfc): an absolute error of Erf's, near 1e-7 in float32,
    where ember keeps erfc's relative precision in the tail (erfc(5) = 1.5e-12)."""
    x, dt = _float_in(g, x)
    return g.cast(_op(g, "Sub", g.scalar(1, dtype=x.dtype), _unary(g, "Erf", x)), dt)


@builtin("ember::square")
def square(g, x):
    """Mul(x, x) in the output dtype (bool squares as int64, as ember)."""
    x = g.cast(x, _out(g, x))
    return _op(g, "Mul", x, x)


@builtin("ember::rsqrt")
def rsqrt(g, x):
    """1 / sqrt(x), as ember computes it."""
    x, dt = _float_in(g, x)
    return g.cast(_unary(g, "Reciprocal", _unary(g, "Sqrt", x)), dt)


@builtin("ember::abs")
def abs_(g, x):
    return _unary(g, "Abs", x)


@builtin("ember::neg")
def neg(g, x):
    """Neg; uint8 (which Neg does not take) as 0 - x, wrapping as ember."""
    if x.dtype is _t.uint8:
        return _op(g, "Sub", g.scalar(0, dtype=x.dtype), x)
    return _unary(g, "Neg", x)


@builtin("ember::positive")
def positive(g, x):
    return x


@builtin("ember::sign")
def sign(g, x):
    """Sign; bool is returned as is, NaN gives 0 as in ember (ONNX Sign gives NaN)."""
    if x.dtype is _t.bool_:
        return x
    s = _unary(g, "Sign", x)
    if not x.dtype.is_floating_point:
        return s
    nan = _unary(g, "IsNaN", x, _t.bool_)
    return _node(g, "Where", nan, g.scalar(0, dtype=x.dtype), s, dtype=x.dtype)


@builtin("ember::relu")
def relu(g, x):
    """Relu on floats; Max(x, 0) on integers (onnxruntime's Relu lacks int64)."""
    if x.dtype.is_floating_point:
        return _unary(g, "Relu", x)
    return _op(g, "Max", x, g.scalar(0, dtype=x.dtype))


@builtin("ember::silu")
def silu(g, x):
    x, dt = _float_in(g, x)
    return g.cast(_op(g, "Mul", x, _unary(g, "Sigmoid", x)), dt)


_SQRT_2_OVER_PI = 0.7978845608028654
_GELU_CUBIC = 0.044715


@builtin("ember::gelu")
def gelu(g, x, approximate="none"):
    """0.5 * x * (1 + erf(x / sqrt 2)), or with approximate='tanh'
    0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))."""
    if approximate not in ("none", "tanh"):
        g.fail(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    x, dt = _float_in(g, x)
    ct = x.dtype
    if approximate == "tanh":
        cube = _op(g, "Mul", _op(g, "Mul", x, x), x)
        inner = _op(g, "Add", x, _op(g, "Mul", cube, g.scalar(_GELU_CUBIC, dtype=ct)))
        t = _unary(g, "Tanh", _op(g, "Mul", inner, g.scalar(_SQRT_2_OVER_PI, dtype=ct)))
    else:
        t = _unary(g, "Erf", _op(g, "Mul", x, g.scalar(1 / math.sqrt(2), dtype=ct)))
    half_x = _op(g, "Mul", x, g.scalar(0.5, dtype=ct))
    return g.cast(_op(g, "Mul", half_x, _op(g, "Add", t, g.scalar(1, dtype=ct))), dt)


@builtin("ember::gelu", opset=20)
def gelu_20(g, x, approximate="none"):
    """The Gelu op of opset 20."""
    if approximate not in ("none", "tanh"):
        g.fail(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    return _op(g, "Gelu", x, approximate=approximate)


def _keep_ints(op_type):
    def symbolic(g, x):
        return _unary(g, op_type, x) if x.dtype.is_floating_point else x
    symbolic.__name__ = op_type.lower()
    symbolic.__doc__ = f"ONNX {op_type} on floats; integers are returned unchanged."
    return symbolic


builtin("ember::floor")(_keep_ints("Floor"))
builtin("ember::ceil")(_keep_ints("Ceil"))


@builtin("ember::trunc")
def trunc(g, x):
    return _trunc(g, x) if x.dtype.is_floating_point else x


@builtin("ember::round")
def round_(g, x, decimals=0):
    """Round (half to even, as ember); with decimals, Round(x * 10^d) / 10^d (or
    Round(x / 10^-d) * 10^-d for d < 0), the scale in x's dtype as ember."""
    if not x.dtype.is_floating_point:
        if decimals:
            g.fail(f"decimals={decimals} is not supported for integer tensors")
        return x
    if not decimals:
        return _unary(g, "Round", x)
    dt = x.dtype
    ct = _opmath(dt)
    x = g.cast(x, ct)
    scale = g.scalar(np.array(10.0 ** abs(decimals)).astype(dt.numpy), dtype=ct)
    if decimals > 0:
        r = _op(g, "Div", _unary(g, "Round", _op(g, "Mul", x, scale)), scale)
    else:
        r = _op(g, "Mul", _unary(g, "Round", _op(g, "Div", x, scale)), scale)
    return g.cast(r, dt)


# ---- clamp, nan_to_num, activations with parameters ----

def _clamp(g, x, lo, hi):
    """min(max(x, lo), hi) in the output dtype: Clip for two number bounds (its min > max
    gives max, NaN stays, as ember), else Max then Min (NaN propagates). One bound is not
    Clip: its missing bound means the dtype's largest finite value, which would clip inf."""
    if lo is None and hi is None:
        g.fail("at least one of min and max must not be None")
    dt = _out(g, x, lo, hi)
    x = _as(g, x, dt)
    numbers = not isinstance(lo, OnnxValue) and not isinstance(hi, OnnxValue)
    if dt is not _t.bool_ and numbers and lo is not None and hi is not None:
        return _op(g, "Clip", x, g.scalar(lo, dtype=dt), g.scalar(hi, dtype=dt))
    if lo is not None:
        x = _extremum(g, "Max", x, _as(g, lo, dt))
    if hi is not None:
        x = _extremum(g, "Min", x, _as(g, hi, dt))
    return x


@builtin("ember::clamp")
def clamp(g, self, min=None, max=None):  # noqa: A002 - the schema's names
    return _clamp(g, self, min, max)


@builtin("ember::clamp_min")
def clamp_min(g, self, min):  # noqa: A002
    return _clamp(g, self, min, None)


@builtin("ember::clamp_max")
def clamp_max(g, self, max):  # noqa: A002
    return _clamp(g, self, None, max)


@builtin("ember::nan_to_num")
def nan_to_num(g, x, nan=0.0, posinf=None, neginf=None):
    """Where(IsNaN) / Where(IsInf); the infinities' defaults are the dtype's finite
    extremes; integers and bools are returned unchanged."""
    dt = x.dtype
    if not dt.is_floating_point:
        return x
    big = float(ml_dtypes.finfo(dt.numpy).max)
    hi = g.scalar(big if posinf is None else posinf, dtype=dt)
    lo = g.scalar(-big if neginf is None else neginf, dtype=dt)
    r = _node(g, "Where", _unary(g, "IsNaN", x, _t.bool_), g.scalar(nan, dtype=dt), x, dtype=dt)
    r = _node(g, "Where", _unary(g, "IsInf", x, _t.bool_, detect_negative=0), hi, r, dtype=dt)
    return _node(g, "Where", _unary(g, "IsInf", x, _t.bool_, detect_positive=0), lo, r, dtype=dt)


@builtin("ember::leaky_relu")
def leaky_relu(g, x, negative_slope=0.01):
    """LeakyRelu in float32 (its float attribute is the slope ember multiplies by); other
    dtypes Where(x > 0, x, x * slope) with the slope in x's dtype."""
    if x.dtype is _t.float32:
        return _op(g, "LeakyRelu", x, alpha=float(negative_slope))
    scaled = _op(g, "Mul", x, g.scalar(negative_slope, dtype=x.dtype))
    return _node(g, "Where", _bool(g, "Greater", x, g.scalar(0, dtype=x.dtype)), x, scaled,
                 dtype=x.dtype)


@builtin("ember::elu")
def elu(g, x, alpha=1.0):
    """Elu in float32; other dtypes Where(x > 0, x, expm1(min(x, 0)) * alpha) as ember."""
    if x.dtype is _t.float32:
        return _op(g, "Elu", x, alpha=float(alpha))
    dt = x.dtype
    neg_part = expm1(g, _op(g, "Min", x, g.scalar(0, dtype=dt)))
    neg_part = _op(g, "Mul", g.cast(neg_part, dt), g.scalar(alpha, dtype=dt))
    return _node(g, "Where", _bool(g, "Greater", x, g.scalar(0, dtype=dt)), x, neg_part, dtype=dt)


@builtin("ember::hardtanh")
def hardtanh(g, x, min_val=-1, max_val=1):
    """Clip(x, min_val, max_val) (integer inputs clip at the integer parts, as ember)."""
    if min_val > max_val:
        g.fail(f"min_val ({min_val}) cannot be greater than max_val ({max_val})")
    if not x.dtype.is_floating_point:
        min_val, max_val = int(min_val), int(max_val)
    return _op(g, "Clip", x, g.scalar(min_val, dtype=x.dtype), g.scalar(max_val, dtype=x.dtype))


@builtin("ember::relu6")
def relu6(g, x):
    return hardtanh(g, x, 0, 6)

del _name, _op_type
