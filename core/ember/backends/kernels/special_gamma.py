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
  capped at 20,000 (a up to ~1e6).
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

from .special import _pair
from .special_math import _ZETA_B, _quiet, lgamma64

_LOG_2PI = 1.8378770664093454836
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188)  # lgamma(a) - Stirling's main part
_TINY = 1e-300
_MAX_TERMS = 20_000


def _log_prefactor(xp, a, x):
    """log(x^a e^-x / Gamma(a)); for a >= 10 as a (log1p(eta) - eta) + log(a / 2 pi) / 2
    - S(a) with x = a (1 + eta), whose error is ~ulp(|x - a|) rather than ulp(a log x)."""
    with _quiet(xp):
        direct = a * xp.log(x) - x - lgamma64(xp, a)
        big = xp.maximum(a, 10.0)
        eta = (x - big) / big
        w = 1.0 / (big * big)
        s = 0.0
        for c in reversed(_STIRLING):
            s = s * w + c
        # log1p(eta) loses relative precision near eta = -1 (x << a), log(x / a) near 0
        near = xp.abs(eta) < 0.5
        log_ratio = xp.where(near, xp.log1p(eta), xp.log(x / big))
        stirling = big * (log_ratio - eta) + 0.5 * (xp.log(big) - _LOG_2PI) - s / big
    return xp.where(a >= 10.0, stirling, direct)


def _until_converged(xp, step, state, done):
    """Run ``step(state) -> (state, done)`` in blocks of 16 until every element is done."""
    for i in range(0, _MAX_TERMS, 16):
        for _ in range(16):
            state, d = step(state)
            done = done | d
        if bool(xp.all(done)):
            break
    return state


def igamma_pair64(xp, a, x):
    """(P(a, x), Q(a, x)) of float64 arrays broadcast together (see the module docstring)."""
    with _quiet(xp):
        a, x = xp.broadcast_arrays(a, x)
        ok = (a > 0) & (x > 0) & xp.isfinite(a) & xp.isfinite(x)
        aa, xx = xp.where(ok, a, 1.0), xp.where(ok, x, 1.0)
        pref = xp.exp(_log_prefactor(xp, aa, xx))
        use_series = (xx < aa + 1.0) & ~((xx > 0.5) & (xx > 1.1 * aa))

        # P's series: sum_n x^n / (a (a+1) ... (a+n))
        def series_step(st):
            term, total, n = st
            n = n + 1.0
            term = term * xx / (aa + n)
            total = total + term
            return (term, total, n), ~use_series | (xp.abs(term) <= xp.abs(total) * 1e-17)

        t0 = 1.0 / aa
        _, series, _ = _until_converged(xp, series_step, (t0, t0, xp.zeros_like(aa)),
                                        ~use_series)

        # Q's continued fraction, modified Lentz (NR 3rd ed. 6.2.7)
        def cf_step(st):
            b, c, d, h, i = st
            i = i + 1.0
            an = -i * (i - aa)
            b = b + 2.0
            d = an * d + b
            d = xp.where(xp.abs(d) < _TINY, _TINY, d)
            c = b + an / c
            c = xp.where(xp.abs(c) < _TINY, _TINY, c)
            d = 1.0 / d
            delta = d * c
            return (b, c, d, h * delta, i), use_series | (xp.abs(delta - 1.0) <= 1e-16)

        b0 = xx + 1.0 - aa
        b0 = xp.where(use_series | (xp.abs(b0) < _TINY), 1.0, b0)  # b0 = 0 only when unused
        d0 = 1.0 / b0
        cf = _until_converged(xp, cf_step, (b0, xp.full_like(aa, 1.0 / _TINY), d0, d0,
                                            xp.zeros_like(aa)), use_series)[3]
        p = xp.where(use_series, pref * series, 1.0 - pref * cf)
        q = xp.where(use_series, 1.0 - pref * series, pref * cf)
        # the edges, in PyTorch's (Cephes') order
        nan = xp.isnan(a) | xp.isnan(x) | (a < 0) | (x < 0) | ((a == 0) & (x == 0)) | \
            (xp.isinf(a) & xp.isinf(x))
        p = xp.where(a == 0, 1.0, xp.where(x == 0, 0.0, p))
        p = xp.where(xp.isinf(a), 0.0, xp.where(xp.isinf(x), 1.0, p))
        q = xp.where(a == 0, 0.0, xp.where(x == 0, 1.0, q))
        q = xp.where(xp.isinf(a), 1.0, xp.where(xp.isinf(x), 0.0, q))
    return xp.where(nan, math.nan, p), xp.where(nan, math.nan, q)


def hurwitz_zeta64(xp, s, q):
    """zeta(s, q) = sum_k (q + k)^-s of float64 arrays broadcast together."""
    with _quiet(xp):
        s, q = xp.broadcast_arrays(s, q)
        finite_q = q[xp.isfinite(q)]
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
            total = total + b * fac * pw
            fac = fac * (ss + 2 * j + 1) * (ss + 2 * j + 2)
            pw = pw / (a * a)
        pole = (s == 1.0) | ((q <= 0) & (q == xp.floor(q)))
        bad = (s < 1.0) | ((q < 0) & (s != xp.floor(s))) | xp.isnan(s) | xp.isnan(q)
        total = xp.where(xp.isposinf(q), 0.0, total)
    return xp.where(bad, math.nan, xp.where(pole, math.inf, total))


def kernels(xp) -> dict:
    def binary64(fn):
        """Two operands of one dtype (numbers converted), computed in float64."""
        def kernel(a, b):
            a, b = _pair(a, b)
            dt = a.dtype
            return fn(xp.asarray(a, dtype=xp.float64),
                      xp.asarray(b, dtype=xp.float64)).astype(dt, copy=False)
        return kernel

    return {
        "igamma": binary64(lambda a, x: igamma_pair64(xp, a, x)[0]),
        "igammac": binary64(lambda a, x: igamma_pair64(xp, a, x)[1]),
        "special_zeta": binary64(lambda s, q: hurwitz_zeta64(xp, s, q)),
    }
