"""Unary pointwise ops (kernels/pointwise.py) against numpy float64 references.

Expected result dtypes and error behaviours were checked by hand against PyTorch 2.x and
are hard-coded here (the tests do not import torch).
"""
import math
import warnings

import ml_dtypes
import numpy as np
import pytest
from helpers import (ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, LOW_FLOAT_DTYPES, assert_close, make,
                     no_warnings, to_np)

import ember as E

FLOATS = LOW_FLOAT_DTYPES + FLOAT_DTYPES
INTEGRAL = [E.bool_] + INT_DTYPES
SHAPES = [(), (5,), (2, 3, 4), (0, 3)]
_erf = np.vectorize(math.erf, otypes=[float])


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _gelu(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


# op -> (float64 reference, low, high): float-only math; ints compute in the default dtype.
FLOAT_OPS = {
    "exp": (np.exp, -3, 3), "exp2": (np.exp2, -3, 3), "log": (np.log, 0.1, 5),
    "log2": (np.log2, 0.1, 5), "log10": (np.log10, 0.1, 5), "log1p": (np.log1p, -0.9, 3),
    "expm1": (np.expm1, -3, 3), "sqrt": (np.sqrt, 0, 5),
    "rsqrt": (lambda x: 1.0 / np.sqrt(x), 0.2, 5), "sin": (np.sin, -3, 3),
    "cos": (np.cos, -3, 3), "tan": (np.tan, -1.2, 1.2), "asin": (np.arcsin, -1, 1),
    "acos": (np.arccos, -1, 1), "atan": (np.arctan, -3, 3), "sinh": (np.sinh, -3, 3),
    "cosh": (np.cosh, -3, 3), "tanh": (np.tanh, -3, 3), "sigmoid": (_sigmoid, -8, 8),
    "erf": (_erf, -3, 3), "reciprocal": (lambda x: 1.0 / x, 0.2, 5),
}
# op -> float64 reference for ops that keep the input dtype.
KEEP_OPS = {
    "abs": np.abs, "neg": np.negative, "sign": np.sign, "floor": np.floor, "ceil": np.ceil,
    "trunc": np.trunc, "round": np.round, "relu": lambda x: np.maximum(x, 0),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", sorted(FLOAT_OPS))
def test_float_op_matches_numpy(op, dtype, shape):
    ref_fn, low, high = FLOAT_OPS[op]
    x, ref = make(shape, dtype, low=low, high=high)
    assert_close(getattr(E, op)(x), ref_fn(ref), dtype)
    assert_close(getattr(x, op)(), ref_fn(ref), dtype)


@pytest.mark.parametrize("dtype", INTEGRAL)
@pytest.mark.parametrize("op", sorted(FLOAT_OPS))
def test_float_op_on_integral_input_gives_default_float(op, dtype):
    ref_fn, low, high = FLOAT_OPS[op]
    x, ref = make((2, 3), dtype, low=low, high=high)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the reference may take log(0) of int inputs
        expected = ref_fn(ref)
    assert_close(getattr(E, op)(x), expected, E.float32)


def test_float_op_follows_the_default_dtype(default_float64):
    x = E.tensor([1, 2, 3])
    assert E.exp(x).dtype is E.float64 and E.sigmoid(x.bool()).dtype is E.float64


@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d is not E.bool_])
@pytest.mark.parametrize("op", sorted(KEEP_OPS))
def test_dtype_keeping_op_matches_numpy(op, dtype):
    x, ref = make((2, 3, 4), dtype, low=-4, high=4)
    expected = KEEP_OPS[op](ref)
    if dtype is E.uint8 and op == "neg":
        expected = np.negative(ref) % 256  # two's complement wrap, like PyTorch
    assert_close(getattr(E, op)(x), expected, dtype)
    assert_close(getattr(x, op)(), expected, dtype)


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("op", ["floor", "ceil", "trunc", "round"])
def test_rounding_an_integer_returns_a_copy(op, dtype):
    x, ref = make((4,), dtype)
    r = getattr(x, op)()
    assert r.dtype is dtype and not np.shares_memory(r.numpy(), x.numpy())
    np.testing.assert_array_equal(to_np(r), ref)


@pytest.mark.parametrize("op,exc,match", [
    ("abs", NotImplementedError, "abs: no kernel for CPUBoolType"),
    ("floor", NotImplementedError, "floor: no kernel for CPUBoolType"),
    ("round", NotImplementedError, "round: no kernel for CPUBoolType"),
    ("neg", RuntimeError, r"neg\(\): negation.*bool tensor is not supported.*logical_not"),
    ("positive", RuntimeError, r"positive\(\).*bool tensor is not supported"),
    ("relu", RuntimeError, r"relu\(\): boolean inputs are not supported"),
])
def test_bool_input_errors(op, exc, match):
    with pytest.raises(exc, match=match):
        getattr(E, op)(E.tensor([True, False]))


def test_sign_of_bool_and_special_values():
    assert E.sign(E.tensor([True, False])).tolist() == [True, False]
    r = E.sign(E.tensor([math.nan, -0.0, 0.0, -2.0, math.inf]))
    assert r.tolist() == [0.0, 0.0, 0.0, -1.0, 1.0]  # NaN gives 0, as in PyTorch


def test_abs_and_neg_wrap_like_twos_complement():
    assert E.abs(E.tensor([-128], dtype=E.int8)).tolist() == [-128]
    assert E.neg(E.tensor([1, 2], dtype=E.uint8)).tolist() == [255, 254]


def test_positive_returns_a_view():
    x = E.tensor([1.0, -2.0])
    p = +x
    assert p.tolist() == [1.0, -2.0] and np.shares_memory(p.numpy(), x.numpy())


def test_special_values_give_inf_and_nan_without_warnings():
    x = E.tensor([0.0, -1.0, 1000.0, -1000.0])
    with no_warnings():
        log, sq, rs = E.log(x).tolist(), E.sqrt(x).tolist(), E.rsqrt(x).tolist()
        sig = E.sigmoid(x).tolist()
        assert E.reciprocal(E.tensor([0.0])).tolist() == [math.inf]
        assert E.exp(E.tensor([1000.0])).tolist() == [math.inf]
    assert log[0] == -math.inf and math.isnan(log[1])
    assert sq[0] == 0.0 and math.isnan(sq[1]) and rs[0] == math.inf
    assert sig == [0.5, pytest.approx(0.2689414), 1.0, 0.0]


def test_erf_has_double_precision_accuracy():
    # W. J. Cody's approximations: below 1e-15 relative error over the whole real line.
    xs = np.concatenate([np.linspace(-7, 7, 20001), np.geomspace(1e-300, 1e-3, 300),
                         -np.geomspace(1e-300, 1e-3, 300), [0.46875, 4.0, -4.0, 6.0, 30.0]])
    got = E.erf(E.tensor(xs)).numpy()
    expected = _erf(xs)
    rel = np.abs(got - expected) / np.maximum(np.abs(expected), 1e-300)
    assert rel.max() < 1e-15
    r = E.erf(E.tensor([math.inf, -math.inf, math.nan, 0.0, -0.0])).tolist()
    assert r[:2] == [1.0, -1.0] and math.isnan(r[2]) and r[3:] == [0.0, 0.0]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("approximate,ref_fn", [("none", _gelu), ("tanh", _gelu_tanh)])
def test_gelu_matches_reference(dtype, approximate, ref_fn):
    x, ref = make((3, 5), dtype, low=-5, high=5)
    assert_close(E.gelu(x, approximate=approximate), ref_fn(ref), dtype)
    if dtype is E.float64:
        assert_close(E.gelu(x, approximate=approximate), ref_fn(ref), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("dtype", FLOATS)
def test_silu_matches_reference(dtype):
    x, ref = make((3, 5), dtype, low=-6, high=6)
    assert_close(E.silu(x), ref * _sigmoid(ref), dtype)


def test_activation_errors():
    with pytest.raises(ValueError, match=r"gelu\(\): approximate must be 'none' or 'tanh', "
                                         r"got 'fast'"):
        E.gelu(E.tensor([1.0]), approximate="fast")
    for op in ("gelu", "silu"):  # PyTorch has no integer kernels for these
        with pytest.raises(NotImplementedError, match=f"{op}: no kernel for CPULongType"):
            getattr(E, op)(E.tensor([1, 2]))


def test_round_half_to_even_and_decimals():
    assert E.round(E.tensor([0.5, 1.5, 2.5, -0.5, -1.5])).tolist() == [0, 2, 2, -0.0, -2]
    # PyTorch's float32 arithmetic: rint(x * 100) / 100 (2.675 -> 2.68, unlike float64)
    r = E.round(E.tensor([0.125, 0.375, 2.675, -1.005]), decimals=2)
    np.testing.assert_allclose(r.numpy(), np.float32([0.12, 0.38, 2.68, -1.0]))
    assert E.round(E.tensor([15.0, 25.0, -35.0]), decimals=-1).tolist() == [20, 20, -40]
    h = E.tensor([1.2345, 600.5], dtype=E.float16).round(decimals=2)
    assert h.dtype is E.float16 and h.tolist() == [1.23046875, 600.5]
    with pytest.raises(NotImplementedError, match=r"decimals=1 is not supported for integer"):
        E.round(E.tensor([1, 2]), decimals=1)


@pytest.mark.parametrize("dtype,big", [(E.float16, 65504.0), (E.bfloat16, 3.3895313892515355e38),
                                       (E.float32, 3.4028234663852886e38),
                                       (E.float64, 1.7976931348623157e308)])
def test_nan_to_num_defaults_to_the_dtype_range(dtype, big):
    x = E.tensor([math.nan, math.inf, -math.inf, 1.5]).to(dtype)
    assert E.nan_to_num(x).tolist() == [0.0, big, -big, 1.5]
    assert x.nan_to_num(nan=1.0, posinf=2.0, neginf=-3.0).tolist() == [1.0, 2.0, -3.0, 1.5]


def test_nan_to_num_overflowing_replacement_and_ints():
    x = E.tensor([math.nan, math.inf])
    assert E.nan_to_num(x, posinf=1e300).tolist() == [0.0, math.inf]  # 1e300 -> inf in f32
    i = E.tensor([1, 2])
    r = E.nan_to_num(i, nan=2.5)
    assert r.dtype is E.int64 and r.tolist() == [1, 2]
    x.nan_to_num_()
    assert x.tolist() == [0.0, 3.4028234663852886e38]


@pytest.mark.parametrize("dtype", FLOATS + INT_DTYPES[1:])  # uint8: see test_clamp_semantics
def test_clamp_with_numbers_and_tensors(dtype):
    x, ref = make((2, 3, 4), dtype, low=-4, high=4)
    lo, lo_ref = make((3, 1), dtype, low=-2, high=0, seed=1)
    assert_close(E.clamp(x, min=-1, max=2), np.clip(ref, -1, 2), dtype)
    assert_close(x.clamp(min=lo), np.maximum(ref, lo_ref), dtype)
    assert_close(E.clamp(x, max=lo), np.minimum(ref, lo_ref), dtype)
    assert_close(E.clamp_min(x, 1), np.maximum(ref, 1), dtype)
    assert_close(x.clamp_max(lo), np.minimum(ref, lo_ref), dtype)


def test_clamp_semantics():
    x = E.tensor([1.0, 2.0, 3.0])
    assert E.clamp(x, min=2.5, max=1.5).tolist() == [1.5, 1.5, 1.5]  # min > max: max wins
    assert all(math.isnan(v) for v in E.clamp(x, max=math.nan).tolist())
    assert math.isnan(E.clamp(E.tensor([math.nan]), min=0.0).item())
    i = E.tensor([3, -4])
    assert E.clamp(i, min=0.5).dtype is E.float32  # promotes like torch.result_type
    assert E.clamp(E.tensor([True, False]), min=0).dtype is E.int64
    assert E.clamp(E.tensor([1.5], dtype=E.float16), min=E.tensor([0.5]).double()).dtype \
        is E.float64
    assert E.clamp(E.tensor([1, 200], dtype=E.uint8), max=-1).tolist() == [1, 200]  # -1 = 255


def test_clamp_errors_leave_self_unchanged():
    with pytest.raises(ValueError, match=r"clamp\(\): at least one of 'min' or 'max'"):
        E.clamp(E.tensor([1.0]))
    with pytest.raises(RuntimeError, match=r"clamp\(\): value 1000 cannot be converted to type "
                                           r"int8 without overflow"):
        E.clamp(E.tensor([1], dtype=E.int8), max=1000)
    i = E.tensor([3, -4])
    with pytest.raises(E.DtypeError, match=r"clamp_\(\): result type float32 can't be cast"):
        i.clamp_(min=0.5)
    assert i.tolist() == [3, -4]
    i.clamp_(min=0)
    assert i.tolist() == [3, 0]


@pytest.mark.parametrize("op", ["exp", "sqrt", "sigmoid", "erf", "abs", "floor", "relu"])
def test_inplace_and_out_variants(op):
    x, ref = make((2, 3), E.float32, low=0.5, high=3)
    expected = FLOAT_OPS[op][0](ref) if op in FLOAT_OPS else KEEP_OPS[op](ref)
    out = E.empty(2, 3, dtype=E.float64)
    assert getattr(E, op)(x, out=out) is out
    assert_close(out, expected, E.float32, check_dtype=False)
    assert getattr(x, op + "_")() is x
    assert_close(x, expected, E.float32)


@pytest.mark.parametrize("op", ["exp", "log", "sin", "sigmoid", "reciprocal"])
def test_float_op_in_place_on_int_raises_and_leaves_self_unchanged(op):
    x = E.tensor([1, 2, 3])
    with pytest.raises(E.DtypeError, match=f"{op}_\\(\\): result type float32 can't be cast "
                                           f"to the desired output type int64"):
        getattr(x, op + "_")()
    assert x.tolist() == [1, 2, 3]
    with pytest.raises(E.DtypeError, match="can't be cast to the desired output type int64"):
        getattr(E, op)(x, out=E.empty(3, dtype=E.int64))


def test_logical_not_and_bitwise_not():
    x = E.tensor([0.0, math.nan, -2.0])
    assert E.logical_not(x).tolist() == [True, False, False]
    assert (~E.tensor([True, False])).tolist() == [False, True]
    assert (~E.tensor([0, 5], dtype=E.uint8)).tolist() == [255, 250]
    assert E.bitwise_not(E.tensor([0, -6])).tolist() == [-1, 5]
    with pytest.raises(NotImplementedError, match="bitwise_not: no kernel for CPUFloatType"):
        ~x


@pytest.mark.parametrize("call", [
    lambda s: E.clamp(s, min=0.0, max=1.0),
    lambda s: E.clamp(s, min=E.tensor(0.0), max=E.tensor(1.0)),
    lambda s: E.clamp(s, max=E.tensor([1.0, 2.0])),
    lambda s: E.clamp(s),
], ids=["numbers", "tensors", "tensor_max", "no_bounds"])
@pytest.mark.parametrize("value", [2.0, 2, True])
def test_clamp_refuses_a_number_self(call, value):
    # as torch.clamp(2.0, 0, 1): "argument 'input' must be Tensor, not float"
    with pytest.raises(TypeError, match=rf"^clamp\(\): argument 'self' \(position 1\) must be "
                                        rf"Tensor, not {type(value).__name__}; wrap the number "
                                        rf"in a tensor first: ember\.clamp\(ember\.tensor"
                                        rf"\({value!r}\), \.\.\.\)$"):
        call(value)


def test_clamp_of_a_wrapped_number():
    # the way out the error names
    assert E.clamp(E.tensor(2.0), min=0.0, max=1.0).item() == 1.0
    assert E.clamp(E.tensor(2.0), max=E.tensor([1.0, 3.0])).tolist() == [1.0, 2.0]


@pytest.mark.parametrize("op", ["clamp_min", "clamp_max"])
@pytest.mark.parametrize("bound", [1.0, E.tensor(1.0)], ids=["number", "tensor"])
def test_clamp_min_max_refuse_a_number_self(op, bound):
    with pytest.raises(TypeError, match=rf"^{op}\(\): argument 'self' \(position 1\) must be "
                                        rf"Tensor, not float; .*"
                                        rf"ember\.{op}\(ember\.tensor\(2\.0\)"):
        getattr(E, op)(2.0, bound)
    assert getattr(E, op)(E.tensor(2.0), bound).item() == (1.0 if op == "clamp_max" else 2.0)


def test_clamp_refuses_other_non_tensor_selves():
    with pytest.raises(TypeError, match=r"must be Tensor, not list; wrap the values in a tensor "
                                        r"first: ember\.clamp\(ember\.tensor\(values\), \.\.\.\)$"):
        E.clamp([1.0, 2.0], 0, 1)
    with pytest.raises(TypeError, match=r"^clamp_min\(\): argument 'self' \(position 1\) must be "
                                        r"Tensor, not NoneType$"):
        E.clamp_min(None, 0)


# --- numpy fast paths against the generic kernels (what CuPy runs) ------------------------

SPECIALS = np.array([0.5, -1.5, 0.0, -0.0, np.nan, np.inf, -np.inf, 30.0, -30.0, 1e-30, 200.0,
                     -200.0])


def _inputs(dtype):
    """1-d, strided, 0-d, large (past ``WIDE_ZERO_MIN_SIZE``, contiguous and strided) and
    (for float32/float64/int32) byte-swapped arrays of ``dtype``: the byte-swapped ones
    miss the fast paths' dtype tables and take the fallback."""
    a = SPECIALS.astype(dtype.numpy) if dtype.is_floating_point else \
        np.arange(-5, 7).astype(dtype.numpy)
    big = np.tile(a, 400).reshape(60, 80)   # 4800 elements
    out = [a, a.reshape(3, 4)[:, ::2], a[1:2].reshape(()), big, big[:, ::2]]
    if dtype in (E.float32, E.float64, E.int32):
        out.append(a.astype(a.dtype.newbyteorder()))
    return out


@pytest.mark.parametrize("dtype", FLOATS + [E.int8, E.int32, E.int64])
@pytest.mark.parametrize("op", ["relu", "sigmoid", "silu", "neg"])
def test_fast_paths_match_the_generic_kernels(numpy_kernels, generic_kernels, assert_same,
                                              op, dtype):
    if op in ("sigmoid", "silu") and not dtype.is_floating_point:
        pytest.skip("float-only op (ints arrive promoted)")
    for a in _inputs(dtype):
        r = numpy_kernels[op](a)
        assert_same(r, generic_kernels[op](a))
        with np.errstate(all="ignore"):  # inf * 0 in silu's reference
            expected = {"relu": lambda x: np.maximum(x, 0), "neg": np.negative,
                        "sigmoid": _sigmoid, "silu": lambda x: x * _sigmoid(x)}[op](
                a.astype(np.float64))
        rtol = {E.float16: 1e-3, E.bfloat16: 1e-2}.get(dtype, 1e-6)
        # underflow to 0 (sigmoid(-200) in float32) is the dtype's, not the kernel's
        atol = 2 * float(ml_dtypes.finfo(dtype.numpy).smallest_subnormal) \
            if dtype.is_floating_point else 0
        np.testing.assert_allclose(np.asarray(r).astype(np.float64), expected, rtol=rtol,
                                   atol=atol)


def test_relu_on_large_inputs_reads_a_shared_zero_buffer(numpy_kernels):
    """Past ``WIDE_ZERO_MIN_SIZE`` numpy's relu compares with a read-only zero view: the
    result is a fresh writable array equal to maximum(a, 0) bit for bit, and the buffer
    grows for a larger input and stays zero."""
    from ember.backends.kernels.pointwise import WIDE_ZERO_MIN_SIZE, ZeroBuffers
    zeros = ZeroBuffers()
    for n in (WIDE_ZERO_MIN_SIZE, 3 * WIDE_ZERO_MIN_SIZE + 1):
        a = np.resize(SPECIALS.astype(np.float32), (n,))
        z = zeros.like(a)
        assert z.shape == a.shape and not z.flags.writeable and not z.any()
        r = numpy_kernels["relu"](a)
        assert r.flags.writeable and not np.shares_memory(r, a)
        np.testing.assert_array_equal(r.view(np.uint32),
                                      np.maximum(a, np.float32(0)).view(np.uint32))
    assert zeros.like(np.zeros((64, 64), np.float32)[:, ::2]) is None     # not contiguous
    assert zeros.like(np.zeros(4096, np.int32)) is None                    # not a float


def test_relu_keeps_nan_and_signed_zero_like_maximum(numpy_kernels):
    a = np.array([np.nan, -0.0, 0.0, -1.0], np.float32)
    r = numpy_kernels["relu"](a)
    assert np.isnan(r[0]) and r.dtype == np.float32
    np.testing.assert_array_equal(np.signbit(r[1:]), np.signbit(np.maximum(a[1:],
                                                                            np.float32(0))))


@pytest.mark.parametrize("kernels", ["numpy_kernels", "generic_kernels"])
@pytest.mark.parametrize("op,message", [
    ("relu", r"relu\(\): boolean inputs are not supported"),
    ("neg", r"neg\(\): negation, the `-` operator, on a bool tensor is not supported"),
    ("positive", r"positive\(\): the `\+` operator on a bool tensor is not supported")])
def test_bool_refusals_on_both_paths(request, kernels, op, message):
    with pytest.raises(RuntimeError, match=message):
        request.getfixturevalue(kernels)[op](np.array([True, False]))


def test_zeros_by_dtype():
    import types

    from ember.backends.kernels.pointwise import zeros_by_dtype
    fast = zeros_by_dtype(np)
    generic = zeros_by_dtype(types.SimpleNamespace(**vars(np)))
    assert np.dtype(np.bool_) not in fast and fast.keys() == generic.keys()
    for dt, z in fast.items():
        assert z.__class__ is np.ndarray and z.shape == () and z.dtype == dt and z == 0
        assert not z.flags.writeable  # shared by every call
        assert generic[dt].__class__ is dt.type and generic[dt] == 0
