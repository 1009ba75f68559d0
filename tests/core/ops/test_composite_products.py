"""tensordot, kron, inner, cdist, trapezoid, take, aminmax, heaviside, ldexp
(ops/composite_products.py) against numpy float64, with gradients."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError, ShapeError
from helpers import assert_close

RNG = np.random.default_rng(1)


def arr(*shape):
    return RNG.uniform(-2, 2, shape)


@pytest.mark.parametrize("sa, sb, dims", [
    ((2, 3, 4), (4, 3, 5), ([1, 2], [1, 0])), ((2, 3), (3, 4), 1), ((2, 3), (4,), 0),
    ((2, 3), (2, 3), 2), ((0, 3), (3, 2), 1), ((2, 3), (3, 2), ([-1], [0])),
])
def test_tensordot_matches_numpy(sa, sb, dims):
    a, b = arr(*sa), arr(*sb)
    assert_close(E.tensordot(E.tensor(a), E.tensor(b), dims), np.tensordot(a, b, dims))


def test_tensordot_errors_and_gradient():
    a, b = E.ones(2, 3), E.ones(2, 3)
    with pytest.raises(ShapeError, match="contracted dims must match"):
        E.tensordot(a, b, 1)
    with pytest.raises(ValueError, match="dims >= 0"):
        E.tensordot(a, b, -1)
    with pytest.raises(DtypeError, match="same dtype"):
        E.tensordot(a, b.long(), 0)
    x, y = E.tensor(arr(2, 3), requires_grad=True), E.tensor(arr(3, 2), requires_grad=True)
    assert gradcheck(lambda s, t: E.tensordot(s, t, ([1], [0])), (x, y))
    assert gradgradcheck(lambda s, t: E.tensordot(s, t, 1), (x, y))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=0, max_size=3),
       st.lists(st.integers(1, 3), min_size=0, max_size=3))
def test_kron_matches_numpy(sa, sb):
    a, b = arr(*sa), arr(*sb)
    assert_close(E.kron(E.tensor(a), E.tensor(b)), np.kron(a, b))


@pytest.mark.parametrize("sa, sb", [((2, 3), (4, 3)), ((3,), (3,)), ((), (2, 3)), ((0, 3), (3,))])
def test_inner_matches_numpy(sa, sb):
    a, b = arr(*sa), arr(*sb)
    assert_close(E.inner(E.tensor(a), E.tensor(b)), np.inner(a, b))
    with pytest.raises(ShapeError, match="last dims"):
        E.inner(E.ones(2, 3), E.ones(2))


def _np_cdist(a, b, p):
    d = np.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == 0:
        return (d != 0).sum(-1).astype(np.float64)
    if np.isinf(p):
        return d.max(-1)
    return (d ** p).sum(-1) ** (1 / p)


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.5, float("inf")])
@pytest.mark.parametrize("sa, sb", [((3, 4), (5, 4)), ((2, 3, 4), (1, 5, 4)), ((0, 2), (3, 2))])
def test_cdist_matches_reference(p, sa, sb):
    a, b = arr(*sa), arr(*sb)
    assert_close(E.cdist(E.tensor(a), E.tensor(b), p), _np_cdist(a, b, p))


def test_cdist_errors_and_gradients():
    with pytest.raises(ShapeError, match="at least 2"):
        E.cdist(E.ones(3), E.ones(2, 3))
    with pytest.raises(ShapeError, match="same number of columns"):
        E.cdist(E.ones(2, 3), E.ones(2, 2))
    with pytest.raises(DtypeError, match="floating"):
        E.cdist(E.ones(2, 3).long(), E.ones(2, 3).long())
    with pytest.raises(ValueError, match="non-negative p"):
        E.cdist(E.ones(2, 3), E.ones(2, 3), -1.0)
    x, y = E.tensor(arr(3, 2), requires_grad=True), E.tensor(arr(2, 2), requires_grad=True)
    for p in (1.5, 2.0):
        assert gradcheck(lambda s, t: E.cdist(s, t, p), (x, y))
        assert gradgradcheck(lambda s, t: E.cdist(s, t, p), (x, y))
    z = E.zeros(1, 2, dtype=E.float64, requires_grad=True)
    E.cdist(z, E.zeros(1, 2, dtype=E.float64)).sum().backward()
    assert_close(z.grad, np.zeros((1, 2)))  # a zero distance: zero gradient, as PyTorch


@pytest.mark.parametrize("shape, dim", [((2, 5), -1), ((4, 3), 0), ((3, 1), 1), ((2, 0), 1)])
def test_trapezoid_matches_numpy(shape, dim):
    y = arr(*shape)
    x = np.sort(arr(shape[dim]))
    assert_close(E.trapezoid(E.tensor(y), dim=dim), np.trapezoid(y, axis=dim))
    assert_close(E.trapezoid(E.tensor(y), dx=0.5, dim=dim), np.trapezoid(y, dx=0.5, axis=dim))
    assert_close(E.trapezoid(E.tensor(y), E.tensor(x), dim=dim), np.trapezoid(y, x, axis=dim))
    n = shape[dim]
    ref = np.cumsum((np.take(y, range(1, n), dim) + np.take(y, range(n - 1), dim)) / 2
                    * 0.5, axis=dim) if n > 1 else np.zeros(
                        [0 if d == dim % len(shape) else s for d, s in enumerate(shape)])
    assert_close(E.cumulative_trapezoid(E.tensor(y), dx=0.5, dim=dim), ref)


def test_trapezoid_dtypes_errors_gradient():
    assert E.trapezoid(E.arange(6).reshape(2, 3)).dtype is E.get_default_dtype()
    with pytest.raises(ShapeError, match="one x value"):
        E.trapezoid(E.ones(3), E.ones(2))
    y, x = E.tensor(arr(2, 4), requires_grad=True), E.tensor(np.sort(arr(4)),
                                                              requires_grad=True)
    assert gradcheck(lambda a, b: E.trapezoid(a, b), (y, x))
    assert gradgradcheck(lambda a, b: E.cumulative_trapezoid(a, b), (y, x))


def test_take_matches_numpy_and_errors():
    a = arr(2, 3)
    idx = np.array([[0, -1], [5, 2]])
    assert_close(E.take(E.tensor(a), E.tensor(idx)), np.take(a, idx))
    assert E.take(E.tensor(a), E.zeros(0, dtype=E.int64)).shape == (0,)
    with pytest.raises(IndexError, match="out of range"):
        E.take(E.tensor(a), E.tensor([6]))
    with pytest.raises(DtypeError, match="int64"):
        E.take(E.tensor(a), E.tensor([1], dtype=E.int32))


@pytest.mark.parametrize("dtype", [E.float64, E.float32, E.int64, E.bool_])
def test_aminmax_matches_numpy(dtype):
    a = (arr(3, 4) * 3).astype(dtype.numpy)
    t = E.tensor(a)
    r = E.aminmax(t)
    assert_close(r.min, a.min()) and assert_close(r.max, a.max())
    lo, hi = t.aminmax(dim=1, keepdim=True)
    assert_close(lo, a.min(1, keepdims=True))
    assert_close(hi, a.max(1, keepdims=True))
    with pytest.raises(IndexError, match="empty"):
        E.aminmax(E.ones(0))


def test_heaviside_and_ldexp():
    x = np.array([-1.5, 0.0, 2.0, -0.0])
    v = np.array([0.5])
    assert_close(E.heaviside(E.tensor(x), E.tensor(v)), np.heaviside(x, v))
    with pytest.raises(DtypeError, match="same dtype"):
        E.heaviside(E.tensor(x), E.tensor([1]))
    e = np.array([-2, 0, 3])
    assert_close(E.ldexp(E.tensor(x[:3]), E.tensor(e)), np.ldexp(x[:3], e))
    assert E.ldexp(E.tensor([1, 2]), E.tensor([3])).dtype is E.get_default_dtype()
