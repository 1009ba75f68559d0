"""The ``ember.special`` namespace (core/ember/special.py): torch.special's names, the
aliases, multigammaln (the composite ``mvlgamma``), and autograd's behaviour where
PyTorch has no derivative. Values of the native ops are tested with their kernels in
tests/core/backends/kernels/test_special_*.py; their gradients by op_samples.py."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember as E
from ember.autograd import gradcheck, gradgradcheck

S = E.special

# torch.special.__all__ of PyTorch 2.13
TORCH_SPECIAL = {
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc",
    "gammaincc", "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e",
    "i1", "i1e", "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr",
    "log_softmax", "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1",
    "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma",
    "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc", "softmax",
    "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
}


def test_namespace_has_torch_special_names():
    assert set(S.__all__) == TORCH_SPECIAL
    assert all(callable(getattr(S, n)) for n in TORCH_SPECIAL)


def test_aliases_are_the_existing_ops():
    pairs = {S.digamma: E.digamma, S.psi: E.digamma, S.expit: E.sigmoid, S.gammaln: E.lgamma,
             S.i0: E.i0, S.modified_bessel_i0: E.i0, S.i1: E.special_i1,
             S.modified_bessel_i1: E.special_i1, S.multigammaln: E.mvlgamma,
             S.gammainc: E.igamma, S.gammaincc: E.igammac, S.xlogy: E.xlogy, S.round: E.round,
             S.softmax: E.softmax, S.log_softmax: E.log_softmax, S.logsumexp: E.logsumexp}
    for alias, target in pairs.items():
        assert alias is target
    x = E.tensor([[0.2, 1.5], [-0.7, 3.0]])
    assert E.allclose(S.expit(x), 1 / (1 + (-x).exp()))
    assert E.allclose(S.logsumexp(x, 1), x.exp().sum(1).log())
    assert E.allclose(S.softmax(x, 0).sum(0), E.ones(2))


def _mvlgamma_ref(x, p):
    return p * (p - 1) / 4 * math.log(math.pi) + sum(math.lgamma(x - j / 2) for j in range(p))


@pytest.mark.parametrize("p", [1, 2, 3, 5])
def test_multigammaln_values(p):
    x = np.array([[2.6, 3.0], [7.25, 40.0]])
    want = np.vectorize(lambda v: _mvlgamma_ref(v, p))(x)
    np.testing.assert_allclose(S.multigammaln(E.tensor(x), p).numpy(), want, rtol=1e-13)
    assert E.allclose(E.tensor(x).mvlgamma(p), E.tensor(want))


def test_multigammaln_forms_dtypes_and_errors():
    x = E.tensor([3.0, 4.5])
    y = x.clone()
    assert y.mvlgamma_(2) is y and E.allclose(y, S.multigammaln(x, 2))
    out = E.empty(2)
    E.mvlgamma(x, 2, out=out)
    assert E.allclose(out, y)
    assert E.mvlgamma(E.tensor([3, 4]), 2).dtype is E.float32  # ints give the default float
    assert E.mvlgamma(x.half(), 2).dtype is E.float16
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        E.mvlgamma(x, 0)
    assert E.equal(x, E.tensor([3.0, 4.5]))  # untouched


def test_multigammaln_gradients():
    x = E.tensor([2.6, 3.7, 9.1], dtype=E.float64, requires_grad=True)
    assert gradcheck(lambda t: S.multigammaln(t, 3), (x,))
    assert gradgradcheck(lambda t: S.multigammaln(t, 3), (x,))
    S.multigammaln(x, 2).sum().backward()
    want = [float(E.digamma(E.tensor([v])).item() + E.digamma(E.tensor([v - 0.5])).item())
            for v in (2.6, 3.7, 9.1)]
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("fn, name", [(S.zeta, "zeta"), (S.gammainc, "igamma: input"),
                                      (S.gammaincc, "igammac: input")])
def test_derivative_in_the_first_operand_is_not_implemented(fn, name):
    a = E.tensor([2.0, 3.5], dtype=E.float64, requires_grad=True)
    x = E.tensor([1.5, 2.0], dtype=E.float64, requires_grad=True)
    out = fn(a, x)
    with pytest.raises(NotImplementedError, match=f"derivative for '{name}' is not implemented"):
        out.sum().backward()
    # the second operand alone differentiates (gradcheck runs in op_samples.py)
    fn(a.detach(), x).sum().backward()
    assert x.grad is not None and E.isfinite(x.grad).all()


def test_ops_without_derivatives_give_results_that_do_not_require_grad():
    x = E.tensor([0.3, 0.8], dtype=E.float64, requires_grad=True)
    for fn in (S.bessel_j0, S.bessel_y1, S.modified_bessel_k0, S.scaled_modified_bessel_k1,
               S.spherical_bessel_j0, S.airy_ai):
        assert not fn(x).requires_grad
    assert not S.laguerre_polynomial_l(x, 3).requires_grad
    # differentiable ones
    for fn in (S.entr, S.ndtr, S.ndtri, S.log_ndtr, S.erfcx, S.i0e, S.i1e):
        assert fn(x).requires_grad


def test_xlog1py_gradient_at_zero_self_is_log1p_other():
    # as PyTorch: d/dx [x log1p(y)] = log1p(y), even at x = 0 (0 only where y <= -1)
    x = E.tensor([0.0, 0.0, 1.0], dtype=E.float64, requires_grad=True)
    y = E.tensor([1.0, -1.0, 3.0], dtype=E.float64)
    S.xlog1py(x, y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [math.log(2.0), 0.0, math.log(4.0)])
