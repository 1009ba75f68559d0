"""Pointwise kernels of the incomplete gamma functions and the Hurwitz zeta function:
``igamma`` (torch.special.gammainc), ``igammac`` (gammaincc) and ``special_zeta``.

Computed in float64 and rounded once to the operands' dtype (float16/bfloat16/float32), as
the gamma family of ``special_math``; both operands broadcast and either may be a Python
number. Maximum relative errors measured against mpmath (50 digits):

* igamma / igammac, the regularized P(a, x) = gamma(a, x) / Gamma(a) and Q = 1 - P: the
  series of P for x < a + 1 and the continued fraction of Q (modified Lentz) above, each
  giving the other as 1 - itself (Numerical Recipes 3rd ed. 6.2); the prefactor
  x^a e^-x / Gamma(a) through Stirling's series for a >= 10, so a log x - x - lgamma(a)
  does not cancel. Measured at 2,500 points with a, x in [1e-3, 1e4]: relative error
  < 2e-13 wherever the result is computed directly (series for P, fraction for Q; the
  exponent's own conditioning, ulp(a log x - x), sets that floor for tiny results), and
  absolute error < 7e-15 for the one formed as 1 - the other, which for a < 0.01 and
  x < 0.5 leaves Q ~ 1e-3 with relative error up to 3e-12 (Cephes' small-a series for Q,
  which PyTorch uses there, is not implemented). Both take O(sqrt(a)) terms near x = a,
  capped at 20,000 (a up to ~1e6). Each runs only on its own elements, which leave the
  iteration as they converge (checked every 8 terms); for float32 and narrower results the
  truncation is 1e-10 instead of 1e-17 and the series also serves x <= 3.5 (fewer terms
  than the fraction there; 1 - P keeps Q to 1e-16 / Q >= 1e-6 relative), and at 1e6
  elements the work runs in cache-sized blocks (``special_blocked``).
* zeta(x, q) = sum_k (q + k)^-x: at least 9 terms and up to q + k >= 10, then
  Euler-Maclaurin summation with 12 Bernoulli terms (Cephes' zeta); < 1e-15 for x in
  [1.01, 60], q in [1e-3, 1e3] (reference: mpmath at 300 digits, or direct summation:
  mpmath's zeta loses digits for large q at lower precision).

Edge values follow PyTorch (Cephes): igamma NaN for a < 0 or x < 0, P(0, x > 0) = 1,
P(a, 0) = 0, P(inf, x) = 0, P(a, inf) = 1, NaN for a = x = inf; zeta inf at x = 1 and at
q = 0, -1, -2, ..., NaN for x < 1 and for a negative non-integer q with a non-integer x.
"""
from __future__ import annotations

import math

from .special import _pair, subset
from .special_blocked import blocked_binary
from .special import erfc_flat
from .special_math import _ZETA_B, _quiet, lgamma64

_LOG_2PI = 1.8378770664093454836
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188)  # lgamma(a) - Stirling's main part
_TINY = 1e-300
_MAX_TERMS = 20_000
_HUGE_A = 1e20  # above, P and Q by Wilson-Hilferty (its error O(1/a) is below rounding)
_SQRT1_2 = 0.70710678118654752440
_SMALL_A = 0.1  # below (and x < 1, or a subnormal), _pq_small_a: 1 - P would cancel
_SUBNORMAL = 2.2250738585072014e-308
_EULER = 0.57721566490153286061


def _log_prefactor(xp, a, x):
    """log(x^a e^-x / Gamma(a)) of 1-d arrays; for a >= 10 (those elements only) as
    a (log1p(eta) - eta) + log(a / 2 pi) / 2 - S(a) with x = a (1 + eta), whose error is
    ~ulp(|x - a|) rather than ulp(a log x)."""
    r = a * xp.log(x)
    r -= x
    r -= lgamma64(xp, a)
    big = subset(xp, a >= 10.0)
    if big.size:
        ab, xb = a[big], x[big]
        eta = (xb - ab) / ab
        w = 1.0 / (ab * ab)
        s = 0.0
        for c in reversed(_STIRLING):
            s = s * w + c
        # log1p(eta) loses relative precision near eta = -1 (x << a), log(x / a) near 0
        log_ratio = xp.where(xp.abs(eta) < 0.5, xp.log1p(eta), xp.log(xb / ab))
        r[big] = ab * (log_ratio - eta) + 0.5 * (xp.log(ab) - _LOG_2PI) - s / ab
    return r


def _iterate(xp, step, state, converged, out):
    """Run ``step(state)`` (in place on a tuple of 1-d arrays whose last entry is the
    result) in blocks of 8 until ``converged(state)`` holds, writing converged results to
    ``out`` by position and dropping those elements from the state: the cost follows
    the slowest element's term count only on that element."""
    where = xp.arange(out.shape[0])
    for _ in range(0, _MAX_TERMS, 8):
        if not where.size:
            break
        for _ in range(8):
            step(state)
        done = converged(state)
        if bool(done.any()):
            out[where[done]] = state[-1][done]
            keep = subset(xp, ~done)
            state = tuple(v[keep] for v in state)
            where = where[keep]
    out[where] = state[-1]  # past the cap: the partial sums
    return out


def _p_series(xp, a, x, tol):
    """sum_n x^n / (a (a+1) ... (a+n)), the series of P(a, x) / prefactor (x < a + 1)."""
    def step(st):
        a, x, ap, term, tmp, total = st
        ap += 1.0
        xp.divide(x, ap, out=tmp)
        term *= tmp
        total += term

    def converged(st):
        return st[3] <= st[-1] * tol

    term = 1.0 / a
    return _iterate(xp, step, (a, x, a.copy(), term, xp.empty_like(a), term.copy()),
                    converged, xp.empty_like(a))


def _q_fraction(xp, a, x, tol):
    """Q(a, x) / prefactor by its continued fraction, modified Lentz (NR 3rd ed. 6.2.7),
    for x >= a + 1 (b0 = x + 1 - a >= 2)."""
    def step(st):
        a, b, c, d, i, delta, h = st
        i += 1.0
        an = i * (a - i)  # -i (i - a)
        b += 2.0
        d *= an
        d += b
        d[xp.abs(d) < _TINY] = _TINY
        xp.divide(an, c, out=c)
        c += b
        c[xp.abs(c) < _TINY] = _TINY
        xp.reciprocal(d, out=d)
        xp.multiply(d, c, out=delta)
        h *= delta

    def converged(st):
        return xp.abs(st[5] - 1.0) <= tol

    b = x + 1.0 - a
    d = 1.0 / b
    return _iterate(xp, step, (a, b, xp.full_like(a, 1.0 / _TINY), d, xp.zeros_like(a),
                               xp.zeros_like(a), d.copy()), converged, xp.empty_like(a))


def igamma64(xp, a, x, upper: bool, tol=1e-17):
    """P(a, x) (Q(a, x) if ``upper``) of float64 arrays broadcast together (see the module
    docstring), the series and the fraction each on its own elements, to relative
    truncation ``tol`` (1e-10 is enough for float32 and narrower results)."""
    with _quiet(xp):
        a, x = xp.broadcast_arrays(a, x)
        shape = a.shape
        a, x = a.reshape(-1), x.reshape(-1)
        r = xp.empty_like(a)
        good = (a > 0) & (x > 0) & xp.isfinite(a) & xp.isfinite(x)
        huge = good & (a > _HUGE_A)
        sub = good & (a < _SMALL_A) & ((x < 1.0) | (a < _SUBNORMAL))
        good &= ~(huge | sub)
        ok = subset(xp, good)
        aa, xx = a[ok], x[ok]
        pref = xp.exp(_log_prefactor(xp, aa, xx))
        # the series needs fewer terms than the fraction for x < a + 1, and (to 1e-10)
        # for x <= 3.5; Q = 1 - P from it keeps relative precision 1e-16 / Q, which
        # limits it to where Q >~ 1e-2 (float64) or 1e-6 (narrower results)
        if tol < 1e-12:
            use_series = (xx < aa + 1.0) & ((aa >= 0.1) | (xx <= 0.5))
        else:
            use_series = ((xx < aa + 1.0) | (xx <= 3.5)) & ((aa >= 1e-3) | (xx <= 0.5))
        for part, method, direct in ((subset(xp, use_series), _p_series, not upper),
                                     (subset(xp, ~use_series), _q_fraction, upper)):
            v = method(xp, aa[part], xx[part], tol)
            v *= pref[part]
            r[ok[part]] = v if direct else 1.0 - v
        if huge.any():
            h = subset(xp, huge)
            r[h] = _wilson_hilferty(xp, a[h], x[h], upper)
        if sub.any():
            t = subset(xp, sub)
            p, q = _pq_small_a(xp, a[t], x[t])
            r[t] = q if upper else p
        if ok.size + int(huge.sum()) + int(sub.sum()) != a.size:  # the edges, in Cephes' order
            one, zero = (0.0, 1.0) if upper else (1.0, 0.0)
            r = xp.where(a == 0, one, xp.where(x == 0, zero, r))
            r = xp.where(xp.isinf(a), zero, xp.where(xp.isinf(x), one, r))
            nan = xp.isnan(a) | xp.isnan(x) | (a < 0) | (x < 0) | ((a == 0) & (x == 0)) | \
                (xp.isinf(a) & xp.isinf(x))
            r = xp.where(nan, math.nan, r)
    return r.reshape(shape)


# zeta(k) for k = 2..21: log Gamma(1 + a) = -gamma a + sum_k (-1)^k zeta(k) a^k / k
_ZETA_K = (1.6449340668482264, 1.2020569031595942, 1.0823232337111382, 1.0369277551433699,
           1.0173430619844491, 1.0083492773819228, 1.0040773561979443, 1.0020083928260822,
           1.0009945751278181, 1.0004941886041195, 1.0002460865533080, 1.0001227133475785,
           1.0000612481350587, 1.0000305882363070, 1.0000152822594087, 1.0000076371976379,
           1.0000038172932650, 1.0000019082127166, 1.0000009539620339, 1.0000004769329868)


def _pq_small_a(xp, a, x):
    """(P(a, x), Q(a, x)) for a < _SMALL_A and x < 1 (or a subnormal a), where 1 - P cancels and
    the series' 1 / a may overflow: with g = x^a / Gamma(1 + a) (Cephes / DLMF 8.7),
    Q = -expm1(log g) - a g S and P = g (1 + a S), S = sum_k>=1 (-x)^k / (k! (a + k)),
    log Gamma(1 + a) by its
    Taylor series in zeta(k) (20 terms: < 1e-17 for a < 0.1). Above x = 1 (subnormal a
    only) Q = a E1(x) < 0.22 a, approximated by a e^-x / (x + 1): it rounds to 0 or the
    smallest subnormal."""
    lg1p = -_EULER * a
    apow = -a
    for k, z in enumerate(_ZETA_K, start=2):
        apow = apow * -a   # (-a)^k
        lg1p = lg1p + z * apow / k
    log_g = a * xp.log(x) - lg1p
    total, term = xp.zeros_like(x), xp.ones_like(x)
    for k in range(1, 30):   # term = (-x)^k / k!; 29 terms: < 1e-30 for x < 1
        term = term * -x / k
        total = total + term / (a + k)
    g = xp.exp(log_g)
    q = xp.where(x < 1.0, -xp.expm1(log_g) - a * g * total, a * xp.exp(-x) / (x + 1.0))
    p = xp.where(x < 1.0, g * (1.0 + a * total), 1.0 - q)   # P directly: g may be tiny
    return p, q


def _wilson_hilferty(xp, a, x, upper: bool):
    """P(a, x) (Q if ``upper``) for a > _HUGE_A by Wilson & Hilferty's normal approximation
    of (x / a)^(1/3) (error O(1/a) < 1e-20), where the series' prefactor overflows:
    P(1e308, 1e308) = 1/2 as the limit, not NaN."""
    v = (1.0 / 9.0) / a   # 9 a would overflow at a = 1e308
    # (x / a)^(1/3) - 1 without the cancellation of cbrt(x / a) - 1 near x = a
    w = xp.expm1(xp.log1p((x - a) / a) / 3.0)
    z = (w + v) / xp.sqrt(v)
    return 0.5 * erfc_flat(xp, (z if upper else -z) * _SQRT1_2)


def hurwitz_zeta64(xp, s, q):
    """zeta(s, q) = sum_k (q + k)^-s of float64 arrays broadcast together."""
    with _quiet(xp):
        s, q = xp.broadcast_arrays(s, q)
        # NOTE: poles (every float below -2**52 is an integer) are set below; shifting
        # them past 10 would run for ever
        finite_q = q[xp.isfinite(q) & ~((q <= 0) & (q == xp.floor(q)))]
        lowest = float(xp.min(finite_q)) if finite_q.size else 0.0
        n_shift = 10 + max(0, int(math.ceil(-lowest)))
        total = xp.zeros(s.shape, dtype=xp.float64)
        a = xp.where(xp.isfinite(q), q, 10.0)
        for i in range(n_shift):
            low = (a < 10.0) | (i < 9)  # Cephes: at least 9 terms, for large s
            total = total + xp.where(low, a ** -s, 0.0)
            a = xp.where(low, a + 1.0, a)
        ss = xp.where(s == 1.0, 2.0, s)  # the pole is set below
        total = total + a ** (1.0 - ss) / (ss - 1.0) + 0.5 * a ** -ss
        fac, pw = ss, a ** (-ss - 1.0)
        for j, b in enumerate(_ZETA_B):
            # NOTE: for a huge s, fac overflows where pw underflows: the term is 0
            total = total + xp.where(pw == 0, 0.0, b * fac * pw)
            fac = fac * (ss + 2 * j + 1) * (ss + 2 * j + 2)
            pw = pw / (a * a)
        pole = (s == 1.0) | ((q <= 0) & (q == xp.floor(q)))
        bad = (s < 1.0) | ((q < 0) & (s != xp.floor(s))) | xp.isnan(s) | xp.isnan(q)
        total = xp.where(xp.isposinf(q), 0.0, total)
    return xp.where(bad, math.nan, xp.where(pole, math.inf, total))


def kernels(xp) -> dict:
    def binary64(fn):
        """Two operands of one dtype (numbers converted), computed in float64; ``fn``
        gets the truncation tolerance the result dtype needs."""
        def kernel(a, b):
            a, b = _pair(a, b)
            dt = a.dtype
            tol = 1e-17 if dt == xp.float64 else 1e-10
            return fn(xp.asarray(a, dtype=xp.float64), xp.asarray(b, dtype=xp.float64),
                      tol).astype(dt, copy=False)
        return kernel

    def igamma(upper: bool):
        return binary64(blocked_binary(xp, lambda a, x, tol: igamma64(xp, a, x, upper, tol)))

    return {
        "igamma": igamma(False), "igammac": igamma(True),
        "special_zeta": binary64(lambda s, q, tol: hurwitz_zeta64(xp, s, q)),
    }
