"""Lowering rules of the special functions and NaN-aware ops of ember's
``backends/kernels/special.py`` (and ``float_power``): ``logit``; ``xlogy``,
``logaddexp``, ``logaddexp2``, ``copysign``, ``fmax``, ``fmin``, ``float_power``; and the
fused multiply/divide-adds ``addcmul`` and ``addcdiv`` (three tensors and ``value``).

Each follows eager's kernel step by step: ``xlogy``'s 0 * log(0) = 0 unless y is NaN,
numpy's ``npy_logaddexp`` branches, ``fmax``/``fmin`` that ignore a NaN (C's, unlike
``maximum``), ``float_power`` in float64 for any input dtypes, ``addcmul``'s ``value``
cast to the result dtype (0.5 truncates to 0 for integers). Each rule registers itself in
``node._RULES`` when imported.

Reference: numpy's ``npy_math_internal.h.src`` (``npy_logaddexp``, ``npy_logaddexp2``),
PyTorch's ``aten/src/ATen/native/cuda`` pointwise kernels.
"""
from __future__ import annotations

import math

from ember import types as _t

from .expr import (_arith, _const_to, _div, _is_float, _ld, _lit, _max, _min, _num, _p,
                   _where, compute_dtype)
from .node import _Node, _rule


@_rule(2, "logit")
def _logit(n: _Node) -> str:
    n.floating_only()  # integral inputs promote to the default float dtype, n.out
    dt, eps = n.out, n.arg(1)
    x = n.tensor(0, dt)
    if eps is not None:
        # eager clamps to [eps, 1 - eps] with bounds in the compute dtype (float32 for
        # float16/bfloat16: opmath); lo > hi gives hi, NaN stays NaN (numpy's clip)
        ct = compute_dtype(dt)
        if eps.__class__ not in (bool, int, float):
            n.decline(f"eps must be a number or None, got {eps!r}")
        lo, hi = _const_to(eps, ct, n.kind), _const_to(1.0 - eps, ct, n.kind)
        x = _min(_max(x, lo, dt), hi, dt)
    return _ld("log", _div(x, f"(1.0 - {_p(x)})", dt))


@_rule(2, "xlogy")
def _xlogy(n: _Node) -> str:
    n.floating_only()
    dt = n.out
    a, b = n.tensor(0, dt), n.tensor(1, dt)
    # eager: where(a == 0 & b not NaN, 0, a * log(b)): 0 * log(0) = 0, 0 * log(NaN) = NaN
    # NOTE: nested wheres, not &: the interpreter cannot & a 0-d bool with a block
    return _where(f"({_p(a)} == 0.0)", _where(f"({_p(b)} == {_p(b)})", _num(0, dt), b),
                  f"({_p(a)} * {_ld('log', b)})")


@_rule(2, "logaddexp", "logaddexp2")
def _logaddexp(n: _Node) -> str:
    n.floating_only()
    dt = n.out
    a, b = n.tensor(0, dt), n.tensor(1, dt)
    d = f"({_p(a)} - {_p(b)})"
    if n.op == "logaddexp":
        equal, exp, scale = f"({_p(a)} + {_lit(math.log(2))})", "exp", ""
    else:  # log2(1 + v) as numpy's npy_log2_1p: LOG2E * log1p(v)
        equal, exp, scale = f"({_p(a)} + 1.0)", "exp2", f"{_lit(1 / math.log(2))} * "
    # numpy's npy_logaddexp: a == b first (infinities of one sign, whose d is NaN); else
    # the larger plus log1p(exp(-|d|)); else d, a NaN, when either operand is NaN
    above = f"({_p(a)} + {scale}{_ld('log1p', _ld(exp, f'(-{d})'))})"
    below = f"({_p(b)} + {scale}{_ld('log1p', _ld(exp, d))})"
    return _where(f"({_p(a)} == {_p(b)})", equal,
                  _where(f"({d} > 0.0)", above, _where(f"({d} <= 0.0)", below, d)))


@_rule(2, "copysign")
def _copysign(n: _Node) -> str:
    n.floating_only()
    return _ld("copysign", n.tensor(0, n.out), n.tensor(1, n.out))


@_rule(2, "fmax", "fmin")
def _fmax_fmin(n: _Node) -> str:
    dt = n.out
    a, b = n.tensor(0, dt), n.tensor(1, dt)
    if not _is_float(dt):
        return _max(a, b, dt) if n.op == "fmax" else _min(a, b, dt)
    # C's fmax as numpy's loop writes it: a when a wins or b is NaN, else b (so a NaN a
    # loses to a number, and two NaNs give NaN)
    wins = f"({_p(a)} {'>=' if n.op == 'fmax' else '<='} {_p(b)})"
    return _where(f"({_p(b)} != {_p(b)})", a, _where(wins, a, b))  # wheres: see xlogy


@_rule(2, "float_power")
def _float_power(n: _Node) -> str:
    if n.out is not _t.float64:
        n.decline(f"expected a float64 result (eager's), got {n.out.name}")
    # eager converts each operand to float64 on its own, then pow
    return _ld("pow", n.tensor(0, _t.float64), n.tensor(1, _t.float64))


@_rule(4, "addcmul", "addcdiv")
def _addc(n: _Node) -> str:
    dt = n.out
    if n.op == "addcmul":
        n.no_bool()
    elif not _is_float(dt):
        n.decline("integer division with addcdiv (eager raises RuntimeError)")
    value = n.arg(3)
    if value.__class__ not in (bool, int, float):
        n.decline(f"value must be a number, got {value!r}")
    # eager casts value to the compute dtype (float32 for float16/bfloat16): 0.5 -> 0 in
    # integer results
    v = _const_to(int(value) if value.__class__ is bool else value, compute_dtype(dt), n.kind)
    a, t1, t2 = n.tensor(0, dt), n.tensor(1, dt), n.tensor(2, dt)
    prod = _div(t1, t2, dt) if n.op == "addcdiv" else _arith("*", t1, t2, dt)
    return _arith("+", a, _arith("*", v, prod, dt), dt)
