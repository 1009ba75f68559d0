"""Airy's Ai (kernels/special_airy.py) against reference values computed with mpmath's
airyai at 60 digits, pasted below (both sides of the Taylor/asymptotic switch at |x| = 10.5,
the first zero, the tails), and against its differential equation."""
from __future__ import annotations

import math

import numpy as np

import ember as E

S = E.special

# (x, Ai(x)) pairs, mpmath at 60 digits rounded to float64
AIRY = [
    (-1000.0, 0.05597189577301992), (-50.0, -0.1618814236123209), (-10.6, -0.30457846499736685),
    (-10.4, -0.28680545563082976), (-9.5, 0.3191032477191282), (-5.3, 0.18256793106833963),
    (-2.338107410459767, 2.743319340666283e-17), (-1.0, 0.5355608832923521),
    (0.0, 0.3550280538878172), (0.5, 0.23169360648083348), (3.3, 0.0037872884268267547),
    (10.4, 3.049888186593998e-11), (10.6, 1.587809078467612e-11),
    (50.0, 4.5849417240748285e-104), (100.0, 2.6344821520881846e-291),
]


def _xw(table):
    return (E.tensor(np.array([t[0] for t in table])), np.array([t[1] for t in table]))


def test_airy_matches_mpmath():
    x, want = _xw(AIRY)
    got = S.airy_ai(x).numpy()
    xs = x.numpy()
    right = xs > -2.3  # decaying side: relative error ~ zeta ulp
    np.testing.assert_allclose(got[right], want[right], rtol=2e-13)
    # oscillating side: absolute error relative to the envelope |x|^(-1/4) / sqrt(pi); the
    # first zero -2.338107410459767 is in the table
    # first zero -2.338107410459767 is in the table. The bound grows as zeta's ulp: rounding
    # x itself moves the phase zeta = 2/3 |x|^(3/2) by that much
    z = np.abs(xs[~right])
    env = z ** -0.25 / math.sqrt(math.pi)
    bound = np.maximum(1e-15, 8 * (2 / 3) * z ** 1.5 * np.finfo(np.float64).eps)
    np.testing.assert_array_less(np.abs(got[~right] - want[~right]) / env, bound)


def test_airy_solves_its_equation():
    # Ai'' = x Ai, by a centred difference of the Taylor (|x| <= 10.5) and asymptotic sides
    x = np.array([-12.0, -7.3, -1.1, 0.3, 4.2, 11.5], dtype=np.float64)
    h = 1e-3
    f = lambda v: S.airy_ai(E.tensor(v)).numpy()  # noqa: E731
    second = (f(x + h) - 2 * f(x) + f(x - h)) / (h * h)
    np.testing.assert_allclose(second, x * f(x), rtol=1e-5, atol=1e-9)


def test_float32_and_half_use_fewer_terms_within_float32_precision():
    # fewer Taylor / asymptotic terms for narrower results (truncation ~1e-10 of the
    # envelope), the Taylor series in float32 below 6.5: < 7 ulps of max(|Ai|, envelope)
    x = np.concatenate([np.linspace(-60, 30, 4001), [-10.5, 10.5, -10.51, 10.51]])
    x32 = x.astype(np.float32)
    wide = E.special.airy_ai(E.tensor(x32.astype(np.float64))).numpy()
    got = E.special.airy_ai(E.tensor(x32))
    assert got.dtype is E.float32
    env = np.where(x32 < 0, np.abs(x32.astype(np.float64)) ** -0.25 / np.sqrt(np.pi),
                   np.abs(wide))
    assert (np.abs(got.numpy() - wide) <= 1e-6 * env + 1e-38).all()  # + float32 underflow
    top = np.maximum(np.abs(wide), np.where(x32 < 0, env, 0.0)).astype(np.float32)
    ulps = np.abs(got.numpy() - wide) / np.spacing(top).astype(np.float64)
    assert ulps[np.abs(x32) <= 10.5].max() <= 7
    for dt in (E.float16, E.bfloat16):
        h = E.special.airy_ai(E.tensor(x32[:200]).to(dt))
        assert h.dtype is dt
    e = E.special.airy_ai(E.tensor([math.inf, -math.inf, math.nan, -0.0], dtype=E.float32))
    assert e.numpy()[:2].tolist() == [0.0, 0.0] and math.isnan(e.numpy()[2])
