"""The fused distance kernels (backends/kernels/distance_fused.py, vector_fused.py): cdist
p = 1 / 2, pdist p = 2 and cosine_similarity against numpy float64 references at their
stated tolerances, against the op-by-op composites on special values, and their gradients
(first order from the backward kernels, higher orders through the composites)."""
import numpy as np
import pytest
from helpers import needs_torch

import ember as E
import ember.backends.kernels.distance_fused as D
from ember.autograd import gradcheck, gradgradcheck

TORCH = {E.float32: "float32", E.float64: "float64"}   # the dtypes compared with torch

DTYPES = [E.float16, E.bfloat16, E.float32, E.float64]
EPS = {E.float16: 2 ** -10, E.bfloat16: 2 ** -7, E.float32: 2 ** -23, E.float64: 2 ** -52}
SPECIALS = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 3e38, 1e-38, 1e-45, 1.5, -2.0, 7.0,
                     0.25])


def _t(x, dtype=E.float64, requires_grad=False):
    return E.tensor(np.asarray(x), dtype=dtype, requires_grad=requires_grad)


def _f64(t):
    return t.double().numpy()


def _like_torch(got, fn, dtype, *arrays):
    """Special values give what PyTorch gives (nan distances stay nan; the op-by-op
    composites gave 0); float16/bfloat16 what float32 gives, rounded once."""
    if dtype in TORCH:
        torch = needs_torch()
        want = fn(torch, *(torch.tensor(_f64(a), dtype=getattr(torch, TORCH[dtype]))
                           for a in arrays)).numpy()
    else:
        want = _f64(fn(E, *(a.float() for a in arrays)).to(dtype))
    assert np.array_equal(_f64(got), want, equal_nan=True)


def _cdist64(a, b, p):
    d = np.abs(a[..., :, None, :] - b[..., None, :, :])
    return d.sum(-1) if p == 1 else np.sqrt((d * d).sum(-1))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [1.0, 2.0])
@pytest.mark.parametrize("rows", [(5, 4), (30, 40)])  # exact, and GEMM form for p = 2
def test_cdist_matches_float64(dtype, p, rows):
    rng = np.random.default_rng(0)
    A, B = (_t(rng.standard_normal((2, r, 7)), dtype) for r in rows)
    a, b = _f64(A), _f64(B)
    got = E.cdist(A, B, p=p)
    assert got.dtype is dtype and tuple(got.shape) == (2,) + rows
    ref = _cdist64(a, b, p)
    if p == 1 or max(rows) <= 25:  # exact forms: 2 ulp of the distance, +1 rounding (low)
        assert (np.abs(_f64(got) - ref) <= 3 * EPS[dtype] * np.maximum(ref, 1e-30)).all()
    else:  # GEMM form: 2 ulp of the largest squared norm, in the squared distance
        scale = max((a * a).sum(-1).max(), (b * b).sum(-1).max())
        assert (np.abs(_f64(got) ** 2 - ref ** 2) <= 8 * EPS[dtype] * scale).all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [1.0, 2.0])
def test_cdist_special_values_as_the_composite(dtype, p):
    A = _t(SPECIALS.reshape(4, 3), dtype)
    B = _t(np.roll(SPECIALS, 4).reshape(4, 3), dtype)
    _like_torch(E.cdist(A, B, p=p), lambda L, x, y: L.cdist(x, y, p=p), dtype, A, B)


def test_cdist_p1_blocks_and_gradients_match_torch(monkeypatch):
    torch = needs_torch()
    monkeypatch.setattr(D, "CHUNK", 64)  # many row blocks, one of them short
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 11, 5)), rng.standard_normal((3, 6, 5))
    b[:, 0] = a[:, 0]  # zero differences: sign 0
    A, B = _t(a, requires_grad=True), _t(b, requires_grad=True)
    ta, tb = (torch.tensor(x, requires_grad=True) for x in (a, b))
    g = rng.standard_normal((3, 11, 6))
    E.cdist(A, B, p=1).backward(_t(g))
    torch.cdist(ta, tb, p=1).backward(torch.tensor(g))
    np.testing.assert_allclose(A.grad.numpy(), ta.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(B.grad.numpy(), tb.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("p, rows", [(1.0, 4), (2.0, 4), (2.0, 30)])
def test_cdist_gradcheck(p, rows):
    rng = np.random.default_rng(2)
    A = _t(rng.standard_normal((rows, 3)), requires_grad=True)
    B = _t(rng.standard_normal((5, 3)), requires_grad=True)
    fn = lambda x, y: E.cdist(x, y, p=p)  # noqa: E731
    assert gradcheck(fn, (A, B))
    if p == 2:
        assert gradgradcheck(fn, (A, B))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [6, 40])
def test_pdist_matches_float64(dtype, n):
    X = _t(np.random.default_rng(3).standard_normal((n, 5)), dtype)
    x = _f64(X)
    i, j = np.triu_indices(n, 1)
    ref = np.sqrt(((x[i] - x[j]) ** 2).sum(-1))
    got = E.nn.functional.pdist(X)
    assert got.dtype is dtype
    scale = (x * x).sum(-1).max() if n > 25 else ref ** 2
    assert (np.abs(_f64(got) ** 2 - ref ** 2) <= 8 * EPS[dtype] * np.maximum(scale, 1e-30)).all()
    sp = _t(np.concatenate([SPECIALS, SPECIALS[::-1]]).reshape(8, 3), dtype)
    _like_torch(E.nn.functional.pdist(sp), lambda L, x: L.nn.functional.pdist(x), dtype, sp)


@pytest.mark.parametrize("n", [5, 30])
def test_pdist_gradients(n):
    X = _t(np.random.default_rng(4).standard_normal((n, 3)), requires_grad=True)
    assert gradcheck(E.nn.functional.pdist, (X,))
    if n < 10:
        assert gradgradcheck(E.nn.functional.pdist, (X,))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cosine_similarity_matches_float64(dtype):
    rng = np.random.default_rng(5)
    A, B = _t(rng.standard_normal((10, 100)), dtype), _t(rng.standard_normal((100,)), dtype)
    a, b = _f64(A), _f64(B)
    ref = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b))
    got = E.nn.functional.cosine_similarity(A, B, dim=-1)
    assert got.dtype is dtype and got.shape == (10,)
    assert np.abs(_f64(got) - ref).max() <= (4 if dtype is E.float64 else 8) * EPS[dtype]
    sp = _t(SPECIALS.reshape(3, 4), dtype)
    sq = _t(np.roll(SPECIALS, 3).reshape(3, 4), dtype)
    _like_torch(E.nn.functional.cosine_similarity(sp, sq),
                lambda L, x, y: L.nn.functional.cosine_similarity(x, y), dtype, sp, sq)


def test_cosine_similarity_gradients_and_a_zero_vector_like_torch():
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    A, B = _t(a, requires_grad=True), _t(b, requires_grad=True)
    assert gradcheck(lambda x, y: E.nn.functional.cosine_similarity(x, y), (A, B))
    assert gradgradcheck(lambda x, y: E.nn.functional.cosine_similarity(x, y), (A, B))
    a[0] = 0
    torch = needs_torch()
    A, B = _t(a, requires_grad=True), _t(b, requires_grad=True)
    ta, tb = (torch.tensor(x, requires_grad=True) for x in (a, b))
    E.nn.functional.cosine_similarity(A, B).sum().backward()
    torch.nn.functional.cosine_similarity(ta, tb).sum().backward()
    np.testing.assert_allclose(A.grad.numpy(), ta.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(B.grad.numpy(), tb.grad.numpy(), rtol=1e-10, atol=1e-12)
