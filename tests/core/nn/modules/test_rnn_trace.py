"""``ember.jit.trace`` of nn.LSTM / GRU / RNN: one ``ember::lstm.input`` (or gru, rnn_tanh,
rnn_relu) node and no baked-in sizes, so a layer traced at (seq 5, batch 3) gives eager's
outputs and gradients at other sequence lengths and batch sizes, with and without initial
states, batch_first, unbatched, and with dropout in training."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember as E
import ember.jit
from ember import nn
from helpers import assert_close, to_np

LAYERS = {
    "lstm": lambda **kw: nn.LSTM(3, 4, **kw),
    "lstm_proj": lambda **kw: nn.LSTM(3, 4, proj_size=2, **kw),
    "gru": lambda **kw: nn.GRU(3, 4, **kw),
    "rnn_tanh": lambda **kw: nn.RNN(3, 4, **kw),
    "rnn_relu": lambda **kw: nn.RNN(3, 4, nonlinearity="relu", **kw),
}
KIND = {"lstm": "lstm", "lstm_proj": "lstm", "gru": "gru", "rnn_tanh": "rnn_tanh",
        "rnn_relu": "rnn_relu"}
SIZES = [(7, 3), (5, 6), (2, 1)]   # (seq, batch) after tracing at (5, 3)


def _flat(out) -> list:
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _data(shape, seed, grad=False):
    return E.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=grad)


def _trace(fn, inputs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no TracerWarning: nothing data-dependent
        return ember.jit.trace(fn, inputs)


def _same_values_and_grads(traced, eager_fn, inputs, wrt):
    got, want = _flat(traced(*inputs)), _flat(eager_fn(*inputs))
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert_close(a.detach(), to_np(b.detach()))
    g_got = E.autograd.grad(sum((o * o).sum() for o in got), wrt)
    g_want = E.autograd.grad(sum((o * o).sum() for o in want), wrt)
    for a, b in zip(g_got, g_want):
        assert_close(a, to_np(b))


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("name", list(LAYERS))
def test_traced_layer_follows_sequence_length_and_batch(name, batch_first):
    E.manual_seed(0)
    m = LAYERS[name](num_layers=2, bidirectional=True, batch_first=batch_first,
                     dtype=E.float64)
    shape = (lambda L, N: (N, L, 3)) if batch_first else (lambda L, N: (L, N, 3))
    tm = _trace(m, (_data(shape(5, 3), 0),))
    kinds = [n.kind for n in tm.graph.nodes()]
    assert kinds.count(f"ember::{KIND[name]}.input") == 1
    assert [k for k in kinds if k.startswith("ember::")] == [f"ember::{KIND[name]}.input"]
    for seed, (L, N) in enumerate(SIZES, 1):
        x = _data(shape(L, N), seed, grad=True)
        _same_values_and_grads(tm, m, (x,), [x] + list(m.parameters()))


@pytest.mark.parametrize("name", ["lstm", "gru", "rnn_relu"])
def test_traced_layer_with_initial_states(name):
    E.manual_seed(1)
    lstm = name == "lstm"

    class WithStates(nn.Module):   # a module, so the parameters are trace inputs
        def __init__(self):
            super().__init__()
            self.rnn = LAYERS[name](num_layers=2, dtype=E.float64)

        def forward(self, x, h0, c0=None):
            return self.rnn(x, (h0, c0) if lstm else h0)

    m = fn = WithStates()

    def states(n, seed, grad=False):
        return (_data((2, n, 4), seed, grad),) + ((_data((2, n, 4), seed + 1, grad),)
                                                  if lstm else ())

    tm = _trace(fn, (_data((5, 3, 3), 0),) + states(3, 1))
    for seed, (L, N) in enumerate(SIZES, 3):
        inputs = (_data((L, N, 3), seed, True),) + states(N, 10 * seed, True)
        _same_values_and_grads(tm, fn, inputs, list(inputs) + list(m.parameters()))


@pytest.mark.parametrize("batch_first", [False, True])
def test_traced_unbatched_layer_follows_sequence_length(batch_first):
    E.manual_seed(2)
    m = nn.GRU(3, 4, bidirectional=True, batch_first=batch_first, dtype=E.float64)
    tm = _trace(m, (_data((5, 3), 0),))
    for seed, L in enumerate((8, 1), 1):
        x = _data((L, 3), seed, grad=True)
        _same_values_and_grads(tm, m, (x,), [x] + list(m.parameters()))


def test_traced_dropout_draws_per_call_as_eager():
    E.manual_seed(3)
    m = nn.LSTM(3, 4, num_layers=3, dropout=0.5, dtype=E.float64)   # training mode
    # check_trace would re-run and compare: two dropout draws differ
    tm = ember.jit.trace(m, (_data((5, 3, 3), 0),), check_trace=False)
    x = _data((6, 2, 3), 1)
    E.manual_seed(11)
    got = _flat(tm(x))
    E.manual_seed(11)
    want = _flat(m(x))
    for a, b in zip(got, want):
        assert_close(a.detach(), to_np(b.detach()))
    again = _flat(tm(x))   # a fresh mask: the plan runs the op, it did not bake one in
    assert not np.allclose(to_np(got[0].detach()), to_np(again[0].detach()))
