"""The orthogonal polynomials of torch.special (kernels/special_polynomials.py) against
numpy's own polynomial modules (chebval, hermval, hermeval, lagval, legval) and the
identities that give Chebyshev U, V, W from T, plus PyTorch's conventions: n truncated,
negative n gives 0, NaN n gives NaN, numbers for x or n."""
from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.polynomial import chebyshev, hermite, hermite_e, laguerre, legendre

import ember as E

S = E.special
X = np.concatenate([np.linspace(-1.3, 1.3, 27), [-1.0, 1.0, 0.0, 2.0, -2.5]])
DEGREES = [0, 1, 2, 3, 6, 7, 9, 12, 20]


def _basis(module, n, x):
    return module.__dict__[_VAL[module]](x, [0.0] * n + [1.0])


_VAL = {chebyshev: "chebval", hermite: "hermval", hermite_e: "hermeval", laguerre: "lagval",
        legendre: "legval"}


def cheb_t(n, x):
    return _basis(chebyshev, n, x)


def cheb_u(n, x):
    # T_n = (U_n - U_{n-2}) / 2, so U_n = 2 (T_n + T_{n-2} + ...) minus 1 for even n
    if n < 0:
        return np.zeros_like(x)
    total = sum(2 * cheb_t(k, x) for k in range(n % 2, n + 1, 2))
    return total - 1 if n % 2 == 0 else total


REFS = {
    S.chebyshev_polynomial_t: cheb_t,
    S.chebyshev_polynomial_u: cheb_u,
    S.chebyshev_polynomial_v: lambda n, x: cheb_u(n, x) - cheb_u(n - 1, x),
    S.chebyshev_polynomial_w: lambda n, x: cheb_u(n, x) + cheb_u(n - 1, x),
    S.hermite_polynomial_h: lambda n, x: _basis(hermite, n, x),
    S.hermite_polynomial_he: lambda n, x: _basis(hermite_e, n, x),
    S.laguerre_polynomial_l: lambda n, x: _basis(laguerre, n, x),
    S.legendre_polynomial_p: lambda n, x: _basis(legendre, n, x),
}
SHIFTED = {S.shifted_chebyshev_polynomial_t: S.chebyshev_polynomial_t,
           S.shifted_chebyshev_polynomial_u: S.chebyshev_polynomial_u,
           S.shifted_chebyshev_polynomial_v: S.chebyshev_polynomial_v,
           S.shifted_chebyshev_polynomial_w: S.chebyshev_polynomial_w}


@pytest.mark.parametrize("fn", list(REFS), ids=lambda f: f.__name__)
def test_matches_numpy_polynomials(fn):
    x = E.tensor(X)
    for n in DEGREES:
        want = REFS[fn](n, X)
        got = fn(x, n).numpy()
        # the trigonometric forms (high degree, |x| < 1) and the recurrence round differently
        scale = np.maximum(1.0, np.abs(want))
        np.testing.assert_array_less(np.abs(got - want) / scale, 1e-12 * max(n, 1),
                                     err_msg=f"{fn.__name__} n={n}")


@pytest.mark.parametrize("shifted", list(SHIFTED), ids=lambda f: f.__name__)
def test_shifted_is_the_plain_one_at_2x_minus_1(shifted):
    x = np.linspace(-0.1, 1.1, 25)
    for n in DEGREES:
        want = SHIFTED[shifted](E.tensor(2 * x - 1), n).numpy()
        np.testing.assert_allclose(shifted(E.tensor(x), n).numpy(), want, rtol=1e-11, atol=1e-11)


def test_degree_conventions():
    x = E.tensor([0.3, -0.7, 1.0], dtype=E.float64)
    T = S.chebyshev_polynomial_t
    # n truncates toward zero (PyTorch casts it to int64)
    assert E.equal(T(x, 2.9), T(x, 2)) and E.equal(T(x, E.tensor(3.5)), T(x, 3))
    assert (S.legendre_polynomial_p(x, -1) == 0).all()
    assert (S.hermite_polynomial_h(E.tensor([math.nan]), 0) == 1).all()  # p_0 = 1, even at NaN
    got = T(x, E.tensor([2.0, math.nan, -3.0], dtype=E.float64)).numpy()
    np.testing.assert_array_equal(got, [2 * 0.09 - 1, math.nan, 0.0])
    # tensor n broadcasts against x
    n = E.tensor([[0], [1], [4]])
    assert T(x, n).shape == (3, 3)
    np.testing.assert_allclose(T(x, n).numpy()[2], [cheb_t(4, v) for v in x.numpy()], rtol=1e-14)
    # a number x with a Tensor n (PyTorch's x_scalar overload)
    assert E.allclose(S.hermite_polynomial_he(2.0, E.tensor([0, 1, 2, 3])),
                      E.tensor([1.0, 2.0, 3.0, 2.0]))
    # two numbers: a 0-d result of the default dtype (a departure: PyTorch raises TypeError)
    both = T(0.5, 3)
    assert both.shape == () and both.dtype is E.float32 and both.item() == -1.0


def test_dtypes_and_no_gradient():
    T = S.chebyshev_polynomial_t
    assert T(E.tensor([1, 2]), 3).dtype is E.float32
    assert T(E.tensor([1.5]), E.tensor([3], dtype=E.float16)).dtype is E.float32
    assert T(E.tensor([1.5], dtype=E.float64), E.tensor([3])).dtype is E.float64
    half = T(E.tensor([0.3, 1.5], dtype=E.float16), 3)
    assert half.dtype is E.float16  # PyTorch refuses float16; we compute in float32
    assert E.equal(half, T(E.tensor([0.3, 1.5], dtype=E.float16).float(), 3).half())
    leaf = E.tensor([0.3], dtype=E.float64, requires_grad=True)
    assert not T(leaf, 3).requires_grad  # as PyTorch: no derivative
    out = E.empty(2)
    S.legendre_polynomial_p(E.tensor([0.5, 2.0]), 2, out=out)
    assert E.allclose(out, E.tensor([-0.125, 5.5]))


FAMILIES = list(REFS) + list(SHIFTED)
# float32 ulps of max(1, |p_n|) for a number n <= 6 (see polynomial_scalar_n); Hermite's
# of max(1, |p_n|, |c x|^n), c its leading coefficient's base
FLOAT32_ULPS = {S.hermite_polynomial_h: 90, S.hermite_polynomial_he: 12}
LEAD = {S.hermite_polynomial_h: 2.0, S.hermite_polynomial_he: 1.0}


@pytest.mark.parametrize("fn", FAMILIES, ids=lambda f: f.__name__)
def test_float32_with_a_number_degree_within_stated_ulps(fn):
    x = np.concatenate([np.linspace(-1.3, 1.3, 521), [-1.0, 0.0, 1.0]]).astype(np.float32)
    if fn in FLOAT32_ULPS:
        x = np.concatenate([x, np.linspace(-3, 3, 301, dtype=np.float32)])
    for n in range(-1, 10):
        want = fn(E.tensor(x.astype(np.float64)), E.tensor(float(n), dtype=E.float64)).numpy()
        got = fn(E.tensor(x), n)
        assert got.dtype is E.float32
        top = np.maximum(1.0, np.abs(want))
        if fn in LEAD:
            top = np.maximum(top, np.abs(LEAD[fn] * x.astype(np.float64)) ** max(n, 0))
        scale = np.spacing(top.astype(np.float32)).astype(np.float64)
        err = np.abs(got.numpy().astype(np.float64) - want) / scale
        assert err.max() <= FLOAT32_ULPS.get(fn, 31), f"n={n}: {err.max():.1f} ulp"
    # special values: NaN propagates, +-inf follow the leading term (float64 agrees)
    e = np.array([math.inf, -math.inf, math.nan, -0.0, 1e30, 1e-40], dtype=np.float32)
    for n in (0, 1, 2, 5):
        got = fn(E.tensor(e), n).numpy().astype(np.float64)
        want = fn(E.tensor(e.astype(np.float64)), n).numpy().astype(np.float32)
        np.testing.assert_allclose(got, want.astype(np.float64), rtol=1e-6, equal_nan=True)
