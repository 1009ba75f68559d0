"""Pointwise kernels of the gamma family, erfinv and modified Bessel functions, plus hypot,
sinc, nextafter, gcd and lcm.

numpy has no lgamma, digamma, erfinv or i1 (and scipy is not a dependency of ember), so
they are computed here in float64 with the standard approximations and rounded once to the
input dtype (float16/bfloat16/float32 get correctly rounded results except within an ulp
of the float64 error):

* lgamma: Lanczos' approximation (g = 7, n = 9; Numerical Recipes 3rd ed. 6.1) for x >= 0.5,
  reflection log(pi / |sin(pi x)|) - lgamma(1 - x) below; absolute error < 1e-12 (relative
  ~1e-15 away from the zeros at 1 and 2 and from the reflected poles); +inf at the poles
  0, -1, -2, ...
* digamma: the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic
  series with Bernoulli numbers to B_14 (Abramowitz & Stegun 6.3.18); reflection for x < 0;
  relative error < 1e-11 (~1e-15 away from its zero at 1.4616 and from negative poles).
* polygamma(n >= 1): (-1)^(n+1) n! zeta(n + 1, x), the Hurwitz zeta by Euler-Maclaurin
  summation after shifting x past 10 (as Cephes' ``zeta``); relative error ~1e-14.
* erfinv: Giles' approximation ("Approximating the erfinv function", GPU Computing Gems,
  2010; ~1e-7) refined by four Newton steps on erf (log erfc in the tails: 1 - |y| keeps
  its precision) with Cody's erf/erfc of ``pointwise``/``special``; ~1e-15.
* i0, special_i1: the power series (all terms positive: no cancellation) for |x| <= 30, the
  Hankel asymptotic expansion above (A&S 9.7.1); ~1e-15.
"""
from __future__ import annotations

import math

from ...types import bool_
from .pointwise import FLOATING, INTEGRAL, PY_NUMBERS, _in_float64, erf64
from .special import _is_half, _pair, erfc64

# PyTorch: "hypot_cpu" / "nextafter_cpu" not implemented for 'Long', "gcd_cpu" for 'Float'
UNSUPPORTED = {"hypot": INTEGRAL, "nextafter": INTEGRAL, "gcd": FLOATING | {bool_},
               "lcm": FLOATING | {bool_}}

_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)
# B_2k / (2k) for the asymptotic series of digamma, k = 1..7
_PSI_B = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)
# B_2j / (2j)! for Euler-Maclaurin, j = 1..12 (Cephes zeta.c's A[] inverted)
_ZETA_B = (1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160, -691 / 1307674368000,
           1 / 74724249600, -3617 / 10670622842880000, 43867 / 5109094217170944000,
           -174611 / 802857662698291200000, 77683 / 14101100039391805440000,
           -236364091 / 1693824136731743669452800000)
_LOG_SQRT_2PI = 0.91893853320467274178


def lgamma64(xp, x):
    """log|Gamma(x)| of a float64 array of any shape (Lanczos approximation, reflection
    below 0.5); +inf at the poles 0, -1, -2, .... Reference: torch.lgamma."""
    refl = x < 0.5
    z = xp.where(refl, 1.0 - x, x) - 1.0
    s = xp.full_like(z, _LANCZOS[0])
    for i in range(1, 9):
        s = s + _LANCZOS[i] / (z + i)
    t = z + 7.5
    with _quiet(xp):
        lg = _LOG_SQRT_2PI + (z + 0.5) * xp.log(t) - t + xp.log(s)
        sin = xp.abs(xp.sin(math.pi * (x - xp.floor(x))))  # exact period reduction
        r = xp.where(refl, math.log(math.pi) - xp.log(sin) - lg, lg)
    pole = (x <= 0) & (x == xp.floor(x))
    return xp.where(pole | xp.isinf(x), math.inf, r)


def _quiet(xp):
    return xp.errstate(all="ignore") if hasattr(xp, "errstate") else _Null()


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def digamma64(xp, x):
    """psi(x) = d/dx log Gamma(x) of a float64 array (recurrence up to x >= 10, asymptotic
    series, reflection for x < 0); NaN at the negative poles, -inf at +0 and +inf at -0.
    Reference: torch.digamma."""
    with _quiet(xp):
        refl = x < 0
        # pi / tan(pi x) with the period reduced exactly first
        shift = xp.where(refl, math.pi / xp.tan(math.pi * (x - xp.floor(x))), 0.0)
        y = xp.where(refl, 1.0 - x, x)
        acc = xp.zeros_like(y)
        for _ in range(10):
            small = y < 10.0
            acc = acc - xp.where(small, 1.0 / y, 0.0)
            y = xp.where(small, y + 1.0, y)
        w = 1.0 / (y * y)
        series = xp.zeros_like(y)
        for b in reversed(_PSI_B):
            series = (series + b) * w
        r = acc + xp.log(y) - 0.5 / y - series - shift
    r = xp.where((x < 0) & (x == xp.floor(x)), math.nan, r)
    r = xp.where(x == 0, xp.copysign(xp.full_like(x, math.inf), -x), r)
    return xp.where(xp.isposinf(x), math.inf, r)


def zeta64(xp, s: float, q):
    """The Hurwitz zeta sum_k (q + k)^-s for a Python float s > 1 and an array q."""
    with _quiet(xp):
        n_shift = 10 + max(0, int(math.ceil(-float(xp.min(q))))) if q.size else 10
        if not math.isfinite(n_shift):
            n_shift = 10
        total = xp.zeros_like(q)
        a = q.copy()
        for _ in range(n_shift):
            total = total + xp.where(a < 10.0, a ** -s, 0.0)
            a = xp.where(a < 10.0, a + 1.0, a)
        total = total + a ** (1.0 - s) / (s - 1.0) + 0.5 * a ** -s
        fac, pw = s, a ** (-s - 1.0)
        for j, b in enumerate(_ZETA_B):
            total = total + b * fac * pw
            fac = fac * (s + 2 * j + 1) * (s + 2 * j + 2)
            pw = pw / (a * a)
    pole = (q <= 0) & (q == xp.floor(q))
    return xp.where(pole, math.inf, xp.where(xp.isposinf(q), 0.0, total))


def polygamma64(xp, n: int, x):
    """psi^(n)(x) of a float64 array for an int n >= 0: digamma for n = 0, else
    (-1)^(n+1) n! zeta(n + 1, x). Reference: torch.polygamma."""
    if n == 0:
        return digamma64(xp, x)
    sign = 1.0 if n % 2 else -1.0
    return sign * math.factorial(n) * zeta64(xp, float(n + 1), x)


_GILES_LO = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
             -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_HI = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
             -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(coeffs, w):
    p = coeffs[0]
    for c in coeffs[1:]:
        p = c + p * w
    return p


def erfinv64(xp, y):
    """erf^-1(y) of a float64 array: Giles's (2010) approximation refined by Newton
    steps; +-inf at +-1, NaN outside [-1, 1]. Reference: torch.erfinv."""
    with _quiet(xp):
        a = xp.abs(y)
        w = -xp.log((1.0 - a) * (1.0 + a))
        lo = _horner(_GILES_LO, w - 2.5)
        hi = _horner(_GILES_HI, xp.sqrt(w) - 3.0)
        x = xp.where(w < 5.0, lo, hi) * a
        x = xp.where(xp.isfinite(x), x, 0.0)
        tail = a > 0.5
        c = 1.0 - a  # exact for a in [0.5, 1] (Sterbenz)
        for _ in range(4):
            # in the tail, Newton on log(erfc(x)) = log(1 - |y|): the initial guess may be
            # far off there, and the logarithm keeps the steps in scale
            x = xp.clip(x, 0.0, 26.0)
            ec, dens = erfc64(xp, x), 1.1283791670955126 * xp.exp(-x * x)
            step = xp.where(tail, -xp.log(ec / xp.where(tail, c, 1.0)) * ec,
                            erf64(xp, x) - a) / dens
            x = xp.where(xp.isfinite(step), x - step, x)
        x = xp.where(a == 1.0, math.inf, x)
        x = xp.where(a > 1.0, math.nan, x)
    return xp.where(xp.isnan(y), y, xp.copysign(x, y))


def _bessel_i(xp, nu: int, x):
    """I_nu(x) for nu in {0, 1} (see the module docstring)."""
    with _quiet(xp):
        ax = xp.abs(x)
        xs = xp.minimum(ax, 30.0)
        q = (xs * 0.5) ** 2
        term = xp.ones_like(xs) if nu == 0 else xs * 0.5
        total = term
        for k in range(1, 80):
            term = term * q / (k * (k + nu))
            total = total + term
        xl = xp.maximum(ax, 30.0)
        mu, s, t = 4.0 * nu * nu, xp.ones_like(xl), xp.ones_like(xl)
        for k in range(1, 30):
            t = -t * (mu - (2 * k - 1) ** 2) / (k * 8.0 * xl)
            s = s + t
        half = xp.exp(0.5 * xl)
        big = half * (half * s / xp.sqrt(2.0 * math.pi * xl))
        r = xp.where(ax <= 30.0, total, big)
    return r if nu == 0 else xp.copysign(r, x) * xp.where(x == 0, 0.0, 1.0)


def kernels(xp) -> dict:
    def half_safe(fn):
        def kernel(a, b):
            a, b = _pair(a, b)
            if _is_half(a.dtype):
                return fn(a.astype(xp.float32), b.astype(xp.float32)).astype(a.dtype)
            return fn(a, b)
        return kernel

    def sinc(a):
        with _quiet(xp):
            px = math.pi * a
            return xp.where(a == 0, 1.0, xp.sin(px) / px)

    def polygamma(n, a):
        if n < 0:
            raise ValueError(f"polygamma(): expected a non-negative order n, got {n}")
        return _in_float64(xp, lambda x: polygamma64(xp, n, x))(a)

    def int_binary(fn):
        def kernel(a, b):
            if a.__class__ in PY_NUMBERS:
                a = xp.asarray(a, dtype=b.dtype)
            if b.__class__ in PY_NUMBERS:
                b = xp.asarray(b, dtype=a.dtype)
            return xp.abs(fn(a, b)).astype(a.dtype)
        return kernel

    def nextafter(a, b):
        a, b = _pair(a, b)
        if a.dtype.itemsize == 2 and a.dtype.kind != "f":  # bfloat16: step its own bits
            raise NotImplementedError("nextafter(): not implemented for bfloat16 (as "
                                      "PyTorch); convert to float32 first")
        return xp.nextafter(a, b)

    return {
        "lgamma": _in_float64(xp, lambda x: lgamma64(xp, x)),
        "digamma": _in_float64(xp, lambda x: digamma64(xp, x)),
        "polygamma": polygamma,
        "erfinv": _in_float64(xp, lambda x: erfinv64(xp, x)),
        "i0": _in_float64(xp, lambda x: _bessel_i(xp, 0, x)),
        "special_i1": _in_float64(xp, lambda x: _bessel_i(xp, 1, x)),
        "sinc": _in_float64(xp, sinc),
        "hypot": half_safe(xp.hypot),
        "nextafter": nextafter,
        "gcd": int_binary(xp.gcd),
        "lcm": int_binary(xp.lcm),
    }
