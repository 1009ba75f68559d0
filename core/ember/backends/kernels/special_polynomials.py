"""Pointwise kernels of the classical orthogonal polynomials of torch.special, P_n(x) for
a Tensor (or number) x and degree n: Chebyshev T, U, V, W and their shifted forms on
[0, 1], Hermite H (physicists') and He (probabilists'), Laguerre L and Legendre P.

As PyTorch: n is truncated to an integer, a negative n gives 0, and the value comes from
the three-term recurrence of each family (A&S 22.7), except for the Chebyshev families
of high degree (n > 4 to 8, as PyTorch) at |x| < 1 (|2x - 1| < 1 for the shifted ones),
which use the trigonometric forms (A&S 22.3.15-16; Mason & Handscomb 1.2 for V and W),
e.g. T_n(cos t) = cos(n t).
The recurrence costs O(max n) array operations. With a Tensor n, computed in float64 and
rounded once to the operands' dtype (both operands broadcast); with a number n (the common
call) in the input's precision as PyTorch's kernels (float16/bfloat16 in float32, rounded
once; see ``polynomial_scalar_n``). NaN where n is NaN.
"""
from __future__ import annotations

import math

from .pointwise import PY_NUMBERS
from .special import _is_half, _pair, subset
from .special_math import _quiet

# degrees above which the Chebyshev families use their trigonometric forms inside (-1, 1),
# PyTorch's (results differ from the recurrence's by rounding only)
_TRIG_FROM = {"t": 6, "u": 8, "v": 8, "w": 8}
_SHIFTED_TRIG_FROM = {"t": 6, "u": 6, "v": 6, "w": 4}
_FLOAT32_MAX_N = 6


def _chebyshev_step(k, x, prev, cur):
    return 2.0 * x * cur - prev


_FAMILIES = {
    # name: (p_1(x), p_{k+1} from (k, x, p_{k-1}, p_k))
    "t": (lambda x: x, _chebyshev_step),
    "u": (lambda x: 2.0 * x, _chebyshev_step),
    "v": (lambda x: 2.0 * x - 1.0, _chebyshev_step),
    "w": (lambda x: 2.0 * x + 1.0, _chebyshev_step),
    "h": (lambda x: 2.0 * x, lambda k, x, prev, cur: 2.0 * x * cur - 2.0 * k * prev),
    "he": (lambda x: x, lambda k, x, prev, cur: x * cur - k * prev),
    "l": (lambda x: 1.0 - x, lambda k, x, prev, cur: ((2 * k + 1 - x) * cur - k * prev) / (k + 1)),
    "p": (lambda x: x, lambda k, x, prev, cur: ((2 * k + 1) * x * cur - k * prev) / (k + 1)),
}


def _trig(xp, family, x, n):
    """The Chebyshev polynomials at x = cos(t), t in (0, pi)."""
    t = xp.arccos(x)
    if family == "t":
        return xp.cos(n * t)
    if family == "u":
        return xp.sin((n + 1.0) * t) / xp.sin(t)
    if family == "v":
        return xp.cos((n + 0.5) * t) / xp.cos(0.5 * t)
    return xp.sin((n + 0.5) * t) / xp.sin(0.5 * t)


def polynomial64(xp, family: str, x, n, trig_from: int | None = None):
    """p_n(x) of float64 arrays broadcast together, for a family of ``_FAMILIES``; the
    Chebyshev families switch to their trigonometric forms above degree ``trig_from``."""
    with _quiet(xp):
        x, n = xp.broadcast_arrays(x, n)
        n = xp.trunc(n)
        first, step = _FAMILIES[family]
        trig = None
        if trig_from is not None:
            trig = (n > trig_from) & (xp.abs(x) < 1.0)
        need = (n >= 2) if trig is None else (n >= 2) & ~trig
        need_n = n[need & xp.isfinite(n)]
        top = int(xp.max(need_n)) if need_n.size else 1
        prev, cur = xp.ones_like(x), first(x)
        result = xp.where(n == 0, 1.0, cur)
        for k in range(1, top):
            prev, cur = cur, step(k, x, prev, cur)
            result = xp.where(n == k + 1, cur, result)
        if trig is not None:
            result = xp.where(trig, _trig(xp, family, xp.where(trig, x, 0.5), n), result)
        result = xp.where(n < 0, 0.0, result)
    return xp.where(xp.isnan(n), math.nan, result)


def polynomial_scalar_n(xp, family: str, x, n: float, trig_from: int | None = None):
    """p_n(x) for one degree ``n`` (a Python number) and a float32/float64 array ``x``, in
    x's dtype: the recurrence runs n - 1 steps without per-degree masks, the Chebyshev
    trigonometric form only on the elements inside (-1, 1). The kernels use it in float32
    for n <= 6 (float32 and narrower inputs): errors against float64 on the same inputs, in
    float32 ulps of max(1, |p_n|), < 10 (T, Legendre), < 18 (U, V, W, Laguerre), < 31 (the
    shifted Chebyshev) on [-1.3, 1.3]; the Hermite families, whose terms cancel near their
    roots, in ulps of max(1, |p_n|, |c x|^n) (c = 2 for H, 1 for He): < 12 (He) and < 90
    (H) on [-3, 3]. PyTorch's float kernels run the same recurrence (within 1.5x of these).
    """
    if math.isnan(n):
        return xp.full_like(x, math.nan)
    n = math.trunc(n)
    if n <= 0:
        return xp.full_like(x, 1.0 if n == 0 else 0.0)
    first, step = _FAMILIES[family]
    with _quiet(xp):
        trig = None
        if trig_from is not None and n > trig_from:
            trig = subset(xp, xp.abs(x) < 1.0)
            xt = x[trig]
        prev, cur = None, first(x)
        for k in range(1, n):
            prev, cur = cur, step(k, x, 1.0 if prev is None else prev, cur)
        if trig is not None:
            cur[trig] = _trig(xp, family, xt, float(n))
    return cur


def kernels(xp) -> dict:
    def make(family: str, shifted: bool = False):
        trig_from = (_SHIFTED_TRIG_FROM if shifted else _TRIG_FROM).get(family)

        def kernel(x, n):
            if n.__class__ in PY_NUMBERS and x.__class__ not in PY_NUMBERS and (
                    x.dtype.kind == "f" or _is_half(x.dtype)):
                # one degree: float32 for float32 and narrower up to _FLOAT32_MAX_N (the
                # recurrence's rounding grows with n), else float64
                wide = x.dtype.itemsize == 8 or not abs(n) <= _FLOAT32_MAX_N
                xc = x.astype(xp.float64 if wide else xp.float32, copy=False)
                if shifted:  # on [0, 1]: p*_n(x) = p_n(2x - 1)
                    xc = 2.0 * xc - 1.0
                r = polynomial_scalar_n(xp, family, xc, float(n), trig_from)
                if not wide:  # float32 overflow (inf - inf) where float64 gives +-inf
                    redo = subset(xp, (xp.isnan(r) & ~xp.isnan(xc)).reshape(-1))
                    if redo.size:
                        r = r.reshape(-1)
                        r[redo] = polynomial_scalar_n(xp, family, xc.reshape(-1)[redo].astype(
                            xp.float64), float(n), trig_from)
                        r = r.reshape(xc.shape)
                return r.astype(x.dtype, copy=False)
            x, n = _pair(x, n)
            dt = (x if x.__class__ not in PY_NUMBERS else n).dtype
            x64, n64 = xp.asarray(x, dtype=xp.float64), xp.asarray(n, dtype=xp.float64)
            if shifted:
                x64 = 2.0 * x64 - 1.0
            return polynomial64(xp, family, x64, n64, trig_from).astype(dt, copy=False)
        return kernel

    table = {f"special_chebyshev_polynomial_{f}": make(f) for f in "tuvw"}
    table.update({f"special_shifted_chebyshev_polynomial_{f}": make(f, True) for f in "tuvw"})
    table.update({"special_hermite_polynomial_h": make("h"),
                  "special_hermite_polynomial_he": make("he"),
                  "special_laguerre_polynomial_l": make("l"),
                  "special_legendre_polynomial_p": make("p")})
    return table
