"""normalize, cosine_similarity and pairwise_distance against numpy float64 references:
values over dtypes and p, broadcasting (hypothesis), zero vectors and eps, gradcheck and
gradgradcheck, errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError, ShapeError
from helpers import FLOAT_DTYPES, assert_close, make


def _np_norm(x, p, axis, keepdims=False):
    a = np.abs(x)
    if p == np.inf:
        return a.max(axis=axis, keepdims=keepdims)
    if p == 0:
        return (a != 0).sum(axis=axis, keepdims=keepdims).astype(np.float64)
    return (a ** p).sum(axis=axis, keepdims=keepdims) ** (1 / p)


def _np_cosine(x1, x2, dim, eps):
    x1, x2 = np.broadcast_arrays(x1, x2)
    n1 = np.maximum(np.sqrt((x1 * x1).sum(dim, keepdims=True)), eps)
    n2 = np.maximum(np.sqrt((x2 * x2).sum(dim, keepdims=True)), eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def _tol(dtype):
    return {"rtol": 1e-5, "atol": 1e-6} if dtype is E.float32 else {}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("p, dim", [(2.0, 1), (1.0, 0), (float("inf"), -1), (3.0, 2)])
def test_normalize(p, dim, dtype):
    x, xn = make((3, 4, 2), dtype)
    expected = xn / np.maximum(_np_norm(xn, p, dim, keepdims=True), 1e-12)
    assert_close(F.normalize(x, p, dim), expected, **_tol(dtype))


def test_normalize_zero_rows_out_and_eps():
    x = E.tensor([[0.0, 0.0], [3.0, 4.0]], dtype=E.float64)
    assert F.normalize(x).tolist() == [[0.0, 0.0], [0.6, 0.8]]
    assert_close(F.normalize(x, eps=10.0), np.array([[0, 0], [0.3, 0.4]]), rtol=1e-6)
    out = E.empty(2, 2, dtype=E.float64)
    assert F.normalize(x, out=out) is out and out.tolist() == [[0.0, 0.0], [0.6, 0.8]]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shapes, dim", [(((4, 3), (4, 3)), 1), (((4, 3), (3,)), -1),
                                        (((2, 1, 3), (4, 3)), 2), (((3,), (2, 3)), 0)])
def test_cosine_similarity(shapes, dim, dtype):
    x1, n1 = make(shapes[0], dtype, seed=1)
    x2, n2 = make(shapes[1], dtype, seed=2)
    assert_close(F.cosine_similarity(x1, x2, dim), _np_cosine(n1, n2, dim, 1e-8), **_tol(dtype))


def test_cosine_similarity_zero_vector_and_its_gradient():
    # a zero x1 gives 0, and (as ATen, which clamps the norm without cutting its gradient)
    # the gradient x2 / (eps * |x2|)
    x1 = E.zeros(1, 3, dtype=E.float64, requires_grad=True)
    x2n = np.array([[1.0, 2.0, 2.0]])
    out = F.cosine_similarity(x1, E.tensor(x2n))
    assert out.tolist() == [0.0]
    (g,) = E.autograd.grad(out.sum(), x1)
    assert_close(g, x2n / (1e-8 * 3.0), rtol=1e-9)
    assert F.cosine_similarity(E.tensor(2.0), E.tensor(-3.0), dim=0).item() == -1.0


def test_cosine_similarity_integral_and_mixed_inputs():
    a, b = E.tensor([1, 2, 3]), E.tensor([1.0, 0.0, 1.0])
    out = F.cosine_similarity(a, b, dim=0)
    assert_close(out, _np_cosine(np.array([1.0, 2, 3]), np.array([1.0, 0, 1]), 0, 1e-8),
                 dtype=E.float32, rtol=1e-6)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("p", [2.0, 1.0, 0.5, -1.0, float("inf"), 0])
@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance(p, keepdim, dtype):
    x1, n1 = make((4, 3), dtype, seed=1)
    x2, n2 = make((3,), dtype, seed=2)
    expected = _np_norm(n1 - n2 + 1e-6, p, -1, keepdims=keepdim)
    assert_close(F.pairwise_distance(x1, x2, p, keepdim=keepdim), expected, **_tol(dtype))


def test_pairwise_distance_ranks_and_integers():
    one, zero = E.tensor(1.0, dtype=E.float64), E.tensor(0.0, dtype=E.float64)
    assert_close(F.pairwise_distance(one, zero), np.array(1.0 + 1e-6))
    assert F.pairwise_distance(E.ones(2, 3, 4), E.zeros(2, 3, 4)).shape == (2, 3)
    out = F.pairwise_distance(E.ones(2, 3, dtype=E.int64), E.zeros(3, dtype=E.int64))
    assert_close(out, np.full(2, np.sqrt(3) * (1 + 1e-6)), dtype=E.float32, rtol=1e-6)


@settings(max_examples=30, deadline=None)
@given(s1=st.lists(st.integers(1, 3), min_size=1, max_size=3),
       drop=st.integers(0, 2), ones=st.lists(st.booleans(), min_size=3, max_size=3),
       seed=st.integers(0, 2**16))
def test_broadcast_fuzz(s1, drop, ones, seed):
    # x2's shape: s1 with leading dims dropped and some dims set to 1
    s2 = [1 if one else n for n, one in zip(s1, ones)][min(drop, len(s1) - 1):]
    rng = np.random.default_rng(seed)
    n1, n2 = rng.standard_normal(s1), rng.standard_normal(s2)
    x1, x2 = E.tensor(n1), E.tensor(n2)
    assert_close(F.pairwise_distance(x1, x2), _np_norm(n1 - n2 + 1e-6, 2, -1))
    assert_close(F.cosine_similarity(x1, x2, dim=-1), _np_cosine(n1, n2, -1, 1e-8))


@pytest.mark.parametrize("name, fn", [
    ("normalize", lambda a, b: F.normalize(a * b, p=3.0, dim=0)),
    ("cosine_similarity", lambda a, b: F.cosine_similarity(a, b, dim=1)),
    ("cosine_similarity_broadcast", lambda a, b: F.cosine_similarity(a, b[0], dim=-1)),
    ("pairwise_distance", F.pairwise_distance),
    ("pairwise_distance_p1.5", lambda a, b: F.pairwise_distance(a, b, p=1.5, keepdim=True)),
])
def test_gradcheck_and_gradgradcheck(name, fn):
    a = E.tensor(make((2, 3), E.float64, seed=3)[1], requires_grad=True)
    b = E.tensor(make((2, 3), E.float64, seed=4)[1], requires_grad=True)
    assert gradcheck(fn, (a, b))
    assert gradgradcheck(fn, (a, b))


@pytest.mark.parametrize("call, error, match", [
    (lambda: F.normalize(E.tensor(1.0)), IndexError, "out of range"),
    (lambda: F.cosine_similarity(E.ones(3), E.ones(2), dim=0), ShapeError,
     r"x1 of shape \(3,\) and x2 of shape \(2,\) do not broadcast"),
    (lambda: F.cosine_similarity(E.ones(3, dtype=E.int64), E.ones(3, dtype=E.int64), dim=0),
     DtypeError, "floating common dtype"),
    (lambda: F.cosine_similarity(E.ones(2, 3), E.ones(2, 3), dim=2), IndexError,
     "out of range"),
    (lambda: F.pairwise_distance(E.ones(2, 3), E.ones(2, 4)), ShapeError,
     r"pairwise_distance: x1 of shape \(2, 3\) and x2 of shape \(2, 4\)"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()



# ---- pdist ---------------------------------------------------------------------------------

def _np_pdist(x, p):
    n = x.shape[0]
    out = []
    for i in range(n):
        for j in range(i + 1, n):
            d = np.abs(x[i] - x[j])
            if p == 0:
                out.append(float((d != 0).sum()))
            elif np.isinf(p):
                out.append(d.max())
            else:
                out.append((d ** p).sum() ** (1 / p))
    return np.array(out)


@pytest.mark.parametrize("p", [0, 1, 2, 3.5, float("inf")])
@pytest.mark.parametrize("dtype", [E.float32, E.float64])
def test_pdist(p, dtype):
    x, xn = make((5, 3), dtype)
    out = F.pdist(x, p)
    assert out.dtype is dtype and tuple(out.shape) == (10,)
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype is E.float32 else {}
    assert_close(out, _np_pdist(xn, p), **tol)


@pytest.mark.parametrize("p", [1.5, 2, 3])
def test_pdist_gradients(p):
    x, _ = make((4, 3), E.float64, seed=2)
    assert gradcheck(lambda x: F.pdist(x, p), (x.requires_grad_(),))
    assert gradgradcheck(lambda x: F.pdist(x, p), (x,))


def test_pdist_edge_cases():
    assert tuple(F.pdist(E.zeros(1, 3)).shape) == (0,)
    x = E.tensor([[1.0, 2.0], [1.0, 2.0], [0.0, 0.0]], requires_grad=True)
    F.pdist(x).sum().backward()                 # a zero distance: zero gradient, not NaN
    assert np.isfinite(x.grad.numpy()).all()
    with pytest.raises(ShapeError, match=r"\(N, M\)"):
        F.pdist(E.zeros(2, 3, 4))
    with pytest.raises(DtypeError, match="floating"):
        F.pdist(E.zeros(2, 3, dtype=E.int64))
    with pytest.raises(ValueError, match="non-negative p"):
        F.pdist(E.zeros(2, 3), -1)
