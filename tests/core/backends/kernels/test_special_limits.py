"""Special functions at huge, tiny (subnormal) and infinite arguments return their limits,
not NaN, a wrong finite value or a hang (issue 35, class 15). Expected values were recorded
from torch 2.13, mpmath (40 digits) or scipy 1.17 where torch is wrong (each noted)."""
import math
import signal
from contextlib import contextmanager

import numpy as np
import pytest

import ember as E

# 1e308 as float32 is inf: the cast's overflow warning is expected
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")

F64, F32 = E.float64, E.float32
SPECIAL = E.special
# every argument class of the sweep: huge, +-inf, signed zeros, subnormals, NaN
EDGES = [1e308, -1e308, 1e38, -1e38, math.inf, -math.inf, 0.0, -0.0, 5e-324, -5e-324,
         1e-310, 1e-45, -1e-45, math.nan]
# functions undefined (NaN, as torch and scipy) at some of EDGES: those arguments
NAN_OK = {
    "bessel_y0": "neg", "bessel_y1": "neg", "modified_bessel_k0": "neg",
    "modified_bessel_k1": "neg", "scaled_modified_bessel_k0": "neg",
    "scaled_modified_bessel_k1": "neg", "logit": "out01", "ndtri": "out01",
    "erfinv": "big", "log1p": "below_m1", "digamma": "neg_int", "psi": "neg_int",
}
UNARY = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "digamma", "entr",
         "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammaln", "i0", "i0e",
         "i1", "i1e", "log1p", "log_ndtr", "logit", "modified_bessel_i0",
         "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "ndtr", "ndtri",
         "psi", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "sinc",
         "spherical_bessel_j0"]


def _nan_allowed(name, x):
    rule = NAN_OK.get(name)
    if math.isnan(x):
        return True
    if rule == "neg":
        return x < 0
    if rule == "out01":
        return not 0 <= x <= 1
    if rule == "big":
        return abs(x) > 1
    if rule == "below_m1":
        return x < -1
    if rule == "neg_int":   # negative poles / -inf (every float below -2**52 is an integer)
        return x == -math.inf or x < -1 and x == math.floor(x)
    return False


@contextmanager
def _deadline(seconds):
    """Fail instead of hanging (the old zeta shift ran for |q| iterations)."""
    def fail(*_):
        raise TimeoutError(f"took more than {seconds} s")
    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _run(fn, values, dtype):
    return fn(E.tensor(values, dtype=dtype)).numpy().astype(np.float64)


@pytest.mark.parametrize("dtype", [F64, F32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", UNARY)
def test_no_nan_where_the_function_has_a_value(name, dtype):
    with _deadline(60):
        got = _run(getattr(SPECIAL, name), EDGES, dtype)
    for x, y in zip(EDGES, got):
        xd = float(np.array(x, dtype=np.float32 if dtype is F32 else np.float64))
        if math.isnan(y):
            assert _nan_allowed(name, xd), f"{name}({x!r}) in {dtype} is NaN"


# (function, x, expected) in float64; source in the comment
TINY64 = [
    # mpmath: lgamma(x) = -log|x| - gamma x near 0 (the reflection lost x)
    ("gammaln", [5e-324, -5e-324, 1e-310, -1e-310, 1e-45, -1e-45, -1e-9, -1e-7, -0.999999,
                 -1.000001, -2.5, -100.25],
     [744.4400719213812, 744.4400719213812, 713.8013788281542, 713.8013788281542,
      103.61632918473205, 103.61632918473205, 20.723265837523627, 16.118095708679895,
      13.815510980721177, 13.815510135263528, -0.056243716497674054, -363.4009232278215]),
    # mpmath: digamma(x) = -1/x - gamma + pi^2/6 x near 0
    ("digamma", [5e-324, -5e-324, 1e-310, -1e-310, 1e-45, -1e-45, 1e-9, -1e-9, -1e-7,
                 -0.999999, -1.000001, -2.5, -100.25],
     [-math.inf, math.inf, -math.inf, math.inf, -1.0000000000000001e+45,
      1.0000000000000001e+45, -1000000000.5772156, 999999999.4227843, 9999999.42278417,
      -999999.5771842643, 1000000.4228639568, 1.103156640645243, 7.754238959208646]),
    # torch and mpmath: Y0(x) = 2/pi (log(x/2) + gamma) for a subnormal x (was -439.8)
    ("bessel_y0", [5e-324, 1e-310, 1e-200],
     [-473.9990734230043, -454.49387560035393, -293.2480438468798]),
    # torch and mpmath: Y1(x) = -2/(pi x): overflows to -inf (was -6.4e299)
    ("bessel_y1", [5e-324, 1e-310, 1e-200], [-math.inf, -math.inf, -6.366197723675814e+199]),
    # the limit 0 (|Ai(x)| <= |x|^(-1/4) / sqrt(pi) < 1e-77); torch and scipy: NaN
    ("airy_ai", [-1e308, -1e206], [0.0, 0.0]),
    # sin(pi n) = 0 exactly for every integer n: sinc(1e20) = 0, not ~1e-21 as torch
    ("sinc", [1e20, -1e20, 1e300, 3.0, -7.0, 2.5, 0.5],
     [0.0, 0.0, 0.0, 0.0, 0.0, 0.12732395447351627, 0.6366197723675814]),
]


@pytest.mark.parametrize("name, xs, expected", TINY64, ids=[t[0] for t in TINY64])
def test_float64_limits_and_tiny_arguments(name, xs, expected):
    got = _run(getattr(SPECIAL, name), xs, F64)
    # lgamma: Lanczos' absolute error ~1e-15 near its zeros (-2.5 gives -0.056)
    np.testing.assert_allclose(got, expected, rtol=2e-15, atol=1e-14 if name == "gammaln" else 0)


def test_torch_level_ops_share_the_fixed_kernels():
    x = [5e-324, -5e-324, -1e-7]
    np.testing.assert_allclose(_run(E.lgamma, x, F64),
                               [744.4400719213812, 744.4400719213812, 16.118095708679895],
                               rtol=2e-15)
    np.testing.assert_allclose(_run(E.digamma, x, F64), [-math.inf, math.inf, 9999999.42278417],
                               rtol=2e-15)
    assert _run(E.sinc, [1e20], F64)[0] == 0.0


# float32, torch 2.13: lgamma / digamma at the smallest subnormal; K0 at subnormals
TINY32 = [
    ("gammaln", [1e-45, -1e-45, 1e-40], [103.2789306640625, 103.2789306640625,
                                         92.10340881347656]),
    ("digamma", [1e-45, -1e-45], [-math.inf, math.inf]),
    ("modified_bessel_k0", [1e-45, 1e-40], [103.39485168457031, 92.2193374633789]),
    # torch: inf for 1e-45 (its x / 2 underflows); mpmath: 103.3949
    ("scaled_modified_bessel_k0", [1e-45, 1e-40], [103.39485168457031, 92.21932983398438]),
    ("sinc", [1e38, -1e20, 3.0e7], [0.0, 0.0, 0.0]),
]


@pytest.mark.parametrize("name, xs, expected", TINY32, ids=[t[0] for t in TINY32])
def test_float32_limits_and_tiny_arguments(name, xs, expected):
    got = _run(getattr(SPECIAL, name), xs, F32)
    np.testing.assert_allclose(got, expected, rtol=3e-7, atol=0)


@pytest.mark.parametrize("dtype", [F64, F32], ids=["float64", "float32"])
def test_zeta_at_huge_s_is_its_limit(dtype):
    # torch 2.13: zeta(s -> inf, q) -> 1 at q = 1, inf below 1, 0 above (torch: NaN there)
    s = [1e38, 1e38, 1e38, 1e38, 1e38, 3.0]
    q = [1.0, 0.5, -2.5, 1e-45, 2.0, 1.5]
    with _deadline(60):
        got = SPECIAL.zeta(E.tensor(s, dtype=dtype), E.tensor(q, dtype=dtype)).numpy()
    np.testing.assert_allclose(got, [1.0, math.inf, math.inf, math.inf, 0.0,
                                     0.41439832211716005], rtol=1e-6)


def test_zeta_and_polygamma_at_huge_negative_arguments_end():
    # every float below -2**52 is an integer, a pole: torch 2.13 gives these values
    x = [-1e308, -1e20, -1e10, -4503599627370496.0]
    with _deadline(60):
        z = SPECIAL.zeta(E.tensor([3.0] * 4, dtype=F64), E.tensor(x, dtype=F64)).numpy()
        p2 = SPECIAL.polygamma(2, E.tensor(x, dtype=F64)).numpy()
        p3 = SPECIAL.polygamma(3, E.tensor(x, dtype=F64)).numpy()
    assert np.all(z == math.inf)
    assert np.all(p2 == -math.inf)
    assert np.all(p3 == math.inf)


@pytest.mark.parametrize("dtype", [F64, F32], ids=["float64", "float32"])
def test_gammainc_at_huge_a_is_not_nan(dtype):
    # scipy 1.17: P(a, a) -> 1/2; torch 2.13 agrees (0.5 at 1e38 and 1e308)
    a = [1e38, 1e38, 1e30, 1e25] + ([1e308, 1e300] if dtype is F64 else [])
    x = [1e38, 2e38, 1.1e30, 0.99e25] + ([1e308, 1e300] if dtype is F64 else [])
    p = SPECIAL.gammainc(E.tensor(a, dtype=dtype), E.tensor(x, dtype=dtype)).numpy()
    q = SPECIAL.gammaincc(E.tensor(a, dtype=dtype), E.tensor(x, dtype=dtype)).numpy()
    want = [0.5, 1.0, 1.0, 0.0] + ([0.5, 0.5] if dtype is F64 else [])
    np.testing.assert_allclose(p, want, atol=1e-7)
    np.testing.assert_allclose(q, 1.0 - np.array(want), atol=1e-7)


def test_gammainc_huge_a_near_the_mean_against_scipy():
    # scipy 1.17 values: Wilson-Hilferty is exact to rounding for a > 1e20
    a = E.tensor([1e21, 1e21], dtype=F64)
    x = E.tensor([1e21 + 1e11, 1e21 - 3e10], dtype=F64)
    np.testing.assert_allclose(SPECIAL.gammainc(a, x).numpy(),
                               [0.9992172938221909, 0.1713906825939181], rtol=1e-12)
    np.testing.assert_allclose(SPECIAL.gammaincc(a, x).numpy(),
                               [0.0007827061778090108, 0.8286093174060818], rtol=1e-9)


@pytest.mark.parametrize("dtype", [F64, F32], ids=["float64", "float32"])
def test_the_issue_examples(dtype):
    assert _run(SPECIAL.ndtr, [-1e308, -1e38, -math.inf], dtype).tolist() == [0.0, 0.0, 0.0]
    assert _run(SPECIAL.i0, [1e308, -1e308, math.inf], dtype).tolist() == [math.inf] * 3
    assert _run(SPECIAL.i1, [1e308, -math.inf], dtype).tolist() == [math.inf, -math.inf]
    assert 0 < _run(SPECIAL.i0e, [1e38], dtype)[0] < 1e-19   # 1 / sqrt(2 pi x)
    assert _run(SPECIAL.log_ndtr, [-1e38], dtype)[0] < -1e70 or dtype is F32
    assert _run(SPECIAL.expit, [-1e308, 1e308], dtype).tolist() == [0.0, 1.0]


# (a, x, P, Q) from mpmath (50 digits). The old code: NaN or inf at a subnormal a (the
# series' 1 / a overflowed), Q = 1 - P cancelled to 0, a negative value or 1e5 times too
# large for small a (torch gives P(5e-324, 5e-324) = 0, not 1)
SMALL_A = [
    (5e-324, 5e-324, 1.0, 3.676e-321),
    (5e-324, 1e-45, 1.0, 5.1e-322),
    (1e-310, 0.5, 1.0, 5.5977359477617e-311),
    (1e-30, 0.9, 1.0, 2.6018393932599963e-31),
    (1e-16, 1e-10, 0.9999999999999978, 2.2448635265138897e-15),
    (1e-08, 0.5, 0.9999999944022641, 5.597735977099587e-09),
    (1e-05, 0.3, 0.9999909432172828, 9.056782717213817e-06),
    (0.01, 1e-300, 0.0010057065285003848, 0.9989942934714996),
    (0.05, 5e-324, 7.02023053563094e-17, 0.9999999999999999),
    (0.099, 0.999, 0.9760967138488269, 0.023903286151173153),
]


@pytest.mark.parametrize("a, x, p, q", SMALL_A)
def test_gammainc_at_tiny_a_against_mpmath(a, x, p, q):
    ta, tx = E.tensor(a, dtype=F64), E.tensor(x, dtype=F64)
    got_p, got_q = float(SPECIAL.gammainc(ta, tx)), float(SPECIAL.gammaincc(ta, tx))
    # a subnormal result keeps only its few significant bits
    np.testing.assert_allclose(got_p, p, rtol=1e-14, atol=1e-323)
    np.testing.assert_allclose(got_q, q, rtol=1e-14, atol=1e-323)
