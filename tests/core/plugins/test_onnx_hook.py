"""A plugin adds ONNX symbolics for its own ops through the ``ember_onnx_symbolics`` hook;
a malformed one is skipped with a warning like any faulty plugin."""
from __future__ import annotations

import pytest

import ember as E
import ember.onnx as eo
from ember.plugins import manager

PLUGIN = """
from ember.plugins import hookimpl
from ember.onnx import Symbolic


def cumprod(g, x, dim, dtype):
    # exact for the positive inputs of the test: exp(cumsum(log x))
    return g.op("Exp", g.op("CumSum", g.op("Log", x), g.ints([dim])))


@hookimpl
def ember_onnx_symbolics():
    return [Symbolic("ember::cumprod", cumprod), ("ember::my_tuple_op", cumprod, 18)]
"""

BROKEN = """
from ember.plugins import hookimpl


@hookimpl
def ember_onnx_symbolics():
    return [("ember::cumprod",)]
"""


def test_a_plugin_symbolic_is_used(fake_dists):
    fake_dists(onnxsym=PLUGIN)
    info = next(p for p in manager.plugins() if p.name == "onnxsym")
    assert info.error is None
    assert info.registered["ember_onnx_symbolics"] == ["onnx symbolic ember::cumprod",
                                                       "onnx symbolic ember::my_tuple_op"]
    assert eo.registered_ops()["ember::cumprod"] == "plugin:ember_fake_onnxsym"
    import numpy as np
    import onnxruntime as ort
    x = E.tensor(np.array([1.0, 2.0, 3.0], np.float32))
    model = eo.export(lambda x: x.cumprod(0), (x,), None)
    got = ort.InferenceSession(model.SerializeToString()).run(None, {"input": x.numpy()})[0]
    np.testing.assert_allclose(got, [1, 2, 6], rtol=1e-5)


def test_a_malformed_plugin_is_skipped(fake_dists):
    with pytest.warns(UserWarning, match="skipping plugin 'onnxbad'"):
        fake_dists(onnxbad=BROKEN)
        manager.plugins()
    assert not eo.registered_ops().get("ember::cumprod", "").startswith("plugin")
