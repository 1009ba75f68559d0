"""mv, addmv, addr, ger, baddbmm, addbmm, vdot, chain_matmul, dist, renorm, cross
(ops/composite_blas.py) against numpy float64 references, with gradients."""
from __future__ import annotations

import math

import ember as E
import numpy as np
import pytest
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError, ShapeError
from helpers import assert_close

RNG = np.random.default_rng(7)


def arr(*shape):
    return RNG.uniform(-2, 2, shape)


def leaf(a):
    return E.tensor(np.array(a, dtype=np.float64), requires_grad=True)


def test_mv_and_vdot_and_ger_match_numpy():
    m, v, w = arr(3, 4), arr(4), arr(4)
    assert_close(E.mv(E.tensor(m), E.tensor(v)), m @ v)
    assert_close(E.tensor(m).mv(E.tensor(v)), m @ v)
    assert_close(E.vdot(E.tensor(v), E.tensor(w)), np.vdot(v, w))
    assert_close(E.tensor(v).vdot(E.tensor(w)), np.vdot(v, w))
    assert_close(E.ger(E.tensor(v), E.tensor(w[:3])), np.outer(v, w[:3]))
    assert_close(E.tensor(v).ger(E.tensor(w)), np.outer(v, w))
    ints = E.mv(E.tensor([[1, 2], [3, 4]]), E.tensor([1, -1]))
    assert ints.dtype is E.int64 and ints.tolist() == [-1, -1]


def test_mv_errors():
    with pytest.raises(ShapeError, match="size mismatch"):
        E.mv(E.ones(2, 3), E.ones(4))
    with pytest.raises(ShapeError, match="expected self to be 2-D"):
        E.mv(E.ones(3), E.ones(3))
    with pytest.raises(ShapeError, match="expected vec to be 1-D"):
        E.mv(E.ones(2, 3), E.ones(3, 1))


@pytest.mark.parametrize("self_shape", [(3,), (1,), ()])
def test_addmv_matches_numpy(self_shape):
    s, m, v = arr(*self_shape), arr(3, 4), arr(4)
    want = 0.5 * s + 2.0 * (m @ v)
    assert_close(E.addmv(E.tensor(s), E.tensor(m), E.tensor(v), beta=0.5, alpha=2.0), want)


def test_addmv_beta_zero_ignores_nan_and_inplace_and_out():
    m, v = arr(2, 3), arr(3)
    got = E.addmv(E.full((2,), math.nan, dtype=E.float64), E.tensor(m), E.tensor(v), beta=0)
    assert_close(got, m @ v)
    s = E.tensor(arr(2))
    want = s.numpy() + m @ v
    s.addmv_(E.tensor(m), E.tensor(v))
    assert_close(s, want)
    out = E.empty(2, dtype=E.float64)
    E.addmv(E.zeros(2, dtype=E.float64), E.tensor(m), E.tensor(v), out=out)
    assert_close(out, m @ v)
    with pytest.raises(ShapeError, match="broadcast to the product's shape"):
        E.addmv(E.zeros(3), E.ones(2, 3), E.ones(3))


def test_addr_matches_numpy_and_dtype_rules():
    s, a, b = arr(2, 3), arr(2), arr(3)
    assert_close(E.addr(E.tensor(s), E.tensor(a), E.tensor(b), beta=-1, alpha=0.5),
                 -s + 0.5 * np.outer(a, b))
    assert_close(E.tensor(s[0]).addr(E.tensor(a), E.tensor(b)), s[0] + np.outer(a, b))
    got = E.addr(E.tensor([[True]]), E.tensor([True, False]), E.tensor([True]))
    assert got.dtype is E.bool_ and got.tolist() == [[True], [True]]
    ints = E.addr(E.zeros(2, 2, dtype=E.int64), E.tensor([1, 2]), E.tensor([3, 4]), alpha=2)
    assert ints.dtype is E.int64 and ints.tolist() == [[6, 8], [12, 16]]
    with pytest.raises(DtypeError, match="alpha must not be a floating point"):
        E.addr(E.zeros(2, 2, dtype=E.int64), E.tensor([1, 2]), E.tensor([3, 4]), alpha=2.5)
    with pytest.raises(ShapeError, match="vec1 to be 1-D"):
        E.addr(E.zeros(2, 3), E.ones(2, 1), E.ones(3))
    with pytest.raises(ShapeError, match="broadcast"):
        E.addr(E.zeros(2), E.ones(2), E.ones(3))  # (2,) does not broadcast to (2, 3)
    x = E.zeros(2, 3, dtype=E.float64)
    assert x.addr_(E.tensor(a), E.tensor(b)) is x
    assert_close(x, np.outer(a, b))


@pytest.mark.parametrize("self_shape", [(2, 3, 5), (3, 5), (5,), ()])
def test_baddbmm_matches_numpy(self_shape):
    s, b1, b2 = arr(*self_shape), arr(2, 3, 4), arr(2, 4, 5)
    assert_close(E.baddbmm(E.tensor(s), E.tensor(b1), E.tensor(b2), beta=2, alpha=-0.5),
                 2 * s + -0.5 * (b1 @ b2))


@pytest.mark.parametrize("self_shape", [(3, 5), (5,), ()])
def test_addbmm_matches_numpy(self_shape):
    s, b1, b2 = arr(*self_shape), arr(2, 3, 4), arr(2, 4, 5)
    want = 0.5 * s + 3 * (b1 @ b2).sum(0)
    assert_close(E.addbmm(E.tensor(s), E.tensor(b1), E.tensor(b2), beta=0.5, alpha=3), want)
    empty = E.addbmm(E.tensor(s), E.zeros(0, 3, 4, dtype=E.float64),
                     E.zeros(0, 4, 5, dtype=E.float64))
    assert_close(empty, np.broadcast_to(s, (3, 5)))


def test_batched_products_errors_and_inplace():
    with pytest.raises(ShapeError, match="same number of batches"):
        E.baddbmm(E.zeros(2, 2, 3), E.ones(2, 2, 3), E.ones(3, 3, 3))
    with pytest.raises(ShapeError, match="cannot be multiplied"):
        E.addbmm(E.zeros(2, 3), E.ones(2, 2, 3), E.ones(2, 4, 3))
    with pytest.raises(ShapeError, match="batch2 to be 3-D"):
        E.addbmm(E.zeros(2, 3), E.ones(2, 2, 3), E.ones(2, 3))
    with pytest.raises(ShapeError, match="broadcast"):
        E.baddbmm(E.zeros(4, 2, 3), E.ones(2, 2, 3), E.ones(2, 3, 3))
    b1, b2 = arr(2, 2, 3), arr(2, 3, 2)
    x = E.ones(2, 2, 2, dtype=E.float64)
    x.baddbmm_(E.tensor(b1), E.tensor(b2))
    assert_close(x, 1 + b1 @ b2)
    y = E.ones(2, 2, dtype=E.float64)
    y.addbmm_(E.tensor(b1), E.tensor(b2), beta=0)
    assert_close(y, (b1 @ b2).sum(0))


def test_blas_gradients():
    s, m, v = leaf(arr(3)), leaf(arr(3, 4)), leaf(arr(4))
    assert gradcheck(lambda s, m, v: E.addmv(s, m, v, beta=0.5, alpha=2), (s, m, v))
    assert gradgradcheck(lambda m, v: E.mv(m, v), (m, v))
    a, b = leaf(arr(3)), leaf(arr(4))
    assert gradcheck(lambda s, a, b: E.addr(s, a, b, beta=2), (leaf(arr(3, 1)), a, b))
    b1, b2 = leaf(arr(2, 2, 3)), leaf(arr(2, 3, 2))
    assert gradcheck(lambda s, x, y: E.baddbmm(s, x, y, alpha=0.5), (leaf(arr(2, 1, 2)), b1, b2))
    assert gradcheck(lambda s, x, y: E.addbmm(s, x, y, beta=-1), (leaf(arr(2)), b1, b2))
    assert gradgradcheck(lambda x, y: E.addbmm(E.zeros(2, 2, dtype=E.float64), x, y), (b1, b2))
    assert gradcheck(E.vdot, (a, leaf(arr(3))))


def test_chain_matmul_matches_numpy_and_warns():
    a, b, c = arr(2, 3), arr(3, 4), arr(4, 2)
    with pytest.warns(UserWarning, match="deprecated"):
        got = E.chain_matmul(E.tensor(a), E.tensor(b), E.tensor(c))
    assert_close(got, a @ b @ c)
    one = E.tensor(a)
    with pytest.warns(UserWarning):
        copy = E.chain_matmul(one)
    assert_close(copy, a)
    assert copy is not one
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="one or more"):
        E.chain_matmul([])
    with pytest.warns(UserWarning), pytest.raises(ShapeError, match="2-D"):
        E.chain_matmul(E.ones(2, 3), E.ones(3))
    with pytest.warns(UserWarning):
        assert gradcheck(lambda x, y: E.chain_matmul(x, y), (leaf(a), leaf(b)))


@pytest.mark.parametrize("p", [2, 1, 3.5, 0, math.inf])
def test_dist_matches_numpy(p):
    a, b = arr(3, 4), arr(4)
    d = (a - b).ravel()
    want = np.count_nonzero(d) if p == 0 else np.linalg.norm(d, ord=p)
    assert_close(E.dist(E.tensor(a), E.tensor(b), p), want)
    assert_close(E.tensor(a).dist(E.tensor(b), p), want)


def test_dist_gradient_and_errors():
    a, b = leaf(arr(2, 3)), leaf(arr(3))
    assert gradcheck(lambda x, y: E.dist(x, y, 3), (a, b))
    assert gradgradcheck(lambda x, y: E.dist(x, y), (a, b))
    x = leaf([1.0, 2.0])
    E.dist(x, x.detach()).backward()  # zero distance: a zero gradient, as PyTorch
    assert x.grad.tolist() == [0.0, 0.0]
    with pytest.raises(DtypeError, match="floating point"):
        E.dist(E.tensor([1, 2]), E.tensor([0, 0]))


def _np_renorm(x, p, dim, maxnorm):
    moved = np.moveaxis(x, dim, 0)
    norms = np.array([np.linalg.norm(r.ravel(), ord=p) for r in moved])
    factor = np.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    shape = [1] * x.ndim
    shape[dim] = -1
    return x * factor.reshape(shape)


@pytest.mark.parametrize("p, dim, maxnorm", [(2, 0, 1.0), (1, 1, 2.0), (math.inf, -1, 0.5),
                                             (3, 2, 1.5)])
def test_renorm_matches_reference(p, dim, maxnorm):
    x = arr(3, 2, 4)
    assert_close(E.renorm(E.tensor(x), p, dim, maxnorm), _np_renorm(x, p, dim, maxnorm))
    t = E.tensor(x)
    assert t.renorm_(p, dim, maxnorm) is t
    assert_close(t, _np_renorm(x, p, dim, maxnorm))


def test_renorm_gradient_and_errors():
    x = leaf([[1.0, 2.0, 3.0], [0.1, 0.2, -0.1], [4.0, -4.0, 4.0]])
    assert gradcheck(lambda t: E.renorm(t, 2, 0, 1.0), (x,))
    assert gradgradcheck(lambda t: E.renorm(t, 1.5, 1, 2.0), (x,))
    with pytest.raises(ShapeError, match="at least 2 dimensions"):
        E.renorm(E.ones(3), 2, 0, 1.0)
    with pytest.raises(ValueError, match="positive norm order"):
        E.renorm(E.ones(2, 2), 0, 0, 1.0)
    with pytest.raises(ValueError, match="maxnorm >= 0"):
        E.renorm(E.ones(2, 2), 2, 0, -1.0)


def test_cross_default_dim_rule():
    a, b = arr(4, 3), arr(4, 3)
    got = E.cross(E.tensor(a), E.tensor(b), dim=1)
    assert_close(got, np.cross(a, b, axis=1))
    with pytest.warns(UserWarning, match="without specifying the dim"):
        first = E.cross(E.tensor(a.T), E.tensor(b.T))  # (3, 4): dim 0 has size 3
    assert_close(first, np.cross(a.T, b.T, axis=0))
    with pytest.warns(UserWarning):
        assert_close(E.tensor(a).cross(E.tensor(b)), np.cross(a, b))
    # the index of self's first size-3 dim applies to the broadcast shape, as PyTorch
    assert_close(E.cross(E.tensor(a[0]), E.tensor(b), dim=-1), np.cross(a[0], b))
    with pytest.warns(UserWarning), pytest.raises(ShapeError, match="no dimension of size 3"):
        E.cross(E.ones(4, 2), E.ones(4, 2))
    x, y = leaf(a[:2]), leaf(b[:2])
    assert gradcheck(lambda s, t: E.cross(s, t, dim=-1), (x, y))
