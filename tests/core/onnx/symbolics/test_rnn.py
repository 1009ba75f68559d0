"""ONNX export of the recurrent layers (``ember/onnx/symbolics/rnn.py``): nn.LSTM, nn.GRU
and nn.RNN become one ONNX LSTM / GRU / RNN node per layer, checked with onnx.checker and
run in onnxruntime at the traced size and at other sequence lengths and batch sizes, with
and without initial states, biases, batch_first, bidirectional, unbatched, at opsets 13
and 17; float64 is checked only (onnxruntime's RNN kernels are float32); proj_size and
dropout in training are declined."""
from __future__ import annotations

import numpy as np
import onnx
import pytest

import ember as E
import ember.onnx as eo
from ember import nn

from .._check import assert_close, ember_outputs, ops_in, run_onnx
from ._shared import export_checked_only, randn

LAYERS = {
    "lstm": (lambda **kw: nn.LSTM(3, 4, **kw), "LSTM"),
    "gru": (lambda **kw: nn.GRU(3, 4, **kw), "GRU"),
    "rnn_tanh": (lambda **kw: nn.RNN(3, 4, **kw), "RNN"),
    "rnn_relu": (lambda **kw: nn.RNN(3, 4, nonlinearity="relu", **kw), "RNN"),
}


def _export(model, inputs, dynamic: dict, opset=17):
    """Export with ``dynamic`` ({input position: axes}) and check the model."""
    names = [f"in{i}" for i in range(len(inputs))]
    axes = {names[i]: list(a) for i, a in dynamic.items()}
    m = eo.export(model, tuple(inputs), None, opset_version=opset, input_names=names,
                  dynamic_axes=axes or None)
    onnx.checker.check_model(m, full_check=True)
    return m


def _agrees(onnx_model, model, inputs) -> None:
    got = run_onnx(onnx_model, [t.numpy() for t in inputs])
    want = ember_outputs(model, inputs)
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want)):
        assert_close(a, b, f"output {i} at input shapes {[tuple(t.shape) for t in inputs]}")


CASES = [(name, bf, layers, bidi, 17) for name in LAYERS for bf in (False, True)
         for layers, bidi in ((1, False), (2, True))]
CASES += [(name, True, 2, True, 13) for name in LAYERS]   # the lowest opset


@pytest.mark.parametrize("name, batch_first, layers, bidirectional, opset", CASES,
                         ids=lambda v: str(v))
def test_layer_runs_at_every_sequence_length_and_batch(name, batch_first, layers,
                                                       bidirectional, opset):
    E.manual_seed(0)
    make, op_type = LAYERS[name]
    model = make(num_layers=layers, bidirectional=bidirectional, batch_first=batch_first)
    shape = (lambda L, N: (N, L, 3)) if batch_first else (lambda L, N: (L, N, 3))
    seq, batch = (1, 0) if batch_first else (0, 1)
    m = _export(model, (randn(*shape(5, 3)),), {0: [seq, batch]}, opset)
    assert ops_in(m).count(op_type) == layers    # one node a layer: nothing unrolled
    assert "Loop" not in ops_in(m)
    for seed, (L, N) in enumerate([(5, 3), (9, 3), (2, 3), (5, 6), (1, 1)], 1):
        _agrees(m, model, (randn(*shape(L, N), seed=seed),))


@pytest.mark.parametrize("name", ["lstm", "gru", "rnn_relu"])
def test_initial_states_are_inputs(name):
    E.manual_seed(1)
    lstm = name == "lstm"

    class WithStates(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = LAYERS[name][0](num_layers=2, bidirectional=True)

        def forward(self, x, h0, c0=None):
            return self.rnn(x, (h0, c0) if lstm else h0)

    model = WithStates()
    n_states = 2 if lstm else 1

    def inputs(L, N, seed):
        return (randn(L, N, 3, seed=seed),) + tuple(randn(4, N, 4, seed=seed + k + 1)
                                                    for k in range(n_states))

    dynamic = {0: [0, 1], **{k + 1: [1] for k in range(n_states)}}
    m = _export(model, inputs(5, 3, 0), dynamic)
    for seed, (L, N) in enumerate([(5, 3), (8, 3), (3, 5)], 1):
        _agrees(m, model, inputs(L, N, 10 * seed))


@pytest.mark.parametrize("name", list(LAYERS))
def test_without_biases_and_unbatched(name):
    E.manual_seed(2)
    model = LAYERS[name][0](bias=False, bidirectional=True)
    m = _export(model, (randn(5, 3, 3),), {0: [0, 1]})
    assert not any(len(n.input) > 3 and n.input[3] for n in m.graph.node
                   if n.op_type in ("LSTM", "GRU", "RNN"))   # no B input
    for seed, (L, N) in enumerate([(7, 2), (2, 4)], 1):
        _agrees(m, model, (randn(L, N, 3, seed=seed),))
    model = LAYERS[name][0](num_layers=2)
    m = _export(model, (randn(5, 3),), {0: [0]})   # (L, H_in)
    for seed, L in enumerate([5, 8, 1], 1):
        _agrees(m, model, (randn(L, 3, seed=seed),))


def test_functional_op_exports():
    params = [randn(*s, seed=k) for k, s in enumerate([(12, 3), (12, 4), (12,), (12,)])]
    fn = lambda x: E.gru(x, None, params, True, 1, 0.0, False, False, True)   # noqa: E731
    m = _export(fn, (randn(3, 6, 3),), {0: [0, 1]})
    assert ops_in(m).count("GRU") == 1
    for seed, (N, L) in enumerate([(3, 6), (2, 9)], 1):
        _agrees(m, fn, (randn(N, L, 3, seed=seed),))


@pytest.mark.parametrize("name", list(LAYERS))
def test_float64_exports_checked(name):
    model = LAYERS[name][0](num_layers=2, bidirectional=True, dtype=E.float64)
    m = export_checked_only(model, (randn(5, 3, 3, dtype=np.float64),))
    assert ops_in(m).count(LAYERS[name][1]) == 2
    assert m.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.DOUBLE


def test_proj_size_is_declined():
    model = nn.LSTM(3, 4, proj_size=2)
    with pytest.raises(eo.OnnxExportError, match="proj_size has no ONNX equivalent"):
        eo.export(model, (randn(5, 3, 3),), None)


def test_dropout_in_training_is_declined():
    params = [randn(*s, seed=k) for k, s in
              enumerate([(16, 3), (16, 4), (16,), (16,), (16, 4), (16, 4), (16,), (16,)])]
    fn = lambda x: E.lstm(x, [], params, True, 2, 0.5, True, False, False)   # noqa: E731
    with pytest.raises(eo.OnnxExportError, match=r"dropout between layers with train=True"):
        eo.export(fn, (randn(5, 3, 3),), None)
    eval_fn = lambda x: E.lstm(x, [], params, True, 2, 0.5, False, False, False)  # noqa: E731
    m = _export(eval_fn, (randn(5, 3, 3),), {})
    _agrees(m, eval_fn, (randn(5, 3, 3, seed=9),))
