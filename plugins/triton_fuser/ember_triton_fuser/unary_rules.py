"""Lowering rules of one-tensor ops: unary math and activations.

Unary math: ``exp`` ... ``erf`` (libdevice), ``sqrt``, ``rsqrt``, ``reciprocal`` and
``sigmoid`` of floating tensors; ``abs``, ``neg``, ``sign``, ``relu``, ``floor``, ``ceil``
and ``trunc`` in the input's dtype; ``round``, ``logical_not``, ``bitwise_not`` and
``nan_to_num``. Activations: ``silu``, ``gelu`` (exact and tanh), ``leaky_relu``, ``elu``,
``hardtanh`` and ``relu6``. Each rule registers itself in ``node._RULES`` when imported.

Reference: PyTorch's ``aten/src/ATen/native/cuda`` pointwise kernels.
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from ember import types as _t
from ember.types import ScalarType

from .expr import (_TRITON, _arith, _cmp, _const_to, _div, _is_float, _ld, _lit, _max, _min,
                   _num, _p, _sqrt, _where, compute_dtype)
from .node import _Node, _rule


# ---- unary math -----------------------------------------------------------------------------
_LIBDEVICE_UNARY = ("exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sin", "cos",
                    "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "erf")


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


@_rule(1, "abs", "neg", "sign", "relu", "floor", "ceil", "trunc")
def _same_dtype_unary(n: _Node) -> str:
    dt = n.out
    x = n.tensor(0, dt)
    if dt is _t.bool_:
        if n.op == "sign":
            return x
        n.no_bool()
    unsigned = dt is _t.uint8
    if n.op == "abs":
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
    return f"({_p(x)} == {_num(0, _t.bool_)})" if n.out is _t.bool_ else f"(~{_p(x)})"


@_rule(1, "silu")
def _silu(n: _Node) -> str:
    n.floating_only()
    x = n.tensor(0, n.out)
    return f"({_p(x)} * {_sigmoid(x, n.out)})"


@_rule(2, "gelu")
def _gelu(n: _Node) -> str:
    n.floating_only()
    approximate = n.arg(1)
    x = n.tensor(0, n.out)
    if approximate == "none":  # x * Phi(x) = 0.5 * x * erfc(-x / sqrt(2)): no cancellation
        return f"(0.5 * {_p(x)} * {_ld('erfc', f'({_p(x)} * -0.7071067811865476)')})"
    if approximate == "tanh":  # 0.5 * (1 + tanh(u)) == sigmoid(2u), u = sqrt(2/pi)(x + ...)
        cube = f"0.044715 * {_p(x)} * {_p(x)} * {_p(x)}"
        u2 = f"({_lit(2 * 0.7978845608028654)} * ({_p(x)} + {cube}))"
        return f"({_p(x)} * {_sigmoid(u2, n.out)})"
    n.decline(f"approximate must be 'none' or 'tanh', got {approximate!r}")


@_rule(2, "leaky_relu")
def _leaky_relu(n: _Node) -> str:
    n.floating_only()
    dt = n.out
    x, slope = n.tensor(0, dt), _const_to(n.arg(1), dt, n.kind)
    return _where(f"({_p(x)} > {_num(0, dt)})", x, f"({_p(x)} * {slope})")


@_rule(2, "elu")
def _elu(n: _Node) -> str:
    n.floating_only()
    dt = n.out
    x, alpha = n.tensor(0, dt), _const_to(n.arg(1), dt, n.kind)
    zero = _num(0, dt)
    neg = f"({_ld('expm1', _min(x, zero, dt))} * {alpha})"
    return _where(f"({_p(x)} > {zero})", x, neg)


@_rule(3, "hardtanh")
def _hardtanh(n: _Node) -> str:
    return _hardtanh_of(n, n.arg(1), n.arg(2))


@_rule(1, "relu6")
def _relu6(n: _Node) -> str:
    return _hardtanh_of(n, 0, 6)


def _hardtanh_of(n: _Node, lo, hi) -> str:
    dt = n.out
    n.no_bool()
    if lo > hi:
        n.decline(f"min_val ({lo}) > max_val ({hi}) (eager raises)")
    x = n.tensor(0, dt)
    if not _is_float(dt):  # eager: clamp(x, int(min_val), int(max_val))
        lo_, hi_ = (_const_to(int(v), dt, n.kind, "clamp") for v in (lo, hi))
        return _min(_max(x, lo_, dt), hi_, dt)
    lo_, hi_ = _const_to(lo, dt, n.kind), _const_to(hi, dt, n.kind)
    # eager: where(x <= lo, lo, where(x >= hi, hi, x)); NaN stays NaN
    return _where(f"({_p(x)} <= {lo_})", lo_, _where(f"({_p(x)} >= {hi_})", hi_, x))


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
