"""Pointwise ember ops as Triton expressions: one rule per node kind.

``lower(kind, inputs, out_dtype)`` returns ONE Triton expression (no statements) that
computes an op of ``ember.jit.fuser.FUSIBLE_KINDS`` from its operands' register values, with
ember's eager (numpy) semantics. Registers hold ``compute_dtype`` values: float16 and
bfloat16 compute in float32 and are rounded once, when stored (what PyTorch's CUDA kernels
call "opmath"); bool is ``tl.int1``. For example, with ``x`` an int8 tensor::

    lower("ember::mul", [Operand("v0", int8), Operand("3", None, 3)], int8)
      -> "tl.mul(v0, tl.full([], 3, tl.int8), sanitize_overflow=False)"

Choices that keep results equal to eager:

- constants are typed (``tl.full([], value, dtype)``), converted to the op's dtype first as
  eager does (``int8 + 1000`` adds -24, ``float16 * 0.1`` multiplies by float16(0.1));
  non-finite floats are bit patterns; float64 constants keep all their bits;
- division and square root are IEEE-rounded (float32 ``tl.div_rn`` and ``tl.sqrt_rn``:
  Triton's float32 ``/`` and ``tl.sqrt`` are approximate on NVIDIA GPUs); transcendental
  functions are CUDA's libdevice (``LIBDEVICE_NAME``; float32/float64 overloads only) rather
  than ``tl.exp`` and friends, which lower float32 to approximate PTX instructions;
- integer arithmetic wraps (``sanitize_overflow=False``); floor division and remainder
  follow Python's sign rules (numpy's ``npy_divmod``), fmod and 'trunc' C's;
- maximum/minimum/clamp propagate NaN; bool operands never reach Triton's signed ``int1``
  arithmetic or ordering (``True > False`` is false there).

``lower`` raises ``FusionDeclined`` where eager raises (bool ``sub``, ``gelu`` of ints,
``clamp`` bounds that overflow, an integer division by the constant 0) and for integer
``pow`` with a tensor exponent (Triton has no integer pow; one expression cannot loop).
The group then runs unfused. Integer division and remainder by a tensor holding 0 give 0
where eager raises ZeroDivisionError: a kernel cannot raise (PyTorch's CUDA kernels do not
check either).

Differences from eager that remain: chains of float16/bfloat16 ops round once instead of
after every op; libdevice functions may differ from numpy's by a few ulp (and from numpy's
SIMD ``pow``, which gives NaN for ``(-inf) ** 0.5``); Triton flushes float32 subnormals to
zero inside libdevice unless a launch passes ``enable_reflect_ftz=False``, and contracts
``a * b + c`` into an FMA unless it passes ``enable_fp_fusion=False`` (nvcc does the same
for PyTorch); float to integer conversions of NaN and out-of-range values are undefined in
both and differ.

Reference: numpy's ``npymath`` (``npy_divmod``, ``npy_remainder``), PyTorch's
``aten/src/ATen/native/cuda`` pointwise kernels, Triton's ``language/semantic.py``.
"""
from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from typing import Any, Callable, Optional

import ml_dtypes
import numpy as np

from ember import types as _t
from ember.backends.kernels.copying import cast_scalar
from ember.backends.kernels.pointwise import scalar_to
from ember.jit.fuser import FusionDeclined
from ember.types import ScalarType

__all__ = ["Operand", "compute_dtype", "triton_type", "lower", "SUPPORTED_KINDS",
           "LIBDEVICE_NAME", "LIBDEVICE_FUNCTIONS"]

#: The global name generated code calls libdevice by (``libdevice.exp(x)``).
LIBDEVICE_NAME = "libdevice"
#: Every libdevice function ``lower`` may emit; each takes float32 or float64 arguments of
#: one type (the interpreter's stand-in in ``interpreter.py`` implements exactly these).
LIBDEVICE_FUNCTIONS = frozenset({
    "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "asin",
    "acos", "atan", "sinh", "cosh", "tanh", "erf", "erfc", "atan2", "trunc", "rint", "pow",
    "fmod", "copysign"})

_TRITON = {_t.bool_: "tl.int1", _t.uint8: "tl.uint8", _t.int8: "tl.int8",
           _t.int16: "tl.int16", _t.int32: "tl.int32", _t.int64: "tl.int64",
           _t.float16: "tl.float16", _t.bfloat16: "tl.bfloat16", _t.float32: "tl.float32",
           _t.float64: "tl.float64"}
_HALF = (_t.float16, _t.bfloat16)
_NAN_ALL = "propagate_nan=tl.PropagateNan.ALL"
_ATOM = re.compile(r"[A-Za-z_][A-Za-z_0-9]*$")


@dataclass(frozen=True)
class Operand:
    """One input of a node, as ``lower`` sees it.

    Attributes:
        expr: a tensor's Triton expression (a variable such as ``"v3"``), whose register
            type is ``triton_type(compute_dtype(dtype))``; ignored for a constant.
        dtype: the ember ScalarType of a tensor operand; None for a constant.
        value: a constant's Python value (bool, int, float, str or None).
        rank: a tensor's number of dimensions when known. A rank-0 tensor takes part in
            type promotion below tensors with dimensions (``torch.result_type``); only
            comparisons, whose result dtype does not show the promoted one, need it.
    """

    expr: str
    dtype: Optional[ScalarType]
    value: Any = None
    rank: Optional[int] = None

    @property
    def is_constant(self) -> bool:
        """Whether this is a constant (``dtype is None``)."""
        return self.dtype is None


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


# ---- one node -------------------------------------------------------------------------------
class _Node:
    """The operands of one node and helpers that read them in a given dtype."""

    def __init__(self, kind: str, inputs: list, out: ScalarType):
        self.kind, self.inputs, self.out = kind, inputs, out
        self.op = kind.split("::", 1)[-1]

    def decline(self, why: str):
        raise FusionDeclined(f"{self.kind}: {why}")

    def arg(self, i: int):
        """The constant value of input ``i``; declines for a tensor."""
        o = self.inputs[i]
        if not o.is_constant:
            self.decline(f"argument {i} must be a constant, got a tensor")
        return _scalar(o.value)

    def dtype(self, i: int) -> Optional[ScalarType]:
        return self.inputs[i].dtype

    def tensor(self, i: int, dt: ScalarType, check: Optional[str] = None) -> str:
        """Input ``i`` as a value of ``dt`` (a constant converted as eager converts it)."""
        o = self.inputs[i]
        if o.is_constant:
            return _const_to(o.value, dt, self.kind, check)
        return _cast(o.expr, o.dtype, dt)

    def truth(self, i: int) -> str:
        """Input ``i`` as bool: nonzero (NaN included) is True."""
        o = self.inputs[i]
        if o.is_constant:
            return _num(bool(_scalar(o.value)), _t.bool_)
        return o.expr if o.dtype is _t.bool_ else f"({_p(o.expr)} != {_num(0, o.dtype)})"

    def promoted(self, indices) -> ScalarType:
        """``torch.result_type`` of the inputs at ``indices``."""
        dims, zero, scalars = [], [], []
        for i in indices:
            o = self.inputs[i]
            if o.is_constant:
                v = _scalar(o.value)
                if v.__class__ not in (bool, int, float):
                    self.decline(f"expected a number or a tensor, got {v!r}")
                scalars.append(v)
            else:
                (zero if o.rank == 0 else dims).append(o.dtype)
        return _t.result_type(dims, zero, scalars)

    def floating_only(self):
        if not _is_float(self.out):
            self.decline(f"expected a floating dtype (eager raises NotImplementedError), "
                         f"got {self.out.name}")

    def no_bool(self):
        if self.out is _t.bool_:
            self.decline("bool tensors are not supported (eager raises)")


_RULES: dict[str, tuple[int, Callable]] = {}
# kinds whose first input may be a Python number in eager (``2 - x``, ``2 ** x``)
_NUMBER_SELF = frozenset(f"ember::{op}" for op in (
    "add", "sub", "rsub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod",
    "pow", "atan2", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "bitwise_and",
    "bitwise_or", "bitwise_xor", "where"))


def _rule(nargs: int, *ops: str):
    """Register the lowering of ``ember::<op>`` for each op; it takes ``nargs`` inputs."""
    def register(fn):
        for op in ops:
            _RULES[f"ember::{op}"] = (nargs, fn)
        return fn
    return register


def lower(kind: str, inputs: list, out_dtype: ScalarType) -> str:
    """One Triton expression computing the pointwise node ``kind`` from ``inputs``.

    Args:
        kind: a node kind of ``SUPPORTED_KINDS`` (``"ember::add"``).
        inputs: the node's inputs as :class:`Operand`, in schema order; scalar arguments
            (``alpha``, ``rounding_mode``) are constant Operands.
        out_dtype: the dtype of the node's output (the promoted dtype; bool for
            comparisons).
    Returns the expression, of register type ``triton_type(compute_dtype(out_dtype))``.
    Raises FusionDeclined, its message the reason, for an unknown kind, a dtype outside
    ember's ten, arguments eager would refuse, or a case the module docstring lists.
    """
    entry = _RULES.get(kind)
    if entry is None:
        raise FusionDeclined(f"{kind} has no Triton lowering; supported pointwise kinds are "
                             f"ops.SUPPORTED_KINDS")
    nargs, rule = entry
    if len(inputs) != nargs:
        raise FusionDeclined(f"{kind}: expected {nargs} inputs, got {len(inputs)}")
    if inputs[0].is_constant and kind not in _NUMBER_SELF:
        raise FusionDeclined(f"{kind}: self must be a tensor, got the number "
                             f"{inputs[0].value!r} (eager raises)")
    triton_type(out_dtype)
    for o in inputs:
        if not o.is_constant:
            triton_type(o.dtype)
    return rule(_Node(kind, list(inputs), out_dtype))


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
        return _int_division_by_tensor(a, n.tensor(1, dt), dt, what)
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


def _int_division_by_tensor(a: str, b: str, dt: ScalarType, what: str) -> str:
    """Integer ``what`` by a tensor divisor ``b``. A zero divisor gives 0, as numpy's
    unchecked loops do (eager raises ZeroDivisionError; a kernel cannot, and PyTorch's CUDA
    kernels do not check either); -1 is taken apart because INT_MIN // -1 overflows."""
    zero, one, t = _num(0, dt), _num(1, dt), _TRITON[dt]
    by_zero = f"({_p(b)} == {zero})"
    if dt is _t.uint8:
        safe = _where(by_zero, one, b)
        return _where(by_zero, zero, f"({_p(a)} {'%' if what in ('remainder', 'fmod') else '//'} "
                      f"{safe})")
    by_minus_one = f"({_p(b)} == {_num(-1, dt)})"
    special = f"({by_zero} | {by_minus_one})"
    safe = _where(special, one, b)
    q, r = f"({_p(a)} // {safe})", f"({_p(a)} % {safe})"  # C's truncation and remainder
    if what in ("remainder", "fmod"):
        if what == "remainder":  # Python's rule: a nonzero remainder takes b's sign
            r = _where(f"(({r} != {zero}) & (({r} < {zero}) != ({safe} < {zero})))",
                       _arith("+", r, safe, dt), r)
        return _where(special, zero, r)
    if what == "floor":
        off = f"(({r} != {zero}) & (({r} < {zero}) != ({safe} < {zero})))"
        q = _arith("-", q, f"{off}.to({t})", dt)
    return _where(by_minus_one, _arith("-", zero, a, dt), _where(by_zero, zero, q))


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


@_rule(3, "clamp")
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
    if n.inputs[2].is_constant:
        value = _scalar(n.arg(2))
        if value.__class__ not in (bool, int, float):
            n.decline(f"value must be a number, got {value!r}")
        try:  # eager: fill_'s checked cast (floats truncate into ints, overflow raises)
            value = cast_scalar(value, dt.numpy, "masked_fill")
        except RuntimeError as err:
            n.decline(str(err))
        fill = _num(dt.numpy.type(value), dt)
    else:
        fill = n.tensor(2, dt)
    return _where(mask.expr, fill, n.tensor(0, dt))


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


#: The node kinds ``lower`` handles: every pointwise kind of ``FUSIBLE_KINDS`` (the chunk and
#: split kinds are the code generator's).
SUPPORTED_KINDS = frozenset(_RULES)
