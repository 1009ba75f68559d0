"""Symbolics of ember's elementwise arithmetic: ``add``/``sub`` (with alpha), ``rsub``,
``mul``, ``div`` (with rounding modes), ``true_divide``, ``floor_divide``, ``remainder``,
``fmod``, ``pow``, ``atan2``, ``maximum``/``minimum``, ``lerp``, ``addcmul``, ``where``
and ``masked_fill``.

Type promotion, float16/bfloat16 and in-place variants: see ``_operands.py``.

ONNX ops: Add, Sub, Mul, Div, Mod, Pow, Max, Min, Where.

Compositions where ONNX has no op, or its op differs from ember's:

* ``floor_divide`` / ``remainder`` on floats follow Python's ``divmod`` as numpy and
  PyTorch do (``1.0 // 0.1 == 9.0``, not ``floor(1.0 / 0.1) == 10.0``), built on
  ``Mod(fmod=1)``; on integers ``remainder`` is ``Mod(fmod=0)`` and ``floor_divide``
  corrects the truncating integer ``Div``.
* ``div(rounding_mode='trunc')`` on floats: as ``trunc`` (see ``unary.py``).
* ``atan2``: ``Atan(y / x)`` moved to the right quadrant, with ``x == 0``, both-infinite
  and signed-zero operands handled as C's atan2.
* ``pow`` of integers by a constant exponent multiplies by squaring (exact, wrapping on
  overflow as ember); by a tensor exponent it is ONNX Pow (computed in int64, through
  double precision in onnxruntime) with ember's values for negative exponents.
* ``addcmul``: ``self + value * (t1 * t2)`` in the promoted dtype (float16/bfloat16 in
  float32, rounded once, as ember), value cast to it (truncated for integers).
* ``where`` / ``masked_fill`` on bools are Or(And(c, a), And(Not(c), b)): onnxruntime's
  Where has no bool kernel.

Departures: integer ``pow`` with a *tensor* exponent differs from ember only where the
exact power does not fit in 53 bits (ember wraps; onnxruntime goes through double).

References: the ONNX operator specifications (https://onnx.ai/onnx/operators/); PyTorch's
``torch/onnx/symbolic_opset9.py`` ... ``symbolic_opset20.py`` as the reference mapping;
numpy's ``npy_divmod``.
"""
from __future__ import annotations

import math

import numpy as np

from ... import types as _t
from ..context import OnnxValue
from ..registry import builtin
from ._operands import (_as, _binary, _bool, _extremum, _node, _op, _opmath, _out, _trunc,
                        _unary)


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


@builtin("ember::addcmul")
def addcmul(g, self, tensor1, tensor2, value=1):
    """self + value * (tensor1 * tensor2), value cast to the result dtype as ember."""
    dt = _out(g, self, tensor1, tensor2)
    ct = _opmath(dt)
    a, t1, t2 = (_as(g, v, ct) for v in (self, tensor1, tensor2))
    v = np.array(value).astype(dt.numpy)
    prod = _op(g, "Mul", t1, t2)
    if v != 1:
        prod = _op(g, "Mul", g.scalar(v, dtype=ct), prod)
    return g.cast(_op(g, "Add", a, prod), dt)


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
