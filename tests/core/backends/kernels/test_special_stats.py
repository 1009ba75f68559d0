"""erfcx, ndtr, log_ndtr, ndtri, entr and xlog1py (kernels/special_stats.py) against
reference values computed with mpmath at 60 digits (pasted below: erfcx = exp(x^2) erfc(x),
ndtr = mpmath.ncdf, log_ndtr = log(ncdf(x)) or log1p(-ncdf(-x)), ndtri by findroot on
log ncdf), numpy float64 formulas, and the edge values PyTorch gives."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember as E
from helpers import assert_close

S = E.special
inf, nan = math.inf, math.nan

# (x, f(x)) pairs, mpmath at 60 digits rounded to float64
ERFCX = [
    (-26.0, 7.657724931490568e+293), (-5.5, 27443409954929.71), (-1.0, 5.008980080762283),
    (-0.3, 1.4537492328427655), (0.0, 1.0), (1e-10, 0.999999999887162),
    (0.2, 0.8090195199015807), (0.47, 0.6314005166600343), (0.5, 0.6156903441929259),
    (1.7, 0.2916632970753435), (3.9, 0.14031418160068973), (4.1, 0.133834116418652),
    (12.0, 0.04685422101489376), (30.0, 0.01879588886141675), (1000.0, 0.0005641893014533876),
    (100000000.0, 5.641895835477562e-09), (1e+100, 5.6418958354775625e-101),
]

NDTR = [
    (-38.0, 2.88542835e-316), (-30.0, 4.906713927148187e-198), (-10.0, 7.619853024160525e-24),
    (-1.5, 0.06680720126885807), (-1.0, 0.15865525393145705), (-0.3, 0.3820885778110474),
    (0.0, 0.5), (0.4, 0.6554217416103242), (1.0, 0.8413447460685429), (3.0, 0.9986501019683699),
    (8.0, 0.9999999999999993),
]

LOG_NDTR = [
    (-100000.0, -5000000012.431864), (-300.0, -45006.62273211866), (-40.0, -804.6084420137538),
    (-5.0, -15.064998393988725), (-1.0, -1.8410216450092636), (-0.5, -1.1759117615936185),
    (0.0, -0.6931471805599453), (1.0, -0.17275377902344988), (5.0, -2.866516129637636e-07),
    (10.0, -7.619853024160525e-24), (30.0, -4.906713927148187e-198),
]

NDTRI = [
    (1e-300, -37.0470962993612), (1e-50, -14.933337534788489), (1e-10, -6.361340902404057),
    (0.001, -3.0902323061678136), (0.1, -1.2815515655446004), (0.25, -0.6744897501960817),
    (0.3, -0.5244005127080408), (0.5, 0.0), (0.6, 0.2533471031357997),
    (0.75, 0.6744897501960817), (0.9, 1.2815515655446006), (0.999, 3.090232306167813),
    (0.999999999999, 7.0344869100478356),
]


def _check(fn, table, rtol):
    x = np.array([t[0] for t in table])
    want = np.array([t[1] for t in table])
    got = fn(E.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0)


@pytest.mark.parametrize("fn, table", [(S.erfcx, ERFCX), (S.ndtr, NDTR), (S.log_ndtr, LOG_NDTR),
                                       (S.ndtri, NDTRI)], ids=["erfcx", "ndtr", "log_ndtr",
                                                               "ndtri"])
def test_matches_mpmath_to_a_few_ulps(fn, table):
    # measured maxima over 20,000 points are in the module docstring; these are the tails
    # and branch edges (Cody's 0.46875 and 4, ndtri's 0.25 / 0.75, log_ndtr's -1)
    _check(fn, table, rtol=2e-15)


def test_edges():
    e = E.tensor([-inf, inf, nan, -27.0, 0.0])
    np.testing.assert_array_equal(S.erfcx(e).numpy(), [inf, 0.0, nan, inf, 1.0])
    np.testing.assert_array_equal(S.ndtr(e).numpy()[:3], [0.0, 1.0, nan])
    assert S.log_ndtr(e).numpy()[:3].tolist()[:2] == [-inf, 0.0]
    assert math.copysign(1.0, S.log_ndtr(E.tensor([inf])).item()) == 1.0  # +0, not -0
    p = S.ndtri(E.tensor([0.0, 1.0, -0.1, 1.1, nan, 0.5])).numpy()
    np.testing.assert_array_equal(p, [-inf, inf, nan, nan, nan, 0.0])
    tiny = S.ndtri(E.tensor([5e-324], dtype=E.float64)).item()
    assert tiny == pytest.approx(-38.467405617144344, rel=1e-15)  # mpmath


def test_ndtri_inverts_ndtr_and_log_ndtr_is_its_log():
    # (above ~2, ndtr rounds 1 - Phi(-x) and the inverse amplifies that, as for any method)
    x = np.linspace(-30, 2, 97)
    np.testing.assert_allclose(S.ndtri(S.ndtr(E.tensor(x))).numpy(), x, rtol=1e-14, atol=1e-15)
    mid = E.tensor(np.linspace(-5, 1, 41))  # log(1 - tiny) would lose what log_ndtr keeps
    np.testing.assert_allclose(S.log_ndtr(mid).numpy(), np.log(S.ndtr(mid).numpy()), rtol=1e-14)
    # the far tail, where ndtr underflows: log Phi(x) ~ -x^2/2 - log(-x sqrt(2 pi))
    x = -1e4
    want = -x * x / 2 - math.log(-x * math.sqrt(2 * math.pi)) - 1 / (x * x)
    assert S.log_ndtr(E.tensor([x], dtype=E.float64)).item() == pytest.approx(want, rel=1e-15)


def test_erfcx_agrees_with_exp_times_erfc_where_neither_overflows():
    x = np.linspace(-5, 5, 101)
    want = np.exp(x * x) * E.erfc(E.tensor(x)).numpy()
    np.testing.assert_allclose(S.erfcx(E.tensor(x)).numpy(), want, rtol=1e-13)


def test_entr():
    x = np.array([0.0, -1.0, nan, inf, 2.0, 0.3, 1e-300])
    got = S.entr(E.tensor(x)).numpy()
    with np.errstate(all="ignore"):
        want = np.where(x > 0, -x * np.log(np.where(x > 0, x, 1.0)), -inf)
    want[0], want[2] = 0.0, nan
    np.testing.assert_allclose(got, want, rtol=1e-15)
    assert math.copysign(1.0, got[0]) == 1.0


def test_xlog1py_values_zero_rule_numbers_and_broadcasting():
    a, b = np.array([[0.5], [-2.0], [3.0]]), np.array([0.0, 0.7, -0.5, 9.0])
    assert_close(S.xlog1py(E.tensor(a), E.tensor(b)), a * np.log1p(b))
    got = S.xlog1py(E.tensor([0.0, 0.0, 0.0, 1.0, 1.0, -0.0]),
                    E.tensor([-1.0, nan, -2.0, -1.0, -2.0, inf])).numpy()
    np.testing.assert_array_equal(got, [0.0, nan, 0.0, -inf, nan, 0.0])  # as PyTorch
    assert_close(S.xlog1py(2.0, E.tensor([1.0, 3.0])), 2.0 * np.log1p([1.0, 3.0]))
    assert_close(S.xlog1py(E.tensor([1.0, 3.0]), 2), np.array([1.0, 3.0]) * math.log(3.0))
    with pytest.raises(TypeError):
        S.xlog1py(1.0, 2.0)


@pytest.mark.parametrize("dtype", [E.float16, E.bfloat16, E.float32])
@pytest.mark.parametrize("fn, lo, hi", [(S.erfcx, -3, 8), (S.ndtr, -6, 6), (S.log_ndtr, -8, 4),
                                        (S.ndtri, 0.01, 0.99), (S.entr, 0, 3)],
                         ids=["erfcx", "ndtr", "log_ndtr", "ndtri", "entr"])
def test_low_precision_matches_float64_to_a_few_ulps(fn, lo, hi, dtype):
    # float32 runs float32 algorithms (< 8 ulp, test_special_precision.py); float16 and
    # bfloat16 compute in float32 and round once
    x = E.linspace(lo, hi, 23).to(dtype)
    want = fn(x.to(E.float64))
    got = fn(x)
    assert got.dtype is dtype
    eps = {E.float16: 2.0 ** -10, E.bfloat16: 2.0 ** -7, E.float32: 8 * 2.0 ** -23}[dtype]
    tiny = 2.0 ** -24 if dtype is E.float16 else 1e-38  # float16's subnormal spacing
    np.testing.assert_allclose(got.to(E.float64).numpy(), want.numpy(), rtol=eps, atol=tiny)
    if dtype is not E.float32:
        assert E.equal(got, fn(x.to(E.float32)).to(dtype))


def test_integral_and_bool_inputs_give_the_default_float_dtype():
    for fn in (S.erfcx, S.ndtr, S.log_ndtr, S.ndtri, S.entr):
        assert fn(E.tensor([0, 1])).dtype is E.float32
        assert fn(E.tensor([True])).dtype is E.float32
    assert S.xlog1py(E.tensor([1, 2]), E.tensor([1, 2])).dtype is E.float32
    old = E.get_default_dtype()
    E.set_default_dtype(E.float64)
    try:
        assert S.ndtr(E.tensor([1])).dtype is E.float64
    finally:
        E.set_default_dtype(old)


def test_out_argument_and_number_input_errors():
    out = E.empty(3)
    S.ndtr(E.tensor([0.0, 1.0, -1.0]), out=out)
    assert_close(out, np.array([0.5, 0.8413447460685429, 0.15865525393145705]))
    with pytest.raises(TypeError, match="Tensor"):
        S.ndtr(0.5)
