"""ONNX export of ember's unary elementwise ops (ember/onnx/symbolics/unary.py, with the
shared _operands.py): each symbolic exported, checked and run in onnxruntime against
ember, in float32, float64, int64 and bool where onnxruntime has the kernels, at opsets 13
and 17 (20 where the symbolics branch), with tensor and Python-number bounds, special
values (nan, +-inf, -0.0, halves), and every g.fail path (arithmetic's ``div`` too)."""
from __future__ import annotations

import numpy as np
import onnx
import pytest

import ember as E
import ember.onnx as eo
import ember.nn.functional as F
from ember.onnx.context import GraphContext, OnnxValue
from ember.onnx.symbolics import arithmetic, unary

from .._check import check_export, ops_in
from ._shared import UNARY, _rng, export_only, ints, t, uniform

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 1e-8, -1e-8, 0.5,
                    -0.5, 1.5, 2.5, -2.5, 1.0, -1.0, 3.7, -3.7, 100.0, -100.0])


# ---- unary math ---------------------------------------------------------------------------

# UNARY (in _shared.py): name -> (function, input range, whether onnxruntime
# runs it in float64)


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
                                  "sigmoid", "reciprocal", "log1p", "expm1", "asinh", "erfc"])
def test_float_math_promotes_integers(name):
    fn = UNARY[name][0]
    m = check_export(fn, (ints((3, 4), 1, 6),))
    assert m.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT


@pytest.mark.parametrize("name", ["relu", "abs", "neg", "positive", "sign", "floor", "ceil",
                                  "trunc", "round", "nan_to_num", "hardtanh", "relu6",
                                  "square"])
def test_dtype_keeping_ops_on_int64(name):
    m = check_export(UNARY[name][0], (ints((3, 4)),))
    assert m.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.INT64


@pytest.mark.parametrize("name", ["log1p", "expm1", "sign", "nan_to_num", "floor", "ceil",
                                  "trunc", "round", "round_2", "relu", "abs", "neg",
                                  "sigmoid", "exp2", "log2", "rsqrt", "leaky_relu", "elu",
                                  "hardtanh", "relu6", "silu", "square"])
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


def test_inverse_hyperbolic_and_erfc_map_to_onnx_ops():
    x = t(np.array([-0.9, -0.5, 0.0, 0.3, 0.99]), np.float32)
    assert ops_in(check_export(lambda x: x.asinh(), (x,))) == ["Asinh"]
    assert ops_in(check_export(lambda x: x.atanh(), (x,))) == ["Atanh"]
    assert ops_in(check_export(lambda x: (x + 2).acosh(), (x,)))[-1] == "Acosh"
    # 1 - Erf: within 1e-7 absolutely, also in the tail and at the special values
    special = t(np.concatenate([SPECIAL, [4.0, -4.0, 6.0, 10.0]]), np.float32)
    assert ops_in(check_export(lambda x: x.erfc(), (special,))) == ["Constant", "Erf", "Sub"]
    m = check_export(lambda x: x.square(), (t([True, False]),))   # bool squares as int64
    assert m.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.INT64


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


# ---- clamp --------------------------------------------------------------------------------

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


# ---- g.fail paths -------------------------------------------------------------------------

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
