"""The export driver (``ember/onnx/export.py``): what it writes, how it names things, the
errors it raises and that a failure writes nothing. The symbolics' own arithmetic is
tested beside them in ``symbolics/``; here custom ops are registered per test where the
driver itself is the subject."""
from __future__ import annotations

import io

import numpy as np
import onnx
import pytest

import ember as E
import ember.nn as nn
import ember.onnx as eo
from ember.autograd import Function

from ember.onnx import registry

from ._check import check_export, ember_outputs, ops_in, run_onnx


@pytest.fixture(autouse=True)
def no_builtin_cumprod(monkeypatch):
    """The tests here use ``cumprod`` as the op without a symbolic (or with the test's)."""
    registry._load_builtins()
    monkeypatch.delitem(registry._builtin, "ember::cumprod", raising=False)


def rand(*shape, seed=0):
    return E.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.fc(x).relu())


def test_writes_a_checked_model_with_named_initializers(tmp_path):
    net, path = Net(), tmp_path / "net.onnx"
    net.train()
    returned = eo.export(net, (rand(2, 4),), path, opset_version=15)
    assert net.training                           # exported in eval mode, mode restored
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    assert model == returned
    assert model.producer_name == "ember"
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 15)]
    assert sorted(t.name for t in model.graph.initializer) == ["fc.bias", "fc.weight"]
    assert [i.name for i in model.graph.input] == ["input"]   # parameters are not inputs
    assert "Dropout" not in ops_in(model)                      # eval: dropout is identity
    with pytest.raises(Exception, match="(?i)invalid|dimension"):   # static shapes
        run_onnx(model, [rand(5, 4).numpy()])
    net.eval()
    np.testing.assert_allclose(run_onnx(model, [rand(2, 4, seed=1).numpy()])[0],
                               ember_outputs(net, (rand(2, 4, seed=1),))[0], rtol=1e-5,
                               atol=1e-6)


def test_file_objects_and_none():
    buf = io.BytesIO()
    model = eo.export(lambda x: x.relu(), (rand(3),), buf)
    assert onnx.load_from_string(buf.getvalue()) == model
    assert isinstance(eo.export(lambda x: x.relu(), (rand(3),), None), onnx.ModelProto)


def test_names_and_dynamic_axes_in_the_signature():
    model = eo.export(lambda a, b: (a.relu(), b.relu() + a), (rand(2, 3), rand(2, 3)), None,
                      input_names=["a", "b"], output_names=["ra", "sum"],
                      dynamic_axes={"a": {0: "batch"}, "b": [0], "ra": {0: "batch"}})
    dims = {v.name: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
            for v in list(model.graph.input) + list(model.graph.output)}
    assert dims == {"a": ["batch", 3], "b": ["b_dynamic_axes_1", 3], "ra": ["batch", 3],
                    "sum": ["sum_dynamic_axes_1", 3]}   # found by tracing twice


def test_several_outputs_including_an_input_and_a_repeat():
    def f(x, y):
        z = x.relu()
        return z, x, z, (y.relu(),)
    check_export(f, (rand(2, 2), rand(3)))


def test_unsupported_op_names_the_op_and_line_and_writes_nothing(tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(b"old")

    def f(x):
        return x.relu().cumprod(0)          # no ONNX symbolic
    with pytest.raises(eo.UnsupportedOperatorError) as info:
        eo.export(f, (rand(3),), path)
    err = info.value
    assert err.op == "ember::cumprod"
    assert "ember::cumprod" in str(err) and "test_export.py:" in str(err)
    assert "register_symbolic" in str(err)
    assert path.read_bytes() == b"old"      # the old file is untouched
    assert not [p for p in tmp_path.iterdir() if p.name != "m.onnx"]   # no temp files


def test_an_op_newer_than_the_opset_says_which_opset():
    handle = eo.register_symbolic("ember::cumprod", lambda g, x, dim, dtype: x, opset=21)
    try:
        with pytest.raises(eo.UnsupportedOperatorError, match="opset_version >= 21"):
            eo.export(lambda x: x.cumprod(0), (rand(3),), None, opset_version=17)
    finally:
        handle.remove()


@pytest.mark.parametrize("kwargs, match", [
    ({"opset_version": 12}, "opset_version must be an int from 13"),
    ({"opset_version": 10 ** 3}, "opset_version must be an int from 13"),
    ({"opset_version": True}, "opset_version"),
    ({"input_names": ["a", "b"]}, "input_names must be 1 non-empty strings"),
    ({"output_names": [""]}, "output_names must be 1"),
    ({"input_names": ["a"], "output_names": ["a"]}, "used twice"),
    ({"dynamic_axes": {"nope": [0]}}, "neither inputs"),
    ({"dynamic_axes": {"input": [3]}}, "names axis 3, but the input has 2 dims"),
    ({"dynamic_axes": {"input": 0}}, "must be a list of axes or a dict"),
    ({"dynamic_axes": [0]}, "must be a dict"),
])
def test_bad_arguments(kwargs, match, tmp_path):
    path = tmp_path / "m.onnx"
    with pytest.raises(eo.OnnxExportError, match=match):
        eo.export(lambda x: x.relu(), (rand(2, 3),), path, **kwargs)
    assert not path.exists()


def test_not_a_model():
    with pytest.raises(eo.OnnxExportError, match="Module or a function"):
        eo.export(3, (rand(2),), None)


def test_a_tensor_made_inside_that_follows_the_batch_is_refused():
    def f(x):   # int() makes the size a plain number, so ones() is a baked-in constant
        return x + E.ones(int(x.shape[0]), 1)
    with pytest.raises(eo.OnnxExportError, match="tensor made inside the model"):
        eo.export(f, (rand(4, 3),), None, dynamic_axes={"input": [0]})
    eo.export(f, (rand(4, 3),), None)        # fine with static shapes


def test_structure_that_depends_on_a_dynamic_size_is_refused():
    def f(x):
        return x.relu() if x.shape[0] < 6 else x.sigmoid()
    with pytest.raises(eo.OnnxExportError, match="depends on the sizes"):
        eo.export(f, (rand(4, 3),), None, dynamic_axes={"input": [0]})


def test_a_size_the_symbolic_ignores_is_refused():
    handle = eo.register_symbolic("ember::view", lambda g, x, shape: g.op(
        "Reshape", x, g.ints(shape)))                 # never reads g.dynamic(1)
    try:
        with pytest.raises(eo.OnnxExportError, match="follows a dynamic axis"):
            eo.export(lambda x: x.view(x.shape[0], 3), (rand(4, 3),), None,
                      dynamic_axes={"input": [0]})
    finally:
        handle.remove()


def test_a_model_that_fails_when_the_axis_grows():
    def f(x):
        return x.view(4, 3)
    with pytest.raises(eo.OnnxExportError, match="fails when its dynamic axes double"):
        eo.export(f, (rand(4, 3),), None, dynamic_axes={"input": [0]})


class Double(Function):
    @staticmethod
    def forward(ctx, x, k):
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g * 2, None


class DoubleWithSymbolic(Double):
    @staticmethod
    def symbolic(g, x, k):
        return g.op("Mul", x, g.scalar(k, like=x))


def test_custom_function_exports_through_its_symbolic():
    model = check_export(lambda x: DoubleWithSymbolic.apply(x, 3.0).relu(), (rand(4),))
    assert ops_in(model)[:2] == ["Constant", "Mul"]
    with pytest.raises(eo.UnsupportedOperatorError, match="Double has no ONNX symbolic"):
        eo.export(lambda x: Double.apply(x, 3.0), (rand(4),), None)


def test_symbolic_failures_become_export_errors():
    def bad(g, x, dim, dtype):
        raise ValueError("boom")
    handle = eo.register_symbolic("ember::cumprod", bad)
    try:
        with pytest.raises(eo.OnnxExportError, match="symbolic of ember::cumprod failed: "
                                                     "ValueError: boom"):
            eo.export(lambda x: x.cumprod(0), (rand(3),), None)
    finally:
        handle.remove()
    handle = eo.register_symbolic("ember::cumprod", lambda g, x, d, t: (x, x))
    try:
        with pytest.raises(eo.OnnxExportError, match="returned 2 values for 1 outputs"):
            eo.export(lambda x: x.cumprod(0), (rand(3),), None)
    finally:
        handle.remove()


def test_checker_failures_are_reported():
    handle = eo.register_symbolic("ember::cumprod", lambda g, x, d, t: g.op("NoSuchOp", x))
    try:
        with pytest.raises(eo.OnnxExportError, match="checker rejects"):
            eo.export(lambda x: x.cumprod(0), (rand(3),), None)
    finally:
        handle.remove()


def test_result_dtype_is_cast_to_the_ir_dtype():
    # a symbolic that says its result is float64 where the IR has float32 gets a Cast
    def f64(g, x, dim, dtype):
        return g.op("Cast", x, to=onnx.TensorProto.DOUBLE, dtype=E.float64)
    handle = eo.register_symbolic("ember::cumprod", f64)
    try:
        model = eo.export(lambda x: x.cumprod(0), (rand(3),), None)
    finally:
        handle.remove()
    assert ops_in(model) == ["Cast", "Cast"]
