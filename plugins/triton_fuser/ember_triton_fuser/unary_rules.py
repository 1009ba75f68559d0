"""Lowering rules of one-tensor ops: unary math and predicates.

Unary math: ``exp`` ... ``erf``, ``erfc``, ``asinh``, ``acosh``, ``atanh`` (libdevice),
``sqrt``, ``rsqrt``, ``reciprocal`` and ``sigmoid`` of floating tensors (integral inputs
computed in the float dtype they promote to); ``abs`` (and its alias ``absolute``),
``neg``, ``sign``, ``relu``, ``floor``, ``ceil``, ``trunc`` and ``square`` in the input's
dtype (bool squares to int64); ``frac``, ``round``, ``logical_not``, ``bitwise_not`` and
``nan_to_num``. Predicates, bool results: ``isnan``, ``isinf``, ``isfinite``,
``isposinf``, ``isneginf`` and ``signbit``. The activations are in ``activation_rules.py``.
Each rule registers itself in ``node._RULES`` when imported.

Reference: PyTorch's ``aten/src/ATen/native/cuda`` pointwise kernels; ember's
``backends/kernels/predicates.py`` and ``special.py``.
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from ember import types as _t
from ember.types import ScalarType

from .expr import (_TRITON, _arith, _cmp, _const_to, _div, _is_float, _ld, _max, _num, _p,
                   _rounded, _sqrt, _where, compute_dtype)
from .node import _Node, _rule


# ---- unary math -----------------------------------------------------------------------------
_LIBDEVICE_UNARY = ("exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sin", "cos",
                    "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
                    "atanh", "erf", "erfc")


def _sigmoid(x: str, dt: ScalarType) -> str:
    # e = exp(-|x|) never overflows; 1/(1+e) for x >= 0, e/(1+e) below keeps both tails.
    e = _ld("exp", f"(-tl.abs({x}))")
    return _where(f"({_p(x)} >= 0.0)", _div("1.0", f"(1.0 + {e})", dt),
                  _div(e, f"(1.0 + {e})", dt))


@_rule(1, *_LIBDEVICE_UNARY, "sqrt", "rsqrt", "reciprocal", "sigmoid")
def _float_unary(n: _Node) -> str:
    n.floating_only()
    x, dt = n.tensor(0, n.out), n.out
    if n.op == "sqrt":
        return _sqrt(x, dt)
    if n.op == "rsqrt":  # eager: 1 / sqrt(x)
        return _div("1.0", _sqrt(x, dt), dt)
    if n.op == "reciprocal":
        return _div("1.0", x, dt)
    if n.op == "sigmoid":
        return _sigmoid(x, dt)
    return _ld(n.op, x)


@_rule(1, "abs", "absolute", "neg", "sign", "relu", "floor", "ceil", "trunc")
def _same_dtype_unary(n: _Node) -> str:
    dt = n.out
    x = n.tensor(0, dt)
    if dt is _t.bool_:
        if n.op == "sign":
            return x
        n.no_bool()
    unsigned = dt is _t.uint8
    if n.op in ("abs", "absolute"):
        return x if unsigned else f"tl.abs({x})"
    if n.op == "neg":
        return f"(-{_p(x)})" if _is_float(dt) else _arith("-", _num(0, dt), x, dt)
    if n.op == "sign":  # (x > 0) - (x < 0): 0 for NaN, as eager
        pos = f"{_cmp('>', x, _num(0, dt), dt)}.to({_TRITON[compute_dtype(dt)]})"
        if unsigned:
            return pos
        neg = f"{_cmp('<', x, _num(0, dt), dt)}.to({_TRITON[compute_dtype(dt)]})"
        return _arith("-", pos, neg, dt)
    if n.op == "relu":
        return x if unsigned else _max(x, _num(0, dt), dt)
    if not _is_float(dt):  # floor/ceil/trunc of an integer is the integer
        return x
    return f"tl.{n.op}({x})" if n.op in ("floor", "ceil") else _ld("trunc", x)


@_rule(1, "square")
def _square(n: _Node) -> str:
    # eager: pow(x, 2), which is x * x (integers wrap; bool gives int64, out)
    x = n.tensor(0, n.out)
    return _arith("*", x, x, n.out)


@_rule(1, "frac")
def _frac(n: _Node) -> str:
    n.floating_only()
    x = n.tensor(0, n.out)
    return f"({_p(x)} - {_ld('trunc', x)})"  # exact; inf - inf is NaN, as eager


@_rule(2, "round")
def _round(n: _Node) -> str:
    dt, decimals = n.out, n.arg(1)
    n.no_bool()
    x = n.tensor(0, dt)
    if not _is_float(dt):
        if decimals != 0:
            n.decline(f"decimals={decimals} on an integer tensor (eager raises)")
        return x
    if decimals == 0:
        return _ld("rint", x)  # half to even
    try:  # eager: p in the compute dtype; rint(x * p) / p, or rint(x / p) * p for d < 0
        with np.errstate(over="ignore"):
            p = _num(compute_dtype(dt).numpy.type(10.0 ** abs(decimals)), dt)
    except OverflowError:
        n.decline(f"decimals={decimals} overflows (eager raises)")
    if decimals > 0:
        return _div(_ld("rint", f"({_p(x)} * {p})"), p, dt)
    return f"({_ld('rint', _div(x, p, dt))} * {p})"


@_rule(1, "logical_not")
def _logical_not(n: _Node) -> str:
    return f"({_p(n.truth(0))} == {_num(0, _t.bool_)})"


@_rule(1, "bitwise_not")
def _bitwise_not(n: _Node) -> str:
    if _is_float(n.out):
        n.decline("floating tensors have no bits to invert (eager raises)")
    x = n.tensor(0, n.out)
    if n.out is _t.bool_:
        return f"({_p(x)} == {_num(0, _t.bool_)})"
    # NOTE: x ^ all-ones, which is what Triton's `~` lowers to (language/semantic.py,
    # invert); `~` itself fails under Triton 3.4-3.8's interpreter for uint8, whose
    # InterpreterBuilder.get_all_ones_value calls np.full(1, -1, uint8) (numpy 2 raises).
    ones = -1 if n.out.is_signed else int(np.iinfo(n.out.numpy).max)
    return f"({_p(x)} ^ {_num(ones, n.out)})"


@_rule(4, "nan_to_num")
def _nan_to_num(n: _Node) -> str:
    dt = n.out
    x = n.tensor(0, dt)
    if not _is_float(dt):
        return x
    nan, posinf, neginf = n.arg(1), n.arg(2), n.arg(3)
    if nan is None:
        n.decline("nan=None")
    fmax = float(ml_dtypes.finfo(dt.numpy).max)
    hi = _const_to(fmax if posinf is None else posinf, dt, n.kind)
    lo = _const_to(-fmax if neginf is None else neginf, dt, n.kind)
    inf, minus_inf = _num(math.inf, dt), _num(-math.inf, dt)
    return _where(f"({_p(x)} != {_p(x)})", _const_to(nan, dt, n.kind),
                  _where(f"({_p(x)} == {inf})", hi, _where(f"({_p(x)} == {minus_inf})", lo, x)))


# ---- predicates -----------------------------------------------------------------------------
@_rule(1, "isnan", "isinf", "isfinite", "isposinf", "isneginf")
def _special_value(n: _Node) -> str:
    src = n.dtype(0)
    x = n.inputs[0].expr
    if not _is_float(src):  # integers hold no NaN or infinity: all False (isfinite True)
        return f"tl.full({_p(x)}.shape, {int(n.op == 'isfinite')}, tl.int1)"
    if n.op == "isnan":
        return f"({_p(x)} != {_p(x)})"
    # NOTE: a float16 value the group computed in float32 is rounded first, so one that
    # overflows float16 is inf here as in eager (what an overflow check is for)
    x = _rounded(x, src)
    inf = _num(math.inf, src)
    if n.op == "isposinf":
        return f"({_p(x)} == {inf})"
    if n.op == "isneginf":
        return f"({_p(x)} == {_num(-math.inf, src)})"
    return f"(tl.abs({x}) {'==' if n.op == 'isinf' else '<'} {inf})"  # NaN: False both


@_rule(1, "signbit")
def _signbit(n: _Node) -> str:
    src = n.dtype(0)
    x = n.inputs[0].expr
    if not _is_float(src):
        if src is _t.bool_ or src is _t.uint8:
            return f"tl.full({_p(x)}.shape, 0, tl.int1)"
        return _cmp("<", x, _num(0, src), src)
    # the sign bit itself: True for -0.0 and negative NaNs too (rounding keeps the sign)
    bits = "tl.int64" if compute_dtype(src) is _t.float64 else "tl.int32"
    return f"({_p(x)}.to({bits}, bitcast=True) < 0)"
