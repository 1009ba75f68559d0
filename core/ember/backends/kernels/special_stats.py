"""Pointwise kernels of torch.special's statistics functions: the normal distribution
(``special_ndtr``, ``special_log_ndtr``, ``special_ndtri``), the scaled complementary
error function ``special_erfcx``, and the entropy terms ``special_entr`` and
``special_xlog1py``.

entr, erfcx, ndtr, log_ndtr and ndtri run in the input's precision (float16/bfloat16 in float32,
rounded once), each branch only on the elements of its range. Maximum errors measured
against mpmath (40 digits) at ~3,000 uniform and log-spaced points of each range, in ulps
of the dtype (float32 / float64); the tests check them:

* erfcx: 6 / 4 ulp on [-9, 1e5] (float64: Cody's rational approximations for exp(x^2)
  erfc(x), Netlib SPECFUN CALERF with jint = 2; float32: Numerical Recipes' erfcc fit; both
  ``special.erfc_ratio``); inf below x ~ -9.4 (float32) / -26.6 (float64).
* ndtr: 7 / 6 ulp on [-13, 9]: 0.5 erfc(-x / sqrt 2), and below -1 0.5 erfcx(-x / sqrt 2)
  exp(-x^2 / 2) with x^2 split exactly (rounding x / sqrt 2 inside exp would cost x^2 ulps);
  float32 runs ``special_erfc32.ndtr`` (branch-free, the same split).
* log_ndtr: 8 / 6 ulp on [-1e3, 9]: log(erfcx(-x / sqrt 2) / 2) - x^2 / 2 below -1 (no
  underflow: log_ndtr(-1e5) = -5e9), log1p(-ndtr(-x)) above.
* ndtri: 4 / 3 ulp on [1e-44 / 1e-300, 1): Cephes' ndtri (three rational approximations,
  no Newton step), ndtri(p) = -ndtri(1 - p) above 1 - exp(-2).
"""
from __future__ import annotations

import math

from .special import (ERF_SMALL, _pair, _polyval, _quiet, by_precision, erf_small, erfc_flat,
                      erfc_ratio, subset)
from . import special_erfc32
from .special_blocked import blocked

_SQRT1_2 = 0.70710678118654752440
_LOG_SQRT_2PI = 0.91893853320467274178


_ERFCX_CAP = {4: 10.0, 8: 27.0}  # erfcx(-y) overflows to inf before these
_NDTR_CAP = {4: -16.0, 8: -40.0}  # ndtr underflows to 0 past these


def _exp_square(xp, y):
    """exp(y^2) with y^2 split as in Cody's erfc, so exp keeps full precision."""
    ysq = xp.trunc(y * 16.0) / 16.0
    return xp.exp(ysq * ysq) * xp.exp((y - ysq) * (y + ysq))


def erfcx_flat(xp, x):
    """exp(x^2) erfc(x) of a 1-d float32/float64 array in its dtype, without forming
    either factor for x > 0.47: Cody's erfc(y) = exp(-y^2) R(y), and R is the result."""
    y = xp.abs(x)
    r = xp.empty_like(x)
    small = subset(xp, y <= ERF_SMALL)
    xs = x[small]
    r[small] = _exp_square(xp, xs) * (1.0 - erf_small(xp, xs))
    pos = subset(xp, x > ERF_SMALL)
    r[pos] = erfc_ratio(xp, x[pos])
    # erfc(-y) = 2 exp(y^2) - erfcx(y); exp overflows to inf past the cap, as PyTorch
    neg = subset(xp, x < -ERF_SMALL)
    yn = y[neg]
    cap = _ERFCX_CAP[x.dtype.itemsize]
    e = 2.0 * _exp_square(xp, xp.minimum(yn, cap)) - erfc_ratio(xp, yn)
    r[neg] = xp.where(yn > cap, math.inf, e)
    nan = subset(xp, xp.isnan(x))
    r[nan] = x[nan]
    return r


def ndtr_flat(xp, x):
    """The standard normal CDF of a 1-d float32/float64 array: 0.5 erfc(-x / sqrt 2), and
    below -1 0.5 R(-x / sqrt 2) exp(-x^2 / 2) (R = erfcx), with x^2 split as in Cody's
    erfc: the rounding of x / sqrt 2 would otherwise cost x^2 ulps in exp's argument."""
    r = xp.empty_like(x)
    left = subset(xp, x < -1.0)
    lo = x[left]
    lc = xp.maximum(lo, _NDTR_CAP[x.dtype.itemsize])
    xh = xp.trunc(lc * 16.0) / 16.0
    r[left] = 0.5 * erfc_ratio(xp, -lo * _SQRT1_2) * xp.exp(-0.5 * xh * xh) * \
        xp.exp(-0.5 * (lc - xh) * (lc + xh))
    right = subset(xp, ~(x < -1.0))  # NaN too
    r[right] = 0.5 * erfc_flat(xp, -x[right] * _SQRT1_2)
    return r


def log_ndtr_flat(xp, x):
    """log of the standard normal CDF of a 1-d float32/float64 array, accurate in both
    tails: log(R(t) / 2) - x^2 / 2 below -1 (t = -x / sqrt 2; no underflow), else
    log1p(-ndtr(-x))."""
    r = xp.empty_like(x)
    left = subset(xp, x < -1.0)
    lo = x[left]
    r[left] = xp.log(0.5 * erfc_ratio(xp, -lo * _SQRT1_2)) - 0.5 * lo * lo
    right = subset(xp, ~(x < -1.0))
    r[right] = xp.log1p(-ndtr_flat(xp, -x[right])) + 0.0  # log1p(-0.0) is -0.0
    return r


# Cephes ndtri (highest power first): x = y + y^3 P0(y^2) / Q0(y^2) with y = p - 1/2 for
# |y| <= 3/8; below, with t = sqrt(-2 log q): x = t - log(t) / t - P(1/t) / (t Q(1/t)), P1/Q1
# for t < 8, P2/Q2 above (q down to exp(-2048)).
_NDTRI_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0)
_NDTRI_Q0 = (1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
             -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
             1.59056225126211695515E1, -1.18331621121330003142E0)
_NDTRI_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2,
             -8.57456785154685413611E-4)
_NDTRI_Q1 = (1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
             1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
             -3.80806407691578277194E-2, -9.33259480895457427372E-4)
_NDTRI_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)
_NDTRI_Q2 = (1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
             2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
             2.89247864745380683936E-6, 6.79019408009981274425E-9)
_EXP_M2 = 0.13533528323661269189  # exp(-2)
_SQRT_2PI = 2.50662827463100050242


def ndtri_flat(xp, p):
    """The inverse of the standard normal CDF of a 1-d float32/float64 array: Cephes'
    ndtri (S. Moshier; as PyTorch), each branch on its own elements, no Newton steps;
    -inf at 0, inf at 1, NaN outside [0, 1]."""
    r = xp.full_like(p, math.nan)
    central = subset(xp, (p >= _EXP_M2) & (p <= 1.0 - _EXP_M2))
    y = p[central] - 0.5
    y2 = y * y
    r[central] = (y + y * (y2 * _polyval(_NDTRI_P0, y2) / _polyval(_NDTRI_Q0, y2))) * _SQRT_2PI
    # q = min(p, 1 - p) (exact above 1/2); t = sqrt(-2 log q) in [2, 8) or [8, inf)
    tail = subset(xp, ((p > 0) & (p < _EXP_M2)) | ((p > 1.0 - _EXP_M2) & (p < 1)))
    pt = p[tail]
    upper = pt > 0.5
    t = xp.sqrt(-2.0 * xp.log(xp.where(upper, 1.0 - pt, pt)))
    for part, num, den in ((subset(xp, t < 8.0), _NDTRI_P1, _NDTRI_Q1),
                           (subset(xp, t >= 8.0), _NDTRI_P2, _NDTRI_Q2)):
        tp = t[part]
        z = 1.0 / tp
        x = tp - xp.log(tp) / tp - z * _polyval(num, z) / _polyval(den, z)
        r[tail[part]] = xp.where(upper[part], x, -x)
    r[subset(xp, p == 0)] = -math.inf
    r[subset(xp, p == 1)] = math.inf
    return r


def entr_flat(xp, x):
    """-x log x of a 1-d float32/float64 array in its dtype: 0 at 0, -inf below 0 (NaN
    stays NaN). One rounding of log and one of the product: against mpmath on [1e-30, 1e30]
    < 3 ulp in float32 (2.6 measured), < 2 in float64."""
    r = xp.log(x)
    r *= x
    xp.negative(r, out=r)
    r[subset(xp, x == 0)] = 0.0  # not NaN (0 * -inf), nor -0.0
    r[subset(xp, x < 0)] = -math.inf
    return r


def kernels(xp) -> dict:
    def xlog1py(a, b):
        a, b = _pair(a, b)
        dt = a.dtype
        a64, b64 = a.astype(xp.float64), b.astype(xp.float64)
        with _quiet(xp):
            # as xlogy: 0 where self == 0 unless other is NaN (0 * log1p(-1) = 0 too)
            r = xp.where((a64 == 0) & ~xp.isnan(b64), 0.0, a64 * xp.log1p(b64))
        return r.astype(dt, copy=False)

    def _run(fn, x):
        with _quiet(xp):
            return fn(xp, x)

    def flat(fn):
        def run(x):
            with _quiet(xp):
                return fn(xp, x)
        return by_precision(xp, blocked(xp, run), blocked(xp, run))

    return {
        "special_erfcx": flat(erfcx_flat),
        # float32 (float16/bfloat16 through it) branch-free in special_erfc32
        "special_ndtr": by_precision(xp, lambda x: special_erfc32.ndtr(xp, x),
                                     blocked(xp, lambda x: _run(ndtr_flat, x))),
        "special_log_ndtr": flat(log_ndtr_flat), "special_ndtri": flat(ndtri_flat),
        "special_entr": flat(entr_flat), "special_xlog1py": xlog1py,
    }
