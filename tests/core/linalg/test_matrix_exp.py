"""linalg.matrix_exp (kernels/factorizations/matrix_exp.py) against float64 references:
eigen-decompositions of symmetric matrices, a scaled Taylor series, closed forms; its
gradient (the block-matrix Frechet derivative) against gradcheck and a finite sum."""
import numpy as np
import pytest
from core.linalg.references import expm_taylor, t, uniform
from helpers import FLOAT_DTYPES, assert_close

import ember as E
from ember.autograd import gradcheck, gradgradcheck
from ember.backends.kernels.factorizations.matrix_exp import (degree_and_scaling,
                                                              pade_coefficients)

# one matrix per Pade degree and with scaling (||A||_1 from 1e-3 to 60)
SCALES = [1e-3, 0.05, 0.3, 0.8, 2.0, 5.0, 60.0]


@pytest.mark.parametrize("scale", SCALES)
def test_symmetric_matrices_match_their_eigen_decomposition(scale):
    x = uniform((4, 4), seed=1)
    s = (x + x.T) * scale / np.abs(x + x.T).sum(0).max()
    w, v = np.linalg.eigh(s)
    ref = (v * np.exp(w)) @ v.T
    assert_close(E.linalg.matrix_exp(t(s)), ref, E.float64, rtol=1e-12 * max(1, scale),
                 atol=1e-13)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_a_batch_with_every_scale_matches_the_taylor_series(dtype):
    a = np.stack([uniform((3, 3), seed=i) * sc / 3 for i, sc in enumerate(SCALES[:-1])])
    a = a.astype(dtype.numpy).astype(np.float64)
    ref = expm_taylor(a)
    tol = {"rtol": 2e-5, "atol": 1e-6} if dtype is E.float32 else {"rtol": 1e-12,
                                                                     "atol": 1e-13}
    assert_close(E.linalg.matrix_exp(t(a, dtype)), ref, dtype, **tol)


def test_closed_forms():
    theta = 0.7  # exp of a rotation generator is the rotation; of a nilpotent, I + N
    rot = E.linalg.matrix_exp(t([[0.0, -theta], [theta, 0.0]]))
    assert_close(rot, [[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    assert_close(E.linalg.matrix_exp(t([[0.0, 3.0], [0.0, 0.0]])), [[1.0, 3.0], [0.0, 1.0]])
    assert_close(E.linalg.matrix_exp(t(np.diag([1.0, -2.0, 30.0]))),
                 np.diag(np.exp([1.0, -2.0, 30.0])), rtol=1e-13)
    assert_close(E.matrix_exp(E.zeros(0, 3, 3, dtype=E.float64)), np.zeros((0, 3, 3)))


def test_pade_choice_follows_higham():
    assert pade_coefficients(3) == [1.0, 0.5, 0.1, 1 / 120]  # 120, 60, 12, 1 scaled
    thetas = {3: 0.015, 5: 0.25, 7: 0.95, 9: 2.1, 13: 5.4}
    assert degree_and_scaling(0.01, thetas) == (3, 0)
    assert degree_and_scaling(2.0, thetas) == (9, 0)
    assert degree_and_scaling(5.4 * 2 ** 3, thetas) == (13, 3)
    assert degree_and_scaling(float("nan"), thetas) == (13, 0)


def test_nan_propagates_and_errors():
    out = E.linalg.matrix_exp(t([[np.nan, 0.0], [0.0, 1.0]]))
    assert np.isnan(out.tolist()).any()
    with pytest.raises(E.ShapeError, match="square"):
        E.linalg.matrix_exp(E.ones(2, 3))
    with pytest.raises(E.ShapeError, match="at least 2 dimensions"):
        E.linalg.matrix_exp(E.ones(2))
    with pytest.raises(E.DtypeError, match="floating point"):
        E.linalg.matrix_exp(E.ones(2, 2, dtype=E.int64))
    with pytest.raises(NotImplementedError):
        E.linalg.matrix_exp(E.ones(2, 2, dtype=E.float16))


@pytest.mark.parametrize("scale", [0.01, 1.0, 6.0])
def test_gradient_checks(scale):
    a = t(uniform((3, 3), seed=2) * scale, requires_grad=True)
    assert gradcheck(E.linalg.matrix_exp, (a,))
    assert gradgradcheck(E.linalg.matrix_exp, (a,))


def test_gradient_is_the_adjoint_frechet_derivative():
    # <G, L(A, E)> with L(A, E) = int_0^1 e^{sA} E e^{(1-s)A} ds, by the midpoint rule
    a, g, e = uniform((3, 3), 3), uniform((3, 3), 4), uniform((3, 3), 5)
    x = t(a, requires_grad=True)
    (E.linalg.matrix_exp(x) * t(g)).sum().backward()
    n = 2000
    s = (np.arange(n) + 0.5) / n
    frechet = sum(expm_taylor(si * a) @ e @ expm_taylor((1 - si) * a) for si in s) / n
    assert np.isclose((np.asarray(x.grad.tolist()) * e).sum(), (g * frechet).sum(), rtol=1e-6)
