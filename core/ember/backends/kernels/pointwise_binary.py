"""Pointwise binary kernels: arithmetic, comparisons, logical and bitwise ops, where, lerp.

Operands arrive promoted to one dtype (``promote: common`` / ``float``); either operand of a
promoted op may be a Python number (``2 ** x`` reaches ``pow`` as ``(2, x)``), which
``_pair`` converts to the other operand's dtype the way PyTorch casts wrapped numbers.
``sub`` refuses bool operands before promotion hides them (``check: no_bool``, in
ops/checks.py), so its kernel never sees bools.
"""
from __future__ import annotations


from ...errors import DtypeError
from ...types import bool_, get_default_dtype
from .pointwise import (FLOATING, INTEGRAL, NUMBER_CLASSES, PY_NUMBERS, WIDE_FLOATS,
                        scalar_to)

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


BLEND_MIN_SIZE = 2048  # below this numpy's where is as fast as the bit select


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

    def _int_checked(op, fn):
        def kernel(a, b):
            a, b = _pair(a, b)
            if _is_int(a.dtype):
                _check_nonzero(op, b)
            return fn(a, b)
        return kernel

    def pow_(a, e):
        if a.__class__ in PY_NUMBERS:
            a = scalar_to(a, e.dtype)
        elif e.__class__ in PY_NUMBERS:
            if e < 0 and _is_int(a.dtype):
                raise RuntimeError(f"pow(): integers to negative integer powers are not "
                                   f"allowed (exponent {e} for a {a.dtype} tensor); use a "
                                   f"float exponent or base, e.g. x.double() ** {e}")
            return xp.power(a, scalar_to(e, a.dtype, "pow" if _is_int(a.dtype) else None))
        if _is_int(a.dtype) and (e < 0).any():
            return _int_pow_negative(a, e)
        return xp.power(a, e)

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
        if blend_ok and cond.size >= BLEND_MIN_SIZE and a.dtype == b.dtype and \
                a.dtype.itemsize in uint_of:
            return _blend(cond, a, b)
        return xp.where(cond, a, b)

    # NOTE: numpy's where branches on every element and runs ~6x slower than this
    # branch-free select on unpredictable masks (relu's backward: where(x > 0, grad, 0)).
    # Selecting bit patterns keeps NaN, inf and -0.0 exactly. CuPy's where does not branch.
    blend_ok = getattr(xp, "__name__", "") == "numpy"
    uint_of = {2: xp.uint16, 4: xp.uint32, 8: xp.uint64}

    def _blend(cond, a, b):
        # NOTE: a bit pattern times the mask as uint8 (0 or 1) is the pattern or 0, in
        # one ufunc pass; masking with all-ones words took three (and numpy's uint64
        # negative is not vectorized: 15x slower on float64 than this)
        u = uint_of[a.dtype.itemsize]
        c = cond.view(xp.uint8)
        ai, bi = xp.asarray(a).view(u), xp.asarray(b).view(u)
        if not bi.ndim and not bi:               # where(c, x, 0): the common case
            r = xp.multiply(ai, c)
        else:                                    # the products broadcast all three
            r = xp.multiply(ai, c)
            r |= xp.multiply(bi, c ^ xp.uint8(1))
        return r.view(a.dtype)

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
        return _lerp(a, end, w)

    def _lerp(a, end, w):
        # PyTorch's two-sided formula: exact at w == 0 and at w == 1.
        diff = end - a
        return xp.where(xp.abs(w) < 0.5, a + w * diff, end - diff * (1 - w))

    return {
        "add": add, "sub": sub, "mul": mul,
        # NOTE: numpy's float floor_divide/remainder follow Python's divmod, as PyTorch's
        # do (remainder takes the divisor's sign; fmod takes the dividend's).
        "div": div, "true_divide": true_divide,
        "floor_divide": _int_checked("floor_divide", xp.floor_divide),
        "remainder": _int_checked("remainder", xp.remainder),
        "fmod": _int_checked("fmod", xp.fmod),
        "pow": pow_, "atan2": _paired(xp.arctan2),
        "maximum": _paired(xp.maximum),
        "minimum": _paired(xp.minimum),
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
