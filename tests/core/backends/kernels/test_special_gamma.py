"""gammainc/gammaincc (igamma/igammac) and the Hurwitz zeta (kernels/special_gamma.py)
against reference values computed with mpmath (gammainc(..., regularized=True) at 60
digits; zeta at 300 digits, as mpmath's zeta loses digits for large q at lower precision),
pasted below, and the edge values PyTorch (Cephes) gives."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember as E

S = E.special
inf, nan = math.inf, math.nan

# (a, x, P(a, x)) and (a, x, Q(a, x)); (x, q, zeta(x, q))
IGAMMA = [
    (0.5, 0.1, 0.345279153981423), (0.5, 2.0, 0.9544997361036416),
    (1.0, 1.0, 0.6321205588285577), (2.0, 0.5, 0.09020401043104986),
    (3.0, 10.0, 0.9972306042844884), (10.0, 9.0, 0.4125917556680586),
    (25.0, 30.0, 0.8427579727616084), (100.0, 90.0, 0.15822098918643016),
    (100.0, 110.0, 0.8417213299399129), (1000.0, 1000.0, 0.5042052441802155),
    (0.01, 0.5, 0.9943732438060329), (5.0, 0.01, 8.264185641806499e-13), (2.0, 60.0, 1.0),
    (10000.0, 10200.0, 0.9767126778664011),
]

IGAMMAC = [
    (0.5, 0.1, 0.654720846018577), (0.5, 2.0, 0.04550026389635842),
    (1.0, 1.0, 0.36787944117144233), (2.0, 0.5, 0.9097959895689501),
    (3.0, 10.0, 0.002769395715511576), (10.0, 9.0, 0.5874082443319414),
    (25.0, 30.0, 0.1572420272383916), (100.0, 90.0, 0.8417790108135699),
    (100.0, 110.0, 0.15827867006008708), (1000.0, 1000.0, 0.4957947558197845),
    (0.01, 0.5, 0.0056267561939671844), (5.0, 0.01, 0.9999999999991735),
    (2.0, 60.0, 5.341471565244877e-25), (10000.0, 10200.0, 0.023287322133598805),
]

ZETA = [
    (2.0, 1.0, 1.6449340668482264), (2.0, 0.5, 4.934802200544679),
    (3.0, 2.5, 0.1181020258208637), (1.5, 1.0, 2.612375348685488),
    (1.01, 3.0, 99.08139709077827), (4.0, 0.1, 10000.752146131708),
    (10.0, 1.0, 1.000994575127818), (2.0, 100.0, 0.010050166663333571),
    (30.0, 7.0, 4.5199316204575715e-26), (2.0, -1.5, 9.379246644989124),
    (4.0, -2.5, 32.4579793698646), (7.5, 1000.0, 4.880873706614818e-21),
]


def _split(table):
    return (E.tensor(np.array([t[0] for t in table])), E.tensor(np.array([t[1] for t in table])),
            np.array([t[2] for t in table]))


def test_gammainc_and_gammaincc_match_mpmath():
    a, x, want = _split(IGAMMA)
    # the exponent a log x - x - lgamma(a) has condition ~ its own size (~1e2 here)
    np.testing.assert_allclose(S.gammainc(a, x).numpy(), want, rtol=5e-14)
    a, x, want = _split(IGAMMAC)
    # Q(0.01, 0.5) = 0.0105 comes from 1 - P: absolute precision there
    np.testing.assert_allclose(S.gammaincc(a, x).numpy(), want, rtol=5e-14, atol=2e-15)


def test_gammainc_plus_gammaincc_is_one_and_matches_exponential_case():
    a = E.tensor(np.array([0.3, 1.0, 4.0, 50.0]))[:, None]
    x = E.tensor(np.array([0.01, 0.9, 3.0, 45.0, 300.0]))
    np.testing.assert_allclose((S.gammainc(a, x) + S.gammaincc(a, x)).numpy(), 1.0, rtol=1e-14)
    xs = np.array([0.01, 0.9, 3.0, 45.0])
    np.testing.assert_allclose(S.gammaincc(E.tensor(np.ones(4)), E.tensor(xs)).numpy(),
                               np.exp(-xs), rtol=1e-14)  # Q(1, x) = e^-x


def test_igamma_edges_follow_pytorch():
    a = E.tensor([0, 0, 1, 1, inf, inf, -1, 1, nan, 1, 2.0], dtype=E.float64)
    x = E.tensor([1, 0, 0, inf, 1, inf, 1, -1, 1, nan, 0.0], dtype=E.float64)
    np.testing.assert_array_equal(E.igamma(a, x).numpy(),
                                  [1, nan, 0, 1, 0, nan, nan, nan, nan, nan, 0])
    np.testing.assert_array_equal(E.igammac(a, x).numpy(),
                                  [0, nan, 1, 0, 1, nan, nan, nan, nan, nan, 1])


def test_igamma_methods_inplace_and_out():
    a, x = E.tensor([2.0, 5.0]), E.tensor([1.0, 6.0])
    p = a.igamma(x)
    assert E.allclose(a.igammac(x), 1 - p)
    b = a.clone()
    assert b.igamma_(x) is b and E.equal(b, p)
    out = E.empty(2)
    E.igammac(a, x, out=out)
    assert E.allclose(out, 1 - p)
    assert S.gammainc is E.igamma and S.gammaincc is E.igammac


def test_zeta_matches_mpmath():
    s, q, want = _split(ZETA)
    np.testing.assert_allclose(S.zeta(s, q).numpy(), want, rtol=2e-15)


def test_zeta_agrees_with_riemann_values_and_polygamma():
    two = E.tensor([2.0, 4.0], dtype=E.float64)
    np.testing.assert_allclose(S.zeta(two, 1.0).numpy(), [math.pi ** 2 / 6, math.pi ** 4 / 90],
                               rtol=1e-15)
    q = E.tensor(np.linspace(0.2, 9, 12))
    # polygamma(1, q) = zeta(2, q): the two share no code path beyond Bernoulli numbers
    np.testing.assert_allclose(S.zeta(2.0, q).numpy(), E.polygamma(1, q).numpy(), rtol=1e-14)


def test_zeta_edges_follow_pytorch():
    s = E.tensor([1, 0.5, 2, 2, 2, 2, 3, 3, nan, 2], dtype=E.float64)
    q = E.tensor([1, 1, 0, -1, -1.5, nan, -1.5, -2.5, 1, inf], dtype=E.float64)
    got = S.zeta(s, q).numpy()
    np.testing.assert_allclose(got, [inf, nan, inf, inf, 9.379246644989124, nan,
                                     0.11810202582086413, 0.0541020258208641, nan, 0.0],
                               rtol=1e-14)
    # a negative non-integer q with a non-integer x has no real value
    assert math.isnan(S.zeta(E.tensor([2.5]), E.tensor([-0.5])).item())


@pytest.mark.parametrize("fn", [S.gammainc, S.gammaincc, S.zeta], ids=["igamma", "igammac", "zeta"])
def test_dtypes(fn):
    a, x = E.tensor([2.0, 3.5]), E.tensor([1.5, 2.0])
    for dt in (E.float16, E.bfloat16):
        got = fn(a.to(dt), x.to(dt))
        assert got.dtype is dt
        assert E.equal(got, fn(a.to(dt).double(), x.to(dt).double()).to(dt))
    assert fn(E.tensor([2, 3]), E.tensor([1, 2])).dtype is E.float32  # PyTorch refuses ints
    assert fn(a, x.double()).dtype is E.float64
    assert fn(a, 2).dtype is E.float32
    if fn is S.zeta:  # torch.special.zeta has Scalar-self overloads; igamma has none
        assert fn(2.5, x).dtype is E.float32
    else:
        with pytest.raises(TypeError, match="must be Tensor"):
            fn(2.5, x)
