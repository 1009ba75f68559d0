"""Pointwise kernels of special functions and NaN-aware binaries: asinh, acosh, atanh,
erfc, logit, frac, signbit; xlogy, logaddexp, logaddexp2, copysign, fmax, fmin; and the
fused multiply/divide-adds addcmul, addcdiv.

Operands arrive promoted (``promote: float`` or ``common`` in native_functions.yaml);
Python numbers arrive as weak scalars and take the other operand's dtype here, as
PyTorch's wrapped numbers do. float16/bfloat16 compute in float32 and round once (opmath).
"""
from __future__ import annotations

from ...types import bool_
from .pointwise import (_ERF_A, _ERF_B, _ERF_C, _ERF_D, _ERF_P, _ERF_Q, _SQRPI, INTEGRAL,
                        PY_NUMBERS, _in_float64, _ratio, opmath, scalar_to)

# PyTorch: "frac_cpu" / "logaddexp_cpu" not implemented for 'Long', "addcmul_cpu_out" for
# 'Bool'; addcdiv refuses integers with its own message (in the kernel).
UNSUPPORTED = {
    "frac": INTEGRAL, "logaddexp": INTEGRAL, "logaddexp2": INTEGRAL,
    "addcmul": frozenset({bool_}),
}


def erfc64(xp, x):
    """erfc of a float64 array by Cody's approximations (see ``pointwise.erf64``), computed
    directly rather than as 1 - erf, so it keeps its relative precision in the right tail
    (erfc(10) = 2.1e-45) until it underflows past x ~ 26.5."""
    y = xp.abs(x)
    small = 1.0 - x * _ratio(_ERF_A, _ERF_B, _ERF_A[3], _ERF_B[3], y * y, 3)
    y_mid = xp.clip(y, 0.46875, 4.0)
    r_mid = _ratio(_ERF_C, _ERF_D, _ERF_C[7], _ERF_D[7], y_mid, 7)
    y_big = xp.clip(y, 4.0, 27.0)
    z = 1.0 / (y_big * y_big)
    r_big = (_SQRPI - z * _ratio(_ERF_P, _ERF_Q, _ERF_P[4], _ERF_Q[4], z, 4)) / y_big
    yb = xp.where(y <= 4.0, y_mid, y_big)
    ysq = xp.trunc(yb * 16.0) / 16.0
    tail = xp.exp(-ysq * ysq) * xp.exp(-(yb - ysq) * (yb + ysq)) * \
        xp.where(y <= 4.0, r_mid, r_big)
    large = xp.where(y > 27.0, 0.0, tail)
    large = xp.where(x < 0, 2.0 - large, large)
    return xp.where(y <= 0.46875, small, xp.where(xp.isnan(x), x, large))


def _is_half(dt) -> bool:
    """float16 or bfloat16 (ml_dtypes gives bfloat16 kind 'V')."""
    return dt.itemsize == 2 and dt.kind not in "iu"


def _pair(a, b):
    """Both operands as arrays of one dtype: a Python number takes the other's dtype."""
    if a.__class__ in PY_NUMBERS:
        return scalar_to(a, b.dtype), b
    if b.__class__ in PY_NUMBERS:
        return a, scalar_to(b, a.dtype)
    return a, b


def kernels(xp) -> dict:
    def binary(fn):
        """A kernel of two operands of one dtype (numbers converted); float16/bfloat16
        compute in float32 and round once."""
        def kernel(a, b):
            a, b = _pair(a, b)
            if _is_half(a.dtype):
                return fn(a.astype(xp.float32), b.astype(xp.float32)).astype(a.dtype)
            return fn(a, b)
        return kernel

    def xlogy(a, b):
        # 0 * log(0) = 0 (and 0 * log(anything not NaN)); a NaN y stays NaN, as PyTorch
        r = a * xp.log(b)
        return xp.where((a == 0) & ~xp.isnan(b), a.dtype.type(0), r)

    def logit(a, eps):
        if eps is not None:  # PyTorch clamps to [eps, 1 - eps] first
            a = xp.clip(a, a.dtype.type(eps), a.dtype.type(1.0 - eps))
        return xp.log(a / (1 - a))

    def frac(a):
        return a - xp.trunc(a)

    def signbit(a):
        if a.dtype.kind in "bu":
            return xp.zeros(a.shape, dtype=xp.bool_)
        return xp.signbit(a.astype(xp.float32) if _is_half(a.dtype) else a)  # -0.0 and -NaN too

    def _value(value, dtype):
        # PyTorch casts value to the op's dtype: 0.5 truncates to 0 for integer tensors
        return scalar_to(int(value) if value.__class__ is bool else value, dtype)

    def addcmul(a, t1, t2, value):
        def f(a, t1, t2):
            return a + _value(value, a.dtype) * (t1 * t2)
        return _opmath3(f, a, t1, t2)

    def addcdiv(a, t1, t2, value):
        if a.dtype.kind in "biu":
            raise RuntimeError(
                f"addcdiv(): integer division with addcdiv is not supported (tensors of dtype "
                f"{a.dtype}); for true division convert tensor1 or tensor2 to a floating dtype, "
                f"for floor division use addcmul(self, tensor1.div(tensor2, "
                f"rounding_mode='floor'), value=value)")

        def f(a, t1, t2):
            return a + _value(value, a.dtype) * (t1 / t2)
        return _opmath3(f, a, t1, t2)

    def _opmath3(f, a, t1, t2):
        dt = next(x.dtype for x in (a, t1, t2) if x.__class__ not in PY_NUMBERS)
        a, t1, t2 = (scalar_to(x, dt) for x in (a, t1, t2))
        if _is_half(dt):
            f32 = xp.float32
            return f(*(xp.asarray(x).astype(f32) for x in (a, t1, t2))).astype(dt)
        return f(a, t1, t2)

    return {
        "asinh": xp.arcsinh, "acosh": xp.arccosh, "atanh": xp.arctanh,
        "erfc": _in_float64(xp, lambda a: erfc64(xp, a)),
        "logit": opmath(xp, logit), "frac": frac, "signbit": signbit,
        "xlogy": binary(xlogy), "logaddexp": binary(xp.logaddexp),
        "logaddexp2": binary(xp.logaddexp2), "copysign": binary(xp.copysign),
        # NaN loses to a number (C's fmax), unlike maximum; ints and bools too
        "fmax": binary(xp.fmax), "fmin": binary(xp.fmin),
        "addcmul": addcmul, "addcdiv": addcdiv,
    }

