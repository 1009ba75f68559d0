"""gradient, trapz, vander, deg2rad, rad2deg, sgn (ops/composite_numeric.py) against numpy
float64 references, with gradients."""
from __future__ import annotations

import math

import ember as E
import numpy as np
import pytest
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError, ShapeError
from helpers import ALL_DTYPES, assert_close
from hypothesis import given, settings
from hypothesis import strategies as st

RNG = np.random.default_rng(5)


def arr(*shape):
    return RNG.uniform(-2, 2, shape)


def leaf(a):
    return E.tensor(np.array(a, dtype=np.float64), requires_grad=True)


# ---- gradient -----------------------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(3, 5), min_size=1, max_size=3),
       edge_order=st.sampled_from([1, 2]), h=st.floats(0.25, 3.0), seed=st.integers(0, 2 ** 16))
def test_gradient_uniform_matches_numpy(shape, edge_order, h, seed):
    f = np.random.default_rng(seed).uniform(-2, 2, shape)
    got = E.gradient(E.tensor(f), spacing=h, edge_order=edge_order)
    want = np.gradient(f, h, edge_order=edge_order)
    want = [want] if len(shape) == 1 else want
    assert isinstance(got, tuple) and len(got) == len(shape)
    for g, w in zip(got, want):
        assert_close(g, w)


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_coordinates_match_numpy(edge_order):
    f = arr(4, 5)
    x0, x1 = np.cumsum(RNG.uniform(0.2, 1, 4)), np.cumsum(RNG.uniform(0.2, 1, 5))
    got = E.gradient(E.tensor(f), spacing=[E.tensor(x0), E.tensor(x1)], edge_order=edge_order)
    for g, w in zip(got, np.gradient(f, x0, x1, edge_order=edge_order)):
        assert_close(g, w)
    (one,) = E.gradient(E.tensor(f), spacing=[E.tensor(x1)], dim=1, edge_order=edge_order)
    assert_close(one, np.gradient(f, x1, axis=1, edge_order=edge_order))


def test_gradient_dims_spacings_and_dtypes():
    m = np.array([[1.0, 2.0, 4.0], [2.0, 5.0, 9.0]])
    (d1,) = E.gradient(E.tensor(m), dim=1)
    assert_close(d1, np.gradient(m, axis=1))
    g0, g1 = E.gradient(E.tensor(m), spacing=[1.0, 2.0])
    assert_close(g0, np.gradient(m, 1.0, axis=0))
    assert_close(g1, np.gradient(m, 2.0, axis=1))
    (d,) = E.gradient(E.tensor(m), spacing=E.tensor(2.0), dim=[-1])
    assert_close(d, np.gradient(m, 2.0, axis=1))
    (ints,) = E.gradient(E.tensor([1, 4, 9]))
    assert ints.dtype is E.float32 and ints.tolist() == [3.0, 4.0, 5.0]
    assert E.gradient(E.tensor(3.0)) == ()


def test_gradient_errors():
    m = E.ones(2, 3)
    with pytest.raises(ValueError, match="edge_order=1 and edge_order=2"):
        E.gradient(m, edge_order=3)
    with pytest.raises(ShapeError, match="at least edge_order \\+ 1"):
        E.gradient(E.tensor([1.0, 2.0]), edge_order=2)
    with pytest.raises(ValueError, match="list of length"):
        E.gradient(m, spacing=[1.0])
    with pytest.raises(ValueError, match="multiple times"):
        E.gradient(m, dim=[1, -1])
    with pytest.raises(ShapeError, match="coordinate tensor"):
        E.gradient(m, spacing=[E.tensor([0.0, 1.0])], dim=1)
    with pytest.raises(IndexError):
        E.gradient(m, dim=2)


def test_gradient_gradients():
    f, x = leaf(arr(3, 4)), leaf(np.array([0.0, 0.5, 1.7, 2.0]))
    assert gradcheck(lambda t: E.gradient(t, spacing=0.5, edge_order=2), (f,))
    assert gradcheck(lambda t, c: E.gradient(t, spacing=[c], dim=1, edge_order=2), (f, x))
    assert gradgradcheck(lambda t: E.gradient(t, dim=0)[0], (f,))


# ---- trapz --------------------------------------------------------------------------------------

def test_trapz_is_trapezoid():
    y, x = arr(3, 5), np.cumsum(RNG.uniform(0.1, 1, 5))
    assert_close(E.trapz(E.tensor(y), E.tensor(x)), np.trapezoid(y, x))
    assert_close(E.trapz(E.tensor(y), dx=0.5, dim=0), np.trapezoid(y, dx=0.5, axis=0))
    assert_close(E.trapz(E.tensor([1, 2, 3])), np.trapezoid([1, 2, 3]), dtype=E.float32)
    assert gradcheck(lambda t: E.trapz(t, dx=2.0), (leaf(arr(2, 3)),))


# ---- vander -------------------------------------------------------------------------------------

@pytest.mark.parametrize("n_cols", [None, 0, 1, 4])
@pytest.mark.parametrize("increasing", [False, True])
def test_vander_matches_numpy(n_cols, increasing):
    x = arr(3)
    assert_close(E.vander(E.tensor(x), n_cols, increasing), np.vander(x, n_cols, increasing))


def test_vander_dtypes_errors_and_gradient():
    ints = E.vander(E.tensor([1, 2, 3], dtype=E.int8))
    assert ints.dtype is E.int64 and ints.tolist() == [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    assert E.vander(E.tensor([True, False])).tolist() == [[1, 1], [0, 1]]
    assert E.vander(E.tensor([1.0, 2.0], dtype=E.float16), 3).dtype is E.float16
    with pytest.raises(ShapeError, match="one-dimensional"):
        E.vander(E.ones(2, 2))
    with pytest.raises(ValueError, match="non-negative"):
        E.vander(E.ones(2), -1)
    # the running product keeps the gradient finite at x = 0
    assert gradcheck(lambda t: E.vander(t, 4), (leaf([0.0, 1.5, -0.7]),))
    assert gradgradcheck(lambda t: E.vander(t, 3, True), (leaf([0.3, 1.5]),))


# ---- deg2rad / rad2deg / sgn --------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
def test_angle_conversions_and_sgn_dtypes(dtype):
    x = E.tensor(np.array([-2, 0, 1, 3])).to(dtype)
    ref = x.to(E.float64).numpy()
    want_dtype = dtype if dtype.is_floating_point else E.float32
    assert_close(E.deg2rad(x), np.deg2rad(ref), dtype=want_dtype)
    assert_close(x.rad2deg(), np.rad2deg(ref), dtype=want_dtype)
    got = E.sgn(x)
    assert got.dtype is dtype
    assert_close(got.to(E.float64), np.sign(ref), dtype=E.float64)


def test_angle_conversions_inplace_out_and_gradient():
    x = E.tensor([180.0, -90.0], dtype=E.float64)
    assert x.deg2rad_() is x
    assert_close(x, [math.pi, -math.pi / 2])
    out = E.empty(2, dtype=E.float64)
    E.rad2deg(x, out=out)
    assert_close(out, [180.0, -90.0])
    with pytest.raises(DtypeError):
        E.tensor([180]).deg2rad_()
    y = E.tensor([-1.5, 2.0])
    assert y.sgn_() is y and y.tolist() == [-1.0, 1.0]
    assert gradcheck(lambda t: E.rad2deg(E.deg2rad(t)) * E.sgn(t), (leaf([0.5, -1.2]),))
