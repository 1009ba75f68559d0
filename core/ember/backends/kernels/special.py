"""Pointwise kernels of special functions and NaN-aware binaries: asinh, acosh, atanh,
erfc, logit, frac, signbit; xlogy, logaddexp, logaddexp2, copysign, fmax, fmin; and the
fused multiply/divide-adds addcmul, addcdiv.

Operands arrive promoted (``promote: float`` or ``common`` in native_functions.yaml);
Python numbers arrive as weak scalars and take the other operand's dtype here, as
PyTorch's wrapped numbers do. float16/bfloat16 compute in float32 and round once (opmath).

erfc runs in the input's precision: float64 each of Cody's intervals only on its own
elements (``subset``; < 6 ulp, 5 measured against mpmath on [-6, 10]); float32 (and
float16/bfloat16 through it) branch-free in ``special_erfc32`` (< 7 ulp).
The helpers here (``by_precision``, ``subset``, ``erfc_ratio``) serve the other special
kernels too.
"""
from __future__ import annotations

import numpy as np  # only to tell numpy from CuPy

from ...types import bool_
from .pointwise import (_ERF_A, _ERF_B, _ERF_C, _ERF_D, _ERF_P, _ERF_Q, _SQRPI, INTEGRAL,
                        PY_NUMBERS, opmath, scalar_to, via_float32,
                        via_float32_binary)
from . import special_erfc32
from .pointwise_float32 import BINARY as _FLOAT32_BINARY
from .pointwise_float32 import FUNCTIONS as _FLOAT32

# PyTorch: "frac_cpu" / "logaddexp_cpu" not implemented for 'Long', "addcmul_cpu_out" for
# 'Bool'; addcdiv refuses integers with its own message (in the kernel).
UNSUPPORTED = {
    "frac": INTEGRAL, "logaddexp": INTEGRAL, "logaddexp2": INTEGRAL,
    "addcmul": frozenset({bool_}),
}


def _quiet(xp):
    """Floating-point warnings off where the namespace has ``errstate`` (numpy)."""
    return xp.errstate(all="ignore") if hasattr(xp, "errstate") else _Null()


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def subset(xp, mask):
    """Flat indices where ``mask`` holds: gather a branch's inputs with ``x[idx]`` and
    scatter its results with ``r[idx] = ...``, so each branch of a piecewise
    approximation runs only on its own elements (boolean indexing works on CuPy too).
    Callers pass 1-d arrays."""
    return xp.nonzero(mask)[0]


def by_precision(xp, fn32, fn64):
    """A unary kernel: float64 inputs run ``fn64``; float32 runs ``fn32``; float16 and
    bfloat16 run ``fn32`` in float32 and round once (opmath). Both take and return 1-d
    arrays of their dtype; the kernel flattens and restores the shape."""
    def kernel(a):
        shape = a.shape
        x = a.reshape(-1)
        if a.dtype == xp.float64:
            r = fn64(x)
        elif a.dtype == xp.float32:
            r = fn32(x)
        else:
            r = fn32(x.astype(xp.float32)).astype(a.dtype)
        return r.reshape(shape)
    return kernel


def _polyval(coeffs, z):
    """coeffs[0] z^n + ... + coeffs[n] by Horner's rule, in ``z``'s dtype (Python floats
    take the array's dtype)."""
    p = coeffs[0] * z + coeffs[1]
    for c in coeffs[2:]:
        p *= z
        p += c
    return p


# Cody's coefficients as (highest power first) polynomials: erf(x) = x A(x^2) / B(x^2) for
# |x| <= 0.46875; erfc(x) = exp(-x^2) C(x) / D(x) on [0.46875, 4]; above 4,
# erfc(x) = exp(-x^2) / x (1/sqrt(pi) - z P(z) / Q(z)), z = 1/x^2.
_A = (_ERF_A[4],) + _ERF_A[:4]
_B = (1.0,) + _ERF_B
_C = (_ERF_C[8],) + _ERF_C[:8]
_D = (1.0,) + _ERF_D
_P = (_ERF_P[5],) + _ERF_P[:5]
_Q = (1.0,) + _ERF_Q
ERF_SMALL = 0.46875
# past these erfc's exp(-y^2) factor underflows to exactly 0 (in the subnormals first)
_ERFC_CAP = {4: 11.0, 8: 28.0}
_ERFC_TWO = {4: -3.85, 8: -6.0}  # erfc rounds to 2 below these


def _rational(num, den, z):
    """num(z) / den(z) with one temporary: the quotient lands in the numerator's array."""
    p = _polyval(num, z)
    p /= _polyval(den, z)
    return p


def erf_small(xp, x):
    """erf(x) for |x| <= 0.46875 (Cody's first interval), in ``x``'s dtype."""
    r = _rational(_A, _B, x * x)
    r *= x
    return r


def erfc_ratio(xp, y):
    """exp(y^2) erfc(y) for y >= 0.46875, in ``y``'s dtype: the factor of erfc after its
    exp(-y^2), so erfcx, erfc, ndtr and log_ndtr share it. 1-d ``y``. float64: Cody's
    second and third intervals (< 1e-16 relative); float32: ``_erfc_ratio_nr``."""
    if y.dtype.itemsize == 4:
        t, p = _erfc_ratio_nr(xp, y)
        xp.exp(p, out=p)
        p *= t
        return p
    r = xp.empty_like(y)
    mid = subset(xp, y <= 4.0)
    r[mid] = _rational(_C, _D, y[mid])
    big = subset(xp, ~(y <= 4.0))
    yb = y[big]
    z = yb * yb
    xp.reciprocal(z, out=z)  # 0 past 1e154: r = 1 / (sqrt(pi) y)
    q = _rational(_P, _Q, z)
    q *= -z
    q += _SQRPI
    q /= yb
    r[big] = q
    return r


# Numerical Recipes' erfcc (Press et al., 2nd ed., 6.2; a Chebyshev fit): erfc(y) =
# t exp(-y^2 + N(t)), t = 2 / (2 + y), for all y >= 0; relative error < 1.05e-7 (1.8 ulp of
# float32), measured against mpmath on [0, 10]. Highest power first.
_ERFC_NR = (0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806,
            0.09678418, 0.37409196, 1.00002368, -1.26551223)


def _erfc_ratio_nr(xp, y):
    """(t, N(t)) of Numerical Recipes' erfcc for y >= 0: exp(y^2) erfc(y) = t exp(N(t)),
    one polynomial and no division but t's over the whole float32 range."""
    t = y + 2.0
    xp.reciprocal(t, out=t)
    t *= 2.0
    return t, _polyval(_ERFC_NR, t)


# NOTE: the kernels here write into their temporaries (out=, in-place operators): a fresh
# 4 MB array costs page faults comparable to a pass of exp over it.
def exp_neg_square(xp, y):
    """exp(-y^2) for y >= 0 with y^2 split as ysq^2 + (y - ysq)(y + ysq), ysq = y rounded
    down to 1/16: ysq^2 is exact, so exp's argument is not rounded by y^2 ulps (Cody)."""
    ysq = y * 16.0
    xp.trunc(ysq, out=ysq)
    ysq /= 16.0
    hi = ysq * ysq
    xp.negative(hi, out=hi)
    xp.exp(hi, out=hi)
    lo = y - ysq
    ysq += y
    lo *= ysq
    xp.negative(lo, out=lo)
    xp.exp(lo, out=lo)
    hi *= lo
    return hi


def erfc_flat(xp, x):
    """erfc of a 1-d float32 or float64 array, in its dtype, each of Cody's intervals on
    its own elements; erfc(-x) = 2 - erfc(x), exactly 2 where erfc(|x|) is below half an
    ulp of 2 (x < -3.85 in float32, x < -6 in float64). Keeps its relative precision in
    the right tail until it underflows (x ~ 26.5 in float64, ~10 in float32)."""
    y = xp.abs(x)
    r = xp.empty_like(x)
    two = x < _ERFC_TWO[x.dtype.itemsize]
    r[subset(xp, two)] = 2.0
    small = subset(xp, y <= ERF_SMALL)
    r[small] = 1.0 - erf_small(xp, x[small])
    large = subset(xp, (y > ERF_SMALL) & ~two)
    xl = x[large]
    yl = xp.abs(xl)
    e = exp_neg_square(xp, xp.minimum(yl, _ERFC_CAP[x.dtype.itemsize]))
    e *= erfc_ratio(xp, yl)
    neg = subset(xp, xl < 0)
    e[neg] = 2.0 - e[neg]
    r[large] = e
    nan = subset(xp, xp.isnan(x))
    r[nan] = x[nan]
    return r


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
    def erfc32(x):
        with _quiet(xp):
            return erfc_flat(xp, x)

    def binary(fn):
        """A kernel of two operands of one dtype (numbers converted); float16/bfloat16
        compute in float32 and round once."""
        def kernel(a, b):
            a, b = _pair(a, b)
            if _is_half(a.dtype):
                return fn(a.astype(xp.float32), b.astype(xp.float32)).astype(a.dtype)
            return fn(a, b)
        return kernel

    def _fast2(name, ufunc):
        # NOTE: numpy's float32 logaddexp/logaddexp2 are scalar loops (CuPy's vectorized)
        if xp is not np:
            return ufunc
        fn, min_size = _FLOAT32_BINARY[name]
        return via_float32_binary(xp, fn, ufunc, min_size)

    def xlogy(a, b):
        # 0 * log(0) = 0 (and 0 * log(anything not NaN)); a NaN y stays NaN, as PyTorch
        r = a * xp.log(b)
        return xp.where((a == 0) & ~xp.isnan(b), a.dtype.type(0), r)

    def logit(a, eps):
        if eps is not None:  # PyTorch clamps to [eps, 1 - eps] first
            a = xp.clip(a, a.dtype.type(eps), a.dtype.type(1.0 - eps))
        return xp.log(a / (1 - a))

    def frac(a):
        t = xp.trunc(a)
        return xp.subtract(a, t, out=t) if t.ndim else a - t  # one result array

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
        "asinh": xp.arcsinh, "acosh": xp.arccosh,
        # NOTE: numpy's float32 arctanh is a scalar libm loop (CuPy's is vectorized)
        "atanh": via_float32(xp, *_FLOAT32["atanh"][:1], xp.arctanh, _FLOAT32["atanh"][1])
        if xp is np else xp.arctanh,
        "erfc": by_precision(xp, lambda x: special_erfc32.erfc(xp, x), erfc32),
        "logit": opmath(xp, logit), "frac": frac, "signbit": signbit,
        "xlogy": binary(xlogy), "logaddexp": binary(_fast2("logaddexp", xp.logaddexp)),
        "logaddexp2": binary(_fast2("logaddexp2", xp.logaddexp2)), "copysign": binary(xp.copysign),
        # NaN loses to a number (C's fmax), unlike maximum; ints and bools too
        "fmax": binary(xp.fmax), "fmin": binary(xp.fmin),
        "addcmul": addcmul, "addcdiv": addcdiv,
    }

