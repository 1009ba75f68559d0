"""Special-function and NaN-aware pointwise ops (kernels/special.py) and the composite
aliases beside them (ops/composite_math.py) against numpy float64 references.

Result dtypes, special values and errors were checked by hand against PyTorch 2.x and are
hard-coded here (the tests do not import torch).
"""
import math

import numpy as np
import pytest
from helpers import (ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, LOW_FLOAT_DTYPES, assert_close, make,
                     to_np)
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import ember as E

FLOATS = LOW_FLOAT_DTYPES + FLOAT_DTYPES
SHAPES = [(), (5,), (2, 3, 4), (0, 3)]
NAN, INF = math.nan, math.inf
_erfc = np.vectorize(math.erfc, otypes=[float])


def _logit(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x / (1 - x))


# op -> (float64 reference, low, high): ints and bools compute in the default float dtype
UNARY = {"asinh": (np.arcsinh, -3, 3), "acosh": (np.arccosh, 1, 5),
         "atanh": (np.arctanh, -0.95, 0.95), "erfc": (_erfc, -3, 5), "logit": (_logit, 0.02, 0.98)}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", FLOATS + [E.int32, E.bool_])
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_matches_numpy(op, dtype, shape):
    ref_fn, low, high = UNARY[op]
    x, ref = make(shape, dtype, low=low, high=high)
    want = dtype if dtype.is_floating_point else E.float32
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = ref_fn(ref)
    assert_close(getattr(E, op)(x), expected, want)
    assert_close(getattr(x, op)(), expected, want)


def test_unary_special_values():
    x = E.tensor([-INF, -1.0, 0.0, 1.0, INF, NAN, 2.0], dtype=E.float64)
    assert_close(E.atanh(x), [NAN, -INF, 0.0, INF, NAN, NAN, NAN])
    assert_close(E.acosh(x), [NAN, NAN, NAN, 0.0, INF, NAN, math.acosh(2.0)])
    assert_close(E.erfc(x), [2.0, math.erfc(-1), 1.0, math.erfc(1), 0.0, NAN, math.erfc(2)])
    assert_close(E.logit(x), [NAN, NAN, -INF, INF, NAN, NAN, NAN])


def test_erfc_keeps_relative_precision_in_the_tail():
    x = np.array([5.0, 10.0, 20.0, 26.0, 27.5, -30.0])
    got = to_np(E.erfc(E.tensor(x)))
    np.testing.assert_allclose(got, _erfc(x), rtol=1e-13, atol=0)
    assert got[2] == pytest.approx(5.395865611607901e-176, rel=1e-13)  # 1 - erf would be 0


@pytest.mark.parametrize("dtype", FLOATS)
def test_logit_eps_clamps_first(dtype):
    x, ref = make((4, 5), dtype, low=-0.5, high=1.5)
    assert_close(E.logit(x, eps=0.1), _logit(np.clip(ref, 0.1, 0.9)), dtype)
    assert_close(x.logit(0.25), _logit(np.clip(ref, 0.25, 0.75)), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_frac_keeps_sign_and_dtype(dtype):
    x, ref = make((3, 4), dtype, low=-5, high=5)
    assert_close(E.frac(x), ref - np.trunc(ref), dtype)
    assert_close(E.frac(E.tensor([-2.5, INF, NAN, -0.0])), [-0.5, NAN, NAN, -0.0])


@pytest.mark.parametrize("dtype", [E.bool_] + INT_DTYPES)
def test_frac_refuses_integral(dtype):
    with pytest.raises(NotImplementedError, match="frac"):
        E.frac(E.zeros(2, dtype=dtype))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_signbit(dtype):
    x, ref = make((3, 4), dtype)
    got = E.signbit(x)
    assert got.dtype is E.bool_
    np.testing.assert_array_equal(to_np(got), np.signbit(ref) & (dtype is not E.bool_))
    specials = E.tensor([-0.0, 0.0, -NAN, NAN, -INF, 1.0])
    np.testing.assert_array_equal(to_np(specials.signbit()),
                                  [True, False, True, False, True, False])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_square_is_pow_2(dtype):
    x, ref = make((2, 3), dtype)
    want = E.int64 if dtype is E.bool_ else dtype
    assert_close(E.square(x), ref * ref, want)
    if dtype is E.bool_:  # the int64 result does not fit: nothing is written
        with pytest.raises(TypeError, match="square_|pow_"):
            x.clone().square_()
    else:
        y = x.clone()
        assert y.square_() is y
        assert_close(y, ref * ref, dtype)


def test_aliases_absolute_clip():
    x, ref = make((3, 4), E.int32)
    assert_close(E.absolute(x), np.abs(ref))
    assert_close(x.clone().absolute_(), np.abs(ref))
    assert_close(E.clip(x, 0.5), np.maximum(ref, 0.5), E.float32)  # promotes like clamp
    y = x.clone()
    assert y.clip_(-1, 1) is y
    assert_close(y, np.clip(ref, -1, 1))
    with pytest.raises(ValueError, match="at least one of 'min' or 'max'"):
        E.clip(x)


def test_where_method():
    x, ref = make((3, 4), E.int64)
    c = x > 0
    assert_close(x.where(c, 2.5), np.where(ref > 0, ref, 2.5), E.float32)
    y, yref = make((4,), E.float64, seed=1)
    assert_close(x.where(c, y), np.where(ref > 0, ref, yref), E.float64)
    with pytest.raises(TypeError, match="bool"):
        x.where(x, y)


# op -> float64 reference of two operands
def _xlogy(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((x == 0) & ~np.isnan(y), 0.0, x * np.log(y))


BINARY_FLOAT = {"xlogy": _xlogy, "logaddexp": np.logaddexp, "logaddexp2": np.logaddexp2,
                "copysign": np.copysign}


@settings(max_examples=25, deadline=None)
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       dtype=st.sampled_from(FLOATS), op=st.sampled_from(sorted(BINARY_FLOAT)))
def test_binary_broadcasts_like_numpy(shapes, dtype, op):
    (sa, sb), out = shapes.input_shapes, shapes.result_shape
    a, ra = make(sa, dtype, low=0, high=3)
    b, rb = make(sb, dtype, low=-3, high=3, seed=1)
    got = getattr(E, op)(a, b)
    assert got.shape == out
    assert_close(got, BINARY_FLOAT[op](ra, rb), dtype)


def test_xlogy_zero_times_log_zero_and_numbers():
    x = E.tensor([0.0, 0.0, 0.0, 1.0, 2.0, NAN])
    y = E.tensor([0.0, NAN, -1.0, 0.0, INF, 1.0])
    assert_close(E.xlogy(x, y), [0.0, NAN, 0.0, -INF, INF, NAN])
    i = E.tensor([0, 1, 2])
    assert_close(E.xlogy(i, 2.5), [0.0, math.log(2.5), 2 * math.log(2.5)], E.float32)
    assert_close(E.xlogy(2, E.tensor([1.0, 4.0])), [0.0, 2 * math.log(4)], E.float32)
    assert_close(E.xlogy(i, i), [0.0, 0.0, 2 * math.log(2)], E.float32)
    with pytest.raises(TypeError):
        E.xlogy(2, 3)


def test_inplace_forms_check_the_dtype_and_leave_self_unchanged():
    x = E.tensor([1.0, 2.0])
    y = x.clone()
    assert y.xlogy_(E.tensor([2.0, 3.0])) is y
    assert_close(y, [math.log(2), 2 * math.log(3)])
    i = E.tensor([1, 2])
    for call in (lambda: i.xlogy_(2.0), lambda: i.copysign_(-1.0), lambda: i.logit_()):
        with pytest.raises(TypeError):
            call()
        np.testing.assert_array_equal(to_np(i), [1, 2])


def test_logaddexp_is_stable_and_refuses_integers():
    big = E.tensor([1000.0, -1000.0, -INF])
    assert_close(E.logaddexp(big, big), [1000 + math.log(2), -1000 + math.log(2), -INF])
    assert_close(E.logaddexp2(big, big), [1001.0, -999.0, -INF])
    assert_close(E.logaddexp(E.tensor([1, 2]), E.tensor([0.5])),
                 np.logaddexp([1, 2], 0.5), E.float32)
    for op in ("logaddexp", "logaddexp2"):
        with pytest.raises(NotImplementedError, match=op):
            getattr(E, op)(E.tensor([1, 2]), E.tensor([3, 4]))


def test_copysign_signs_and_promotion():
    x = E.tensor([1, -2, 3])
    assert_close(E.copysign(x, -0.0), [-1.0, -2.0, -3.0], E.float32)
    assert_close(E.copysign(E.tensor([1.0, 1.0]), E.tensor([-NAN, NAN])), [-1.0, 1.0])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op,ref", [("fmax", np.fmax), ("fmin", np.fmin)])
def test_fmax_fmin(op, ref, dtype):
    a, ra = make((3, 4), dtype)
    b, rb = make((4,), dtype, seed=1)
    assert_close(getattr(E, op)(a, b), ref(ra, rb), dtype)
    n = E.tensor([NAN, 1.0, NAN, -INF])
    m = E.tensor([2.0, NAN, NAN, 0.0])
    assert_close(getattr(n, op)(m), ref(to_np(n), to_np(m)))
    assert_close(getattr(E, op)(E.tensor([1, 5]), E.tensor([2.5])), ref([1, 5], 2.5), E.float32)


@pytest.mark.parametrize("dtype", [E.uint8, E.int32, E.int64] + FLOATS)
def test_addcmul_addcdiv(dtype):
    a, ra = make((3, 4), dtype, low=0, high=4)
    b, rb = make((4,), dtype, low=0, high=4, seed=1)
    c, rc = make((3, 1), dtype, low=1, high=4, seed=2)
    assert_close(E.addcmul(a, b, c, value=2), ra + 2 * rb * rc, dtype)
    if dtype.is_floating_point:
        assert_close(a.addcdiv(b, c, value=-0.5), ra - 0.5 * rb / rc, dtype)
        y = a.clone()
        assert y.addcdiv_(b, c) is y
        assert_close(y, ra + rb / rc, dtype)
    else:
        with pytest.raises(RuntimeError, match="integer division with addcdiv"):
            E.addcdiv(a, b, c)
        assert_close(E.addcmul(a, b, c, value=0.5), ra, dtype)  # value truncates to 0


def test_addcmul_promotes_and_refuses_bool_and_bad_shapes():
    i = E.tensor([1, 2, 3])
    assert_close(E.addcmul(i, E.tensor([0.5]), i), [1.5, 3.0, 4.5], E.float32)
    with pytest.raises(NotImplementedError, match="addcmul"):
        E.addcmul(i > 0, i > 0, i > 0)
    with pytest.raises(ValueError, match="broadcast"):
        E.addcmul(i, E.ones(2), i)
    y = i.clone()
    with pytest.raises(TypeError):
        y.addcmul_(E.tensor([0.5]), i)  # a float result does not fit int64
    np.testing.assert_array_equal(to_np(y), [1, 2, 3])


@pytest.mark.parametrize("dtype", [E.int32, E.float16, E.float32])
def test_float_power_computes_in_float64(dtype):
    x, ref = make((2, 3), dtype, low=0, high=3)
    got = E.float_power(x, 2.5)
    assert got.dtype is E.float64
    np.testing.assert_allclose(to_np(got), ref ** 2.5, rtol=1e-12)
    assert_close(E.float_power(2, x), 2.0 ** ref, E.float64)
    assert_close(x.float_power(E.tensor([1, 2, 3])), ref ** np.array([1, 2, 3]), E.float64)
    big = E.tensor([2 ** 40 + 1], dtype=E.int64)  # exact in float64, not in float32
    assert to_np(E.float_power(big, E.tensor([1.0], dtype=E.float32)))[0] == 2 ** 40 + 1


def test_float_power_inplace_needs_float64():
    y = E.tensor([2.0, 3.0], dtype=E.float64)
    assert y.float_power_(2) is y
    assert_close(y, [4.0, 9.0])
    x = E.tensor([2.0, 3.0])
    with pytest.raises(RuntimeError, match="float64"):
        x.float_power_(2)
    assert_close(x, [2.0, 3.0])


def test_out_variants_write_into_out():
    x = E.tensor([0.25, 0.5])
    out = E.empty(2)
    assert E.logit(x, out=out) is out
    assert_close(out, _logit(np.array([0.25, 0.5])))
    o = E.empty(0, dtype=E.bool_)
    E.signbit(E.tensor([-1.0, 1.0]), out=o)
    np.testing.assert_array_equal(to_np(o), [True, False])
    o = E.empty(2, dtype=E.float64)
    assert E.square(x, out=o) is o
    assert_close(o, [0.0625, 0.25])
