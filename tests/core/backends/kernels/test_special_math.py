"""lgamma, digamma, polygamma, erfinv, i0, special_i1, sinc, hypot, nextafter, gcd, lcm
(kernels/special_math.py) against float64 references: math.lgamma per element, mpmath
(skipped without it) for the others, numpy where it has the function."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember as E
from helpers import assert_close

mpmath = pytest.importorskip("mpmath")
RNG = np.random.default_rng(2)
X = np.concatenate([RNG.uniform(-12, 12, 60), RNG.uniform(0.01, 3, 40), [0.5, 1.0, 2.0, 170.3,
                                                                         -2.5, 1e-8, 25.0]])


def ref(fn, x):
    return np.array([float(fn(mpmath.mpf(float(v)))) for v in x.reshape(-1)]).reshape(x.shape)


def test_lgamma_matches_math_lgamma():
    got = E.lgamma(E.tensor(X)).numpy()
    want = np.array([math.lgamma(v) for v in X])
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-12)
    specials = E.lgamma(E.tensor([0.0, -1.0, -3.0, math.inf, -math.inf, math.nan])).numpy()
    assert np.isposinf(specials[:5]).all() and np.isnan(specials[5])


def test_digamma_and_polygamma_match_mpmath():
    np.testing.assert_allclose(E.digamma(E.tensor(X)).numpy(), ref(mpmath.digamma, X),
                               rtol=1e-11, atol=1e-12)
    for n in (1, 2, 4):
        np.testing.assert_allclose(E.polygamma(n, E.tensor(X)).numpy(),
                                   ref(lambda v, n=n: mpmath.polygamma(n, v), X), rtol=1e-12)
    d = E.digamma(E.tensor([0.0, -0.0, -2.0, math.inf])).numpy()
    assert d[0] == -math.inf and d[1] == math.inf and np.isnan(d[2]) and d[3] == math.inf
    assert_close(E.polygamma(0, E.tensor(X)), E.digamma(E.tensor(X)).numpy())
    with pytest.raises(ValueError, match="non-negative order"):
        E.polygamma(-1, E.ones(2))


def test_erfinv_matches_mpmath_including_tails():
    y = np.concatenate([RNG.uniform(-1, 1, 80), 1 - 10.0 ** -RNG.uniform(1, 16, 20), [0.0]])
    want = ref(lambda v: mpmath.erfinv(v), y)
    np.testing.assert_allclose(E.erfinv(E.tensor(y)).numpy(), want, rtol=1e-14, atol=1e-300)
    s = E.erfinv(E.tensor([1.0, -1.0, 1.5, math.nan])).numpy()
    assert s[0] == math.inf and s[1] == -math.inf and np.isnan(s[2:]).all()
    roundtrip = E.erf(E.erfinv(E.tensor(y[:80])))
    assert_close(roundtrip, y[:80])


def test_bessel_i0_i1_match_mpmath():
    x = np.concatenate([RNG.uniform(-40, 40, 60), [0.0, 29.99, 30.01, 300.0, -700.0]])
    np.testing.assert_allclose(E.i0(E.tensor(x)).numpy(), ref(lambda v: mpmath.besseli(0, v),
                                                              x), rtol=1e-14)
    np.testing.assert_allclose(E.special_i1(E.tensor(x)).numpy(),
                               ref(lambda v: mpmath.besseli(1, v), x), rtol=1e-14)
    assert_close(E.i0(E.tensor(x[:6].astype(np.float32))), np.i0(x[:6]))


@pytest.mark.parametrize("name", ["lgamma", "digamma", "erfinv", "i0", "sinc"])
@pytest.mark.parametrize("dtype", [E.float16, E.bfloat16, E.float32, E.int32])
def test_unary_dtypes_round_the_float64_result(name, dtype):
    lo, hi = (-0.9, 0.9) if name == "erfinv" else (0.2, 5.0)
    x = RNG.uniform(lo, hi, (3, 4))
    if dtype is E.int32:
        x = np.round(x * (0 if name == "erfinv" else 1)) + (0 if name == "erfinv" else 1)
    t = E.tensor(x).to(dtype)
    got = getattr(E, name)(t)
    want = getattr(E, name)(t.double()).numpy()
    assert_close(got, want, dtype=E.get_default_dtype() if dtype is E.int32 else dtype)
    assert getattr(E, name)(E.empty(0, 3, dtype=dtype)).shape == (0, 3)


def test_inplace_and_out_variants():
    x = E.tensor(RNG.uniform(0.5, 3, 5))
    want = E.lgamma(x).numpy()
    assert_close(x.clone().lgamma_(), want)
    out = E.empty(0, dtype=E.float64)
    assert E.digamma(x, out=out) is out
    with pytest.raises(Exception):
        E.ones(3, dtype=E.int64).lgamma_()


def test_sinc_matches_numpy():
    x = np.concatenate([RNG.uniform(-5, 5, 20), [0.0, 1.0, -2.0]])
    assert_close(E.sinc(E.tensor(x)), np.sinc(x), atol=1e-15)


@pytest.mark.parametrize("dtype", [E.float16, E.bfloat16, E.float32, E.float64])
def test_hypot_matches_numpy(dtype):
    a, b = RNG.uniform(-3, 3, (3, 4)), RNG.uniform(-3, 3, (4,))
    ta, tb = E.tensor(a).to(dtype), E.tensor(b).to(dtype)
    assert_close(E.hypot(ta, tb), np.hypot(ta.double().numpy(), tb.double().numpy()))
    big = E.tensor(np.array([1e300]))
    assert_close(E.hypot(big, 1e300), np.array([math.sqrt(2) * 1e300]))  # no overflow
    with pytest.raises(NotImplementedError):
        E.hypot(E.tensor([3]), E.tensor([4]))


@pytest.mark.parametrize("dtype", [E.float16, E.float32, E.float64])
def test_nextafter_matches_numpy(dtype):
    a = np.array([1.0, 0.0, -2.0, math.inf]).astype(dtype.numpy)
    b = np.array([2.0, -1.0, -3.0, 0.0]).astype(dtype.numpy)
    assert_close(E.nextafter(E.tensor(a), E.tensor(b)), np.nextafter(a, b), rtol=0, atol=0)
    with pytest.raises(NotImplementedError):
        E.nextafter(E.tensor([1]), E.tensor([2]))


@pytest.mark.parametrize("dtype", [E.uint8, E.int8, E.int32, E.int64])
def test_gcd_lcm_match_numpy(dtype):
    a = RNG.integers(0 if dtype is E.uint8 else -20, 20, (3, 4)).astype(dtype.numpy)
    b = RNG.integers(0, 20, (4,)).astype(dtype.numpy)
    assert_close(E.gcd(E.tensor(a), E.tensor(b)), np.gcd(a, b))
    assert_close(E.lcm(E.tensor(a), E.tensor(b)), np.abs(np.lcm(a, b)).astype(dtype.numpy))
    with pytest.raises(NotImplementedError):
        E.gcd(E.ones(2), E.ones(2))
