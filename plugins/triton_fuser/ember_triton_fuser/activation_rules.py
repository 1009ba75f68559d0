"""Lowering rules of the activations (``torch.nn.functional``'s pointwise ones).

``silu``, ``gelu`` (exact and tanh), ``leaky_relu``, ``elu``, ``selu``, ``celu``,
``hardtanh``, ``relu6``, ``hardswish``, ``hardsigmoid``, ``softplus``, ``mish``,
``log_sigmoid``, ``softsign``, ``tanhshrink``, ``softshrink``, ``hardshrink`` and
``threshold``. Most are composites in eager (``nn/functional/activation.py``,
``activation_smooth.py``): the tracer records one node, and each rule writes the
composite's formula as one expression, its branches (``where``) and clamps included, with
its Python numbers converted to the input's dtype as eager converts them. Floating inputs
only, as eager, except ``hardtanh``/``relu6`` and ``threshold`` (integers stay integers)
and ``softsign``/``tanhshrink`` (integers give the default float dtype). Each rule
registers itself in ``node._RULES`` when imported.

Reference: PyTorch's ``aten/src/ATen/native/cuda/Activation*.cu``.
"""
from __future__ import annotations

from ember import types as _t
from ember.types import ScalarType

from .binary_rules import fill_value
from .expr import (_arith, _cast, _cmp, _const_to, _div, _is_float, _ld, _lit, _max,
                   _min, _num, _p, _rounded, _where)
from .node import _Node, _rule
from .unary_rules import _sigmoid


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


def _elu_of(n: _Node, alpha, divide: bool = False) -> str:
    """eager's elu, where(x > 0, x, expm1(min(x, 0)) * alpha), and celu's, which divides
    min(x, 0) by alpha first (``divide``); expm1 sees min(x, 0), so it never overflows."""
    n.floating_only()
    dt = n.out
    x, a = n.tensor(0, dt), _const_to(alpha, dt, n.kind)
    zero = _num(0, dt)
    neg = _min(x, zero, dt)
    neg = f"({_ld('expm1', _div(neg, a, dt) if divide else neg)} * {a})"
    return _where(f"({_p(x)} > {zero})", x, neg)


@_rule(2, "elu")
def _elu(n: _Node) -> str:
    return _elu_of(n, n.arg(1))


# Klambauer et al. (2017), the constants of eager's (and PyTorch's) selu
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@_rule(1, "selu")
def _selu(n: _Node) -> str:
    return f"({_elu_of(n, _SELU_ALPHA)} * {_const_to(_SELU_SCALE, n.out, n.kind)})"


@_rule(2, "celu")
def _celu(n: _Node) -> str:
    alpha = n.arg(1)
    if alpha == 0:
        n.decline("alpha == 0 (eager raises ValueError)")
    return _elu_of(n, alpha, divide=True)


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


@_rule(1, "hardswish")
def _hardswish(n: _Node) -> str:
    n.floating_only()
    dt = n.out
    x, three = n.tensor(0, dt), _num(3, dt)
    # eager: where(x <= -3, 0, where(x < 3, x * (x + 3) / 6, x))
    mid = _div(f"({_p(x)} * ({_p(x)} + {three}))", _num(6, dt), dt)
    return _where(f"({_p(x)} <= {_num(-3, dt)})", _num(0, dt),
                  _where(f"({_p(x)} < {three})", mid, x))


@_rule(1, "hardsigmoid")
def _hardsigmoid(n: _Node) -> str:
    n.floating_only()
    dt = n.out
    x = n.tensor(0, dt)
    # eager (PyTorch's): min(max(x + 3, 0), 6) / 6; x + 3 is exact near -3, where
    # x / 6 + 0.5 would cancel
    mid = _div(f"({_p(x)} + {_num(3, dt)})", _num(6, dt), dt)
    return _where(f"({_p(x)} <= {_num(-3, dt)})", _num(0, dt),
                  _where(f"({_p(x)} >= {_num(3, dt)})", _num(1, dt), mid))


def _softplus_of(n: _Node, x: str, beta, threshold) -> str:
    """eager's softplus: where(z > threshold, x, log1p(exp(min(z, threshold))) / beta),
    z = x * beta; float16 and bfloat16 compute in float32 throughout, as eager does."""
    dt = _t.float32 if n.out in (_t.float16, _t.bfloat16) else n.out
    b = _const_to(beta, dt, n.kind)
    # eager's clamp_max raises for a threshold out of dt's range: decline then
    t = _const_to(threshold, dt, n.kind, "clamp_max")
    z = f"({_p(x)} * {b})"
    e = _ld("exp", _min(z, t, dt))
    return _where(f"({_p(z)} > {t})", x, _div(_ld("log1p", e), b, dt))


@_rule(3, "softplus")
def _softplus(n: _Node) -> str:
    n.floating_only()
    return _softplus_of(n, n.tensor(0, n.out), n.arg(1), n.arg(2))


@_rule(1, "mish")
def _mish(n: _Node) -> str:
    n.floating_only()
    x = n.tensor(0, n.out)
    return f"({_p(x)} * {_ld('tanh', _softplus_of(n, x, 1, 20))})"


@_rule(1, "log_sigmoid")
def _log_sigmoid(n: _Node) -> str:
    n.floating_only()
    dt = n.out
    z, zero = f"(-{_p(n.tensor(0, dt))})", _num(0, dt)
    # eager: -log(1 + exp(z)), z = -x, with exp of a number <= 0 in either branch:
    # where(z > 0, z + log1p(exp(-max(z, 0))), log1p(exp(min(z, 0))))
    pos = f"({z} + {_ld('log1p', _ld('exp', f'(-{_max(z, zero, dt)})'))})"
    neg = _ld("log1p", _ld("exp", _min(z, zero, dt)))
    return f"(-{_where(f'({z} > {zero})', pos, neg)})"


def _not_bool(n: _Node) -> ScalarType:
    """The input's dtype; declines for bool (eager raises NotImplementedError)."""
    src = n.dtype(0)
    if src is _t.bool_:
        n.decline("bool tensors are not supported (eager raises)")
    return src


@_rule(1, "softsign")
def _softsign(n: _Node) -> str:
    src, dt = _not_bool(n), n.out
    x = n.inputs[0].expr
    # eager: x / (|x| + 1), |x| + 1 in x's dtype (integers wrap: |-128| + 1 is -127 in int8)
    if _is_float(src):
        return _div(x, f"(tl.abs({x}) + {_num(1, src)})", dt)
    ax = x if src is _t.uint8 else f"tl.abs({x})"
    return _div(_cast(x, src, dt), _cast(_arith("+", ax, _num(1, src), src), src, dt), dt)


@_rule(1, "tanhshrink")
def _tanhshrink(n: _Node) -> str:
    _not_bool(n)
    x = n.tensor(0, n.out)
    # tanh(x) rounded to dt as eager's is: x - tanh(x) cancels for small x
    return f"({_p(x)} - {_rounded(_ld('tanh', x), n.out)})"


@_rule(2, "softshrink")
def _softshrink(n: _Node) -> str:
    n.floating_only()
    lambd = n.arg(1)
    if lambd.__class__ in (bool, int, float) and lambd < 0:
        n.decline(f"lambd = {lambd} < 0 (eager raises ValueError)")
    dt = n.out
    x, zero = n.tensor(0, dt), _num(0, dt)
    lo, hi = _neg_const(n, lambd), _const_to(lambd, dt, n.kind)
    # eager: where(-lambd <= x <= lambd, 0, x - sign(x) * lambd); sign(NaN) is 0
    shift = _where(f"({_p(x)} > {zero})", hi, _where(f"({_p(x)} < {zero})", f"(-{hi})", zero))
    return _where(_inside(x, lo, hi), zero, f"({_p(x)} - {shift})")


@_rule(2, "hardshrink")
def _hardshrink(n: _Node) -> str:
    n.floating_only()
    lambd, dt = n.arg(1), n.out
    x = n.tensor(0, dt)
    # eager: where(-lambd <= x <= lambd, 0, x), the identity for lambd < 0
    return _where(_inside(x, _neg_const(n, lambd), _const_to(lambd, dt, n.kind)),
                  _num(0, dt), x)


def _neg_const(n: _Node, value) -> str:
    if value.__class__ not in (bool, int, float):
        n.decline(f"expected a number, got {value!r}")
    return _const_to(-value, n.out, n.kind)


def _inside(x: str, lo: str, hi: str) -> str:
    return f"(({_p(x)} >= {lo}) & ({_p(x)} <= {hi}))"


@_rule(3, "threshold")
def _threshold(n: _Node) -> str:
    _not_bool(n)
    dt = n.out
    # eager: x.masked_fill(x <= threshold, value): the comparison in the promoted dtype
    # (an int tensor against 0.5 compares in float), value cast as masked_fill casts it
    cmp = n.promoted((0, 1))
    below = _cmp("<=", n.tensor(0, cmp), n.tensor(1, cmp), cmp)
    return _where(below, fill_value(n, 2, dt), n.tensor(0, dt))

