"""Lowering rules of ops on two or more operands: binary arithmetic, selection and casts,
comparisons, logical and bitwise ops.

Arithmetic covers ``add``/``sub``/``rsub`` (with ``alpha``), ``mul``, ``true_divide`` and
``div``, ``floor_divide``/``remainder``/``fmod``, ``pow``, ``atan2``, ``maximum``/
``minimum``, ``clamp`` (and its alias ``clip``) and ``lerp``; selection and casts
``where``, ``masked_fill`` and ``type_as``. Floor division and remainder follow Python's
sign rules (numpy's ``npy_divmod``), fmod and 'trunc' C's. Each rule registers itself in
``node._RULES`` when imported.

Reference: numpy's ``npymath`` (``npy_divmod``, ``npy_remainder``), PyTorch's
``aten/src/ATen/native/cuda`` pointwise kernels.
"""
from __future__ import annotations

from ember import types as _t
from ember.backends.kernels.copying import cast_scalar
from ember.backends.kernels.pointwise import scalar_to
from ember.types import ScalarType

from .expr import (_HALF, _TRITON, _arith, _cast, _cmp, _const_to, _div, _is_float, _ld, _max,
                   _min, _num, _p, _scalar, _where)
from .node import _Node, _rule


# ---- binary arithmetic ----------------------------------------------------------------------
@_rule(3, "add", "sub", "rsub")
def _add_sub(n: _Node) -> str:
    dt, alpha = n.out, n.arg(2)
    if n.op != "add" and (dt is _t.bool_ or any(
            o.dtype is _t.bool_ or (o.is_constant and _scalar(o.value).__class__ is bool)
            for o in n.inputs[:2])):
        n.decline("bool operands (eager raises: use logical_xor or ~)")
    # add/sub: in0 (op) alpha * in1; rsub: in1 - alpha * in0
    a, b = (n.tensor(1, dt), n.tensor(0, dt)) if n.op == "rsub" else \
        (n.tensor(0, dt), n.tensor(1, dt))
    if not (alpha.__class__ is int and alpha == 1):
        if alpha.__class__ not in (bool, int, float):
            n.decline(f"alpha must be a number, got {alpha!r}")
        if alpha.__class__ is float and not _is_float(dt):
            n.decline(f"a float alpha with {dt.name} tensors (eager raises DtypeError)")
        if alpha.__class__ is bool and dt is not _t.bool_:
            n.decline(f"a bool alpha with a {dt.name} result (eager raises DtypeError)")
        if dt is _t.bool_:
            b = f"({_p(b)} & {_const_to(alpha, dt, n.kind)})"
        else:
            b = _arith("*", b, _const_to(alpha, dt, n.kind), dt)
    if dt is _t.bool_:  # bool + bool is logical or, as numpy's
        return f"({_p(a)} | {_p(b)})"
    return _arith("+" if n.op == "add" else "-", a, b, dt)


@_rule(2, "mul")
def _mul(n: _Node) -> str:
    dt = n.out
    a, b = n.tensor(0, dt), n.tensor(1, dt)
    return f"({_p(a)} & {_p(b)})" if dt is _t.bool_ else _arith("*", a, b, dt)


@_rule(2, "true_divide")
def _true_divide(n: _Node) -> str:
    n.floating_only()  # integral operands divide in the default float dtype, out_dtype
    return _div(n.tensor(0, n.out), n.tensor(1, n.out), n.out)


@_rule(3, "div")
def _div_rule(n: _Node) -> str:
    mode = n.arg(2)
    if mode is None:
        n.floating_only()
        return _div(n.tensor(0, n.out), n.tensor(1, n.out), n.out)
    if mode not in ("trunc", "floor"):
        n.decline(f"rounding_mode must be None, 'trunc' or 'floor', got {mode!r}")
    return _division(n, mode)


@_rule(2, "floor_divide", "remainder", "fmod")
def _division_rule(n: _Node) -> str:
    return _division(n, {"floor_divide": "floor"}.get(n.op, n.op))


#: why an integer division or remainder by a tensor does not fuse (FuseGraph leaves the
#: node out through lowering.can_lower_node; a rule that meets one anyway declines)
INT_DIVISION_BY_TENSOR = ("integer division by a tensor (eager raises ZeroDivisionError for "
                          "a 0 in it, which a kernel cannot)")


def _division(n: _Node, what: str) -> str:
    """``what`` in floor, trunc (quotients), remainder (Python's %), fmod (C's)."""
    dt = n.out
    n.no_bool()
    a = n.tensor(0, dt)
    if _is_float(dt):
        b = n.tensor(1, dt)
        if what == "floor":
            return _floor_div_float(a, b, dt)
        if what == "trunc":  # eager rounds the quotient to the dtype first
            q = _div(a, b, dt)
            return _ld("trunc", _cast(q, _t.float32, dt) if dt in _HALF else q)
        if what == "remainder":
            return _remainder_float(a, b, dt)
        return _ld("fmod", a, b)
    o = n.inputs[1]
    if not o.is_constant:
        # NOTE: eager raises ZeroDivisionError for a 0 anywhere in the divisor and a kernel
        # cannot raise, so the group runs unfused and the result (or error) stays eager's
        n.decline(INT_DIVISION_BY_TENSOR)
    value = _scalar(o.value)
    if value.__class__ not in (bool, int):
        n.decline(f"expected an integer divisor, got {value!r}")
    d = int(scalar_to(value, dt.numpy))
    if d == 0:
        n.decline("integer division by zero (eager raises ZeroDivisionError)")
    b = _num(d, dt)
    zeros = f"tl.full({_p(a)}.shape, 0, {_TRITON[dt]})"
    if d in (1, -1) and dt is not _t.uint8:  # NOTE: INT_MIN // -1 wraps (numpy); sdiv traps
        if what in ("remainder", "fmod"):
            return zeros
        return a if d == 1 else _arith("-", _num(0, dt), a, dt)
    q, r = f"({_p(a)} // {b})", f"({_p(a)} % {b})"  # C's truncation and remainder
    if what == "trunc" or dt is _t.uint8 and what == "floor":
        return q
    if what == "fmod" or dt is _t.uint8:
        return r
    # Python's rules: a nonzero remainder takes the divisor's sign
    off = f"({r} < {_num(0, dt)})" if d > 0 else f"({r} > {_num(0, dt)})"
    if what == "floor":
        return _arith("-", q, f"{off}.to({_TRITON[dt]})", dt)
    return _where(off, _arith("+", r, b, dt), r)


def _floor_div_float(a: str, b: str, dt: ScalarType) -> str:
    """numpy's ``npy_floor_divide`` (and PyTorch's ``div_floor_floating``): floor of the
    exact quotient, snapped; a / b for b == 0."""
    mod = _ld("fmod", a, b)
    div0 = _div(f"({_p(a)} - {mod})", b, dt)
    wrong_sign = f"(({mod} != 0.0) & (({_p(b)} < 0.0) != ({mod} < 0.0)))"
    div = _where(wrong_sign, f"({div0} - 1.0)", div0)
    fl = f"tl.floor({div})"
    snapped = _where(f"(({div} - {fl}) > 0.5)", f"({fl} + 1.0)", fl)
    quotient = _div(a, b, dt)
    signed_zero = _ld("copysign", _num(0, dt), quotient)
    return _where(f"({_p(b)} == 0.0)", quotient,
                  _where(f"({div} != 0.0)", snapped, signed_zero))


def _remainder_float(a: str, b: str, dt: ScalarType) -> str:
    """numpy's ``npy_remainder``: fmod, moved to the divisor's sign; NaN for b == 0."""
    mod = _ld("fmod", a, b)
    moved = _where(f"(({_p(b)} < 0.0) != ({mod} < 0.0))", f"({mod} + {_p(b)})", mod)
    return _where(f"({mod} != 0.0)", moved, _ld("copysign", _num(0, dt), b))


@_rule(2, "pow")
def _pow(n: _Node) -> str:
    dt = n.out
    n.no_bool()
    if _is_float(dt):
        return _ld("pow", n.tensor(0, dt), n.tensor(1, dt))
    e = n.inputs[1]
    if not e.is_constant:
        n.decline("integer pow with a tensor exponent (no integer pow in Triton)")
    value = _scalar(e.value)
    if value.__class__ not in (bool, int):
        n.decline(f"expected an integer exponent, got {value!r}")
    if value < 0:
        n.decline(f"integers to negative integer powers (exponent {value}; eager raises)")
    try:
        k = int(scalar_to(value, dt.numpy, "pow"))
    except RuntimeError as err:
        n.decline(str(err))
    if k > 64:
        n.decline(f"integer exponent {k} > 64 (write it as repeated squaring)")
    x = n.tensor(0, dt)
    if k == 0:
        return f"tl.full({_p(x)}.shape, 1, {_TRITON[dt]})"

    def power(k: int) -> str:  # square and multiply; wrapping products, as numpy's
        if k == 1:
            return x
        h = power(k // 2)
        sq = _arith("*", h, h, dt)
        return _arith("*", sq, x, dt) if k % 2 else sq
    return power(k)


@_rule(2, "atan2")
def _atan2(n: _Node) -> str:
    n.floating_only()
    return _ld("atan2", n.tensor(0, n.out), n.tensor(1, n.out))


@_rule(2, "maximum", "max.other", "minimum", "min.other")
def _max_min(n: _Node) -> str:
    dt = n.out
    a, b = n.tensor(0, dt), n.tensor(1, dt)
    return _max(a, b, dt) if n.op.startswith("max") else _min(a, b, dt)


@_rule(3, "clamp", "clip")  # clip: clamp's alias
def _clamp(n: _Node) -> str:
    dt = n.out
    lo, hi = n.inputs[1], n.inputs[2]
    no_lo, no_hi = (o.is_constant and o.value is None for o in (lo, hi))
    if no_lo and no_hi:
        n.decline("at least one of min or max must not be None (eager raises)")
    r = n.tensor(0, dt)
    if not no_lo:
        r = _max(r, n.tensor(1, dt, "clamp"), dt)
    if not no_hi:  # applied last: min > max gives max, as eager
        r = _min(r, n.tensor(2, dt, "clamp"), dt)
    return r


@_rule(2, "clamp_min", "clamp_max")
def _clamp_one(n: _Node) -> str:
    dt = n.out
    x, bound = n.tensor(0, dt), n.tensor(1, dt, n.op)
    return _max(x, bound, dt) if n.op == "clamp_min" else _min(x, bound, dt)


@_rule(3, "lerp.Tensor", "lerp.Scalar")
def _lerp(n: _Node) -> str:
    n.floating_only()
    dt = n.out
    if n.dtype(0) is not dt or n.dtype(1) is not dt:
        n.decline(f"self and end must both be {dt.name} (eager raises DtypeError)")
    a, end, w = n.tensor(0, dt), n.tensor(1, dt), n.tensor(2, dt)
    # eager (PyTorch's two-sided formula, exact at w == 0 and w == 1):
    # where(|w| < 0.5, a + w * (end - a), end - (end - a) * (1 - w))
    diff = f"({_p(end)} - {_p(a)})"
    small = f"({_p(a)} + {_p(w)} * {diff})"
    big = f"({_p(end)} - {diff} * ({_num(1, dt)} - {_p(w)}))"
    if n.inputs[2].is_constant:
        return small if abs(float(scalar_to(_scalar(n.arg(2)), dt.numpy))) < 0.5 else big
    return _where(f"(tl.abs({w}) < {_num(0.5, dt)})", small, big)


# ---- selection and casts --------------------------------------------------------------------
@_rule(3, "where")
def _where_rule(n: _Node) -> str:
    cond = n.inputs[0]
    if cond.is_constant or cond.dtype is not _t.bool_:
        n.decline("condition must be a bool tensor (eager raises DtypeError)")
    dt = n.out
    check = None if _is_float(dt) else "where"
    return _where(cond.expr, n.tensor(1, dt, check), n.tensor(2, dt, check))


@_rule(3, "masked_fill")
def _masked_fill(n: _Node) -> str:
    mask = n.inputs[1]
    if mask.is_constant or mask.dtype is not _t.bool_:
        n.decline("mask must be a bool tensor (eager raises DtypeError)")
    dt = n.out
    fill = fill_value(n, 2, dt) if n.inputs[2].is_constant else n.tensor(2, dt)
    return _where(mask.expr, fill, n.tensor(0, dt))


def fill_value(n: _Node, i: int, dt: ScalarType) -> str:
    """Constant input ``i`` as ``masked_fill`` writes it into a ``dt`` tensor (fill_'s
    checked cast: floats truncate into ints; a value out of range declines, eager raises)."""
    value = n.arg(i)
    if value.__class__ not in (bool, int, float):
        n.decline(f"value must be a number, got {value!r}")
    try:
        value = cast_scalar(value, dt.numpy, "masked_fill")
    except RuntimeError as err:
        n.decline(str(err))
    return _num(dt.numpy.type(value), dt)


@_rule(2, "type_as")
def _type_as(n: _Node) -> str:
    return n.tensor(0, n.out)


# ---- comparisons, logical and bitwise ops ---------------------------------------------------
_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


@_rule(2, *_COMPARE)
def _compare(n: _Node) -> str:
    dt = n.promoted((0, 1))  # operands compare in torch.result_type, not in bool
    return _cmp(_COMPARE[n.op], n.tensor(0, dt), n.tensor(1, dt), dt)


@_rule(2, "logical_and", "logical_or", "logical_xor")
def _logical(n: _Node) -> str:
    op = {"logical_and": "&", "logical_or": "|", "logical_xor": "^"}[n.op]
    if any(o.is_constant for o in n.inputs):
        n.decline("a number operand (eager takes tensors only)")
    return f"({_p(n.truth(0))} {op} {_p(n.truth(1))})"


@_rule(2, "bitwise_and", "bitwise_or", "bitwise_xor")
def _bitwise(n: _Node) -> str:
    dt = n.out
    if _is_float(dt):
        n.decline(f"{dt.name} tensors have no bitwise ops (eager raises)")
    op = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}[n.op]
    return f"({_p(n.tensor(0, dt))} {op} {_p(n.tensor(1, dt))})"
