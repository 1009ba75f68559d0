"""Symbolics of ember's elementwise ops: arithmetic, unary math, activations, rounding,
clamping, comparisons, logical and bitwise ops, ``where``, ``lerp`` and ``masked_fill``.

Type promotion follows ember (``torch.result_type``): every tensor operand is cast to the
IR's output dtype (``g.out(0).dtype``) and every Python number becomes a rank-0 constant of
that dtype, cast as ember casts a wrapped number (``int8 tensor + 1000`` adds -24; a float
too large for float16 becomes inf). Comparisons compute in the promoted dtype of their
operands and give bool; float-only math (``exp``, ``sin``, true division, ...) casts
integral inputs to the output's floating dtype first.

ONNX ops: Add, Sub, Mul, Div, Mod, Pow, Max, Min, Where, Abs, Neg, Sign, Exp, Log, Sqrt,
Reciprocal, Sin/Cos/Tan, Asin/Acos/Atan, Sinh/Cosh, Tanh, Sigmoid, Relu, LeakyRelu, Elu,
Gelu (opset 20), Erf, Floor, Ceil, Round, Clip, IsNaN, IsInf, Equal, Less, LessOrEqual,
Greater, GreaterOrEqual, And, Or, Xor, Not, BitwiseAnd/Or/Xor/Not (opset 18), BitShift,
Cast.

Compositions where ONNX has no op, or its op differs from ember's:

* ``floor_divide`` / ``remainder`` on floats follow Python's ``divmod`` as numpy and
  PyTorch do (``1.0 // 0.1 == 9.0``, not ``floor(1.0 / 0.1) == 10.0``), built on
  ``Mod(fmod=1)``; on integers ``remainder`` is ``Mod(fmod=0)`` and ``floor_divide``
  corrects the truncating integer ``Div``.
* ``trunc`` and ``div(rounding_mode='trunc')`` on floats: ``Where(x < 0, Ceil, Floor)``.
* ``atan2``: ``Atan(y / x)`` moved to the right quadrant, with ``x == 0``, both-infinite
  and signed-zero operands handled as C's atan2.
* ``log1p`` / ``expm1`` keep full relative precision near 0 (Goldberg's
  ``log(u) * x / (u - 1)`` with ``u = 1 + x``, Kahan's ``(u - 1) * x / log(u)`` with
  ``u = exp(x)``), ``log2`` / ``log10`` divide ``Log`` by ln 2 / ln 10, ``exp2`` is
  ``Pow(2, x)``.
* ``sign`` gives 0 for NaN, as ember (ONNX Sign gives NaN); ``nan_to_num`` is
  IsNaN/IsInf + Where.
* ``pow`` of integers by a constant exponent multiplies by squaring (exact, wrapping on
  overflow as ember); by a tensor exponent it is ONNX Pow (computed in int64, through
  double precision in onnxruntime) with ember's values for negative exponents.
* ``gelu``: the Gelu op from opset 20; below, ``0.5 * x * (1 + Erf(x / sqrt 2))`` or
  ``0.5 * x * (1 + Tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))``.
* ``bitwise_*`` on integers need opset 18 (bool works at any opset through And/Or/Xor/
  Not); the shifts take uint8 only (ONNX BitShift is unsigned), counts of 8 or more give 0
  (ONNX leaves them undefined; a Where puts the 0 in).
* ``leaky_relu`` / ``elu`` use the ONNX ops in float32, whose float attribute holds the
  slope exactly; other floating dtypes compose them in their own dtype.
* Multi-step float formulas on float16/bfloat16 compute in float32 and round once, as
  ember's "opmath" kernels; so does any op ONNX does not define on a half type at the
  target opset (Sin on bfloat16, IsInf before 20, Where on bfloat16 before 16).
* ``where`` / ``masked_fill`` on bools are Or(And(c, a), And(Not(c), b)): onnxruntime's
  Where has no bool kernel.
* ``clamp`` with two number bounds is Clip; with one, Max or Min (Clip's missing bound
  is the dtype's largest finite value, which would clip inf).

Departures: integer ``pow`` with a *tensor* exponent differs from ember only where the
exact power does not fit in 53 bits (ember wraps; onnxruntime goes through double);
``elu`` in float32
uses ``exp(x) - 1`` (an absolute error below 1.2e-7 * alpha near 0). In-place variants
(``add_``, ``relu_``, ...) trace as their own kinds and have no symbolics here.

References: the ONNX operator specifications (https://onnx.ai/onnx/operators/); PyTorch's
``torch/onnx/symbolic_opset9.py`` ... ``symbolic_opset20.py`` as the reference mapping;
D. Goldberg, "What every computer scientist should know about floating-point arithmetic"
(1991), theorem 4 (log1p); W. Kahan's expm1 trick; numpy's ``npy_divmod``.
"""
from __future__ import annotations

import functools
import math

import ml_dtypes
import numpy as np
import onnx

from ... import types as _t
from ..context import OnnxValue
from ..registry import builtin

_HALF = (_t.float16, _t.bfloat16)


# ---- operands and dtypes ----

def _common(*operands):
    """The dtype ember computes ``operands`` in (torch.result_type): OnnxValues by rank,
    Python numbers as weak scalars; None operands are skipped."""
    dims, zero_dims, numbers = [], [], []
    for v in operands:
        if v is None:
            continue
        if isinstance(v, OnnxValue):
            (zero_dims if v.rank == 0 else dims).append(v.dtype)
        else:
            numbers.append(v)
    return _t.result_type(dims, zero_dims, numbers)


def _out(g, *operands):
    """The IR's output dtype, or the promoted dtype of ``operands`` if the IR has none."""
    dt = g.out(0).dtype
    return dt if dt is not None else _common(*operands)


def _as(g, v, dtype) -> OnnxValue:
    """A tensor (cast) or Python number (constant) operand in ``dtype``."""
    if isinstance(v, OnnxValue):
        return g.cast(v, dtype)
    return g.scalar(v, dtype=dtype)


def _opmath(dtype):
    """The dtype multi-step float formulas compute in (float32 for float16/bfloat16)."""
    return _t.float32 if dtype in _HALF else dtype


def _binary(g, op_type, a, b, dtype=None) -> OnnxValue:
    """``op_type(a, b)`` with both operands in ``dtype`` (default: the output's)."""
    dt = dtype or _out(g, a, b)
    return _node(g, op_type, _as(g, a, dt), _as(g, b, dt), dtype=dt)


def _op(g, op_type, *inputs, **attrs) -> OnnxValue:
    """``g.op`` whose output has the dtype of its first input (elementwise ops)."""
    return _node(g, op_type, *inputs, dtype=inputs[0].dtype, **attrs)


def _bool(g, op_type, *inputs, **attrs) -> OnnxValue:
    return _node(g, op_type, *inputs, dtype=_t.bool_, **attrs)


@functools.lru_cache(maxsize=None)
def _input_types(op_type: str, opset: int) -> tuple:
    """Per formal input of ONNX ``op_type`` at ``opset``: the tensor types it takes."""
    schema = onnx.defs.get_schema(op_type, opset)
    allowed = {c.type_param_str: frozenset(c.allowed_type_strs)
               for c in schema.type_constraints}
    return tuple(allowed.get(i.type_str, frozenset({i.type_str})) for i in schema.inputs)


def _node(g, op_type, *inputs, dtype, **attrs) -> OnnxValue:
    """``g.op`` with output dtype ``dtype``; when the op does not take a float16/bfloat16
    input at this opset (Sin on bfloat16, IsInf before opset 20, Where on bfloat16 before
    16), the half inputs go through float32 and the result is rounded back."""
    halves = [i for i, v in enumerate(inputs) if v is not None and v.dtype in _HALF]
    if halves:
        formal = _input_types(op_type, g.opset)
        if any(f"tensor({inputs[i].dtype.name})" not in formal[min(i, len(formal) - 1)]
               for i in halves):
            inputs = [g.cast(v, _t.float32) if i in halves else v
                      for i, v in enumerate(inputs)]
            wide = _t.float32 if dtype in _HALF else dtype
            return g.cast(g.op(op_type, *inputs, dtype=wide, **attrs), dtype)
    return g.op(op_type, *inputs, dtype=dtype, **attrs)


def _unary(g, op_type, x, dtype=None, **attrs) -> OnnxValue:
    """One-input ``op_type`` on x, output dtype ``dtype`` (default x's)."""
    return _node(g, op_type, x, dtype=dtype or x.dtype, **attrs)


# ---- add, sub, mul, div ----

def _add_sub(g, op_type, a, b, alpha):
    """``a op alpha * b``; alpha is cast to the result dtype as ember does. bool + bool is
    logical or (sub rejects bools in ember before tracing)."""
    dt = _out(g, a, b)
    a, b = _as(g, a, dt), _as(g, b, dt)
    if dt is _t.bool_:
        if not alpha:        # a + False * b: a, broadcast against b
            b = _bool(g, "And", b, g.scalar(False, dtype=dt))
        return _bool(g, "Or", a, b)
    if alpha != 1:
        b = _node(g, "Mul", b, g.scalar(alpha, dtype=dt), dtype=dt)
    return _node(g, op_type, a, b, dtype=dt)


@builtin("ember::add")
def add(g, self, other, alpha):
    return _add_sub(g, "Add", self, other, alpha)


@builtin("ember::sub")
def sub(g, self, other, alpha):
    return _add_sub(g, "Sub", self, other, alpha)


@builtin("ember::rsub")
def rsub(g, self, other, alpha):
    """other - alpha * self (``2 - x`` traces as rsub(x, 2, 1))."""
    return _add_sub(g, "Sub", other, self, alpha)


@builtin("ember::mul")
def mul(g, self, other):
    """Mul; bool * bool is logical and."""
    dt = _out(g, self, other)
    return _binary(g, "And" if dt is _t.bool_ else "Mul", self, other, dt)


@builtin("ember::true_divide")
def true_divide(g, self, other):
    """Div in the (floating) output dtype: integers divide as floats."""
    return _binary(g, "Div", self, other)


@builtin("ember::div")
def div(g, self, other, rounding_mode=None):
    if rounding_mode is None:
        return true_divide(g, self, other)
    dt = _out(g, self, other)
    if rounding_mode == "floor":
        return _floor_divide(g, _as(g, self, dt), _as(g, other, dt))
    if rounding_mode == "trunc":
        q = _binary(g, "Div", self, other, dt)   # integer Div truncates (C semantics)
        return _trunc(g, q) if dt.is_floating_point else q
    g.fail(f"rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")


@builtin("ember::floor_divide")
def floor_divide(g, self, other):
    dt = _out(g, self, other)
    return _floor_divide(g, _as(g, self, dt), _as(g, other, dt))


def _trunc(g, x):
    """Round toward zero: Ceil below 0, Floor elsewhere (NaN and infinities pass)."""
    below = _bool(g, "Less", x, g.scalar(0, dtype=x.dtype))
    return _node(g, "Where", below, _unary(g, "Ceil", x), _unary(g, "Floor", x), dtype=x.dtype)


def _differ_in_sign(g, r, b):
    """r != 0 and the signs of r and b differ: where a truncated result needs fixing."""
    zero = g.scalar(0, dtype=r.dtype)
    nonzero = _bool(g, "Not", _bool(g, "Equal", r, zero))
    return _bool(g, "And", nonzero,
                 _bool(g, "Xor", _bool(g, "Less", r, zero), _bool(g, "Less", b, zero)))


def _floor_divide(g, a, b):
    """Python's a // b on operands of one dtype."""
    dt = a.dtype
    if not dt.is_floating_point:
        # integer Div truncates; step down where the remainder and divisor differ in sign
        q = _node(g, "Div", a, b, dtype=dt)
        r = _node(g, "Mod", a, b, fmod=1, dtype=dt)
        fix = g.cast(_differ_in_sign(g, r, b), dt)
        return _node(g, "Sub", q, fix, dtype=dt)
    ct = _opmath(dt)
    a, b = g.cast(a, ct), g.cast(b, ct)
    # numpy's npy_divmod: div = (a - fmod(a, b)) / b, corrected to the floor, rounded to
    # the nearest integer; b == 0 gives a / b (+-inf or nan); a zero takes a / b's sign
    zero, one = g.scalar(0, dtype=ct), g.scalar(1, dtype=ct)
    mod = _node(g, "Mod", a, b, fmod=1, dtype=ct)
    d = _node(g, "Div", _node(g, "Sub", a, mod, dtype=ct), b, dtype=ct)
    d = _node(g, "Where", _differ_in_sign(g, mod, b), _node(g, "Sub", d, one, dtype=ct), d,
              dtype=ct)
    fl = _unary(g, "Floor", d)
    up = _bool(g, "Greater", _node(g, "Sub", d, fl, dtype=ct), g.scalar(0.5, dtype=ct))
    fl = _node(g, "Where", up, _node(g, "Add", fl, one, dtype=ct), fl, dtype=ct)
    quotient = _node(g, "Div", a, b, dtype=ct)
    signed_zero = _node(g, "Mul", quotient, zero, dtype=ct)
    fl = _node(g, "Where", _bool(g, "Equal", d, zero), signed_zero, fl, dtype=ct)
    return g.cast(_node(g, "Where", _bool(g, "Equal", b, zero), quotient, fl, dtype=ct), dt)


@builtin("ember::remainder")
def remainder(g, self, other):
    """Python's a % b (the divisor's sign): Mod(fmod=0) for integers; for floats fmod
    moved by b where the signs differ, and a zero with b's sign, as numpy."""
    dt = _out(g, self, other)
    a, b = _as(g, self, dt), _as(g, other, dt)
    if not dt.is_floating_point:
        return _node(g, "Mod", a, b, fmod=0, dtype=dt)
    ct = _opmath(dt)
    a, b = g.cast(a, ct), g.cast(b, ct)
    m = _node(g, "Mod", a, b, fmod=1, dtype=ct)
    r = _node(g, "Where", _differ_in_sign(g, m, b), _node(g, "Add", m, b, dtype=ct), m,
              dtype=ct)
    zero = _bool(g, "Equal", m, g.scalar(0, dtype=ct))     # a zero takes b's sign
    return g.cast(_node(g, "Where", zero, _copysign(g, 0.0, b), r, dtype=ct), dt)


@builtin("ember::fmod")
def fmod(g, self, other):
    """C's fmod (the dividend's sign): Mod(fmod=1)."""
    dt = _out(g, self, other)
    return _node(g, "Mod", _as(g, self, dt), _as(g, other, dt), fmod=1, dtype=dt)


# ---- pow, atan2 ----

@builtin("ember::pow")
def pow_(g, self, exponent):
    dt = _out(g, self, exponent)
    if dt.is_floating_point:
        return _binary(g, "Pow", self, exponent, dt)
    if not isinstance(exponent, OnnxValue):
        return _int_pow_const(g, _as(g, self, dt), int(exponent))
    return _int_pow_tensor(g, _as(g, self, dt), g.cast(exponent, dt))


def _int_pow_const(g, x, n: int):
    """x ** n for a constant n >= 0 by repeated squaring: exact, and wrapping on overflow
    as ember (ember refuses negative constant exponents for integers)."""
    if n <= 0:   # ones shaped like x
        zeros = _op(g, "Mul", x, g.scalar(0, dtype=x.dtype))
        return _op(g, "Add", zeros, g.scalar(1, dtype=x.dtype))
    result, square = None, x
    while True:
        if n & 1:
            result = square if result is None else _op(g, "Mul", result, square)
        n >>= 1
        if not n:
            return result
        square = _op(g, "Mul", square, square)


def _int_pow_tensor(g, x, e):
    """x ** e for integer tensors: Pow in int64 (Pow takes no 8/16-bit ints), with ember's
    values for negative exponents: 1 for base 1, +-1 for base -1, else 0."""
    dt = x.dtype
    x, e = g.cast(x, _t.int64), g.cast(e, _t.int64)
    zero, one = g.scalar(0, dtype=_t.int64), g.scalar(1, dtype=_t.int64)
    minus_one = g.scalar(-1, dtype=_t.int64)
    r = _node(g, "Pow", x, _op(g, "Max", e, zero), dtype=_t.int64)
    if dt is not _t.uint8:
        parity = _node(g, "Mod", e, g.scalar(2, dtype=_t.int64), fmod=1, dtype=_t.int64)
        odd_sign = _node(g, "Where", _bool(g, "Equal", parity, zero), one, minus_one,
                         dtype=_t.int64)
        of_minus_one = _node(g, "Where", _bool(g, "Equal", x, minus_one), odd_sign, zero,
                             dtype=_t.int64)
        special = _node(g, "Where", _bool(g, "Equal", x, one), one, of_minus_one,
                        dtype=_t.int64)
        r = _node(g, "Where", _bool(g, "Less", e, zero), special, r, dtype=_t.int64)
    return g.cast(r, dt)


def _signbit(g, x):
    """x < 0 or x is -0.0 (1 / -0.0 is -inf)."""
    zero = g.scalar(0, dtype=x.dtype)
    return _bool(g, "Or", _bool(g, "Less", x, zero),
                 _bool(g, "Less", _unary(g, "Reciprocal", x), zero))


def _copysign(g, magnitude: float, sign_of):
    """+-magnitude by the sign bit of ``sign_of``."""
    dt = sign_of.dtype
    return _node(g, "Where", _signbit(g, sign_of), g.scalar(-magnitude, dtype=dt),
                 g.scalar(magnitude, dtype=dt), dtype=dt)


@builtin("ember::atan2")
def atan2(g, self, other):
    """The angle of (other, self): Atan(y / x), plus +-pi for x < 0 (or -0.0); the cases
    where y / x is nan (both zero, both infinite) are filled in as C's atan2."""
    dt = _out(g, self, other)
    ct = _opmath(dt)
    y, x = _as(g, self, ct), _as(g, other, ct)
    q = _unary(g, "Atan", _op(g, "Div", y, x))
    pi_y = _copysign(g, math.pi, y)
    x_neg = _signbit(g, x)
    r = _node(g, "Where", x_neg, _op(g, "Add", q, pi_y), q, dtype=ct)
    zero = g.scalar(0, dtype=ct)
    both_zero = _bool(g, "And", _bool(g, "Equal", y, zero), _bool(g, "Equal", x, zero))
    r = _node(g, "Where", both_zero, _node(g, "Where", x_neg, pi_y, y, dtype=ct), r, dtype=ct)
    both_inf = _bool(g, "And", _unary(g, "IsInf", y, _t.bool_), _unary(g, "IsInf", x, _t.bool_))
    corner = _node(g, "Where", x_neg, g.scalar(0.75 * math.pi, dtype=ct),
                   g.scalar(0.25 * math.pi, dtype=ct), dtype=ct)
    corner = _node(g, "Mul", corner, _unary(g, "Sign", y), dtype=ct)
    return g.cast(_node(g, "Where", both_inf, corner, r, dtype=ct), dt)


# ---- maximum, minimum, lerp, where, masked_fill ----

def _extremum(g, op_type, a, b):
    """Max/Min of two values of one dtype (NaN propagates in onnxruntime as in ember);
    on bools, max is Or and min is And."""
    if a.dtype is _t.bool_:
        return _bool(g, "Or" if op_type == "Max" else "And", a, b)
    return _op(g, op_type, a, b)


@builtin("ember::maximum", "ember::max.other")
def maximum(g, self, other):
    dt = _out(g, self, other)
    return _extremum(g, "Max", _as(g, self, dt), _as(g, other, dt))


@builtin("ember::minimum", "ember::min.other")
def minimum(g, self, other):
    dt = _out(g, self, other)
    return _extremum(g, "Min", _as(g, self, dt), _as(g, other, dt))


def _lerp_low(g, a, diff, w):
    return _op(g, "Add", a, _op(g, "Mul", w, diff))


def _lerp_high(g, end, diff, w):
    return _op(g, "Sub", end, _op(g, "Mul", diff, _op(g, "Sub", g.scalar(1, dtype=w.dtype), w)))


@builtin("ember::lerp.Tensor")
def lerp_tensor(g, self, end, weight):
    """self + w * (end - self) where |w| < 0.5, else end - (end - self) * (1 - w), as
    PyTorch (exact at w == 1)."""
    dt = _out(g, self, end, weight)
    ct = _opmath(dt)
    # a 0-d weight is first converted to self's dtype, as ember does
    a, b, w = _as(g, self, ct), _as(g, end, ct), g.cast(_as(g, weight, dt), ct)
    diff = _op(g, "Sub", b, a)
    low = _bool(g, "Less", _unary(g, "Abs", w), g.scalar(0.5, dtype=ct))
    r = _node(g, "Where", low, _lerp_low(g, a, diff, w), _lerp_high(g, b, diff, w), dtype=ct)
    return g.cast(r, dt)


@builtin("ember::lerp.Scalar")
def lerp_scalar(g, self, end, weight):
    """lerp with a number weight: the branch is chosen at export (on the weight as ember
    casts it)."""
    dt = _out(g, self, end)
    ct = _opmath(dt)
    a, b = _as(g, self, ct), _as(g, end, ct)
    w_dt = np.array(weight).astype(dt.numpy)
    w = g.scalar(w_dt, dtype=ct)
    diff = _op(g, "Sub", b, a)
    r = _lerp_low(g, a, diff, w) if abs(w_dt) < 0.5 else _lerp_high(g, b, diff, w)
    return g.cast(r, dt)


def _where(g, condition, a, b):
    """Where(condition, a, b); on bools Or(And(c, a), And(Not(c), b)), since
    onnxruntime's Where has no bool kernel."""
    c = g.cast(condition, _t.bool_)
    if a.dtype is _t.bool_:
        return _bool(g, "Or", _bool(g, "And", c, a), _bool(g, "And", _bool(g, "Not", c), b))
    return _node(g, "Where", c, a, b, dtype=a.dtype)


@builtin("ember::where")
def where(g, condition, self, other):
    dt = _out(g, self, other)
    return _where(g, condition, _as(g, self, dt), _as(g, other, dt))


@builtin("ember::masked_fill")
def masked_fill(g, self, mask, value):
    """Where(mask, value, self); the value (a number or 0-d tensor) in self's dtype."""
    dt = _out(g, self)
    return _where(g, mask, _as(g, value, dt), g.cast(self, dt))


# ---- unary ----

_FLOAT_UNARY = {
    "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "sin": "Sin", "cos": "Cos", "tan": "Tan",
    "asin": "Asin", "acos": "Acos", "atan": "Atan", "sinh": "Sinh", "cosh": "Cosh",
    "tanh": "Tanh", "sigmoid": "Sigmoid", "erf": "Erf", "reciprocal": "Reciprocal",
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


# ---- comparisons, logical and bitwise ----

_COMPARE = {"eq": "Equal", "ne": "Equal", "lt": "Less", "le": "LessOrEqual",
            "gt": "Greater", "ge": "GreaterOrEqual"}


def _compare(name, op_type):
    def symbolic(g, self, other):
        dt = _common(self, other)
        if dt is _t.bool_ and op_type != "Equal":
            dt = _t.uint8        # ordered comparisons take no bools
        r = _bool(g, op_type, _as(g, self, dt), _as(g, other, dt))
        return _bool(g, "Not", r) if name == "ne" else r
    symbolic.__name__ = name
    symbolic.__doc__ = (f"{'Not(Equal)' if name == 'ne' else op_type} on both operands in "
                        f"their promoted dtype.")
    return symbolic


for _name, _op_type in _COMPARE.items():
    builtin(f"ember::{_name}")(_compare(_name, _op_type))


def _truth(g, v):
    """Nonzero (NaN included) as True: Cast to bool."""
    return _as(g, v, _t.bool_)


def _logical(op_type):
    def symbolic(g, self, other):
        return _bool(g, op_type, _truth(g, self), _truth(g, other))
    symbolic.__name__ = f"logical_{op_type.lower()}"
    symbolic.__doc__ = f"{op_type} of the operands' truth values."
    return symbolic


builtin("ember::logical_and")(_logical("And"))
builtin("ember::logical_or")(_logical("Or"))
builtin("ember::logical_xor")(_logical("Xor"))


@builtin("ember::logical_not")
def logical_not(g, x):
    return _bool(g, "Not", _truth(g, x))


def _bitwise_op(g, name, dt):
    """The ONNX op for bitwise ``name`` ("And", "Not", ...) on ``dt``, or a failure."""
    if dt is _t.bool_:
        return name
    if g.opset < 18:
        g.fail(f"ONNX has bitwise ops on integers (Bitwise{name}) from opset 18; export "
               f"with opset_version >= 18 (bool tensors work at any opset)")
    return f"Bitwise{name}"


def _bitwise(name):
    def symbolic(g, self, other):
        dt = _out(g, self, other)
        return _binary(g, _bitwise_op(g, name, dt), self, other, dt)
    symbolic.__name__ = f"bitwise_{name.lower()}"
    symbolic.__doc__ = f"Bitwise{name} on integers (opset 18), {name} on bools."
    return symbolic


builtin("ember::bitwise_and")(_bitwise("And"))
builtin("ember::bitwise_or")(_bitwise("Or"))
builtin("ember::bitwise_xor")(_bitwise("Xor"))


@builtin("ember::bitwise_not")
def bitwise_not(g, x):
    return _op(g, _bitwise_op(g, "Not", x.dtype), x)


def _shift(direction):
    def symbolic(g, self, other):
        dt = _out(g, self, other)
        if dt is not _t.uint8:
            g.fail(f"ONNX BitShift takes unsigned integers only, and the result here is "
                   f"{dt.name} (ember's signed right shift is arithmetic, which BitShift "
                   f"cannot do); shift a uint8 tensor, or multiply / floor-divide by "
                   f"powers of two instead")
        a, b = _as(g, self, dt), _as(g, other, dt)
        # counts of 8 or more give 0 in ember; ONNX leaves them undefined, so BitShift
        # gets at most 7 and a Where puts the 0 in
        shifted = _op(g, "BitShift", a, _op(g, "Min", b, g.scalar(7, dtype=dt)),
                      direction=direction)
        in_range = _bool(g, "Less", b, g.scalar(8, dtype=dt))
        return _node(g, "Where", in_range, shifted, g.scalar(0, dtype=dt), dtype=dt)
    symbolic.__name__ = f"bitwise_{direction.lower()}_shift"
    symbolic.__doc__ = f"BitShift({direction}) on uint8; counts >= 8 give 0 as in ember."
    return symbolic


builtin("ember::bitwise_left_shift")(_shift("LEFT"))
builtin("ember::bitwise_right_shift")(_shift("RIGHT"))

del _name, _op_type
