"""Symbolics of the recurrent layers: ``lstm``, ``gru``, ``rnn_tanh`` and ``rnn_relu``
(the ops ``nn.LSTM``, ``nn.GRU`` and ``nn.RNN`` call; ``nn/functional/rnn_layers.py``).

Mapping (ONNX operators, https://onnx.ai/onnx/operators/):

* each layer -> one ``LSTM`` / ``GRU`` / ``RNN`` node (``direction="bidirectional"`` for
  a bidirectional layer); a stack of ``num_layers`` is that many nodes, each reading the
  previous one's ``Y`` as ``(L, N, D * H)`` (Squeeze, or Transpose + Reshape for two
  directions). The sequence runs inside the node, so the sequence length (and the batch)
  follow the input at run time.
* weights: ember's ``w_ih``/``w_hh`` of both directions stacked into ``W``/``R``
  ``(D, G * H, in)``, the gates reordered by a ``Gather`` of rows: LSTM i, f, g, o ->
  ONNX i, o, f, c; GRU r, z, n -> z, r, h with ``linear_before_reset=1`` (ember's and
  PyTorch's n gate, ``tanh(i_n + r * (h @ W_hn.T + b_hn))``); ``B`` is ``b_ih`` then
  ``b_hh``, left out without biases (ONNX's default is zeros). ``rnn_relu`` sets
  ``activations=["Relu"]``.
* initial states: ``h_0``/``c_0`` sliced per layer; absent (ember's ``[]`` / None) they
  are left out, and ONNX starts from zeros of the run-time batch.
* ``batch_first``: a ``Transpose`` of the input and of the output (the node's ``layout``
  attribute would also put the states batch-first, which ember's are not).

Declined with ``OnnxExportError``: an LSTM with ``proj_size`` (ONNX's LSTM has no
projection), dropout between layers with ``train=True`` (random; export in eval mode).

Reference: PyTorch's ``torch/onnx/symbolic_opset9.py`` (``_generic_rnn``: the gate
reordering and the layer stacking; own code) and the ONNX LSTM/GRU/RNN specifications.
"""
from __future__ import annotations

import numpy as np

from ..registry import builtin
from ._shapes import _perm, _slice, _squeeze, _unsqueeze

_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def _gate_rows(kind: str, hidden: int):
    """The row order that turns ember's gate blocks into ONNX's (None: already ONNX's)."""
    blocks = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2]}.get(kind)
    if blocks is None:
        return None
    return np.concatenate([np.arange(b * hidden, (b + 1) * hidden) for b in blocks])


def _stacked(g, tensors: list, rows):
    """The per-direction ``tensors`` with their rows in ONNX's gate order, stacked on a
    new leading axis (ONNX's ``num_directions``)."""
    parts = []
    for t in tensors:
        if rows is not None:
            t = g.op("Gather", t, rows, axis=0, dtype=t.dtype)
        parts.append(_unsqueeze(g, t, [0]))
    if len(parts) == 1:
        return parts[0]
    return g.op("Concat", *parts, axis=0, dtype=parts[0].dtype)


def _layers(g, kind, x, states, params, has_biases, num_layers, dropout, train,
            bidirectional, batch_first, **attrs):
    """The stack of ONNX ``kind`` nodes; returns ``(output, h_n[, c_n])``. ``states``:
    the initial states (h, or h and c), each an OnnxValue or None."""
    gates, dirs = _GATES[kind], 2 if bidirectional else 1
    per = len(params) // (num_layers * dirs)
    if per > (4 if has_biases else 2):
        g.fail("an LSTM with proj_size has no ONNX equivalent (ONNX's LSTM has no projection "
               "of h); export an LSTM without proj_size")
    if train and dropout > 0 and num_layers > 1:
        g.fail(f"dropout between layers with train=True (p={dropout}) is random; export the "
               f"model in eval mode (model.eval()), or call it with train=False")
    hidden = int(params[1].sizes[0]) // gates
    rows = _gate_rows(kind, hidden)
    rows = None if rows is None else g.constant(rows.astype(np.int64))
    dtype = x.dtype
    y = _perm(g, x, [1, 0, 2]) if batch_first else x
    finals = [[] for _ in states]
    for layer in range(num_layers):
        group = [params[(layer * dirs + d) * per:(layer * dirs + d + 1) * per]
                 for d in range(dirs)]
        w = _stacked(g, [p[0] for p in group], rows)
        r = _stacked(g, [p[1] for p in group], rows)
        b = None
        if has_biases:
            b = _stacked(g, [g.op("Concat", *(p[2:4] if rows is None else
                                               [g.op("Gather", q, rows, axis=0, dtype=dtype)
                                                for q in p[2:4]]), axis=0, dtype=dtype)
                             for p in group], None)
        inits = [None if s is None else
                 _slice(g, s, [layer * dirs], [(layer + 1) * dirs], [0]) for s in states]
        outs = g.op(kind, y, w, r, b, None, *inits, outputs=1 + len(states),
                    hidden_size=hidden, direction="bidirectional" if bidirectional else None,
                    dtype=(dtype,) * (1 + len(states)), **attrs)
        for acc, o in zip(finals, outs[1:]):
            acc.append(o)
        # Y is (L, D, N, H): the next layer (and the output) reads (L, N, D * H)
        if dirs == 1:
            y = _squeeze(g, outs[0], [1])
        else:
            y = g.op("Reshape", _perm(g, outs[0], [0, 2, 1, 3]), g.ints([0, 0, -1]),
                     dtype=dtype)
    y = _perm(g, y, [1, 0, 2]) if batch_first else y
    return (y,) + tuple(acc[0] if len(acc) == 1 else
                        g.op("Concat", *acc, axis=0, dtype=dtype) for acc in finals)


@builtin("ember::lstm.input")
def lstm(g, x, hx, params, has_biases, num_layers, dropout, train, bidirectional,
         batch_first):
    """LSTM nodes (gates reordered to i, o, f, c); ``hx`` ``[]`` leaves the initial
    states out."""
    states = list(hx) if hx else [None, None]
    return _layers(g, "LSTM", x, states, params, has_biases, num_layers, dropout, train,
                   bidirectional, batch_first)


@builtin("ember::gru.input")
def gru(g, x, hx, params, has_biases, num_layers, dropout, train, bidirectional,
        batch_first):
    """GRU nodes with linear_before_reset=1 (gates reordered to z, r, h)."""
    return _layers(g, "GRU", x, [hx], params, has_biases, num_layers, dropout, train,
                   bidirectional, batch_first, linear_before_reset=1)


@builtin("ember::rnn_tanh.input", "ember::rnn_relu.input")
def rnn(g, x, hx, params, has_biases, num_layers, dropout, train, bidirectional,
        batch_first):
    """RNN nodes, with Relu activations for ``rnn_relu`` (Tanh is ONNX's default)."""
    relu = g.node is not None and g.node.kind == "ember::rnn_relu.input"
    acts = ["Relu"] * (2 if bidirectional else 1) if relu else None
    return _layers(g, "RNN", x, [hx], params, has_biases, num_layers, dropout, train,
                   bidirectional, batch_first, activations=acts)
