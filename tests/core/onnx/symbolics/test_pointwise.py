"""ONNX export of ember's elementwise ops (ember/onnx/symbolics/arithmetic.py, unary.py,
comparison.py, with their shared _operands.py): each symbolic exported, checked and run
in onnxruntime against ember, in float32, float64, int64 and bool where onnxruntime has
the kernels, at opsets 13 and 17 (18 and 20 where the symbolics branch), with
broadcasting, Python-number and 0-d tensor operands, special values (nan, +-inf, -0.0,
halves), a dynamic batch, and every g.fail path."""
from __future__ import annotations

import warnings

import numpy as np
import onnx
import pytest

import ember as E
import ember.onnx as eo
import ember.nn.functional as F
from ember.onnx.context import GraphContext, OnnxValue
from ember.onnx.symbolics import arithmetic, unary

from .._check import check_export, ops_in

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

_rng = np.random.default_rng(0)


def t(arr, dtype=None):
    """A Tensor from numpy data (in ``dtype``, a numpy dtype, if given)."""
    arr = np.asarray(arr)
    return E.tensor(arr if dtype is None else arr.astype(dtype))


def uniform(shape, lo=-3.0, hi=3.0, dtype=np.float32):
    return t(_rng.uniform(lo, hi, shape), dtype)


def ints(shape, lo=-9, hi=10, dtype=np.int64):
    return t(_rng.integers(lo, hi, shape), dtype)


def export_only(fn, inputs, opset=17):
    """Export and check without running: for ops onnxruntime has no kernel for (its
    Tan, Asin, Acos, Atan, Sinh, Cosh and Erf take float32 only)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = eo.export(fn, tuple(inputs), None, opset_version=opset)
    onnx.checker.check_model(model, full_check=True)
    return model


SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 1e-8, -1e-8, 0.5,
                    -0.5, 1.5, 2.5, -2.5, 1.0, -1.0, 3.7, -3.7, 100.0, -100.0])


# ---- unary math ---------------------------------------------------------------------------

# name -> (function, input range, whether onnxruntime runs it in float64)
UNARY = {
    "exp": (lambda x: x.exp(), (-3, 3), True),
    "exp2": (lambda x: x.exp2(), (-3, 3), True),
    "log": (lambda x: x.log(), (0.1, 5), True),
    "log2": (lambda x: x.log2(), (0.1, 5), True),
    "log10": (lambda x: x.log10(), (0.1, 5), True),
    "log1p": (lambda x: x.log1p(), (-0.9, 5), True),
    "expm1": (lambda x: x.expm1(), (-3, 3), True),
    "sqrt": (lambda x: x.sqrt(), (0.1, 5), True),
    "rsqrt": (lambda x: x.rsqrt(), (0.1, 5), True),
    "sin": (lambda x: x.sin(), (-3, 3), True),
    "cos": (lambda x: x.cos(), (-3, 3), True),
    "tan": (lambda x: x.tan(), (-1.2, 1.2), False),
    "asin": (lambda x: x.asin(), (-0.95, 0.95), False),
    "acos": (lambda x: x.acos(), (-0.95, 0.95), False),
    "atan": (lambda x: x.atan(), (-3, 3), False),
    "sinh": (lambda x: x.sinh(), (-3, 3), False),
    "cosh": (lambda x: x.cosh(), (-3, 3), False),
    "tanh": (lambda x: x.tanh(), (-3, 3), True),
    "sigmoid": (lambda x: x.sigmoid(), (-6, 6), True),
    "relu": (lambda x: x.relu(), (-3, 3), True),
    "silu": (lambda x: F.silu(x), (-3, 3), True),
    "gelu": (lambda x: F.gelu(x), (-3, 3), False),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), (-3, 3), True),
    "erf": (lambda x: x.erf(), (-3, 3), False),
    "floor": (lambda x: x.floor(), (-3, 3), True),
    "ceil": (lambda x: x.ceil(), (-3, 3), True),
    "trunc": (lambda x: x.trunc(), (-3, 3), True),
    "round": (lambda x: x.round(), (-3, 3), True),
    "round_2": (lambda x: x.round(decimals=2), (-3, 3), True),
    "round_-1": (lambda x: x.round(decimals=-1), (-30, 30), True),
    "reciprocal": (lambda x: x.reciprocal(), (0.2, 3), True),
    "abs": (lambda x: x.abs(), (-3, 3), True),
    "neg": (lambda x: -x, (-3, 3), True),
    "positive": (lambda x: +x, (-3, 3), True),
    "sign": (lambda x: x.sign(), (-3, 3), True),
    "nan_to_num": (lambda x: x.nan_to_num(), (-3, 3), True),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), (-3, 3), True),
    "elu": (lambda x: F.elu(x, alpha=0.7), (-3, 3), True),
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 2.0), (-3, 3), True),
    "relu6": (lambda x: F.relu6(x), (-3, 8), True),
}


@pytest.mark.parametrize("opset", [13, 17])
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_float32(name, opset):
    fn, (lo, hi), _ = UNARY[name]
    check_export(fn, (uniform((2, 3, 4), lo, hi),), opset_version=opset)


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_float64(name):
    fn, (lo, hi), ort_runs = UNARY[name]
    x = uniform((3, 4), lo, hi, np.float64)
    if ort_runs:
        check_export(fn, (x,))
    else:   # onnxruntime has no float64 kernel for an op it uses: check the model only
        model = export_only(fn, (x,))
        assert onnx.helper.tensor_dtype_to_np_dtype(
            model.graph.output[0].type.tensor_type.elem_type) == np.float64


@pytest.mark.parametrize("name", ["exp", "exp2", "log2", "sqrt", "rsqrt", "sin", "tanh",
                                  "sigmoid", "reciprocal", "log1p", "expm1"])
def test_float_math_promotes_integers(name):
    fn = UNARY[name][0]
    m = check_export(fn, (ints((3, 4), 1, 6),))
    assert m.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT


@pytest.mark.parametrize("name", ["relu", "abs", "neg", "positive", "sign", "floor", "ceil",
                                  "trunc", "round", "nan_to_num", "hardtanh", "relu6"])
def test_dtype_keeping_ops_on_int64(name):
    m = check_export(UNARY[name][0], (ints((3, 4)),))
    assert m.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.INT64


@pytest.mark.parametrize("name", ["log1p", "expm1", "sign", "nan_to_num", "floor", "ceil",
                                  "trunc", "round", "round_2", "relu", "abs", "neg",
                                  "sigmoid", "exp2", "log2", "rsqrt", "leaky_relu", "elu",
                                  "hardtanh", "relu6", "silu"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_special_values(name, dtype):
    """nan, +-inf, +-0, tiny values (log1p/expm1 keep their relative precision) and
    halves (round is half to even)."""
    fn = UNARY[name][0]
    x = t(SPECIAL, dtype)
    check_export(fn, (x,))
    if name in ("log1p", "expm1"):   # relative precision near 0, beyond the 1e-5 atol
        from .._check import run_onnx
        tiny = t(np.array([1e-10, -1e-10, 3e-7, -3e-7, 1e-4]), dtype)
        got = run_onnx(export_only(fn, (tiny,)), [tiny.numpy()])[0]
        np.testing.assert_allclose(got, fn(tiny).numpy(), rtol=1e-6 if dtype == np.float32
                                   else 1e-13)


def test_unary_ops_map_to_single_onnx_ops():
    x = uniform((3, 4))
    assert ops_in(check_export(lambda x: x.relu(), (x,))) == ["Relu"]
    assert ops_in(check_export(lambda x: x.exp(), (x,))) == ["Exp"]
    assert ops_in(check_export(lambda x: F.leaky_relu(x, 0.1), (x,))) == ["LeakyRelu"]
    assert ops_in(check_export(lambda x: F.elu(x), (x,))) == ["Elu"]
    assert ops_in(check_export(lambda x: x.sigmoid(), (ints((3,)),))) == ["Cast", "Sigmoid"]
    assert "Clip" in ops_in(check_export(lambda x: F.relu6(x), (x,)))
    assert ops_in(check_export(lambda x: +x, (x,))) == []


def test_nan_to_num_values_and_integers():
    x = t(SPECIAL, np.float32)
    check_export(lambda x: x.nan_to_num(nan=1.5, posinf=7.0, neginf=-7.0), (x,))
    check_export(lambda x: x.nan_to_num(posinf=1e300), (x,))            # becomes inf
    check_export(lambda x: x.nan_to_num(nan=-2.0), (t(SPECIAL, np.float64),))
    assert ops_in(check_export(lambda x: x.nan_to_num(), (ints((4,)),))) == []


@pytest.mark.parametrize("opset", [13, 17, 20])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate, opset):
    x = uniform((2, 5), -5, 5)
    m = check_export(lambda x: F.gelu(x, approximate=approximate), (x,), opset_version=opset)
    if opset >= 20:
        assert ops_in(m) == ["Gelu"]
        assert m.graph.node[0].attribute[0].s.decode() == approximate
    else:
        assert ("Erf" if approximate == "none" else "Tanh") in ops_in(m)
        assert "Gelu" not in ops_in(m)


def test_gelu_float64_opset20_checks():
    # onnxruntime's Gelu (its Erf) has no float64 kernel: check the model only
    m = export_only(lambda x: F.gelu(x), (uniform((3,), dtype=np.float64),), opset=20)
    assert ops_in(m) == ["Gelu"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_parameters(dtype):
    x = t(np.concatenate([SPECIAL, _rng.uniform(-4, 4, 12)]), dtype)
    check_export(lambda x: F.leaky_relu(x, 0.013), (x,))
    check_export(lambda x: F.elu(x, alpha=1.3), (x,))
    check_export(lambda x: F.hardtanh(x, -0.25, 0.75), (x,))
    check_export(lambda x: F.hardtanh(x), (x,), opset_version=13)


def test_hardtanh_integer_bounds():
    check_export(lambda x: F.hardtanh(x, -2.5, 3.9), (ints((4, 3)),))
    check_export(lambda x: F.relu6(x), (ints((4, 3), -3, 10),))


def test_neg_uint8_wraps():
    m = check_export(lambda x: -x, (t([0, 1, 200, 255], np.uint8),))
    assert "Neg" not in ops_in(m)


def test_sign_bool_and_int():
    check_export(lambda x: (x > 0).sign(), (uniform((5,)),))
    check_export(lambda x: x.sign(), (ints((5,)),))


# ---- binary arithmetic -------------------------------------------------------------------

BINARY = {
    "add": lambda a, b: a + b,
    "add_alpha": lambda a, b: E.add(a, b, alpha=2),
    "sub": lambda a, b: a - b,
    "sub_alpha": lambda a, b: E.sub(a, b, alpha=3),
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "true_divide": lambda a, b: E.true_divide(a, b),
    "div_floor": lambda a, b: E.div(a, b, rounding_mode="floor"),
    "div_trunc": lambda a, b: E.div(a, b, rounding_mode="trunc"),
    "floor_divide": lambda a, b: a // b,
    "remainder": lambda a, b: a % b,
    "fmod": lambda a, b: E.fmod(a, b),
    "pow": lambda a, b: a ** b,
    "atan2": lambda a, b: E.atan2(a, b),
    "maximum": lambda a, b: E.maximum(a, b),
    "minimum": lambda a, b: E.minimum(a, b),
    "max_other": lambda a, b: E.max(a, b),
    "min_other": lambda a, b: E.min(a, b),
}
_NONZERO = ("div", "true_divide", "div_floor", "div_trunc", "floor_divide", "remainder",
            "fmod")


def _operands(name, dtype):
    """(2, 3, 4) against (4,): operands of different ranks; divisors nonzero."""
    if dtype == np.int64:
        a = ints((2, 3, 4), -20, 21)
        b = t(_rng.integers(1, 6, 4) * np.array([1, -1, 1, -1]))
        if name == "pow":
            a, b = ints((2, 3, 4), -4, 5), t([0, 1, 3, -2])
        return a, b
    a = uniform((2, 3, 4), -5, 5, dtype)
    b = uniform((4,), -3, 3, dtype)
    if name in _NONZERO:
        b = t(np.array([0.7, -1.3, 2.9, -0.1]), dtype)
    if name == "pow":
        a = uniform((2, 3, 4), 0.1, 3, dtype)
    return a, b


def _ort_runs(name, dtype):
    return not (name == "atan2" and dtype == np.float64)   # Atan: float32 only in ORT


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_tensors_broadcast(name, dtype):
    a, b = _operands(name, dtype)
    fn = BINARY[name]
    if _ort_runs(name, dtype):
        check_export(fn, (a, b))
    else:
        export_only(fn, (a, b))


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_opset13(name):
    a, b = _operands(name, np.float32)
    check_export(BINARY[name], (b, a), opset_version=13)   # rank 1 against rank 3


def _number_for(name, dtype):
    if dtype == np.int64:
        return -3 if name != "pow" else 3
    return 2.5 if name != "pow" else 1.7


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
@pytest.mark.parametrize("name", [n for n in BINARY if n not in ("max_other", "min_other")])
def test_binary_with_numbers(name, dtype):
    """Python numbers on either side (``2 ** x``, ``1 / x``); ember.max(x, 2) would be
    max.dim, so max.other / min.other take tensors only. As in PyTorch, fmod, atan2,
    maximum and minimum take a number as ``other`` only (a number ``self`` raises)."""
    a, _ = _operands(name, dtype)
    n = _number_for(name, dtype)
    fn = BINARY[name]
    check_export(lambda a: fn(a, n), (a,))
    if name in ("fmod", "atan2", "maximum", "minimum"):
        return
    if name == "pow" and dtype == np.int64:
        a = t(np.abs(a.numpy()))                 # 3 ** a with a >= 0
    if name in _NONZERO:
        a = t(np.where(a.numpy() == 0, 1, a.numpy()).astype(a.numpy().dtype))
    check_export(lambda a: fn(n, a), (a,))


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_with_0d_tensor(name):
    """A 0-d tensor made inside the model takes part in promotion as a lower-priority
    operand (float32 * a float64 0-d tensor stays float32)."""
    a, _ = _operands(name, np.float32)
    fn = BINARY[name]
    check_export(lambda a: fn(a, E.tensor(1.75, dtype=E.float64)), (a,))
    check_export(lambda a: fn(a, E.tensor(2)), (a,))


def test_rsub_traces_as_itself():
    x = uniform((3,))
    graph = E.jit.trace(lambda x: 2 - x, (x,), check_trace=False).graph
    assert "ember::rsub" in [n.kind for n in graph.nodes()]
    check_export(lambda x: 2 - x, (x,))
    check_export(lambda x: E.rsub(x, 0.5, alpha=2), (x,))
    check_export(lambda x: 7 - x, (ints((3,)),))


# ---- promotion --------------------------------------------------------------------------

def test_promotion_int_with_float_number_and_true_division():
    xi = ints((3, 4))
    for fn in (lambda x: x + 2.5, lambda x: x * 0.5, lambda x: x / 2,
               lambda x: x / x.abs().clamp(1), lambda x: 1 / x.abs().clamp(1),
               lambda x: x ** 2.0, lambda x: x - 0.25):
        m = check_export(fn, (xi,))
        assert m.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT


def test_promotion_between_tensors():
    xi, xf = ints((3, 4)), uniform((4,))
    check_export(lambda a, b: a + b, (xi, xf))                         # -> float32
    check_export(lambda a, b: a * b, (xf, uniform((3, 1), dtype=np.float64)))   # -> float64
    check_export(lambda a, b: E.maximum(a, b), (xi, t([1, 2, 3, 4], np.int32)))
    check_export(lambda a, b: a < b, (xi, xf))
    check_export(lambda a, b: E.where(a > 0, a, b), (xi, xf))


def test_wrapped_numbers_wrap_like_ember():
    x8 = t([-100, 0, 5, 100], np.int8)
    check_export(lambda x: x + 1000, (x8,))                            # adds -24
    check_export(lambda x: x == -1, (t([0, 1, 255], np.uint8),))       # compares with 255
    check_export(lambda x: x * 1e39, (t([1.0, -2.0, 0.5], np.float32),))  # -> +-inf


def test_bool_arithmetic():
    a = t([True, False, True, False])
    b = t([[True], [False]])
    assert "Or" in ops_in(check_export(lambda a, b: a + b, (a, b)))
    assert "And" in ops_in(check_export(lambda a, b: a * b, (a, b)))
    check_export(lambda a, b: E.add(a, b, alpha=False), (a, b))
    check_export(lambda a, b: E.maximum(a, b), (a, b))
    check_export(lambda a, b: E.minimum(a, b), (a, b))
    check_export(lambda a: a + 1, (a,))                                # -> int64
    check_export(lambda a: a / 2, (a,))                                # -> float32


# ---- division, remainder, pow, atan2 at the edges ----------------------------------------

def _pairs(dtype):
    a = np.array([1.0, -1.0, 5.0, -5.0, 0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 3.0, 7.5,
                  -7.5, np.nan, 2.0, 0.3, -0.3, 1e30])
    b = np.array([0.1, 0.1, 0.0, 0.0, 0.0, 3.0, 1.0, 1.0, np.inf, np.inf, -np.inf, 2.0,
                  -2.0, 1.0, np.nan, -0.1, 0.1, 3e-30])
    return t(a, dtype), t(b, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["div", "div_floor", "div_trunc", "floor_divide",
                                  "remainder", "fmod", "pow", "maximum", "minimum"])
def test_float_division_edges(name, dtype):
    """Python's divmod semantics (1.0 // 0.1 == 9.0; -1.0 % inf == inf), division by 0,
    nan and infinities, as ember."""
    check_export(BINARY[name], _pairs(dtype))


def test_signed_zeros_of_floor_divide_remainder_atan2():
    """Zero results carry numpy's sign (floor_divide: a / b's; remainder: b's), and
    atan2 tells -0.0 from 0.0; check_export's allclose would not see the sign. Run in
    onnx's reference evaluator: onnxruntime's Where returns +0.0 for a selected -0.0."""
    from onnx.reference import ReferenceEvaluator
    a = t([0.0, -0.0, 0.0, -0.0, 3.0, -3.0, 6.0, -6.0, 0.5, -0.5], np.float32)
    b = t([3.0, 3.0, -3.0, -3.0, 3.0, 3.0, -3.0, -3.0, 7.0, 7.0], np.float32)
    for fn in (lambda a, b: a // b, lambda a, b: a % b, lambda a, b: E.atan2(a, b)):
        model = export_only(fn, (a, b))
        got = ReferenceEvaluator(model).run(None, {"input_0": a.numpy(),
                                                   "input_1": b.numpy()})[0]
        want = fn(a, b).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8])
def test_integer_division_signs(dtype):
    a = t(np.array([7, -7, 7, -7, 0, 6, -6, 1, -1, 127, -128]), dtype)
    b = t(np.array([2, 2, -2, -2, 3, 3, -3, 5, 5, 3, 3]), dtype)
    for name in ("div_floor", "div_trunc", "floor_divide", "remainder", "fmod"):
        check_export(BINARY[name], (a, b))


def test_remainder_integer_is_mod():
    m = check_export(lambda a, b: a % b, (ints((5,)), t([3, -3, 4, -4, 7])))
    assert ops_in(m) == ["Mod"] and m.graph.node[0].attribute[0].i == 0


def test_atan2_quadrants_and_zeros():
    y = np.array([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, 1.0, -1.0, 2.0, -2.0, np.inf, np.inf,
                  -np.inf, -np.inf, np.inf, 1.0, np.nan, 1.0, 0.0, -0.0, 3.0, -3.0])
    x = np.array([0.0, 0.0, -0.0, -0.0, 0.0, 0.0, -0.0, -0.0, -1.0, -1.0, np.inf, -np.inf,
                  np.inf, -np.inf, 1.0, np.inf, 1.0, np.nan, -2.0, -2.0, 1e-30, -1e-30])
    m = check_export(lambda y, x: E.atan2(y, x), (t(y, np.float32), t(x, np.float32)))
    assert "Atan" in ops_in(m)
    check_export(lambda y, x: E.atan2(y, x), (ints((3, 4)), ints((4,))))   # -> float32
    export_only(lambda y, x: E.atan2(y, x), (t(y), t(x)))                  # float64


def test_pow_variants():
    x = uniform((3, 4), 0.1, 2)
    check_export(lambda x: x ** 2, (x,))
    check_export(lambda x: x ** 0.5, (x,))
    check_export(lambda x: x ** -1.5, (x,))
    check_export(lambda x: 2 ** x, (x,))
    check_export(lambda x: x ** E.tensor(3.0), (x,))
    xi = ints((3, 4), -5, 6)
    for n in (0, 1, 2, 3, 7):
        check_export(lambda x: x ** n, (xi,))
    check_export(lambda x: (x > 0) ** 2, (xi,))                         # bool ** 2 -> int64
    check_export(lambda x: x ** 2.5, (xi.abs(),))                       # -> float32


def test_int_pow_by_constant_wraps_like_ember():
    x = t([3, -3, 7, 2**20], np.int64)
    m = check_export(lambda x: x ** 50, (x,))
    assert "Pow" not in ops_in(m)                # exact repeated squaring
    check_export(lambda x: x ** 9, (t([3, -3, 100, 127], np.int8),))


def test_int_pow_by_tensor_negative_exponents():
    base = t([1, -1, -1, 2, -2, 0, 5, 3, 1])
    exp = t([-3, -3, -2, -1, -2, 0, 2, 0, 0])
    check_export(lambda a, b: a ** b, (base, exp))
    check_export(lambda a, b: a ** b, (t(base.numpy(), np.int8), t(exp.numpy(), np.int8)))
    check_export(lambda a, b: a ** b, (t([1, 2, 3], np.uint8), t([3, 2, 4], np.uint8)))


# ---- lerp, where, masked_fill, clamp ------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weight", [0.3, 0.7, 1.0, 0.0, -0.5])
def test_lerp_scalar(weight, dtype):
    check_export(lambda a, b: a.lerp(b, weight),
                 (uniform((2, 3), dtype=dtype), uniform((3,), dtype=dtype)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lerp_tensor(dtype):
    a, b = uniform((2, 3, 4), dtype=dtype), uniform((4,), dtype=dtype)
    w = t(np.array([0.0, 0.3, 0.5, 1.0]), dtype)
    check_export(lambda a, b, w: E.lerp(a, b, w), (a, b, w))
    check_export(lambda a, b: E.lerp(a, b, E.tensor(0.7)), (a, b), opset_version=13)


def test_where():
    x, y = uniform((3, 4)), uniform((4,))
    xi = ints((3, 4))
    check_export(lambda x, y: E.where(x > 0, x, y), (x, y))
    check_export(lambda x: E.where(x > 0, x, 0.0), (x,))
    check_export(lambda x: E.where(x > 0, 1, 2.5), (x,))                 # -> float32
    check_export(lambda x: E.where(x > 0, x, 2.5), (xi,))                # int -> float32
    check_export(lambda x: E.where(x > 0, x, -1), (xi,))
    check_export(lambda x: E.where(x > 0, x > 3, x < -3), (xi,))         # bool
    check_export(lambda x, y: E.where(y > 0, x, y), (x.double(), y), opset_version=13)


def test_masked_fill():
    x, xi = uniform((3, 4)), ints((3, 4))
    check_export(lambda x: x.masked_fill(x > 0.5, -1.5), (x,))
    check_export(lambda x: x.masked_fill(x > 0.5, E.tensor(2.0)), (x,))
    check_export(lambda x: x.masked_fill(x > 0, 7), (xi,))
    check_export(lambda x, m: x.masked_fill(m > 0, 0.0), (x, uniform((4,))))
    check_export(lambda x, m: x.masked_fill(m > 0, 0.0), (uniform((4,)), x))  # grows x
    check_export(lambda x: x.masked_fill(x > 0.5, float("-inf")), (x.double(),),
                 opset_version=13)
    check_export(lambda x: (x > 0).masked_fill(x > 1, False), (x,))    # bool


def test_clamp_numbers_none_and_tensors():
    x = t(np.concatenate([SPECIAL, _rng.uniform(-3, 3, 8)]), np.float32)
    assert ops_in(check_export(lambda x: x.clamp(-0.5, 0.5), (x,)))[-1] == "Clip"
    check_export(lambda x: x.clamp(min=0.1), (x,))                      # inf stays inf
    check_export(lambda x: x.clamp(max=0.1), (x,))
    check_export(lambda x: x.clamp(max=-3), (x.double(),))
    check_export(lambda x: x.clamp(0.5, -0.5), (x,))                    # min > max -> max
    check_export(lambda x: x.clamp(x * 0.5, 1.0), (x,))
    check_export(lambda x, lo, hi: x.clamp(lo, hi), (uniform((3, 4)), uniform((4,), -3, 0),
                                                     uniform((3, 1), 0, 3)))
    check_export(lambda x, lo: x.clamp(min=lo), (x.double(), t([0.0] * 28)), opset_version=13)
    check_export(lambda x: x.clamp_min(0.2), (x,))
    check_export(lambda x: x.clamp_max(0.2), (x,))
    check_export(lambda x, lo: x.clamp_min(lo), (uniform((3, 4)), uniform((4,))))
    check_export(lambda x, hi: x.clamp_max(hi), (uniform((3, 4)), uniform((4,))))


def test_clamp_integers():
    xi = ints((3, 4))
    check_export(lambda x: x.clamp(-2, 3), (xi,))
    m = check_export(lambda x: x.clamp(0.5), (xi,))                     # -> float32
    assert m.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    check_export(lambda x, lo: x.clamp(min=lo), (xi, ints((4,))))


# ---- comparisons, logical, bitwise -------------------------------------------------------

COMPARE = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
           "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}


def _compare_operands(dtype):
    if dtype == np.bool_:
        return t(_rng.random((3, 4)) > 0.5), t(_rng.random(4) > 0.5)
    if dtype == np.int64:
        return ints((3, 4), -2, 3), ints((4,), -2, 3)
    a = np.round(_rng.uniform(-2, 2, (3, 4))).astype(dtype)
    a[0, :2] = np.nan
    return t(a), t(np.array([0.0, 1.0, np.nan, -1.0]), dtype)


@pytest.mark.parametrize("opset", [13, 17])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_])
@pytest.mark.parametrize("name", list(COMPARE))
def test_comparisons(name, dtype, opset):
    a, b = _compare_operands(dtype)
    check_export(COMPARE[name], (a, b), opset_version=opset)


@pytest.mark.parametrize("name", list(COMPARE))
def test_comparisons_with_numbers(name):
    fn = COMPARE[name]
    check_export(lambda a: fn(a, 1), (ints((3, 4), -2, 3),))
    check_export(lambda a: fn(a, 0.5), (ints((3, 4), -2, 3),))          # compares in float
    check_export(lambda a: fn(a, 0.5), (uniform((3, 4)),))
    check_export(lambda a: fn(a, True), (t(_rng.random(5) > 0.5),))


LOGICAL = {"and": lambda a, b: E.logical_and(a, b), "or": lambda a, b: E.logical_or(a, b),
           "xor": lambda a, b: E.logical_xor(a, b)}


@pytest.mark.parametrize("opset", [13, 17])
@pytest.mark.parametrize("name", list(LOGICAL))
def test_logical(name, opset):
    b1, b2 = t(_rng.random((3, 4)) > 0.5), t(_rng.random(4) > 0.5)
    f = t(np.array([0.0, np.nan, -1.5, 0.0]), np.float32)             # nan counts as True
    i = t(np.array([[0, 3], [-1, 0]]))
    fn = LOGICAL[name]
    check_export(fn, (b1, b2), opset_version=opset)
    check_export(fn, (f, b1), opset_version=opset)
    check_export(fn, (i, f.double()[:2]), opset_version=opset)


def test_logical_not():
    check_export(lambda a: E.logical_not(a), (t(_rng.random(5) > 0.5),))
    check_export(lambda a: E.logical_not(a), (t([0.0, np.nan, 2.0, -0.0], np.float32),))
    check_export(lambda a: E.logical_not(a), (ints((5,)),), opset_version=13)


BITWISE = {"and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b}


@pytest.mark.parametrize("opset", [18, 20])
@pytest.mark.parametrize("name", list(BITWISE))
def test_bitwise_integers(name, opset):
    fn = BITWISE[name]
    m = check_export(fn, (ints((3, 4), -100, 100), ints((4,), -100, 100)), opset_version=opset)
    assert f"Bitwise{name.capitalize()}" in ops_in(m)
    check_export(lambda a: fn(a, 6), (ints((5,)),), opset_version=opset)
    check_export(fn, (t([1, 200, 255], np.uint8), t([3, 15, 128], np.uint8)), opset_version=opset)


@pytest.mark.parametrize("opset", [13, 17, 18])
@pytest.mark.parametrize("name", list(BITWISE))
def test_bitwise_bools(name, opset):
    m = check_export(BITWISE[name], (t(_rng.random((3, 4)) > 0.5), t(_rng.random(4) > 0.5)),
                     opset_version=opset)
    assert ops_in(m) == [name.capitalize()]


def test_bitwise_not():
    assert ops_in(check_export(lambda a: ~a, (ints((5,)),), opset_version=18)) == ["BitwiseNot"]
    assert ops_in(check_export(lambda a: ~a, (t([True, False]),), opset_version=13)) == ["Not"]


@pytest.mark.parametrize("opset", [13, 17])
def test_shifts_uint8(opset):
    a = t([1, 2, 255, 128, 77, 3], np.uint8)
    b = t([0, 1, 7, 8, 9, 200], np.uint8)          # counts of 8 or more give 0
    for fn in (lambda a, b: a << b, lambda a, b: a >> b,
               lambda a, b: E.bitwise_left_shift(a, b), lambda a, b: E.bitwise_right_shift(a, b)):
        assert "BitShift" in ops_in(check_export(fn, (a, b), opset_version=opset))
    check_export(lambda a: a << 3, (a,), opset_version=opset)
    check_export(lambda a: a >> 300, (a,), opset_version=opset)        # 300 wraps to 44


# ---- float16 / bfloat16 -------------------------------------------------------------------

@pytest.mark.parametrize("opset", [13, 17])
@pytest.mark.parametrize("dtype", [E.float16, E.bfloat16])
def test_half_precision_models_check(dtype, opset):
    """Ops ONNX does not define on a half type at an opset (Sin on bfloat16, IsInf before
    20, Where on bfloat16 before 16) compute in float32; the checker accepts every model.
    onnxruntime has few half kernels on CPU, so these are checked, not run."""
    a, b = uniform((2, 3, 4)).to(dtype), t(np.array([0.7, -1.3, 2.9, -0.1])).to(dtype)
    fns = [fn for fn, _, _ in UNARY.values()] + list(BINARY.values()) + \
        list(COMPARE.values()) + [lambda a, b: E.where(a > 0, a, b),
                                  lambda a, b: a.lerp(b, 0.3), lambda a, b: a.lerp(b, b),
                                  lambda a, b: a.clamp(b, 1.0), lambda a, b: a.clamp(0, 1),
                                  lambda a, b: a.masked_fill(b > 0, 1.0)]
    for fn in fns:
        arity = fn.__code__.co_argcount
        model = export_only(fn, (a, b)[:arity], opset)
        elem = model.graph.output[0].type.tensor_type.elem_type
        assert elem in (onnx.TensorProto.BOOL, eo.dtypes.to_onnx(dtype))


# ---- dynamic batch ------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda x, y: E.add(x, y, alpha=2),
    lambda x, y: x // y,
    lambda x, y: E.atan2(x, y),
    lambda x, y: E.where(x > y, x, y).masked_fill(x < -1, 0.0),
    lambda x, y: x.clamp(y, 2.0).lerp(x, 0.3),
    lambda x, y: F.gelu(x * y).log1p().nan_to_num() > 0.1,
], ids=["add", "floor_divide", "atan2", "where", "clamp_lerp", "gelu_chain"])
def test_dynamic_batch(fn):
    y = t(np.array([0.7, -1.3, 2.9, -0.1]), np.float32)
    check_export(fn, (uniform((2, 3, 4)), y), dynamic_axes={0: [0]},
                 more_inputs=(uniform((5, 3, 4)), y))


# ---- g.fail paths -------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [lambda a: a & 3, lambda a: a | a, lambda a: a ^ a,
                                lambda a: ~a], ids=["and", "or", "xor", "not"])
def test_bitwise_integers_before_opset18_fail(fn):
    with pytest.raises(eo.OnnxExportError, match="opset 18"):
        eo.export(fn, (ints((3,)),), None, opset_version=17)


@pytest.mark.parametrize("dtype", [np.int64, np.int8, np.int32])
def test_signed_shifts_fail(dtype):
    for fn in (lambda a: a << 1, lambda a: a >> 1):
        with pytest.raises(eo.OnnxExportError, match="unsigned integers only"):
            eo.export(fn, (ints((3,), dtype=dtype),), None)
    with pytest.raises(eo.OnnxExportError, match="unsigned"):     # uint8 << int64 is int64
        eo.export(lambda a, b: a << b, (t([1], np.uint8), ints((1,), 0, 3)), None)


def _bound(opset=17, out_dtype=E.float32):
    """A GraphContext bound to no node, for the symbolics' own argument checks (ember
    refuses these arguments before tracing, so no traced model reaches them)."""
    g = GraphContext(opset)
    g._bind(None, (OnnxValue("", out_dtype, (3,)),), ())
    return g, OnnxValue("x", E.float32, (3,))


@pytest.mark.parametrize("call, match", [
    (lambda g, x: arithmetic.div(g, x, x, "round"), "rounding_mode"),
    (lambda g, x: unary.gelu(g, x, "erf"), "approximate"),
    (lambda g, x: unary.gelu_20(g, x, "erf"), "approximate"),
    (lambda g, x: unary.clamp(g, x, None, None), "min and max"),
    (lambda g, x: unary.hardtanh(g, x, 2.0, 1.0), "min_val"),
    (lambda g, x: unary.round_(g, OnnxValue("i", E.int64, (3,)), 2), "decimals"),
], ids=["div", "gelu", "gelu_20", "clamp", "hardtanh", "round"])
def test_symbolic_argument_failures(call, match):
    g, x = _bound()
    with pytest.raises(eo.OnnxExportError, match=match):
        call(g, x)
