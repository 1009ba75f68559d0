"""The export passes (``ember/onnx/passes.py``): in-place ops become out-of-place where
that computes the same, and stop the export where a view would see the difference."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn as nn
import ember.onnx as eo

from ._check import check_export, ops_in


def rand(*shape):
    return E.tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32))


def test_inplace_layers_export():
    m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True), nn.Linear(4, 2))
    model = check_export(m, (rand(5, 3),), dynamic_axes={0: [0]}, more_inputs=(rand(2, 3),))
    assert ops_in(model) == ["Gemm", "Relu", "Gemm"]


def test_chains_of_inplace_ops_and_views_taken_after():
    def f(x):
        y = x * 2
        y.add_(1)
        y.clamp_(min=0.5)
        v = y[0]                  # taken after the writes: sees them in both worlds
        return y, v
    model = check_export(f, (rand(2, 3),))
    assert "Clip" in ops_in(model) or "Max" in ops_in(model)


def test_a_write_after_a_view_of_an_earlier_write():
    def f(x):
        y = x * 2
        y.add_(1)
        v = y[0]
        return y.mul_(3), v       # v sees the mul_ in ember
    with pytest.raises(eo.OnnxExportError, match="mul_ writes a tensor that also has"):
        eo.export(f, (rand(2, 3),), None)


def test_a_view_taken_before_the_write_stops_the_export():
    def f(x):
        y = x * 2
        v = y[0]
        y.relu_()                 # changes v too, which a functional graph cannot show
        return v
    with pytest.raises(eo.OnnxExportError, match=r"relu_ writes a tensor that also has a "
                                                 r"view \(ember::index at .*use the "
                                                 r"out-of-place relu"):
        eo.export(f, (rand(2, 3),), None)

    def g(x):
        y = x * 2
        y.transpose(0, 1).add_(1)  # written through a view: y changes as well
        return y
    with pytest.raises(eo.OnnxExportError, match="add_ writes a tensor that also has a "
                                                 "view"):
        eo.export(g, (rand(2, 3),), None)
