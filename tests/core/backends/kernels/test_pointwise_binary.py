"""Binary pointwise ops (kernels/pointwise_binary.py) against numpy float64 references.

Expected result dtypes, wrapped-number casts and error behaviours were checked by hand
against PyTorch 2.x and are hard-coded here (the tests do not import torch).
"""
import math
import operator

import numpy as np
import pytest
from helpers import (ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, LOW_FLOAT_DTYPES, assert_close, make,
                     no_warnings, to_np)

import ember as E

FLOATS = LOW_FLOAT_DTYPES + FLOAT_DTYPES
NUMERIC = INT_DTYPES + FLOATS
SHAPE_PAIRS = [((), ()), ((5,), (5,)), ((2, 3, 4), (2, 3, 4)), ((2, 1, 4), (3, 1)),
               ((5,), ()), ((), (2, 3)), ((0, 3), (3,))]

# op -> float64 reference; the divisor (second operand) of the division family is nonzero.
ARITH = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum,
    "minimum": np.minimum,
}
DIVISION = {"floor_divide": np.floor_divide, "remainder": np.remainder, "fmod": np.fmod}
COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
           "gt": np.greater, "ge": np.greater_equal}


def _divisor(shape, dtype, seed=1):
    """Nonzero values in [0.5, 4) of alternating sign (positive for uint8), and their twin."""
    mag = np.random.default_rng(seed).uniform(0.5, 4, size=shape)
    sign = np.where(np.arange(mag.size).reshape(shape) % 2 == 0, 1.0, -1.0)
    vals = mag * (sign if dtype is not E.uint8 else 1.0)
    if not dtype.is_floating_point:
        vals = np.where(vals > 0, np.ceil(vals), np.floor(vals))
    t = E.tensor(np.asarray(vals).astype(dtype.numpy))
    return t, to_np(t).astype(np.float64)


@pytest.mark.parametrize("shapes", SHAPE_PAIRS)
@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("op", sorted(ARITH))
def test_arithmetic_matches_numpy(op, dtype, shapes):
    x, xr = make(shapes[0], dtype)
    y, yr = make(shapes[1], dtype, seed=1)
    expected = ARITH[op](xr, yr)
    if dtype is E.uint8 and op == "sub":
        expected = expected % 256
    assert_close(getattr(E, op)(x, y), expected, dtype)
    assert_close(getattr(x, op)(y), expected, dtype)


@pytest.mark.parametrize("shapes", SHAPE_PAIRS)
@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("op", sorted(DIVISION))
def test_division_family_matches_numpy(op, dtype, shapes):
    x, xr = make(shapes[0], dtype, low=-9, high=9)
    y, yr = _divisor(shapes[1], dtype)
    assert_close(getattr(E, op)(x, y), DIVISION[op](xr, yr), dtype)


@pytest.mark.parametrize("dtype", NUMERIC)
def test_div_rounding_modes(dtype):
    x, xr = make((3, 4), dtype, low=-9, high=9)
    y, yr = _divisor((4,), dtype)
    true_dtype = dtype if dtype.is_floating_point else E.float32
    assert_close(E.div(x, y), xr / yr, true_dtype)
    assert_close(E.true_divide(x, y), xr / yr, true_dtype)
    assert_close(x.div(y, rounding_mode="trunc"), np.trunc(xr / yr), dtype)
    assert_close(E.div(x, y, rounding_mode="floor"), np.floor(xr / yr), dtype)


def test_remainder_and_fmod_signs():
    for dt in (E.int64, E.float32):
        a, b = E.tensor([-3, 3, -3]).to(dt), E.tensor([2, -2, -2]).to(dt)
        assert E.remainder(a, b).tolist() == [1, -1, -1]  # the divisor's sign (Python)
        assert E.fmod(a, b).tolist() == [-1, 1, -1]  # the dividend's sign (C)
    assert E.div(E.tensor([7, -7]), 2, rounding_mode="trunc").tolist() == [3, -3]
    assert E.div(E.tensor([7, -7]), 2, rounding_mode="floor").tolist() == [3, -4]
    # the most negative int over -1 wraps instead of trapping
    m = E.tensor([-128], dtype=E.int8)
    assert E.floor_divide(m, -1).tolist() == [-128] and E.remainder(m, -1).tolist() == [0]


def test_float_division_by_zero_gives_inf_and_nan_silently():
    x = E.tensor([3.0, -3.0, 0.0])
    with no_warnings():
        assert E.div(x, 0.0).tolist()[:2] == [math.inf, -math.inf]
        assert E.floor_divide(x, 0.0).tolist()[:2] == [math.inf, -math.inf]
        assert all(math.isnan(v) for v in E.remainder(x, 0.0).tolist())
        assert (E.tensor([1, 0]) / 0).tolist()[0] == math.inf


@pytest.mark.parametrize("call", [
    lambda x: E.div(x, 0, rounding_mode="trunc"),
    lambda x: E.div(x, E.tensor([1, 0]), rounding_mode="floor"),
    lambda x: x // 0, lambda x: x % 0, lambda x: E.fmod(x, 0),
])
def test_integer_division_by_zero_raises(call):
    with pytest.raises(RuntimeError, match=r"ZeroDivisionError: integer division by zero"):
        call(E.tensor([3, -4]))


@pytest.mark.parametrize("dtype", NUMERIC)
def test_pow_matches_numpy(dtype):
    x, xr = make((2, 3), dtype, low=0 if dtype.is_floating_point else -3, high=3)
    e, er = make((3,), dtype, low=0, high=3, seed=1)
    assert_close(E.pow(x, e), xr ** er, dtype)
    assert_close(x ** 2, xr ** 2, dtype)
    assert_close(2 ** e, 2.0 ** er, dtype)


def test_pow_integer_rules():
    with pytest.raises(RuntimeError, match=r"integers to negative integer powers are not "
                                           r"allowed \(exponent -1 for a int64 tensor\)"):
        E.tensor([2, 3]) ** -1
    # tensor exponents: 1 ** -n == 1, (-1) ** -n == +-1, else 0, as in PyTorch
    r = E.pow(E.tensor([2, 1, -1, -1, 0]), E.tensor([-1, -3, -1, -2, -2]))
    assert r.tolist() == [0, 1, -1, 1, 0]
    assert (E.tensor([3], dtype=E.int8) ** 5).tolist() == [-13]  # wraps like int8
    assert (E.tensor([2.0, 4.0]) ** -1).tolist() == [0.5, 0.25]
    with pytest.raises(NotImplementedError, match="pow: no kernel for CPUBoolType"):
        E.pow(E.tensor([True]), E.tensor([True]))


@pytest.mark.parametrize("dtype", NUMERIC)
def test_atan2_matches_numpy(dtype):
    y, yr = make((2, 3), dtype)
    x, xr = make((2, 1), dtype, seed=1)
    assert_close(E.atan2(y, x), np.arctan2(yr, xr), dtype if dtype.is_floating_point
                 else E.float32)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", sorted(COMPARE))
def test_comparisons_give_bool(op, dtype):
    x, xr = make((2, 3, 4), dtype, low=-2, high=2)
    y, yr = make((3, 1), dtype, low=-2, high=2, seed=1)
    r = getattr(E, op)(x, y)
    assert r.dtype is E.bool_
    np.testing.assert_array_equal(r.numpy(), COMPARE[op](xr, yr))
    np.testing.assert_array_equal(getattr(x, op)(1).numpy(), COMPARE[op](xr, 1))


def test_comparisons_cast_numbers_like_pytorch():
    i8 = E.tensor([1, -2], dtype=E.int8)
    assert (i8 < 1000).tolist() == [False, False]  # 1000 becomes int8 -24, as in PyTorch
    assert (E.tensor([-1], dtype=E.int8) == 255).tolist() == [True]
    assert (E.tensor([1, 255], dtype=E.uint8) == -1).tolist() == [False, True]
    assert (E.tensor([3, -4]) < 2.5).tolist() == [False, True]  # compares in float32
    nan = E.tensor([math.nan, 1.0], dtype=E.bfloat16)
    with no_warnings():  # ml_dtypes would warn on NaN
        assert (nan < 2).tolist() == [False, True] and (nan != nan).tolist() == [True, False]
        assert math.isnan(E.maximum(nan, E.tensor([0.0, 0.0]).bfloat16()).tolist()[0])


def test_comparing_with_a_non_number_falls_back_to_identity():
    t = T([1, 2])
    assert (t == None) is False and (t != None) is True  # noqa: E711 - the operator is tested
    assert (t == "a") is False and t not in [None, "x"]
    with pytest.raises(TypeError, match=r"eq\(\): argument 'other' \(position 2\) must be "
                                        r"Tensor, not NoneType"):
        E.eq(t, None)


def test_maximum_minimum_propagate_nan():
    a, b = E.tensor([math.nan, 1.0]), E.tensor([1.0, math.nan])
    assert all(math.isnan(v) for v in E.maximum(a, b).tolist() + E.minimum(a, b).tolist())
    assert E.maximum(E.tensor([True, False]), E.tensor([0, 0], dtype=E.int8)).dtype is E.int8


def test_logical_ops_take_any_dtypes():
    a = E.tensor([1.0, 0.0, math.nan, 0.0])
    b = E.tensor([2, 2, 0, 0])
    assert E.logical_and(a, b).tolist() == [True, False, False, False]
    assert E.logical_or(a, b).tolist() == [True, True, True, False]
    assert a.logical_xor(b).tolist() == [False, True, True, False]
    out = E.empty(4)
    assert E.logical_and(a, b, out=out) is out and out.tolist() == [1.0, 0.0, 0.0, 0.0]
    c = E.tensor([1, 0, 3, 0])
    c.logical_or_(b)
    assert c.tolist() == [1, 1, 1, 0] and c.dtype is E.int64


@pytest.mark.parametrize("dtype", [E.bool_] + INT_DTYPES)
@pytest.mark.parametrize("op,ref", [("bitwise_and", np.bitwise_and),
                                    ("bitwise_or", np.bitwise_or),
                                    ("bitwise_xor", np.bitwise_xor)])
def test_bitwise_ops_match_numpy(op, ref, dtype):
    x, _ = make((2, 3, 4), dtype, low=-8, high=8)
    y, _ = make((3, 1), dtype, low=-8, high=8, seed=1)
    r = getattr(E, op)(x, y)
    assert r.dtype is dtype
    np.testing.assert_array_equal(r.numpy(), ref(x.numpy(), y.numpy()))


def test_shifts_follow_pytorch_at_the_edges():
    i8 = E.tensor([1, -1], dtype=E.int8)
    assert (i8 << 8).tolist() == [0, 0] and (i8 >> 8).tolist() == [0, -1]
    i64 = E.tensor([16, -16])
    assert (i64 << -1).tolist() == [0, 0] and (i64 >> -1).tolist() == [0, -1]
    assert (i64 << 64).tolist() == [0, 0] and (i64 >> 70).tolist() == [0, -1]
    assert (E.tensor([200, 255], dtype=E.uint8) >> 1).tolist() == [100, 127]
    assert (E.tensor([255], dtype=E.uint8) >> 9).tolist() == [0]
    assert (E.tensor([64], dtype=E.int8) << 1).tolist() == [-128]
    assert (i64 >> E.tensor([2, 3])).tolist() == [4, -2]


@pytest.mark.parametrize("op", ["bitwise_and", "bitwise_left_shift", "bitwise_right_shift"])
def test_bitwise_ops_refuse_floats(op):
    with pytest.raises(NotImplementedError, match=f"{op}: no kernel for CPUFloatType"):
        getattr(E, op)(E.tensor([1.0]), E.tensor([1.0]))
    with pytest.raises(NotImplementedError, match=f"{op}: no kernel for CPUFloatType"):
        getattr(E, op)(E.tensor([1]), 1.5)  # int and float promote to float32


def test_shifts_refuse_bool():
    with pytest.raises(NotImplementedError, match="bitwise_left_shift: no kernel for "
                                                  "CPUBoolType"):
        E.tensor([True]) << E.tensor([True])


# (operands, expected PyTorch result dtype): checked by hand with torch.
T = E.tensor
PROMOTION = [
    (lambda: T([True]) + T([False]), E.bool_),
    (lambda: T([True]) * T([True]), E.bool_),
    (lambda: T([1], dtype=E.uint8) + T([1], dtype=E.int8), E.int16),
    (lambda: T([True]) + T(5), E.int64),
    (lambda: T([1.0], dtype=E.float16) + T([1.0], dtype=E.bfloat16), E.float32),
    (lambda: T([1], dtype=E.int32) + T(5), E.int32),
    (lambda: T(1, dtype=E.int32) + T(5), E.int64),
    (lambda: T([1], dtype=E.int32) * 2.5, E.float32),
    (lambda: T([1], dtype=E.int8) + T(2.5, dtype=E.float64), E.float64),
    (lambda: T([1.0], dtype=E.float16) + T(2.5, dtype=E.float64), E.float16),
    (lambda: T([1.0], dtype=E.bfloat16) + 2.5, E.bfloat16),
    (lambda: T([1.0], dtype=E.bfloat16) * T(3), E.bfloat16),
    (lambda: T([True]) / T([True]), E.float32),
    (lambda: T([3]) / T([2]), E.float32),
    (lambda: E.div(T([3]), 2, rounding_mode="trunc"), E.int64),
    (lambda: T([3], dtype=E.int8) // 2, E.int8),
    (lambda: E.atan2(T([1]), T([2])), E.float32),
    (lambda: T([True]) ** 2, E.int64),
    (lambda: 2 ** T([3]), E.int64),
    (lambda: 2.5 ** T([3]), E.float32),
    (lambda: 2 ** T([1.0], dtype=E.float16), E.float16),
    (lambda: T([2.0], dtype=E.float16) ** T(2.5, dtype=E.float64), E.float16),
    (lambda: T([1]) == T([1.0]), E.bool_),
    (lambda: T([True]) & T([1], dtype=E.int8), E.int8),
    (lambda: T([True]) & True, E.bool_),
    (lambda: E.where(T([True]), T([1], dtype=E.int8), T([1.0], dtype=E.float16)), E.float16),
    (lambda: E.where(T([True]), 1, 2.5), E.float32),
    (lambda: E.where(T([True]), 1, 2), E.int64),
    (lambda: E.where(T([True]), True, False), E.bool_),
    (lambda: E.where(T([True]), T([1], dtype=E.int8), 1), E.int8),
    (lambda: E.lerp(T([1.0], dtype=E.float16), T([2.0], dtype=E.float16), 0.5), E.float16),
    (lambda: E.lerp(T([1.0]), T([2.0]), T(0.5, dtype=E.float64)), E.float32),
]


@pytest.mark.parametrize("i", range(len(PROMOTION)))
def test_result_dtypes_follow_pytorch(i):
    fn, expected = PROMOTION[i]
    assert fn().dtype is expected


def test_true_division_follows_the_default_dtype(default_float64):
    assert (T([1]) / T([2])).dtype is E.float64
    assert E.where(T([True]), 1, 2.5).dtype is E.float64
    assert (T([1]) + 2.5).dtype is E.float64


def test_numbers_wrap_into_the_result_dtype_like_pytorch():
    assert (T([1, -2], dtype=E.int8) + 1000).tolist() == [-23, -26]  # 1000 -> int8 -24
    assert (T([1, 2], dtype=E.uint8) + (-1)).tolist() == [0, 1]
    assert (T([1.0], dtype=E.float16) + 1e5).tolist() == [math.inf]
    assert (T([7, 200], dtype=E.uint8) / -2).tolist() == [-3.5, -100.0]  # not 254
    with pytest.raises(RuntimeError, match=r"where\(\): value 1000 cannot be converted to "
                                           r"type int8 without overflow"):
        E.where(T([True]), T([1], dtype=E.int8), 1000)


@pytest.mark.parametrize("dtype", FLOATS)
def test_low_precision_floats_keep_their_dtype_with_numbers(dtype):
    x, xr = make((4,), dtype, low=0.5, high=3)
    for fn, ref in [(lambda t: t + 2.5, xr + 2.5), (lambda t: 1.5 - t, 1.5 - xr),
                    (lambda t: t * 3, xr * 3), (lambda t: 2 / t, 2 / xr),
                    (lambda t: t ** 0.5, xr ** 0.5), (lambda t: 7 // t, np.floor_divide(7, xr)),
                    (lambda t: t % 0.7, np.remainder(xr, 0.7)),
                    (lambda t: E.maximum(t, 1), np.maximum(xr, 1)),
                    (lambda t: E.where(t > 1, t, 0.25), np.where(xr > 1, xr, 0.25)),
                    (lambda t: E.lerp(t, E.ones(4, dtype=dtype), 0.3), xr + 0.3 * (1 - xr))]:
        assert_close(fn(x), ref, dtype)


def test_where_matches_numpy_and_checks_condition():
    c, _ = make((2, 1, 4), E.bool_)
    x, xr = make((3, 1), E.float32)
    y, yr = make((4,), E.int64, seed=1)
    r = E.where(c, x, y)
    assert_close(r, np.where(c.numpy(), xr, yr), E.float32)
    out = E.empty(1, dtype=E.float64)
    assert E.where(c, x, y, out=out) is out and out.shape == (2, 3, 4)
    with pytest.raises(E.DtypeError, match=r"where\(\): expected condition to be a bool tensor, "
                                           r"got uint8; pass cond.bool\(\)"):
        E.where(T([1], dtype=E.uint8), x, y)


def test_lerp_values_and_dtype_rules():
    a, ar = make((2, 3), E.float64)
    b, br = make((3,), E.float64, seed=1)
    w, wr = make((2, 1), E.float64, low=-1, high=2, seed=2)
    assert_close(E.lerp(a, b, w), ar + wr * (br - ar), E.float64)
    assert_close(a.lerp(b, 0.75), ar + 0.75 * (br - ar), E.float64)
    np.testing.assert_array_equal(E.lerp(a, b, 1.0).numpy(), np.broadcast_to(br, (2, 3)))
    with pytest.raises(E.DtypeError, match=r"lerp\(\): expected dtype float64 for 'end' like "
                                           r"'self', but got float32"):
        E.lerp(a, b.float(), 0.5)
    with pytest.raises(E.DtypeError, match=r"expected dtype float64 for 'weight'"):
        E.lerp(a, b, w.float())
    with pytest.raises(NotImplementedError, match=r"lerp.Scalar: no kernel for CPULongType"):
        E.lerp(T([1]), T([2]), 2)


def test_lerp_is_exact_at_the_ends():
    a, b = E.tensor([0.1, 1e8]), E.tensor([0.3, -1e-8])
    assert E.lerp(a, b, 1.0).tolist() == b.tolist()
    assert E.lerp(a, b, 0.0).tolist() == a.tolist()


def test_add_sub_alpha():
    x, y = T([1.0, 2.0]), T([3.0, 5.0])
    assert E.add(x, y, alpha=2).tolist() == [7.0, 12.0]
    assert E.sub(x, y, alpha=0.5).tolist() == [-0.5, -0.5]
    assert E.add(T([1, 2]), 1.5, alpha=0.5).tolist() == [1.75, 2.75]  # float result: allowed
    assert E.add(T([True]), T([True]), alpha=2).tolist() == [True]
    assert E.sub(T([5], dtype=E.uint8), T([7], dtype=E.uint8), alpha=2).tolist() == [247]
    with pytest.raises(E.DtypeError, match=r"add\(\): for integral input tensors \(int64\), "
                                           r"argument alpha must not be a floating point"):
        E.add(T([1]), T([1]), alpha=0.5)
    with pytest.raises(TypeError, match=r"sub\(\): for integral input tensors"):
        E.sub(T([1]), T([1]), alpha=0.5)
    with pytest.raises(E.DtypeError, match=r"a boolean alpha is only supported for bool"):
        E.add(T([1]), T([1]), alpha=True)


@pytest.mark.parametrize("call,match", [
    (lambda: T([True]) - T([False]), r"with two bool tensors is not supported; use the `\^`"),
    (lambda: T([True]) - 1, r"with a bool tensor is not supported; .* `~`"),
    (lambda: 1 - T([True]), r"with a bool tensor is not supported"),
    (lambda: T([1]) - T([True]), r"with a bool tensor is not supported"),
    (lambda: T([1]) - True, r"with a bool tensor is not supported"),
])
def test_sub_refuses_bool(call, match):
    with pytest.raises(RuntimeError, match=r"sub\(\): subtraction, the `-` operator, " + match):
        call()


def test_div_rounding_mode_errors():
    with pytest.raises(ValueError, match=r"div\(\): expected rounding_mode to be one of None, "
                                         r"'trunc' or 'floor', got 'round'"):
        E.div(T([1.0]), 2, rounding_mode="round")
    with pytest.raises(NotImplementedError, match=r"rounding_mode='floor' is not implemented "
                                                  r"for bool"):
        E.div(T([True]), T([True]), rounding_mode="floor")
    with pytest.raises(NotImplementedError, match="floor_divide: no kernel for CPUBoolType"):
        T([True]) // T([True])


def test_broadcast_failure_names_the_shapes():
    with pytest.raises(E.ShapeError, match=r"add\(\): shapes do not broadcast: 'self' \[2, 3\], "
                                           r"'other' \[4\]"):
        E.ones(2, 3) + E.ones(4)
    with pytest.raises(E.ShapeError, match=r"sub\(\): shapes do not broadcast"):
        E.ones(2, 3) - E.ones(4)


BINARY_OPERATORS = [
    (operator.add, np.add), (operator.sub, np.subtract), (operator.mul, np.multiply),
    (operator.truediv, np.true_divide), (operator.floordiv, np.floor_divide),
    (operator.mod, np.remainder), (operator.pow, np.power),
    (operator.eq, np.equal), (operator.ne, np.not_equal), (operator.lt, np.less),
    (operator.le, np.less_equal), (operator.gt, np.greater), (operator.ge, np.greater_equal),
]


@pytest.mark.parametrize("pyop,ref", BINARY_OPERATORS)
def test_python_operators_and_reflected_forms(pyop, ref):
    x, xr = make((2, 3), E.float64, low=0.5, high=3)
    y, yr = make((3,), E.float64, low=0.5, high=3, seed=1)
    for got, expected in [(pyop(x, y), ref(xr, yr)), (pyop(x, 2), ref(xr, 2.0)),
                          (pyop(2, x), ref(2.0, xr)), (pyop(1.5, x), ref(1.5, xr))]:
        assert_close(got, expected, check_dtype=False)


def test_integer_operators_and_reflected_forms():
    x = T([1, 2, 3])
    assert (2 - x).tolist() == [1, 0, -1] and (7 // x).tolist() == [7, 3, 2]
    assert (7 % T([2, -3])).tolist() == [1, -2] and (1 / x).dtype is E.float32
    assert (5 & x).tolist() == [1, 0, 1] and (x | 4).tolist() == [5, 6, 7]
    assert (x ^ 1).tolist() == [0, 3, 2] and (~x).tolist() == [-2, -3, -4]
    assert (x << 1).tolist() == [2, 4, 6] and (x >> 1).tolist() == [0, 1, 1]
    assert (2 << x).tolist() == [4, 8, 16] and (16 >> x).tolist() == [8, 4, 2]
    assert (-x).tolist() == [-1, -2, -3] and abs(-x).tolist() == [1, 2, 3]


def test_inplace_operators():
    x = T([1, 2, 3])
    x += 1
    x -= T([1, 1, 1])
    x *= 3
    x //= 2
    x %= 4
    x **= 2
    x <<= 2
    x >>= 1
    x |= 1
    x &= 7
    x ^= 2
    assert x.dtype is E.int64 and x.tolist() == [1, 1, 3]
    f = T([1.0, 2.0])
    f /= 4
    f += T([1, 1])  # an int operand is fine: the result is float32
    assert f.tolist() == [1.25, 1.5]


@pytest.mark.parametrize("call,match", [
    (lambda x: x.div_(2), "div_"), (lambda x: x.true_divide_(2), "true_divide_"),
    (lambda x: x.add_(0.5), "add_"), (lambda x: x.pow_(0.5), "pow_"),
    (lambda x: x.atan2_(x), "atan2_"), (lambda x: x.__itruediv__(2), "div_"),
])
def test_failing_inplace_op_leaves_self_unchanged(call, match):
    x = T([1, 2, 3])
    with pytest.raises(E.DtypeError, match=f"{match}\\(\\): result type float32 can't be cast"):
        call(x)
    assert x.tolist() == [1, 2, 3] and x.dtype is E.int64


def test_inplace_errors_for_bool_and_broadcasting_leave_self_unchanged():
    b = T([True, False])
    with pytest.raises(RuntimeError, match="with two bool tensors"):
        b.sub_(T([True, True]))
    assert b.tolist() == [True, False]
    x = T([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match=r"add_\(\): output with shape \[3\] doesn't match "
                                           r"the broadcast shape \[2, 3\]"):
        x.add_(E.ones(2, 3))
    assert x.tolist() == [1.0, 2.0, 3.0]
    i = T([4, 6])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        i.floor_divide_(T([2, 0]))
    assert i.tolist() == [4, 6]


@pytest.mark.parametrize("op", ["add", "mul", "div", "remainder", "pow", "maximum", "eq",
                                "bitwise_and"])
def test_out_variant(op):
    x, y = T([[1, 2, 3]]), T([3, 2, 1])
    expected = getattr(E, op)(x, y)
    out = E.empty(0, dtype=E.float64)  # wrong shape: resized, as in PyTorch
    assert getattr(E, op)(x, y, out=out) is out
    assert out.shape == expected.shape and out.dtype is E.float64
    np.testing.assert_array_equal(to_np(out), to_np(expected).astype(np.float64))
    if expected.dtype.is_floating_point:
        with pytest.raises(E.DtypeError, match="can't be cast to the desired output type int64"):
            getattr(E, op)(x, y, out=E.empty(1, 3, dtype=E.int64))


# --- the kernels' hot paths (two arrays, alpha == 1) against their general paths ----------

def _operands(dtype):
    """Each operand pair as arrays (the hot path), then as an array and a 0-d array, a
    numpy scalar, or a Python number (the general paths)."""
    a = np.array([0.5, -1.5, 2.0, -0.0, 7.0]).astype(dtype.numpy)
    b = np.array([2.0, 4.0, -3.0, 1.0, 0.5]).astype(dtype.numpy)
    one = b[:1]
    return [(a, b), (a, one.reshape(())), (a, one[0]), (one[0], a), (a, 3), (3, a), (a, 2.5)]


@pytest.mark.parametrize("dtype", [E.float32, E.float64, E.float16, E.bfloat16, E.int32])
@pytest.mark.parametrize("op,args", [("add", (1,)), ("add", (2,)), ("sub", (1,)),
                                     ("sub", (3,)), ("mul", ()), ("div", (None,)),
                                     ("true_divide", ()), ("lt", ()), ("eq", ())])
def test_hot_paths_agree_with_the_general_paths(numpy_kernels, generic_kernels, assert_same,
                                               op, args, dtype):
    for a, b in _operands(dtype):
        if dtype is E.int32 and b.__class__ is float:
            continue  # a float number promotes the int tensor before the kernel
        r = numpy_kernels[op](a, b, *args)
        assert_same(r, generic_kernels[op](a, b, *args))
        # the reference: the general path's own conversion of a number, then the ufunc
        x, y = (np.asarray(v, dtype=dtype.numpy) for v in (a, b))
        if op in ("div", "true_divide") and dtype is E.int32:
            x, y = x.astype(np.float32), y.astype(np.float32)
        alpha = args[0] if op in ("add", "sub") else 1
        ufunc = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
                 "true_divide": np.true_divide, "lt": np.less, "eq": np.equal}[op]
        with np.errstate(divide="ignore"):  # 3 / -0.0
            expected = ufunc(x, y if alpha == 1 else y * np.asarray(alpha, dtype=y.dtype))
        assert_same(r, expected)


def test_int_true_division_takes_the_default_dtype_on_the_hot_path(numpy_kernels):
    a, b = np.array([1, -7, 9], np.int64), np.array([2, 2, -4], np.int64)
    for r in (numpy_kernels["div"](a, b, None), numpy_kernels["true_divide"](a, b)):
        assert r.dtype == np.float32
        np.testing.assert_array_equal(r, [0.5, -3.5, -2.25])


def test_compare_with_none_on_every_path(numpy_kernels):
    a = np.ones(3, np.float32)
    for args in ((a, None), (None, a), (None, 2), (2, None)):
        with pytest.raises(TypeError, match=r"^lt\(\): expected a Tensor or a number to "
                                            r"compare with, got None$"):
            numpy_kernels["lt"](*args)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int64],
                         ids=str)
def test_where_bit_select_equals_numpy_where_bit_for_bit(numpy_kernels, dtype):
    """Past ``BLEND_MIN_SIZE`` numpy's where is a branch-free select of bit patterns:
    equal to np.where bit for bit (NaN payloads, -0.0, inf) with a zero or non-zero other,
    and with the condition and both operands broadcast against each other."""
    from ember.backends.kernels.pointwise_binary import BLEND_MIN_SIZE
    rng = np.random.default_rng(0)
    n = 2 * BLEND_MIN_SIZE
    special = [np.nan, -0.0, np.inf, -np.inf, 1.5] if np.dtype(dtype).kind == "f" else [7]
    a = np.resize(np.array(special + [-2, 3], dtype), n)
    a = a.reshape(8, -1)
    cond = rng.random(a.shape) > 0.5
    where = numpy_kernels["where"]
    u = f"u{np.dtype(dtype).itemsize}"
    for args in ((cond, a, 0), (cond, a, np.zeros((), dtype)), (cond, a, a[::-1].copy()),
                 (cond[:1], a, a[:, :1].copy()), (cond, a[:1], -1)):
        got = where(*args)
        other = args[2] if isinstance(args[2], np.ndarray) else np.asarray(args[2], dtype)
        ref = np.where(args[0], args[1], other)
        assert got.dtype == ref.dtype and got.shape == ref.shape
        np.testing.assert_array_equal(got.view(u), ref.view(u))
