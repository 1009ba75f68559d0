"""Sizes computed in the graph (``symbolics/sizes.py``): models traced at batch 2 run in
onnxruntime at batch 1, 3 and 7, compared with ember eager."""
import numpy as np
import onnxruntime as ort
import pytest

import ember as E
import ember.nn as nn
import ember.nn.functional as F
import ember.onnx as eo


def _run_at(fn, shape, axes, sizes=(1, 3, 7), atol=1e-5):
    """Export ``fn`` traced on ``shape`` with ``axes`` dynamic; compare at other sizes."""
    E.manual_seed(0)
    model = eo.export(fn, (E.randn(*shape),), None, input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": list(axes)})
    sess = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"])
    for n in sizes:
        grown = [n if d in axes else s for d, s in enumerate(shape)]
        x = E.randn(*grown)
        got = sess.run(None, {"x": x.numpy()})[0]
        want = fn(x).detach().numpy()
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=atol)
    return [n.op_type for n in model.graph.node]


def _reshape_bt(x):
    b, t, c = x.shape
    return x.reshape(b * t, c)


FUNCTIONS = {
    "view_batch": (lambda x: x.view(x.size(0), -1), (2, 3, 4), (0,)),
    "zeros_batch": (lambda x: x + E.zeros(x.shape[0], 1), (2, 3), (0,)),
    "mean_by_size": (lambda x: x.sum(1) / x.size(1), (2, 3), (0, 1)),
    "reshape_product": (_reshape_bt, (2, 3, 4), (0, 1)),
    "half_batch": (lambda x: x[: x.size(0) // 2], (2, 3), (0,)),
    "interpolate": (lambda x: F.interpolate(x, scale_factor=2.0), (2, 3, 4, 4), (0,)),
    "interpolate_spatial": (lambda x: F.interpolate(x, scale_factor=2.0), (2, 3, 4, 4),
                            (0, 2, 3)),
    "arange_batch": (lambda x: x + E.arange(x.size(0)).float().unsqueeze(1), (2, 3), (0,)),
    "full_batch": (lambda x: x * E.full((x.size(0), 1), 2.5), (2, 3), (0,)),
    "remainder": (lambda x: x[: x.size(0) % 2 + 1], (2, 3), (0,)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_sizes_follow_the_batch(name):
    fn, shape, axes = FUNCTIONS[name]
    _run_at(fn, shape, axes)


def test_a_static_size_is_folded():
    """No dynamic axis: x.size(0) is the traced constant, no Shape node."""
    model = eo.export(lambda x: x.view(x.size(0), -1), (E.randn(2, 3, 4),), None)
    assert [n.op_type for n in model.graph.node] == ["Constant", "Reshape", "Identity"]


def test_the_batch_dim_of_a_view_is_copied():
    """x.size(0) at position 0 is written as Reshape's 0 (copy), its Shape dropped."""
    ops = _run_at(lambda x: x.view(x.size(0), -1), (2, 3, 4), (0,))
    assert "Shape" not in ops


def test_random_factory_has_the_run_time_shape():
    model = eo.export(lambda x: x + 0 * E.randn(x.size(0), 3), (E.randn(2, 3),), None,
                      input_names=["x"], dynamic_axes={"x": [0]})
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.ones((5, 3), np.float32)
    np.testing.assert_allclose(sess.run(None, {"x": x})[0], x)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.flat = nn.Flatten()
        self.fc = nn.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        return self.fc(self.flat(F.max_pool2d(F.relu(self.conv(x)), 2)))


def test_small_cnn():
    E.manual_seed(0)
    model = SmallCNN().eval()
    _run_at(model, (2, 1, 8, 8), (0,), atol=1e-4)


def test_multihead_attention_batch_and_sequence():
    E.manual_seed(0)
    mha = nn.MultiheadAttention(8, 2, batch_first=True).eval()
    _run_at(lambda x: mha(x, x, x)[0], (2, 5, 8), (0, 1), atol=1e-4)


def test_transformer_encoder_layer_batch_and_sequence():
    E.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True).eval()
    _run_at(layer, (2, 5, 8), (0, 1), atol=1e-4)
