"""Triton expression text: register types and the small string builders the rules compose.

Registers hold ``compute_dtype`` values, named by ``triton_type``; each builder takes and
returns the source text of one expression. The names with a leading underscore are this
package's own: ``node.py`` and the rule modules (``unary_rules.py``, ``binary_rules.py``)
build every expression from them.

Choices that keep results equal to eager:

- constants are typed (``tl.full([], value, dtype)``), converted to the op's dtype first as
  eager does (``int8 + 1000`` adds -24, ``float16 * 0.1`` multiplies by float16(0.1));
  non-finite floats are bit patterns; float64 constants keep all their bits;
- division and square root are IEEE-rounded (float32 ``tl.div_rn`` and ``tl.sqrt_rn``:
  Triton's float32 ``/`` and ``tl.sqrt`` are approximate on NVIDIA GPUs); transcendental
  functions are CUDA's libdevice (``LIBDEVICE_NAME``; float32/float64 overloads only) rather
  than ``tl.exp`` and friends, which lower float32 to approximate PTX instructions;
- integer arithmetic wraps (``sanitize_overflow=False``);
- maximum/minimum/clamp propagate NaN; bool operands never reach Triton's signed ``int1``
  arithmetic or ordering (``True > False`` is false there).

Reference: Triton's ``language/semantic.py``.
"""
from __future__ import annotations

import math
import re
import struct
from typing import Any, Optional

import numpy as np

from ember import types as _t
from ember.backends.kernels.pointwise import scalar_to
from ember.jit.runtime.fuser import FusionDeclined
from ember.types import ScalarType

__all__ = ["compute_dtype", "triton_type", "LIBDEVICE_NAME", "LIBDEVICE_FUNCTIONS"]

#: The global name generated code calls libdevice by (``libdevice.exp(x)``).
LIBDEVICE_NAME = "libdevice"
#: Every libdevice function ``lower`` may emit; each takes float32 or float64 arguments of
#: one type (the interpreter's stand-in in ``interpreter.py`` implements exactly these).
LIBDEVICE_FUNCTIONS = frozenset({
    "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "asin",
    "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "atan2",
    "trunc", "rint", "pow", "fmod", "copysign"})

_TRITON = {_t.bool_: "tl.int1", _t.uint8: "tl.uint8", _t.int8: "tl.int8",
           _t.int16: "tl.int16", _t.int32: "tl.int32", _t.int64: "tl.int64",
           _t.float16: "tl.float16", _t.bfloat16: "tl.bfloat16", _t.float32: "tl.float32",
           _t.float64: "tl.float64"}
_HALF = (_t.float16, _t.bfloat16)
_NAN_ALL = "propagate_nan=tl.PropagateNan.ALL"
_ATOM = re.compile(r"[A-Za-z_][A-Za-z_0-9]*$")


def compute_dtype(dtype: ScalarType) -> ScalarType:
    """The dtype registers hold for ``dtype``: float32 for float16/bfloat16, else ``dtype``."""
    return _t.float32 if dtype in _HALF else dtype


def triton_type(dtype: ScalarType) -> str:
    """The Triton type of ``dtype`` as source text (``"tl.float32"``; bool is
    ``"tl.int1"``). Raises FusionDeclined for a dtype Triton kernels do not hold."""
    try:
        return _TRITON[dtype]
    except (KeyError, TypeError):
        raise FusionDeclined(f"dtype {dtype!r} has no Triton type; supported: "
                             f"{', '.join(d.name for d in _TRITON)}") from None


# ---- expression text ------------------------------------------------------------------------
def _p(expr: str) -> str:
    """``expr`` safe to put before ``.attr`` or inside a larger expression."""
    if _ATOM.match(expr) or (expr.startswith("(") and _balanced_outer(expr)):
        return expr
    return f"({expr})"


def _balanced_outer(expr: str) -> bool:
    depth = 0
    for i, ch in enumerate(expr):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and i < len(expr) - 1:
            return False
    return expr.endswith(")")


def _is_float(dt: ScalarType) -> bool:
    return dt.is_floating_point


def _is_int(dt: ScalarType) -> bool:
    return dt is not _t.bool_ and not dt.is_floating_point


def _num(value, dt: ScalarType) -> str:
    """A constant already representable in ``dt``, as a 0-d tensor of ``dt``'s register type."""
    if dt is _t.bool_:
        return f"tl.full([], {int(bool(value))}, tl.int1)"
    if _is_int(dt):
        return f"tl.full([], {int(value)}, {_TRITON[dt]})"
    ct = compute_dtype(dt)
    f = float(value)
    if math.isfinite(f):
        return f"tl.full([], {f!r}, {_TRITON[ct]})"
    # NOTE: inf and nan have no literal Triton reads; their bit patterns do.
    if ct is _t.float64:
        bits = struct.unpack("<Q", struct.pack("<d", f))[0]
        return f"tl.full([], {bits}, tl.uint64).to(tl.float64, bitcast=True)"
    bits = struct.unpack("<I", struct.pack("<f", f))[0]
    return f"tl.full([], {bits}, tl.uint32).to(tl.float32, bitcast=True)"


def _lit(value: float) -> str:
    """A finite float constant as a bare literal, for use ONLY as the partner of a float
    tensor in an arithmetic op, comparison or ``tl.where``: Triton then gives it the
    tensor's type and converts the full double value (``get_fp64``), so it is exact."""
    return repr(float(value))


def _ld(fn: str, *args: str) -> str:
    return f"{LIBDEVICE_NAME}.{fn}({', '.join(args)})"


def _arith(op: str, a: str, b: str, dt: ScalarType) -> str:
    """``a op b`` for op in + - *, wrapping for integers (Triton checks overflow in debug)."""
    if _is_float(dt):
        return f"({_p(a)} {op} {_p(b)})"
    fn = {"+": "add", "-": "sub", "*": "mul"}[op]
    return f"tl.{fn}({a}, {b}, sanitize_overflow=False)"


def _div(a: str, b: str, dt: ScalarType) -> str:
    """IEEE division: Triton's float32 ``/`` is approximate on NVIDIA GPUs, its ``div_rn``
    float32-only; float64 ``/`` is IEEE (PTX ``div.rn.f64``)."""
    if compute_dtype(dt) is _t.float64:
        return f"({_p(a)} / {_p(b)})"
    return f"tl.div_rn({a}, {b})"


def _sqrt(x: str, dt: ScalarType) -> str:
    """IEEE square root (``tl.sqrt`` is approximate for float32, ``sqrt_rn`` float32-only)."""
    return f"tl.sqrt({x})" if compute_dtype(dt) is _t.float64 else f"tl.sqrt_rn({x})"


def _where(c: str, a: str, b: str) -> str:
    return f"tl.where({c}, {a}, {b})"


def _max(a: str, b: str, dt: ScalarType) -> str:
    if dt is _t.bool_:
        return f"({_p(a)} | {_p(b)})"
    return f"tl.maximum({a}, {b}{', ' + _NAN_ALL if _is_float(dt) else ''})"


def _min(a: str, b: str, dt: ScalarType) -> str:
    if dt is _t.bool_:
        return f"({_p(a)} & {_p(b)})"
    return f"tl.minimum({a}, {b}{', ' + _NAN_ALL if _is_float(dt) else ''})"


def _cmp(op: str, a: str, b: str, dt: ScalarType) -> str:
    if dt is _t.bool_ and op not in ("==", "!="):
        # NOTE: Triton's int1 is signed (True == -1), so order bools as int8.
        a, b = f"{_p(a)}.to(tl.int8)", f"{_p(b)}.to(tl.int8)"
    return f"({_p(a)} {op} {_p(b)})"


def _cast(expr: str, src: ScalarType, dt: ScalarType) -> str:
    """A register value of dtype ``src`` as one of dtype ``dt``: rounded to ``dt`` (a cast to
    float16 rounds, though the register stays float32), in ``dt``'s register type."""
    if src is dt:
        return expr
    if dt is _t.bool_:
        return f"({_p(expr)} != {_num(0, src)})"
    if dt is _t.bfloat16 and src is not _t.float32:
        # NOTE: through float32, as ml_dtypes (eager) converts; Triton's interpreter also
        # mis-casts anything but float32 to bfloat16
        expr, src = _cast(expr, src, _t.float32), _t.float32
    if dt in _HALF:
        return f"{_p(expr)}.to({_TRITON[dt]}).to(tl.float32)"
    if compute_dtype(src) is dt:
        return expr
    return f"{_p(expr)}.to({_TRITON[dt]})"


def _rounded(expr: str, dt: ScalarType) -> str:
    """A register value of dtype ``dt`` rounded to ``dt`` as eager holds it: a float16 or
    bfloat16 value computed in float32 goes through ``dt`` (so 7e4 becomes float16's inf);
    other dtypes' registers are exact already."""
    return f"{_p(expr)}.to({_TRITON[dt]}).to(tl.float32)" if dt in _HALF else expr


def _scalar(value) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _const_to(value, dt: ScalarType, op: str, check: Optional[str] = None) -> str:
    """A constant operand converted to ``dt`` as eager converts a Python number
    (``scalar_to``: ints wrap, too large floats become inf; ``check`` raises instead)."""
    value = _scalar(value)
    if value.__class__ not in (bool, int, float):
        raise FusionDeclined(f"{op}: expected a number, got {value!r}")
    try:
        v = scalar_to(value, dt.numpy, check)
    except (RuntimeError, OverflowError) as e:
        raise FusionDeclined(f"{op}: {e}") from None
    return _num(v, dt)
