"""ONNX export of the activations of ``ember/onnx/symbolics/activation.py``: each against
onnxruntime in float32 (the ONNX op) and float64 (ember's formula composed), at opsets
13, 17 and 18 (where hardswish and mish change), on special values (nan, +-inf, the kinks
at +-3, the softplus threshold), with parameters, dynamic batches, float16/bfloat16
models checked, and the g.fail paths."""
from __future__ import annotations

import numpy as np
import onnx
import pytest

import ember as E
import ember.nn as nn
import ember.nn.functional as F
import ember.onnx as eo
from ember.onnx.context import GraphContext, OnnxValue
from ember.onnx.symbolics import activation

from .._check import check_export, ops_in
from ._shared import _rng, export_only, ints, t, uniform

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 1e-8, -1e-8, 0.5, -0.5,
                    2.5, -2.5, 3.0, -3.0, 3.5, -3.5, 6.0, 10.0, 15.0, 19.9, 20.0, 20.5, 30.0,
                    -30.0, 50.0, -50.0, 100.0, -100.0])

# name -> (function, the ONNX op it is in float32 at opset 18, or None when composed)
ACTIVATIONS = {
    "selu": (lambda x: F.selu(x), "Selu"),
    "celu": (lambda x: F.celu(x), "Celu"),
    "celu_0.4": (lambda x: F.celu(x, 0.4), "Celu"),
    "threshold": (lambda x: F.threshold(x, 0.25, -7.0), None),
    "hardsigmoid": (lambda x: F.hardsigmoid(x), "HardSigmoid"),
    "hardswish": (lambda x: F.hardswish(x), "HardSwish"),
    "softsign": (lambda x: F.softsign(x), "Softsign"),
    "softplus": (lambda x: F.softplus(x), "Softplus"),
    "softplus_beta": (lambda x: F.softplus(x, beta=2.0), None),
    "softplus_threshold": (lambda x: F.softplus(x, threshold=5.0), None),
    "softplus_negative": (lambda x: F.softplus(x, beta=-0.5, threshold=-2.0), None),
    "mish": (lambda x: F.mish(x), "Mish"),
    "log_sigmoid": (lambda x: F.logsigmoid(x), None),
    "glu": (lambda x: F.glu(x, 0), None),
}


@pytest.mark.parametrize("opset", [13, 17, 18])
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_float32(name, opset):
    fn, op_type = ACTIVATIONS[name]
    m = check_export(fn, (uniform((4, 3, 2), -8, 8),), opset_version=opset)
    needs = {"hardswish": 14, "mish": 18}.get(name.split("_")[0], 13)
    if op_type is not None:
        assert (op_type in ops_in(m)) == (opset >= needs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", [n for n in ACTIVATIONS if n != "glu"])
def test_activation_special_values(name, dtype):
    """nan, +-inf (HardSwish(-inf) alone would be NaN), the kinks at +-3 and both sides of
    softplus's threshold; float64 runs ember's formula composed."""
    fn = ACTIVATIONS[name][0]
    check_export(fn, (t(SPECIAL, dtype),), opset_version=18)
    check_export(fn, (t(SPECIAL, dtype),), opset_version=13)


def test_log_sigmoid_and_softplus_keep_the_tails():
    x = t(np.array([-100.0, -30.0, 30.0, 50.0, 80.0]), np.float64)
    from .._check import run_onnx
    for fn in (F.logsigmoid, lambda x: F.softplus(x, threshold=100.0)):
        got = run_onnx(export_only(fn, (x,)), [x.numpy()])[0]
        np.testing.assert_allclose(got, fn(x).numpy(), rtol=1e-13)   # 1.9e-22, not 0


def test_softplus_uses_the_op_only_where_it_is_exact():
    x = uniform((5,))
    assert ops_in(check_export(lambda x: F.softplus(x), (x,))) == ["Softplus"]
    assert ops_in(check_export(lambda x: F.softplus(x, threshold=15.0), (x,))) == ["Softplus"]
    for kw in (dict(threshold=10.0), dict(beta=2.0), dict(threshold=-1.0)):
        assert "Softplus" not in ops_in(check_export(lambda x: F.softplus(x, **kw), (x,)))
    assert "Softplus" not in ops_in(check_export(F.softplus, (x.double(),)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weight_shape,shape", [((1,), (2, 3, 4)), ((), (2, 3)), ((3,), (2, 3)),
                                                ((3,), (2, 3, 4, 5)), ((1,), ()), ((1,), (5,))])
def test_prelu(weight_shape, shape, dtype):
    w = t(_rng.uniform(-0.5, 0.5, weight_shape), dtype)
    x = t(np.resize(SPECIAL, shape) if shape else 1.5, dtype)
    m = check_export(lambda x, w: F.prelu(x, w), (x, w))
    assert ("PRelu" in ops_in(m)) == (dtype == np.float32)


def test_activation_layers_dynamic_batch():
    for layer in (nn.PReLU(4), nn.SELU(), nn.CELU(0.5), nn.Hardswish(), nn.Hardsigmoid(),
                  nn.Softplus(2.0, 4.0), nn.Mish(), nn.LogSigmoid(), nn.Softsign(),
                  nn.Threshold(0.1, 2.0), nn.GLU(1)):
        check_export(layer, (uniform((2, 4, 3), -5, 5),), dynamic_axes={0: [0, 2]},
                     more_inputs=(uniform((5, 4, 6), -5, 5),))


def test_glu_dims_and_dynamic_dim():
    check_export(lambda x: F.glu(x), (uniform((3, 8)),))
    check_export(lambda x: F.glu(x, 1), (uniform((2, 6, 3), dtype=np.float64),))
    check_export(lambda x: F.glu(x, 0), (uniform((4, 3)),), dynamic_axes={0: [0]},
                 more_inputs=(uniform((10, 3)),))


def test_threshold_integers_and_bounds():
    check_export(lambda x: F.threshold(x, 2, 100), (ints((3, 4)),))
    check_export(lambda x: F.threshold(x, 0.5, 7.9), (ints((3, 4)),))    # 7.9 -> 7
    check_export(lambda x: F.threshold(x, 1, -1), (t(SPECIAL, np.float32),))


@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("dtype", [E.float16, E.bfloat16])
def test_half_precision_models_check(dtype, opset):
    x = uniform((2, 4, 3)).to(dtype)
    for name, (fn, _) in ACTIVATIONS.items():
        model = export_only(fn, (x,), opset)
        assert model.graph.output[0].type.tensor_type.elem_type == eo.dtypes.to_onnx(dtype)
    export_only(lambda x, w: F.prelu(x, w), (x, t(np.array([0.2])).to(dtype)), opset)


def test_symbolic_argument_failures():
    g = GraphContext(17)
    g._bind(None, (OnnxValue("", E.float32, (3,)),), ())
    with pytest.raises(eo.OnnxExportError, match="alpha cannot be 0"):
        activation.celu(g, OnnxValue("x", E.float32, (3,)), 0.0)


def test_celu_opset_attribute():
    m = check_export(lambda x: F.celu(x, 0.4), (uniform((3,)),))
    assert onnx.helper.get_attribute_value(m.graph.node[0].attribute[0]) == pytest.approx(0.4)
