"""The error-function, normal-distribution and Bessel kernels (kernels/special.py,
special_math.py, special_stats.py, special_bessel.py) per dtype against mpmath (skipped
without it): float32 runs float32 algorithms and float64 float64 ones, each within the
ulps its docstring states; float16/bfloat16 compute in float32 and round once. Special
values (+-inf, NaN, +-0, huge, tiny, subnormal, domain edges) per dtype."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember as E

mpmath = pytest.importorskip("mpmath")
S = E.special
inf, nan = math.inf, math.nan
RNG = np.random.default_rng(30)
NP = {E.float32: np.float32, E.float64: np.float64}


def _ref(fn, x):
    with mpmath.workdps(40):
        return np.array([float(fn(mpmath.mpf(float(v)))) for v in x])


def _ulps(got, want, dtype):
    """|got - want| in ulps of want rounded to ``dtype`` (finite references only)."""
    want_r = want.astype(dtype)
    spacing = np.spacing(np.abs(want_r)).astype(np.float64)
    return np.abs(got.astype(np.float64) - want) / spacing


def _grid(lo, hi, n=400):
    """Uniform and log-spaced points of [lo, hi]."""
    pts = [RNG.uniform(lo, hi, n)]
    if hi > 0:
        pts.append(np.geomspace(1e-6, hi, n // 4))
    if lo < 0:
        pts.append(-np.geomspace(1e-6, -lo, n // 4))
    return np.concatenate(pts)


def trigamma(x):
    return E.polygamma(1, x)


# name: (ember fn, mpmath fn, domain, {dtype: max ulps})
CASES = {
    "erfinv": (E.erfinv, mpmath.erfinv, (-1, 1), {E.float32: 4, E.float64: 6}),
    "erfc": (E.erfc, mpmath.erfc, (-6, 10), {E.float32: 8, E.float64: 6}),
    "ndtr": (S.ndtr, mpmath.ncdf, (-13, 9), {E.float32: 8, E.float64: 8}),
    "log_ndtr": (S.log_ndtr, lambda v: mpmath.log(mpmath.ncdf(v)), (-1e3, 9),
                 {E.float32: 10, E.float64: 8}),
    "erfcx": (S.erfcx, lambda v: mpmath.exp(v * v) * mpmath.erfc(v), (-9, 1e5),
              {E.float32: 8, E.float64: 6}),
    "i0": (E.i0, lambda v: mpmath.besseli(0, v), (-85, 85), {E.float32: 8, E.float64: 8}),
    "i1": (S.i1, lambda v: mpmath.besseli(1, v), (-85, 85), {E.float32: 16, E.float64: 12}),
    "i0e": (S.i0e, lambda v: mpmath.besseli(0, v) * mpmath.exp(-abs(v)), (-500, 500),
            {E.float32: 8, E.float64: 10}),
    "i1e": (S.i1e, lambda v: mpmath.besseli(1, v) * mpmath.exp(-abs(v)), (-500, 500),
            {E.float32: 12, E.float64: 12}),
    "trigamma": (trigamma, lambda v: mpmath.inf if v == int(v) <= 0 else mpmath.psi(1, v),
                 (-20, 1e4),
                 {E.float32: 4, E.float64: 4}),
    "entr": (S.entr, lambda v: -v * mpmath.log(v) if v > 0 else 0, (0, 1e3),
             {E.float32: 3, E.float64: 2}),
    "spherical_j0": (S.spherical_bessel_j0, lambda v: mpmath.sin(v) / v if v else 1,
                     (-1e4, 1e4), {E.float32: 3, E.float64: 2}),
    # K underflows float32 past x ~ 85; e^x K does not
    "k0": (S.modified_bessel_k0, lambda v: mpmath.besselk(0, v), (0, 80),
           {E.float32: 11, E.float64: 8}),
    "k1": (S.modified_bessel_k1, lambda v: mpmath.besselk(1, v), (0, 80),
           {E.float32: 11, E.float64: 8}),
    "k0e": (S.scaled_modified_bessel_k0, lambda v: mpmath.besselk(0, v) * mpmath.exp(v),
            (0, 700), {E.float32: 11, E.float64: 8}),
    "k1e": (S.scaled_modified_bessel_k1, lambda v: mpmath.besselk(1, v) * mpmath.exp(v),
            (0, 700), {E.float32: 11, E.float64: 8}),
}


@pytest.mark.parametrize("dtype", [E.float32, E.float64], ids=str)
@pytest.mark.parametrize("name", list(CASES))
def test_within_stated_ulps(name, dtype):
    fn, ref_fn, (lo, hi), tol = CASES[name]
    x = _grid(lo, hi)
    if name == "erfinv":  # and the tails, down to 1 - eps / 2
        eps = np.finfo(NP[dtype]).eps
        x = np.concatenate([x[np.abs(x) < 1], 1 - np.geomspace(eps / 2, 0.5, 200),
                            -1 + np.geomspace(eps / 2, 0.5, 50)])
    x = x.astype(NP[dtype])
    want = _ref(ref_fn, x)
    got = fn(E.tensor(x)).numpy()
    assert got.dtype == NP[dtype]
    ok = np.isfinite(want) & (np.abs(want) < np.finfo(NP[dtype]).max)
    err = _ulps(got[ok], want[ok], NP[dtype])
    assert err.max() <= tol[dtype], f"{name}: {err.max():.1f} ulp at x = {x[ok][err.argmax()]}"


def _ndtri_ref(p, guess):
    if p == 0.5:
        return 0.0
    with mpmath.workdps(40):
        lp = mpmath.log(mpmath.mpf(float(p)))
        return float(mpmath.findroot(lambda t: mpmath.log(mpmath.ncdf(t)) - lp,
                                     mpmath.mpf(float(guess))))


@pytest.mark.parametrize("dtype", [E.float32, E.float64], ids=str)
def test_ndtri_within_4_ulps(dtype):
    tiny = 1e-44 if dtype is E.float32 else 1e-300
    eps = np.finfo(NP[dtype]).eps
    p = np.concatenate([RNG.uniform(0, 1, 300), np.geomspace(tiny, 0.5, 150),
                        1 - np.geomspace(eps / 2, 0.5, 80)]).astype(NP[dtype])
    got = S.ndtri(E.tensor(p)).numpy()
    guess = S.ndtri(E.tensor(p.astype(np.float64))).numpy()
    want = np.array([_ndtri_ref(v, g) for v, g in zip(p, guess)])
    err = _ulps(got, want, NP[dtype])
    assert err.max() <= 4, f"{err.max():.1f} ulp at p = {p[err.argmax()]}"


@pytest.mark.parametrize("nu, second", [(0, False), (1, False), (0, True), (1, True)],
                         ids=["j0", "j1", "y0", "y1"])
def test_bessel_jy_float32_error(nu, second):
    fn = (S.bessel_y0, S.bessel_y1)[nu] if second else (S.bessel_j0, S.bessel_j1)[nu]
    ref_fn = mpmath.bessely if second else mpmath.besselj
    x = _grid(0 if second else -40, 40)
    x = np.concatenate([x, np.geomspace(1e-6, 1e4, 200), [4.999, 5.0, 5.001]])
    if second:
        x = np.abs(x)
    x = x.astype(np.float32)
    want = _ref(lambda v: ref_fn(nu, v), x)
    got = fn(E.tensor(x)).numpy()
    # near the zeros only the absolute error is small (as Cephes and PyTorch); Y's
    # rational part cancels against 2/pi log(x) J around its zeros in 3.7-4.9
    big = np.abs(want) > (0.3 if second else 0.1)
    assert _ulps(got[big], want[big], np.float32).max() <= (16 if second else 8)
    assert np.abs(got[~big] - want[~big]).max() <= 1e-6
    got64 = fn(E.tensor(x.astype(np.float64))).numpy()
    np.testing.assert_allclose(got64, want, rtol=1e-14, atol=3e-16 if not second else 2e-15)


SPECIALS = [inf, -inf, nan, -0.0, 0.0, 1e30, -1e30, 1e-40, -1e-40]
EXPECT = {  # None: finite, checked against float64 at the float32 tolerance
    E.erfinv: [nan, nan, nan, -0.0, 0.0, nan, nan, None, None],
    E.erfc: [0.0, 2.0, nan, 1.0, 1.0, 0.0, 2.0, 1.0, 1.0],
    S.ndtr: [1.0, 0.0, nan, 0.5, 0.5, 1.0, 0.0, 0.5, 0.5],
    S.log_ndtr: [0.0, -inf, nan, None, None, 0.0, None, None, None],
    S.erfcx: [0.0, inf, nan, 1.0, 1.0, None, inf, 1.0, 1.0],
    S.ndtri: [nan, nan, nan, -inf, -inf, nan, nan, None, nan],
    S.bessel_j0: [0.0, 0.0, nan, 1.0, 1.0, None, None, 1.0, 1.0],
    S.bessel_j1: [0.0, -0.0, nan, 0.0, 0.0, None, None, None, None],
    S.bessel_y0: [0.0, nan, nan, -inf, -inf, None, nan, None, nan],
    S.bessel_y1: [0.0, nan, nan, -inf, -inf, None, nan, None, nan],
    E.i0: [inf, inf, nan, None, None, inf, inf, None, None],  # 1 ulp at 0 in float32
    S.i1: [inf, -inf, nan, 0.0, 0.0, inf, -inf, None, None],
    S.i0e: [0.0, 0.0, nan, None, None, None, None, None, None],
    S.i1e: [0.0, -0.0, nan, 0.0, 0.0, None, None, None, None],
    S.entr: [-inf, -inf, nan, 0.0, 0.0, None, -inf, None, -inf],
    S.spherical_bessel_j0: [0.0, 0.0, nan, 1.0, 1.0, None, None, 1.0, 1.0],
    trigamma: [0.0, nan, nan, inf, inf, None, inf, None, None],
    S.modified_bessel_k0: [0.0, nan, nan, inf, inf, 0.0, nan, None, nan],
    S.modified_bessel_k1: [0.0, nan, nan, inf, inf, 0.0, nan, None, nan],
    S.scaled_modified_bessel_k0: [0.0, nan, nan, inf, inf, None, nan, None, nan],
    S.scaled_modified_bessel_k1: [0.0, nan, nan, inf, inf, None, nan, None, nan],
}


@pytest.mark.parametrize("dtype", [E.float16, E.bfloat16, E.float32, E.float64], ids=str)
@pytest.mark.parametrize("fn", list(EXPECT), ids=lambda f: f.__name__)
def test_special_values(fn, dtype):
    x = E.tensor(SPECIALS, dtype=E.float64).to(dtype)
    got = fn(x)
    assert got.dtype is dtype
    got = got.to(E.float64).numpy()
    wide = fn(x.to(E.float64)).numpy()  # the same inputs (rounded to dtype) in float64
    rel = {E.float16: 2e-3, E.bfloat16: 1e-2, E.float32: 1e-5, E.float64: 1e-14}[dtype]
    tiny = {E.float16: 6.2e-5, E.bfloat16: 1.2e-38, E.float32: 1.2e-38, E.float64: 0}[dtype]
    for g, w, e, v, s in zip(got, wide, EXPECT[fn], x.to(E.float64).numpy(), SPECIALS):
        if e is None or (v != s and not math.isnan(s)):  # rounded (to 0 or inf) in dtype
            # as float64 on the same (rounded) input, to the dtype's precision; results
            # below the dtype's normal range (or overflowing it) hold fewer bits
            assert g == pytest.approx(w, rel=rel, abs=tiny, nan_ok=True) or (
                math.isinf(g) and abs(w) > 6e4), (v, g, w)
        elif math.isnan(e):
            assert math.isnan(g), (v, g)
        else:
            assert g == e and math.copysign(1, g) == math.copysign(1, e), (v, g)


def test_erfinv_domain_edges_every_dtype():
    for dt in (E.float16, E.bfloat16, E.float32, E.float64):
        got = E.erfinv(E.tensor([1.0, -1.0, 1.0000001, -1.5], dtype=E.float64).to(dt))
        got = got.to(E.float64).numpy()
        assert got[0] == inf and got[1] == -inf and np.isnan(got[3])
    # the largest float32 below 1: finite, the tail of Giles' approximation
    top = np.nextafter(np.float32(1), np.float32(0))
    assert E.erfinv(E.tensor([top])).item() == pytest.approx(float(mpmath.erfinv(float(top))),
                                                             rel=4e-7)


@pytest.mark.parametrize("dtype", [E.float16, E.bfloat16], ids=str)
@pytest.mark.parametrize("fn", list(EXPECT), ids=lambda f: f.__name__)
def test_half_precision_computes_in_float32_and_rounds_once(fn, dtype):
    lo, hi = (0.01, 0.99) if fn is S.ndtri else (-0.99, 0.99) if fn is E.erfinv else (0.1, 9)
    x = E.linspace(lo, hi, 41).to(dtype)
    want = fn(x.to(E.float32)).to(dtype)
    assert E.equal(fn(x), want)
