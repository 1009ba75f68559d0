"""Pointwise binary kernels: arithmetic, comparisons, logical and bitwise ops, where, lerp.

Operands arrive promoted to one dtype (``promote: common`` / ``float``); either operand of a
promoted op may be a Python number (``2 ** x`` reaches ``pow`` as ``(2, x)``), which
``_pair`` converts to the other operand's dtype the way PyTorch casts wrapped numbers.
``sub`` refuses bool operands before promotion hides them (``check: no_bool``, in
ops/checks.py), so its kernel never sees bools.
"""
from __future__ import annotations

import numpy as np  # the numpy-only fast paths test ``xp is np``

from ...errors import DtypeError
from .array_form import declare_ufunc
from ...types import bool_, get_default_dtype
from .pointwise import (FLOATING, INTEGRAL, NUMBER_CLASSES, PY_NUMBERS, WIDE_FLOATS, blend,
                        scalar_to, via_float32_binary)
from .pointwise_float32 import BINARY as _FLOAT32_BINARY, blocked
from .pointwise import BLEND_MIN_SIZE  # noqa: F401 - re-exported for the tests

_NO_BITS = FLOATING | {bool_}
UNSUPPORTED = {
    "floor_divide": frozenset({bool_}), "remainder": frozenset({bool_}),
    "fmod": frozenset({bool_}), "pow": frozenset({bool_}),
    "bitwise_and": FLOATING, "bitwise_or": FLOATING, "bitwise_xor": FLOATING,
    "bitwise_not": FLOATING,
    "bitwise_left_shift": _NO_BITS, "bitwise_right_shift": _NO_BITS,
    "lerp.Tensor": INTEGRAL, "lerp.Scalar": INTEGRAL,
}


# numpy treats Python numbers as weak for these dtypes exactly as PyTorch does (NEP 50):
# no conversion needed. Ints need ``scalar_to`` for PyTorch's wrap-around, and bfloat16
# because ml_dtypes would promote to float32.


def _pair(a, b):
    """Both operands with one dtype: a Python number takes the other operand's dtype."""
    if a.__class__ in PY_NUMBERS:
        return scalar_to(a, b.dtype), b
    return a, scalar_to(b, a.dtype)


def _weak_pair(a, b):
    """``_pair`` for kernels that only hand the operands to a ufunc: a number may stay a
    weak Python number where numpy already gives PyTorch's result (float32/float64)."""
    if a.__class__ in PY_NUMBERS:
        return (a if b.dtype in WIDE_FLOATS else scalar_to(a, b.dtype)), b
    return a, (b if a.dtype in WIDE_FLOATS else scalar_to(b, a.dtype))


def _is_int(dtype) -> bool:
    return dtype.kind in "iu"


def _check_nonzero(op: str, b) -> None:
    # PyTorch raises for integer division by zero; numpy would return 0 with a warning.
    if (b == 0).any():
        raise RuntimeError(f"{op}(): ZeroDivisionError: integer division by zero; check the "
                           f"divisor, or divide in a floating dtype to get inf/nan")


def _check_alpha(op: str, alpha, dtype) -> None:
    if alpha.__class__ is float and dtype.kind in "biu":
        raise DtypeError(f"{op}(): for integral input tensors ({dtype}), argument alpha must "
                         f"not be a floating point number, got alpha={alpha}; pass an int "
                         f"alpha or convert the tensors to a floating dtype")
    if alpha.__class__ is bool and dtype.kind != "b":
        raise DtypeError(f"{op}(): a boolean alpha is only supported for bool results, but "
                         f"the result is {dtype}; pass alpha as an int")


def _check_same_dtype(name: str, a, other) -> None:
    if other.dtype != a.dtype:
        raise DtypeError(f"lerp(): expected dtype {a.dtype} for '{name}' like 'self', but got "
                         f"{other.dtype}; convert it with .to(self.dtype)")


def kernels(xp) -> dict:
    # NOTE: the hot paths below inline the common case (two arrays, alpha == 1) and hand
    # every other case to the general code; a Python call level costs ~0.06us, the ufunc
    # on 10 elements ~0.25us.
    add_, subtract, multiply, true_divide_ = xp.add, xp.subtract, xp.multiply, xp.true_divide
    arr = xp.ndarray

    def _scaled(op, a, b, alpha, ufunc):
        """``ufunc(a, alpha * b)`` for add and sub (alpha == 1 is the fast path)."""
        if a.__class__ in PY_NUMBERS or b.__class__ in PY_NUMBERS:
            a, b = _weak_pair(a, b)
        if alpha.__class__ is int and alpha == 1:
            return ufunc(a, b)
        dt = (b if a.__class__ in PY_NUMBERS else a).dtype
        _check_alpha(op, alpha, dt)
        return ufunc(a, xp.multiply(b, scalar_to(alpha, dt)))

    def add(a, b, alpha):
        if alpha.__class__ is int and alpha == 1:
            if a.__class__ is not arr or b.__class__ is not arr:
                a, b = _weak_pair(a, b)
            return add_(a, b)
        return _scaled("add", a, b, alpha, add_)

    def sub(a, b, alpha):
        if alpha.__class__ is int and alpha == 1:
            if a.__class__ is not arr or b.__class__ is not arr:
                a, b = _weak_pair(a, b)
            return subtract(a, b)
        return _scaled("sub", a, b, alpha, subtract)

    def mul(a, b):
        if a.__class__ in NUMBER_CLASSES or b.__class__ in NUMBER_CLASSES:
            a, b = _weak_pair(a, b)
        return multiply(a, b)

    def true_divide(a, b):
        if a.__class__ is arr and b.__class__ is arr and a.dtype.kind not in "biu":
            return true_divide_(a, b)  # two float arrays: the hot path
        dt = (b if a.__class__ in PY_NUMBERS else a).dtype
        if dt.kind in "biu":  # int / int gives the default float dtype, like PyTorch
            dt = get_default_dtype().numpy
            # NOTE: a number goes straight to float (uint8 tensor / -3 divides by -3.0)
            a = scalar_to(a, dt) if a.__class__ in PY_NUMBERS else a.astype(dt)
            b = scalar_to(b, dt) if b.__class__ in PY_NUMBERS else b.astype(dt)
        a, b = _pair(a, b)
        return true_divide_(a, b)

    def div(a, b, rounding_mode):
        if rounding_mode is None:
            if a.__class__ is arr and b.__class__ is arr and a.dtype.kind not in "biu":
                return true_divide_(a, b)  # true_divide's hot path, one call level less
            return true_divide(a, b)
        if rounding_mode not in ("trunc", "floor"):
            raise ValueError(f"div(): expected rounding_mode to be one of None, 'trunc' or "
                             f"'floor', got {rounding_mode!r}")
        a, b = _pair(a, b)
        if a.dtype == xp.bool_:
            raise NotImplementedError(f"div(): rounding_mode={rounding_mode!r} is not "
                                      f"implemented for bool tensors; convert them with .int()")
        if _is_int(a.dtype):
            _check_nonzero("div", b)
        if rounding_mode == "floor":
            return xp.floor_divide(a, b)
        if _is_int(a.dtype):
            q_ = xp.floor_divide(a, b)  # then round toward zero where signs differ
            fix = (xp.remainder(a, b) != 0) & ((a < 0) != (b < 0))
            return q_ + fix.astype(q_.dtype)
        return xp.trunc(xp.true_divide(a, b))  # PyTorch rounds the quotient to the dtype first

    # the array-level forms (array_form.py): what these are for float32/float64 operands
    declare_ufunc(add, add_, when=(1,))
    declare_ufunc(sub, subtract, when=(1,))
    declare_ufunc(mul, multiply)
    declare_ufunc(true_divide, true_divide_)
    declare_ufunc(div, true_divide_, when=(None,))

    def pow_(a, e):
        if a.__class__ in PY_NUMBERS:
            a = scalar_to(a, e.dtype)
        elif e.__class__ in PY_NUMBERS:
            if e < 0 and _is_int(a.dtype):
                raise RuntimeError(f"pow(): integers to negative integer powers are not "
                                   f"allowed (exponent {e} for a {a.dtype} tensor); use a "
                                   f"float exponent or base, e.g. x.double() ** {e}")
            if a.dtype.kind not in "biu":  # floating (bfloat16's kind is "V")
                fast = _POW_SCALAR.get(e)
                if fast is not None:
                    if a.dtype.itemsize == 2:  # float16/bfloat16 in float32, rounded once
                        return fast(a.astype(xp.float32)).astype(a.dtype)
                    return fast(a)
            return xp.power(a, scalar_to(e, a.dtype, "pow" if _is_int(a.dtype) else None))
        if _is_int(a.dtype) and (e < 0).any():
            return _int_pow_negative(a, e)
        return xp.power(a, e)

    # NOTE: PyTorch's pow_tensor_scalar_optimized_kernel: these exponents are products,
    # roots and reciprocals, the same roundings as PyTorch: x ** 2, ** 0.5, ** -1 are
    # correctly rounded; x ** 3, ** -2, ** -0.5 round twice, within 1.5 ulp of the exact
    # power in float32/float64 (float16/bfloat16 go through float32: correctly rounded).
    # numpy's power calls powf per element, ~100x slower. Like PyTorch, x ** 0.5 is
    # sqrt: -0.0 ** 0.5 is -0.0 and -inf ** 0.5 is NaN (C's pow gives +0.0 and +inf).
    _POW_SCALAR = {
        2: lambda x: x * x, 3: lambda x: x * x * x, 0.5: xp.sqrt,
        -0.5: lambda x: xp.reciprocal(xp.sqrt(x)), -1: xp.reciprocal,
        -2: lambda x: xp.reciprocal(x * x),
    }

    def _int_pow_negative(a, e):
        # PyTorch (tensor exponents only): 1 ** -n == 1, (-1) ** -n == +-1, else 0 (the
        # truncated reciprocal); numpy would raise.
        zero, one = a.dtype.type(0), a.dtype.type(1)
        neg = e < 0
        r = xp.power(a, xp.where(neg, zero, e))
        odd = xp.where(e % 2 == 0, one, -one)
        special = xp.where(a == 1, one, xp.where(a == -1, odd, zero))
        return xp.where(neg, special, r)

    def _shift(left: bool):
        def kernel(a, b):
            a, b = _pair(a, b)
            if xp is np:
                # NOTE: numpy defines the over-shifts as PyTorch does (npy_lshift: a count
                # < 0 or >= bits gives 0, or the sign fill for a signed right shift)
                return (np.left_shift if left else np.right_shift)(a, b)
            bits = a.dtype.itemsize * 8
            out_of_range = (b < 0) | (b >= bits)
            zero = a.dtype.type(0)
            if left:  # PyTorch: shifting by a negative or too large count gives 0
                return xp.where(out_of_range, zero,
                                xp.left_shift(a, xp.where(out_of_range, zero, b)))
            if a.dtype.kind == "i":  # ... and fills with the sign bit for right shifts
                return xp.right_shift(a, xp.where(out_of_range, a.dtype.type(bits - 1), b))
            return xp.where(out_of_range, zero,
                            xp.right_shift(a, xp.where(out_of_range, zero, b)))
        return kernel

    def _narrow(a):
        """float32/float16/bfloat16 arrays on numpy: the fmod family's exact fast paths."""
        return xp is np and a.__class__ is arr and a.dtype.kind not in "biu" and \
            a.dtype.itemsize <= 4

    def fmod(a, b):
        a, b = _pair(a, b)
        if _narrow(a):
            return _fmod_narrow(a, b)
        if _is_int(a.dtype):
            _check_nonzero("fmod", b)
        return xp.fmod(a, b)

    def remainder(a, b):
        a, b = _pair(a, b)
        if not _narrow(a):
            if _is_int(a.dtype):
                _check_nonzero("remainder", b)
            return xp.remainder(a, b)  # float64: numpy's zero takes b's sign, PyTorch's a's
        # PyTorch: m = fmod(a, b), plus b where m != 0 and m, b differ in sign.
        # NOTE: a zero takes b's sign, as numpy's (and the ONNX export's); PyTorch's keeps
        # fmod's (a's sign)
        if a.size < _NARROW_MIN_SIZE and np.size(b) < _NARROW_MIN_SIZE:
            r = _remainder_steps(_fmod_narrow(a, b), b)
        else:
            r, redo = _divmod_blocks(a, b, _REMAINDER)
            if redo.any():
                bb = xp.broadcast_to(b, r.shape)[redo]
                r[redo] = _remainder_steps(_fmod_narrow(xp.broadcast_to(a, r.shape)[redo],
                                                        bb), bb)
        return xp.copysign(r, b, out=r)  # only zeros change: the others have b's sign

    def floor_divide(a, b):
        a, b = _pair(a, b)
        if not _narrow(a):
            if _is_int(a.dtype):
                _check_nonzero("floor_divide", b)
            return xp.floor_divide(a, b)
        if a.size < _NARROW_MIN_SIZE and np.size(b) < _NARROW_MIN_SIZE:
            return _floor_divide_steps(*np.broadcast_arrays(a, b))
        out, redo = _divmod_blocks(a, b, _FLOOR)
        if redo.any():
            out[redo] = _floor_divide_steps(xp.broadcast_to(a, out.shape)[redo],
                                            xp.broadcast_to(b, out.shape)[redo])
        return out

    def _paired(fn):
        def kernel(a, b):
            a, b = _pair(a, b)
            return fn(a, b)
        return kernel

    def _compare(name, fn):
        def kernel(a, b):
            if a.__class__ is arr and b.__class__ is arr:
                return fn(a, b)
            if a is None or b is None:
                raise TypeError(f"{name}(): expected a Tensor or a number to compare with, "
                                f"got None")
            a, b = _pair(a, b)
            return fn(a, b)
        return kernel

    def _logical(fn):
        def kernel(a, b):  # any dtype: nonzero (NaN included) is True
            return fn(a.astype(xp.bool_, copy=False), b.astype(xp.bool_, copy=False))
        return kernel

    def where(cond, a, b):
        if cond.dtype != xp.bool_:
            raise DtypeError(f"where(): expected condition to be a bool tensor, got "
                             f"{cond.dtype}; pass cond.bool() or (cond != 0)")
        if a.__class__ in PY_NUMBERS or b.__class__ in PY_NUMBERS:
            dt = b.dtype if a.__class__ in PY_NUMBERS else a.dtype
            check = "where" if dt.kind in "biu" else None  # PyTorch checks int overflow
            a, b = scalar_to(a, dt, check), scalar_to(b, dt, check)
        if a.dtype == b.dtype:
            return blend(xp, cond, a, b)
        return xp.where(cond, a, b)

    def lerp(a, end, w):
        # PyTorch does not promote lerp's operands: end (and a weight with dims) must match.
        _check_same_dtype("end", a, end)
        if w.__class__ in PY_NUMBERS:
            w = scalar_to(w, a.dtype)
        elif w.ndim:
            _check_same_dtype("weight", a, w)
        else:  # a 0-d weight is converted, as PyTorch does
            w = w.astype(a.dtype)
        if a.dtype.itemsize == 2:  # float16/bfloat16: compute in float32 (opmath)
            f = xp.float32
            return _lerp(a.astype(f), end.astype(f), w.astype(f)).astype(a.dtype)
        if xp is np and a.dtype == np.float32 and w.ndim and a.shape == end.shape == w.shape:
            # ~10 passes and 5 temporaries: block by block, in cache (pointwise_float32)
            return blocked(xp, _lerp_blocks, a, end, w)
        return _lerp(a, end, w)

    def _lerp_blocks(xp, a, end, w):
        return _lerp(a, end, w)

    def _lerp(a, end, w):
        # PyTorch's two-sided formula: a + w (end - a) where |w| < 0.5, else
        # end - (end - a) (1 - w); exact at w == 0 and at w == 1.
        diff = end - a
        if not w.ndim:  # one weight: one branch for all, 3 passes
            if abs(w) < 0.5:
                diff *= w
                diff += a
                return diff
            return end - diff * (1 - w)
        # NOTE: both sides, then a branch-free select: one formula (base + diff * coef)
        # would differ in the sign of a zero result at w == 1
        low = w * diff
        low += a
        high = diff * (1 - w)
        high = xp.subtract(end, high, out=high) if high.shape == low.shape else end - high
        return blend(xp, xp.abs(w) < 0.5, low, high)

    into = {}
    if xp is np:  # ``into:<op>`` kernels of add_, sub_, mul_, div_ (see ops/codegen.py)
        into = {"into:add": _into(xp.add), "into:sub": _into(xp.subtract),
                "into:mul": _into(xp.multiply), "into:div": _into(xp.true_divide),
                "into:lerp.Scalar": _into_lerp}
    return {
        **into,
        "add": add, "sub": sub, "mul": mul,
        # NOTE: numpy's float floor_divide/remainder follow Python's divmod, as PyTorch's
        # do (remainder takes the divisor's sign; fmod takes the dividend's).
        "div": div, "true_divide": true_divide,
        "floor_divide": floor_divide, "remainder": remainder, "fmod": fmod,
        # NOTE: numpy's float32 arctan2 is a scalar libm loop (CuPy's is vectorized)
        "pow": pow_, "atan2": _paired(via_float32_binary(xp, *_FLOAT32_BINARY["atan2"][:1],
                                                         xp.arctan2,
                                                         _FLOAT32_BINARY["atan2"][1])
                                      if xp is np else xp.arctan2),
        "maximum": declare_ufunc(_paired(xp.maximum), xp.maximum),
        "minimum": declare_ufunc(_paired(xp.minimum), xp.minimum),
        "eq": _compare("eq", xp.equal), "ne": _compare("ne", xp.not_equal),
        "lt": _compare("lt", xp.less), "le": _compare("le", xp.less_equal),
        "gt": _compare("gt", xp.greater), "ge": _compare("ge", xp.greater_equal),
        "logical_and": _logical(xp.logical_and), "logical_or": _logical(xp.logical_or),
        "logical_xor": _logical(xp.logical_xor),
        "logical_not": lambda a: xp.logical_not(a.astype(xp.bool_, copy=False)),
        "bitwise_and": _paired(xp.bitwise_and), "bitwise_or": _paired(xp.bitwise_or),
        "bitwise_xor": _paired(xp.bitwise_xor), "bitwise_not": xp.invert,
        "bitwise_left_shift": _shift(True), "bitwise_right_shift": _shift(False),
        "where": where, "lerp.Tensor": lerp, "lerp.Scalar": lerp,
    }


def _into(ufunc):
    """``ufunc(a, b, out=a)`` for a native float32/float64 ``a`` and ``b`` an array of
    a's dtype and shape or a Python int/float, with ``alpha == 1`` or no
    ``rounding_mode``; False (nothing written) for anything else."""
    def into(a, b, extra=None):
        if a.dtype not in WIDE_FLOATS or not (extra is None or extra.__class__ is int
                                              and extra == 1):
            return False
        if b.__class__ is np.ndarray:
            if b.dtype != a.dtype or b.shape != a.shape:
                return False
        elif b.__class__ is not int and b.__class__ is not float:
            return False
        ufunc(a, b, out=a)
        return True
    return into


def _into_lerp(a, end, w):
    """lerp_ with a number weight into float32/float64 ``a``: ``_lerp``'s two-sided
    formula with one temporary; False for other dtypes, shapes or weights."""
    if a.dtype not in WIDE_FLOATS or end.__class__ is not np.ndarray or \
            end.dtype != a.dtype or end.shape != a.shape or \
            (w.__class__ is not float and w.__class__ is not int):
        return False
    w = a.dtype.type(w)
    diff = np.subtract(end, a)
    if abs(w) < 0.5:
        diff *= w
        np.add(a, diff, out=a)
    else:
        diff *= 1 - w
        np.subtract(end, diff, out=a)
    return True


# ---- fmod, remainder and floor_divide of float32/float16/bfloat16 (numpy only) ---------

# NOTE: numpy's float fmod/remainder/floor_divide call libm's fmodf per element (~20-45
# ns each, a loop of the exponent difference). For float32 and narrower operands fmod is
# exact in float64 as a - t b, t = trunc(a / b), while |t| < 2**28: a non-integer
# quotient of two float32 lies >= 2**-25 relative from an integer, beyond float64's
# rounding, and t b holds <= 52 bits. The other elements (huge quotients, inf, NaN,
# b == 0) are redone with fmod itself. Blocks of _BLOCK keep the float64 steps in cache.
_NARROW_MIN_SIZE = 256  # fewer elements: fmod itself (no blocks to set up)
_BLOCK = 32768
# floor(a / b) is t - 1 where the remainder and b differ in sign, else t. PyTorch's
# div_floor_floating rounds (a - fmod) / b in the operands' dtype, then to the nearest
# integer: that is t (- 1) while |t| < 2 ** (mantissa bits - 4); larger quotients take
# its steps (``_floor_divide_steps``).
_EXACT_QUOTIENT = {np.dtype(np.float32): 2.0 ** 20, np.dtype(np.float16): 2.0 ** 7}
_EXACT_QUOTIENT_BF16 = 2.0 ** 4


_FMOD, _REMAINDER, _FLOOR = range(3)


def _divmod_blocks(a, b, mode: int):
    """(result, redo) of the broadcast operands, in a's dtype: fmod (_FMOD) or remainder
    (_REMAINDER) up to the sign of a zero, or floor(a / b) (_FLOOR); ``redo`` marks the
    elements to recompute.
    """
    if a.size <= _BLOCK and (not np.ndim(b) or b.shape == a.shape):
        return _divmod_small(a, b, mode)
    shape = np.broadcast_shapes(a.shape, np.shape(b))
    af = np.broadcast_to(a, shape).reshape(-1)
    bf = np.asarray(b) if not np.ndim(b) else np.broadcast_to(b, shape).reshape(-1)
    n = af.size
    out, redo = np.empty(n, a.dtype), np.empty(n, np.bool_)
    k = min(n, _BLOCK)
    a64, t, r, tmp = np.empty(k), np.empty(k), np.empty(k), np.empty(k, np.bool_)
    b64 = np.empty(k) if bf.ndim else bf.astype(np.float64)
    exact = _EXACT_QUOTIENT.get(a.dtype, _EXACT_QUOTIENT_BF16)
    for s in range(0, n, _BLOCK):
        e = min(n, s + _BLOCK)
        m = e - s
        A, T, R, X, rd = a64[:m], t[:m], r[:m], tmp[:m], redo[s:e]
        np.copyto(A, af[s:e], casting="unsafe")
        B = b64
        if bf.ndim:
            B = b64[:m]
            np.copyto(B, bf[s:e], casting="unsafe")
        np.trunc(np.divide(A, B, out=T), out=T)
        np.subtract(A, np.multiply(T, B, out=R), out=R)
        np.isnan(R, out=rd)  # NaN operands, b == 0 (t = inf or NaN), b = +-inf (0 * inf)
        np.greater_equal(np.abs(T, out=A), exact if mode == _FLOOR else 2.0 ** 28, out=X)
        rd |= X
        if mode == _FMOD:
            np.copyto(out[s:e], R, casting="unsafe")
            continue
        # the remainder and b differ in sign: floor is t - 1, PyTorch's remainder r + b
        # (one rounding in float64 and one to a's dtype: as float32's own sum rounds)
        np.not_equal(np.less(B, 0), np.less(R, 0), out=X)
        X &= R != 0
        if mode == _FLOOR:
            T -= X
            np.copyto(out[s:e], T, casting="unsafe")
        else:
            R += np.multiply(B, X, out=A)  # NaN for b = +-inf where X is 0: redone anyway
            np.copyto(out[s:e], R, casting="unsafe")
    return out.reshape(shape), redo.reshape(shape)


def _divmod_small(a, b, mode: int):
    """``_divmod_blocks`` of one block, ``b`` of a's shape or 0-d, in ~12 ufunc calls:
    the floored (remainder, floor) or truncated (fmod) quotient t of the float64 operands
    is exact under the same bounds, and so is a - t b."""
    A = a.astype(np.float64)
    B = np.asarray(b).astype(np.float64)
    t = A / B
    (np.trunc if mode == _FMOD else np.floor)(t, out=t)
    r = t * B
    np.subtract(A, r, out=r)
    limit = _EXACT_QUOTIENT.get(a.dtype, _EXACT_QUOTIENT_BF16) if mode == _FLOOR else 2.0 ** 28
    redo = np.abs(t) < limit            # False for NaN: b == 0, NaN operands
    redo &= np.isfinite(r)              # b = +-inf: 0 * inf, or -1 * inf
    np.logical_not(redo, out=redo)
    return (t if mode == _FLOOR else r).astype(a.dtype), redo


def _fmod_narrow(a, b):
    """C's fmod of float32/float16/bfloat16 operands, exact, in a's dtype."""
    if a.size < _NARROW_MIN_SIZE and np.size(b) < _NARROW_MIN_SIZE:  # few: fmod itself
        r = np.fmod(a.astype(np.float32), np.asarray(b).astype(np.float32))
        return r.astype(a.dtype) if r.dtype != a.dtype else r
    r, redo = _divmod_blocks(a, b, False)
    if redo.any():
        r[redo] = np.fmod(np.broadcast_to(a.astype(np.float32, copy=False), r.shape)[redo],
                          np.broadcast_to(np.asarray(b, np.float32), r.shape)[redo])
    return np.copysign(r, a, out=r)  # a zero remainder takes a's sign, as fmod's


def _remainder_steps(m, b):
    """PyTorch's remainder from the fmod ``m``: m + b where m != 0 and the signs differ."""
    return np.where((m != 0) & ((b < 0) != (m < 0)), m + b, m)


def _floor_divide_steps(a, b):
    """PyTorch's div_floor_floating step by step in a's dtype (operands of one shape)."""
    m = np.fmod(a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)
    div = (a - m) / b
    div -= (m != 0) & ((b < 0) != (m < 0))
    fl = np.floor(div)
    fl += (div - fl) > 0.5
    q = a / b  # the result where b == 0, and the sign of a zero quotient
    fl = np.where(div == 0, np.copysign(a.dtype.type(0), q), fl)
    return np.where(b == 0, q, fl)
