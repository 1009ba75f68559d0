"""ONNX export of ember's elementwise arithmetic (ember/onnx/symbolics/arithmetic.py, with
the shared _operands.py): each symbolic exported, checked and run in onnxruntime against
ember, in float32, float64, int64 and bool where onnxruntime has the kernels, at opsets 13
and 17, with broadcasting, Python-number and 0-d tensor operands, type promotion, special
values (nan, +-inf, -0.0) and a dynamic batch; and the float16/bfloat16 models of every
elementwise module (_operands.py's, checked only)."""
from __future__ import annotations

import numpy as np
import onnx
import pytest

import ember as E
import ember.onnx as eo
import ember.nn.functional as F

from .._check import check_export, ops_in
from ._shared import COMPARE, UNARY, _rng, export_only, ints, t, uniform

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


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


# ---- lerp, where, masked_fill -------------------------------------------------------------

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


# ---- addcmul ------------------------------------------------------------------------------

@pytest.mark.parametrize("opset", [13, 17])
@pytest.mark.parametrize("value", [1, 0.5, -2.7])
@pytest.mark.parametrize("dtypes", [(np.float32,) * 3, (np.float64,) * 3, (np.int64,) * 3,
                                    (np.float32, np.int64, np.float64), (np.int32,) * 3])
def test_addcmul(dtypes, value, opset):
    """self + value * (t1 * t2): broadcasting, promotion, value truncated for integers."""
    shapes = [(3, 4), (4,), (3, 1)]
    args = [uniform(s, dtype=d) if np.dtype(d).kind == "f" else ints(s, dtype=d)
            for s, d in zip(shapes, dtypes)]
    fn = lambda a, b, c: E.addcmul(a, b, c, value=value)
    m = check_export(fn, args, opset_version=opset)
    cast = np.array(value).astype(fn(*args).numpy().dtype)     # as ember casts value
    assert ops_in(m).count("Mul") == (1 if cast == 1 else 2)
    check_export(fn, args, opset_version=opset, dynamic_axes={0: [0], 2: [0]},
                 more_inputs=[uniform((5, 4)).to(args[0].dtype), args[1],
                              uniform((5, 1)).to(args[2].dtype)])


def test_addcmul_special_values():
    x = t(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5]), np.float32)
    check_export(lambda a: E.addcmul(a, a, a, value=0.25), (x,))
    check_export(lambda a: a.addcmul(a, a), (x.double(),))


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
                                  lambda a, b: a.masked_fill(b > 0, 1.0),
                                  lambda a, b: E.addcmul(a, a, b, value=0.5)]
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
