"""Pointwise unary kernels: exp/log/trig families, activations, rounding, clamp, nan_to_num.

Binary arithmetic, comparisons, logical and bitwise ops live in ``pointwise_binary``; the
helpers here (``scalar_to``, ``opmath``) are shared with it.

Operands arrive already promoted by the dispatcher (``promote: common`` or ``float`` in
native_functions.yaml); Python numbers arrive as weak Python scalars and are converted
with ``scalar_to`` before they meet an array.
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np  # host-side scalar conversion and dtype facts only; arrays go through xp

from . import pointwise_log10
from .array_form import declare_ufunc
from .pointwise_float32 import BLOCK, blocked
from .pointwise_float32 import FUNCTIONS as FLOAT32_FUNCTIONS
from ... import parallel
from ...types import bfloat16, bool_, float16, float32, float64, int8, int16, int32, int64, \
    uint8

INTEGRAL = frozenset({bool_, uint8, int8, int16, int32, int64})
FLOATING = frozenset({float16, bfloat16, float32, float64})

# Kernels that must not serve some dtypes (PyTorch raises "not implemented for 'Bool'").
UNSUPPORTED = {
    "abs": frozenset({bool_}),
    "floor": frozenset({bool_}), "ceil": frozenset({bool_}), "trunc": frozenset({bool_}),
    "round": frozenset({bool_}),
    "gelu": INTEGRAL, "silu": INTEGRAL,
}

PY_NUMBERS = (bool, int, float)
# NOTE: set membership of a type hashes its address: cheaper than the tuple's == scan
NUMBER_CLASSES = frozenset(PY_NUMBERS)
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
#: float32 and float64: numpy computes them in their own dtype, weak Python numbers too
WIDE_FLOATS = frozenset({F32, F64})
_FLOAT_MAX = {np.dtype(d): float(ml_dtypes.finfo(d).max)
              for d in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64)}


def scalar_to(v, dtype, check: str | None = None):
    """A Python number ``v`` as a numpy scalar of ``dtype``; anything else passes through.

    PyTorch casts a wrapped number to the op's dtype, so an out-of-range int wraps around
    (``int8 tensor + 1000`` adds -24; ``uint8 tensor == -1`` compares with 255) and a too
    large float becomes inf. Ops that PyTorch checks instead (``clamp``, ``where`` on ints)
    pass their name as ``check`` and get a RuntimeError.

    NOTE: numpy itself would raise OverflowError for ``int8 array + 1000`` (NEP 50) and
    ml_dtypes promotes ``bfloat16 array + 2.5`` to float32, hence this conversion.
    """
    if v.__class__ not in PY_NUMBERS:
        return v
    fmax = _FLOAT_MAX.get(dtype)
    if fmax is not None:
        if v.__class__ is bool or not abs(v) > fmax:
            return dtype.type(v)
        if check is not None and math.isfinite(v):
            raise _overflow(check, v, dtype)
        return dtype.type(v)  # PyTorch rounds it to inf; the kernels' filter drops the warning
    try:
        return dtype.type(v)
    except OverflowError:
        # PyTorch's checked cast lets unsigned types take -max..-1 as well (two's complement)
        ok = dtype.kind == "u" and 0 < -v <= np.iinfo(dtype).max
        if (check is not None and not ok) or abs(v) >= 2 ** 64:
            raise _overflow(check or "cast", v, dtype) from None
        return np.array(v).astype(dtype)[()]  # two's-complement wrap, like a C cast


def _overflow(op: str, v, dtype) -> RuntimeError:
    return RuntimeError(f"{op}(): value {v!r} cannot be converted to type {dtype} without "
                        f"overflow; pass a value inside the range of {dtype} or convert the "
                        f"tensor to a wider dtype first")


def zeros_by_dtype(xp) -> dict:
    """numpy dtype -> a zero of that dtype to pass to ``xp``'s ufuncs, every numeric dtype
    (no bool).

    On numpy a read-only 0-d array: numpy's ufuncs take it ~0.3us faster than a numpy
    scalar or a Python number. Elsewhere a numpy scalar, which CuPy passes to its kernels
    by value (a 0-d CuPy array would live on one device).
    """
    dts = [np.dtype(d) for d in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64,
                                 np.int8, np.uint8, np.int16, np.int32, np.int64)]
    if xp is not np:
        return {d: d.type(0) for d in dts}
    out = {}
    for d in dts:
        z = np.zeros((), d)
        z.flags.writeable = False  # shared by every call
        out[d] = z
    return out


# NOTE: numpy's maximum(a, 0-d zero) runs its strided loop, not its SIMD one: 22 us on
# 65536 float32 against 5 us for maximum(a, zeros of a's shape). Above this many elements
# relu reads a flat zero buffer instead (below, taking the view costs what it saves).
WIDE_ZERO_MIN_SIZE = 4096
_WIDE_ZERO_MAX_SIZE = 1 << 26   # 256 MiB of float32 address space, never written


class ZeroBuffers:
    """Read-only zero arrays shaped like a C-contiguous float32/float64 input, views of
    one flat buffer per dtype, grown by doubling up to 2**26 elements.

    ``np.zeros`` of that size comes from calloc, whose untouched pages all map the
    kernel's one zero page: reading the buffer costs no memory and stays in cache.
    ``like(a)`` returns None for other dtypes, non-contiguous or oversized inputs.
    """

    def __init__(self):
        self._flat = {np.dtype(np.float32): np.zeros(0, np.float32),
                      np.dtype(np.float64): np.zeros(0, np.float64)}

    def like(self, a):
        flat = self._flat.get(a.dtype)
        n = a.size
        if flat is None or n > _WIDE_ZERO_MAX_SIZE or not a.flags.c_contiguous:
            return None
        if flat.size < n:
            flat = np.zeros(min(_WIDE_ZERO_MAX_SIZE, 1 << (n - 1).bit_length()), a.dtype)
            flat.flags.writeable = False
            self._flat[a.dtype] = flat
        return flat[:n].reshape(a.shape)


BLEND_MIN_SIZE = 2048  # below this numpy's where is as fast as the bit select
_UINT_OF = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def blend(xp, cond, a, b):
    """``where(cond, a, b)`` for arrays or 0-d values of one dtype, branch-free on numpy.

    NOTE: numpy's where branches on every element and runs ~6x slower than this select on
    unpredictable masks (relu's backward: where(x > 0, grad, 0)). Selecting bit patterns
    keeps NaN, inf and -0.0 exactly. CuPy's where does not branch: it gets xp.where.
    """
    u = _UINT_OF.get(a.dtype.itemsize)
    if xp is not np or u is None or cond.size < BLEND_MIN_SIZE:
        return xp.where(cond, a, b)
    # NOTE: a bit pattern times the mask as uint8 (0 or 1) is the pattern or 0, in one
    # ufunc pass (numpy's uint64 negative, for all-ones masks, is not vectorized)
    c = cond.view(np.uint8)
    ai, bi = np.asarray(a).view(u), np.asarray(b).view(u)
    # NOTE: a broadcast operand (a gradient of sum(): stride 0) makes numpy's integer loops
    # strided and ~15x slower; one contiguous copy costs less
    if ai.ndim and 0 in ai.strides:
        ai = np.ascontiguousarray(ai)
    if bi.ndim and 0 in bi.strides:
        bi = np.ascontiguousarray(bi)
    if not bi.ndim and not bi:                   # where(c, x, 0): the common case
        return np.multiply(ai, c).view(a.dtype)
    if not ai.ndim and not ai:                   # where(c, 0, x): masked_fill(m, 0)
        return np.multiply(bi, c ^ np.uint8(1)).view(a.dtype)
    # b ^ ((a ^ b) * c) in the words' own width: the mixed uint8 product costs 3x more
    t = np.bitwise_xor(ai, bi)
    mk = cond.astype(u)
    t = np.multiply(t, mk, out=t) if t.shape == mk.shape else t * mk
    return np.bitwise_xor(t, bi, out=t).view(a.dtype)  # t's shape holds bi's already


def opmath(xp, fn):
    """Run ``fn`` in float32 for float16/bfloat16 inputs and round once at the end, as
    PyTorch's CPU kernels do (its "opmath" type); chained steps in half precision would
    round at every step."""
    def kernel(a, *args):
        if a.dtype.itemsize == 2:  # only floating dtypes reach these kernels
            return fn(a.astype(xp.float32), *args).astype(a.dtype)
        return fn(a, *args)
    return kernel


def _into_kernels(xp, float_ufuncs, clip, wide_zeros) -> dict:
    """``into:<op>`` kernels for the generated in-place ops (``ops/codegen.py``): write
    the result into ``a`` itself and return True, or return False before writing anything
    for a case the general path serves (any dtype but native float32/float64, tensor
    bounds). numpy only: these save the result array (a 4 MB allocation page-faults like a
    pass of exp) and the copy back."""
    def into_ufunc(ufunc):
        def into(a):
            if a.dtype not in WIDE_FLOATS:
                return False
            ufunc(a, out=a)
            return True
        return into

    def sigmoid(a):
        if a.dtype not in WIDE_FLOATS:
            return False
        if a.size <= 2 * BLOCK or not a.flags.c_contiguous:
            _sigmoid_into(a)
        else:  # 4 passes over blocks in cache, on ember's threads
            flat = a.reshape(-1)
            parallel.parallel_for(lambda i: _sigmoid_into(flat[i * BLOCK:(i + 1) * BLOCK]),
                                  -(-flat.size // BLOCK))
        return True

    def _sigmoid_into(a):
        xp.negative(a, out=a)  # 1 / (1 + exp(-a)), as the functional kernel
        xp.exp(a, out=a)
        a += a.dtype.type(1)
        xp.reciprocal(a, out=a)

    def relu(a):
        if a.dtype not in WIDE_FLOATS:
            return False
        z = wide_zeros.like(a) if a.size >= WIDE_ZERO_MIN_SIZE else None
        xp.maximum(a, a.dtype.type(0) if z is None else z, out=a)
        return True

    def clamp(a, lo, hi):
        if a.dtype not in WIDE_FLOATS or (lo is None and hi is None) or \
                lo.__class__ not in _BOUND_CLASSES or hi.__class__ not in _BOUND_CLASSES:
            return False
        lo = None if lo is None else scalar_to(lo, a.dtype, "clamp")
        hi = None if hi is None else scalar_to(hi, a.dtype, "clamp")
        clip(a, lo, hi, out=a)
        return True

    out = {f"into:{name}": into_ufunc(fn) for name, fn in float_ufuncs.items()
           if name not in FLOAT32_FUNCTIONS}  # those take pointwise_float32's formulas
    out.update({"into:neg": into_ufunc(xp.negative), "into:abs": into_ufunc(xp.abs),
                "into:sigmoid": sigmoid, "into:relu": relu, "into:clamp": clamp})
    return out


def _into_log10(a):
    """``into:log10`` (numpy): float32 through ``pointwise_log10``, float64 numpy's ufunc;
    False for the rest."""
    if a.dtype == F32:
        pointwise_log10.into_log10(np, a)
        return True
    if a.dtype == F64:
        np.log10(a, out=a)
        return True
    return False


_BOUND_CLASSES = frozenset({int, float, type(None)})


def via_float32(xp, fn, ufunc, min_size=0):
    """A unary kernel: float32 arrays of at least ``min_size`` elements run
    ``fn(xp, a)`` (``pointwise_float32``), smaller ones and float64 run ``ufunc``;
    float16 and bfloat16 compute in float32 and round once."""
    def kernel(a):
        dt = a.dtype
        if dt == F32:
            return blocked(xp, fn, a) if a.size >= min_size and a.ndim else ufunc(a)
        if dt == F64:
            return ufunc(a)
        return kernel(a.astype(F32)).astype(dt)
    return kernel


def via_float32_binary(xp, fn, ufunc, min_size=0):
    """A binary kernel of two arrays of one dtype (numbers converted): two float32 arrays
    of one shape and at least ``min_size`` elements run ``fn(xp, a, b)``
    (``pointwise_float32``), anything else ``ufunc``."""
    def kernel(a, b):
        if a.dtype == F32 and a.__class__ is b.__class__ and b.dtype == F32 and \
                a.shape == b.shape and a.ndim and a.size >= min_size:
            return blocked(xp, fn, a, b)
        return ufunc(a, b)
    return kernel


def _in_float64(xp, fn):
    """Compute ``fn`` in float64 and cast back (used where the algorithm is written for
    double precision, like erf)."""
    def kernel(a, *args):
        if a.dtype == F64:
            return fn(a, *args)
        return fn(a.astype(xp.float64), *args).astype(a.dtype)
    return kernel


# W. J. Cody, "Rational Chebyshev approximations for the error function", Math. Comp. 23
# (1969) 631-638; coefficients of Netlib SPECFUN's CALERF (https://www.netlib.org/specfun/erf).
# Relative error below 1e-15 in float64 on all three intervals.
_ERF_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
          3.20937758913846947e03, 1.85777706184603153e-1)
_ERF_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
          2.84423683343917062e03)
_ERF_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
          2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
          2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
_ERF_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
          1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
          3.43936767414372164e03, 1.23033935480374942e03)
_ERF_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
          1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
_ERF_Q = (2.56852019228982242e00, 1.87295284992346047e00, 5.27905102951428412e-1,
          6.05183413124413191e-2, 2.33520497626869185e-3)
_SQRPI = 5.6418958354775628695e-1  # 1 / sqrt(pi)


def _ratio(num, den, last_num, last_den, z, n):
    """Cody's Horner loop: (((num*z + n0)*z + n1)...+ last_num) / (... + last_den)."""
    xnum, xden = num[-1] * z, z
    for i in range(n):
        xnum = (xnum + num[i]) * z
        xden = (xden + den[i]) * z
    return (xnum + last_num) / (xden + last_den)


def erf64(xp, x):
    """erf of a float64 array, branch-free over Cody's three intervals."""
    y = xp.abs(x)
    small = x * _ratio(_ERF_A, _ERF_B, _ERF_A[3], _ERF_B[3], y * y, 3)
    # erfc(y) = exp(-y^2) * R(y); y^2 is split as ysq^2 + del so exp keeps full precision.
    y_mid = xp.clip(y, 0.46875, 4.0)
    r_mid = _ratio(_ERF_C, _ERF_D, _ERF_C[7], _ERF_D[7], y_mid, 7)
    y_big = xp.clip(y, 4.0, 27.0)  # erfc underflows to 0 past ~26.5
    z = 1.0 / (y_big * y_big)
    r_big = (_SQRPI - z * _ratio(_ERF_P, _ERF_Q, _ERF_P[4], _ERF_Q[4], z, 4)) / y_big
    yb = xp.where(y <= 4.0, y_mid, y_big)
    ysq = xp.trunc(yb * 16.0) / 16.0
    erfc = xp.exp(-ysq * ysq) * xp.exp(-(yb - ysq) * (yb + ysq)) * \
        xp.where(y <= 4.0, r_mid, r_big)
    large = xp.where(x < 0, -1.0, 1.0) * ((0.5 - erfc) + 0.5)
    return xp.where(y <= 0.46875, small, xp.where(xp.isnan(x), x, large))


_ENDS: dict = {}  # dtype -> the bounds that clip nothing (+-inf, or the integer range)


def kernels(xp) -> dict:
    negative, maximum, exp, reciprocal = xp.negative, xp.maximum, xp.exp, xp.reciprocal
    zero_of = zeros_by_dtype(xp)
    wide_zero = {F32: zero_of[F32], F64: zero_of[F64]}

    def neg(a):
        if a.dtype.kind == "b":
            raise RuntimeError("neg(): negation, the `-` operator, on a bool tensor is not "
                               "supported. If you are trying to invert a mask, use the `~` "
                               "or logical_not() operator instead")
        return negative(a)

    declare_ufunc(neg, negative)  # array_form.py: what it is for float operands

    def positive(a):
        if a.dtype.kind == "b":
            raise RuntimeError("positive(): the `+` operator on a bool tensor is not "
                               "supported; convert it first, e.g. x.int()")
        return a.view()  # declared -> Tensor(a): PyTorch returns self

    def sign(a):
        if a.dtype.kind == "b":
            return a.copy()
        if a.dtype.kind in "iu":
            return xp.sign(a)  # exact for integers, one pass
        # (a > 0) - (a < 0) gives 0 for NaN, as PyTorch does (numpy's sign gives NaN);
        # the bool mask subtracts straight from the float result (no second cast)
        r = (a > 0).astype(a.dtype)
        if not r.ndim:
            return r - (a < 0)
        return xp.subtract(r, a < 0, out=r)

    def _keep_ints(fn):
        def kernel(a):  # floor/ceil/trunc of an integer is the integer itself (a copy)
            return a.copy() if a.dtype.kind in "iu" else fn(a)
        return kernel

    def round_(a, decimals):
        if a.dtype.kind in "iu":
            if decimals != 0:
                raise NotImplementedError(
                    f"round(): decimals={decimals} is not supported for integer tensors "
                    f"({a.dtype}); convert to a floating dtype first")
            return a.copy()
        if decimals == 0:
            return xp.round(a)  # round half to even, like PyTorch's nearbyint
        return opmath(xp, _round_decimals)(a, decimals)

    def _round_decimals(a, decimals):
        # PyTorch's formula: rint(x * 10^d) / 10^d, or rint(x / 10^-d) * 10^-d for d < 0.
        p = a.dtype.type(10.0 ** abs(decimals))
        return xp.round(a * p) / p if decimals > 0 else xp.round(a / p) * p

    wide_zeros = ZeroBuffers() if xp is np else None

    def relu(a):
        if wide_zeros is not None and a.size >= WIDE_ZERO_MIN_SIZE:
            z = wide_zeros.like(a)
            if z is not None:
                return maximum(a, z)
        try:  # every numeric dtype in native byte order: the hot path
            return maximum(a, zero_of[a.dtype])  # keeps NaN, like PyTorch
        except KeyError:
            pass
        if a.dtype.kind == "b":
            raise RuntimeError("relu(): boolean inputs are not supported; convert first, "
                               "e.g. x.float()")
        return maximum(a, a.dtype.type(0))

    blocked = None
    if xp is np:  # large arrays: the op's recipe block by block on ember's threads
        from ..elementwise.eager import ENGINE_MIN_SIZE
        from ..elementwise.eager import unary as blocked

    def sigmoid(a):
        if blocked is not None and a.size >= ENGINE_MIN_SIZE and a.dtype in wide_zero:
            return blocked("sigmoid", a)
        if a.dtype.itemsize == 2:  # float16/bfloat16: in float32, rounded once (opmath)
            return sigmoid(a.astype(F32)).astype(a.dtype)
        # 1 / (1 + exp(-a)), as PyTorch's vectorized kernel and the engine's recipe: exp(-a)
        # overflows to inf for a < -88.7 (float32), giving 0 where sigmoid is subnormal;
        # elsewhere within 2 ulp of the float64 sigmoid (float32, measured on [-90, 90]).
        # NOTE: numpy's logaddexp (exp(-softplus(-a))) is a scalar loop, ~8x slower.
        t = negative(a)
        if not t.ndim:
            return reciprocal(exp(t) + 1)  # (a Python 1 keeps a's dtype: NEP 50)
        exp(t, out=t)
        t += 1
        return reciprocal(t, out=t)

    def silu(a):
        if blocked is not None and a.size >= ENGINE_MIN_SIZE and a.dtype in wide_zero:
            return blocked("silu", a)
        return a * sigmoid(a)

    def gelu(a, approximate):
        if approximate not in ("none", "tanh"):
            raise ValueError(f"gelu(): approximate must be 'none' or 'tanh', got "
                             f"{approximate!r}")
        if blocked is not None and a.size >= ENGINE_MIN_SIZE and a.dtype in wide_zero:
            return blocked("gelu", a, erf=erf_wide, approximate=approximate)
        return _in_float64(xp, _gelu_tanh if approximate == "tanh" else _gelu_erf)(a)

    def _gelu_erf(x):
        return 0.5 * x * (1.0 + erf64(xp, x * 0.7071067811865476))  # 1/sqrt(2)

    def _gelu_tanh(x):
        inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)  # sqrt(2/pi)
        return 0.5 * x * (1.0 + xp.tanh(inner))

    erf_wide = _in_float64(xp, lambda a: erf64(xp, a))

    def erf(a):
        # float32 at any size: a float32 rational approximation, 4e-7 relative (the
        # engine's small path is one pass of ~25 ufuncs, against ~60 float64 passes)
        if blocked is not None and a.dtype == F32 and a.size:
            return blocked("erf", a)
        return erf_wide(a)

    def nan_to_num(a, nan, posinf, neginf):
        fmax = _FLOAT_MAX.get(a.dtype)
        if fmax is None:
            return a.copy()  # integers hold no NaN or inf
        hi = scalar_to(fmax if posinf is None else posinf, a.dtype)
        lo = scalar_to(-fmax if neginf is None else neginf, a.dtype)
        nan = scalar_to(nan, a.dtype)
        if posinf is None and neginf is None:
            # NOTE: clip to the finite range moves only the infinities (NaN passes
            # through): 2 SIMD passes and a branch-free select instead of ~6 passes
            return blend(xp, xp.isnan(a), nan, clip(a, lo, hi))
        r = blend(xp, xp.isnan(a), nan, a)
        r = blend(xp, xp.isposinf(a), hi, r)
        return blend(xp, xp.isneginf(a), lo, r)

    # NOTE: ``a`` is an array: the wrappers refuse a non-Tensor self (number_self)
    def clamp(a, lo, hi):
        if lo is None and hi is None:
            raise ValueError("clamp(): at least one of 'min' or 'max' must not be None")
        if lo is not None:
            lo = scalar_to(lo, a.dtype, "clamp")
        if hi is not None:
            hi = scalar_to(hi, a.dtype, "clamp")
        # NOTE: clip is max then min in one SIMD pass (min > max gives max everywhere, and
        # NaN in any operand gives NaN, as PyTorch); numpy's maximum against a 0-d bound
        # runs its strided scalar loop instead.
        return clip(a, lo, hi)

    def clip(a, lo, hi, out=None):
        # NOTE: numpy's clip with both bounds keeps x where x equals a bound (-0.0 stays
        # -0.0, as PyTorch), with one it returns the bound, in a slower loop: the missing
        # bound becomes the dtype's extreme.
        if lo is None or hi is None:
            if a.dtype.kind == "b":
                return xp.maximum(a, lo) if hi is None else xp.minimum(a, hi)
            ends = _ENDS.get(a.dtype)
            if ends is None:
                info = np.iinfo(a.dtype) if a.dtype.kind in "iu" else None
                ends = _ENDS[a.dtype] = (a.dtype.type(-math.inf), a.dtype.type(math.inf)) \
                    if info is None else (a.dtype.type(info.min), a.dtype.type(info.max))
            lo, hi = (ends[0], hi) if lo is None else (lo, ends[1])
        if a.dtype.kind == "V":  # bfloat16: ml_dtypes' clip would widen to float32
            return xp.clip(a.astype(F32), xp.asarray(lo).astype(F32),
                           xp.asarray(hi).astype(F32)).astype(a.dtype)
        return xp.clip(a, lo, hi, out=out)

    def clamp_min(a, lo):
        return clip(a, scalar_to(lo, a.dtype, "clamp_min"), None)

    def clamp_max(a, hi):
        return clip(a, None, scalar_to(hi, a.dtype, "clamp_max"))

    float_ufuncs = {
        "exp": xp.exp, "exp2": xp.exp2, "log": xp.log, "log2": xp.log2, "log10": xp.log10,
        "log1p": xp.log1p, "expm1": xp.expm1, "sqrt": xp.sqrt, "sin": xp.sin, "cos": xp.cos,
        "tan": xp.tan, "asin": xp.arcsin, "acos": xp.arccos, "atan": xp.arctan,
        "sinh": xp.sinh, "cosh": xp.cosh, "tanh": xp.tanh, "reciprocal": xp.reciprocal,
    }
    table = dict(float_ufuncs)
    if xp is np:
        table.update(_into_kernels(xp, float_ufuncs, clip, wide_zeros))
    if xp is np:
        # NOTE: numpy runs these float32 functions as scalar libm loops; CuPy's own are
        # vectorized (and more accurate), so only numpy takes pointwise_float32's formulas
        for name, (fn, min_size) in FLOAT32_FUNCTIONS.items():
            if name in table:
                table[name] = via_float32(xp, fn, table[name], min_size)
        table["log10"] = via_float32(xp, pointwise_log10.log10, xp.log10)
        table["into:log10"] = _into_log10
    table.update({
        "rsqrt": opmath(xp, lambda a: 1.0 / xp.sqrt(a)),
        "sigmoid": sigmoid,
        "silu": opmath(xp, silu),
        "gelu": gelu,
        "erf": erf,
        "abs": xp.abs, "neg": neg, "positive": positive,
        "sign": sign, "relu": relu,
        "floor": _keep_ints(xp.floor), "ceil": _keep_ints(xp.ceil),
        "trunc": _keep_ints(xp.trunc), "round": round_,
        "nan_to_num": nan_to_num,
        "clamp": clamp, "clamp_min": clamp_min,
        "clamp_max": clamp_max,
    })
    return table
