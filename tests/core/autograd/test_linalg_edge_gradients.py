"""Gradients at the edges of the linalg ops (issue 35, class 9): einsum with a letter
repeated within an operand (a diagonal, ``"ii->i"``), ``det`` at a singular matrix (the
cofactor matrix: det is a polynomial, differentiable everywhere; PyTorch 2.13 returns 0
there, ember the true derivative), and ``norm(p="nuc")``. References: gradcheck and
gradgradcheck (float64 finite differences), cofactors from numpy minors, and U @ Vh."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
from ember.autograd import gradcheck, gradgradcheck

EINSUM_CASES = [
    ("ii->i", [(3, 3)]), ("ii->", [(3, 3)]), ("ii", [(4, 4)]), ("iij->j", [(2, 2, 3)]),
    ("iji->j", [(2, 3, 2)]), ("ii,i->i", [(3, 3), (3,)]), ("ij,jj->i", [(2, 3), (3, 3)]),
    ("iii->i", [(2, 2, 2)]), ("bii->bi", [(2, 3, 3)]), ("iijj->ij", [(2, 2, 3, 3)]),
    ("ii,jj->ij", [(2, 2), (3, 3)]), ("ij,ij->", [(2, 3), (2, 3)]),
]


@pytest.mark.parametrize("equation, shapes", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
def test_einsum_with_repeated_subscripts_is_differentiable_twice(equation, shapes):
    rng = np.random.default_rng(0)
    xs = [E.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]
    assert gradcheck(lambda *x: E.einsum(equation, *x), xs)
    assert gradgradcheck(lambda *x: E.einsum(equation, *x), xs)


def test_einsum_diagonal_gradient_lies_on_the_diagonal():
    a = E.tensor(np.arange(9.0).reshape(3, 3), requires_grad=True)
    E.einsum("ii->i", a).sum().backward()
    assert a.grad.tolist() == np.eye(3).tolist()


def cofactors(a: np.ndarray) -> np.ndarray:
    n = a.shape[-1]
    c = np.zeros_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, -2), j, -1)
            c[..., i, j] = (-1) ** (i + j) * np.linalg.det(minor)
    return c


SINGULAR = [
    np.array([[1.0, 2.0], [2.0, 4.0]]),                               # rank 1
    np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]),    # rank 2
    np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [3.0, 6.0, 9.0]]),    # rank 1: cofactors 0
    np.zeros((3, 3)),
    np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 3.0]]]),   # a batch, mixed
]


@pytest.mark.parametrize("a", SINGULAR, ids=range(len(SINGULAR)))
@pytest.mark.parametrize("dtype", [E.float32, E.float64], ids=str)
def test_det_gradient_at_a_singular_matrix_is_the_cofactor_matrix(a, dtype):
    t = E.tensor(a, dtype=dtype, requires_grad=True)
    E.linalg.det(t).sum().backward()
    tol = 1e-5 if dtype is E.float32 else 1e-10
    np.testing.assert_allclose(t.grad.numpy(), cofactors(a), atol=tol)


def test_det_gradient_of_an_invertible_matrix_is_unchanged():
    a = np.random.default_rng(1).standard_normal((2, 3, 3))
    t = E.tensor(a, requires_grad=True)
    E.linalg.det(t).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), cofactors(a), rtol=1e-10, atol=1e-12)
    assert gradgradcheck(E.linalg.det, [E.tensor(a[0], requires_grad=True)])


@pytest.mark.parametrize("shape, dim", [((3, 4), None), ((4, 3), (0, 1)), ((2, 3, 3), (1, 2)),
                                        ((3, 2, 4), (0, 2)), ((3, 2, 4), (-1, 0))])
def test_nuclear_norm_backward_is_u_vh(shape, dim):
    a = np.random.default_rng(2).standard_normal(shape)
    t = E.tensor(a, requires_grad=True)
    (t.norm(p="nuc") if dim is None else t.norm(p="nuc", dim=dim)).sum().backward()
    d0, d1 = (0, 1) if dim is None else dim
    m = np.moveaxis(a, (d0, d1), (-2, -1))
    u, _, vh = np.linalg.svd(m, full_matrices=False)
    np.testing.assert_allclose(t.grad.numpy(), np.moveaxis(u @ vh, (-2, -1), (d0, d1)),
                               rtol=1e-10, atol=1e-12)
    assert gradcheck(lambda x: x.norm(p="nuc", dim=dim if dim is not None else (0, 1)),
                     [E.tensor(a, requires_grad=True)])
