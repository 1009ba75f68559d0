"""Layers take any integer for their sizes (issue 35, class 10): a numpy integer such as
``np.int64(3)`` (sizes read from ``array.shape`` or a numpy config) works wherever a
Python int does, as in PyTorch, and the layer stores plain Python ints; a bool is not a
size."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E

nn = E.nn
INTS = [np.int64, np.int32, np.int16, np.uint8, int]

LAYERS = {  # name -> (make(n), input, attributes that must be Python ints)
    "Linear": (lambda n: nn.Linear(n(3), n(4)), lambda: E.rand(2, 3),
               ("in_features", "out_features")),
    "Bilinear": (lambda n: nn.Bilinear(n(3), n(3), n(2)), None,
                 ("in1_features", "in2_features", "out_features")),
    "LazyLinear": (lambda n: nn.LazyLinear(n(4)), lambda: E.rand(2, 3), ("out_features",)),
    "Conv2d": (lambda n: nn.Conv2d(n(3), n(4), n(3), stride=n(1), padding=n(1)),
               lambda: E.rand(1, 3, 5, 5), ("in_channels", "out_channels")),
    "Conv1d tuple": (lambda n: nn.Conv1d(n(3), n(4), (n(3),), dilation=(n(1),)),
                     lambda: E.rand(1, 3, 5), ("in_channels",)),
    "ConvTranspose2d": (lambda n: nn.ConvTranspose2d(n(2), n(4), n(2), groups=n(2)),
                        lambda: E.rand(1, 2, 5, 5), ("groups",)),
    "LazyConv2d": (lambda n: nn.LazyConv2d(n(4), n(3)), lambda: E.rand(1, 3, 5, 5),
                   ("out_channels",)),
    "RNN": (lambda n: nn.RNN(n(3), n(4), num_layers=n(2)), lambda: E.rand(2, 1, 3),
            ("input_size", "hidden_size", "num_layers")),
    "LSTM": (lambda n: nn.LSTM(n(3), n(4), proj_size=n(2)), lambda: E.rand(2, 1, 3),
             ("input_size", "hidden_size", "proj_size")),
    "GRUCell": (lambda n: nn.GRUCell(n(3), n(4)), lambda: E.rand(2, 3),
                ("input_size", "hidden_size")),
    "MultiheadAttention": (lambda n: nn.MultiheadAttention(n(4), n(2)), None, ()),
    "TransformerEncoderLayer": (lambda n: nn.TransformerEncoderLayer(
        n(4), n(2), dim_feedforward=n(8)), lambda: E.rand(3, 1, 4), ()),
    "PReLU": (lambda n: nn.PReLU(n(3)), lambda: E.rand(2, 3), ("num_parameters",)),
    "Unflatten": (lambda n: nn.Unflatten(n(1), (n(3), n(4))), lambda: E.rand(2, 12),
                  ("dim",)),
    "Embedding": (lambda n: nn.Embedding(n(10), n(3)), lambda: E.tensor([1, 2]), ()),
    "BatchNorm1d": (lambda n: nn.BatchNorm1d(n(3)), lambda: E.rand(4, 3), ()),
    "GroupNorm": (lambda n: nn.GroupNorm(n(1), n(3)), lambda: E.rand(4, 3), ()),
}


@pytest.mark.parametrize("n", INTS, ids=lambda t: t.__name__)
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_a_layer_takes_any_integer_and_stores_python_ints(name, n):
    make, inp, attrs = LAYERS[name]
    layer = make(n)
    ref = make(int)
    for a in attrs:
        v = getattr(layer, a)
        assert type(v) is int and v == getattr(ref, a), (a, v)
    if inp is not None:
        out, want = layer(inp()), ref(inp())
        out, want = (out[0], want[0]) if isinstance(out, tuple) else (out, want)  # RNNs
        assert out.shape == want.shape
    assert repr(layer) == repr(ref)  # no "np.int64(3)" in the repr


@pytest.mark.parametrize("make, error", [
    (lambda: nn.Linear(True, 4), ValueError),
    (lambda: nn.Linear(3.0, 4), ValueError),
    (lambda: nn.Linear(np.float64(3), 4), ValueError),
    (lambda: nn.Conv2d(3, 4, True), ValueError),
    (lambda: nn.Conv2d(3, 4, 3, groups=np.float32(1)), ValueError),
    (lambda: nn.RNN(3.0, 4), TypeError),
    (lambda: nn.GRUCell(3, True), TypeError),
    (lambda: nn.PReLU(np.int64(0)), ValueError),
    (lambda: nn.Unflatten(1.0, (3, 4)), TypeError),
    (lambda: nn.Linear(np.int64(-1), 4), ValueError),
])
def test_what_is_not_an_integer_is_still_refused(make, error):
    with pytest.raises(error):
        make()
