"""The composite ops ``ember.lstm``, ``gru``, ``rnn_tanh``, ``rnn_relu``
(``nn/functional/rnn_layers.py``): against a numpy float64 reference of torch's equations
over PyTorch's flat parameter list and against a loop of the F.*_cell functions, every
option (biases, layers, directions, batch_first, proj_size, given or absent states,
dropout between layers), gradcheck / gradgradcheck, one node in a trace, and the errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.jit
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError, ShapeError
from helpers import assert_close, to_np

GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}
OPS = {"lstm": E.lstm, "gru": E.gru, "rnn_tanh": E.rnn_tanh, "rnn_relu": E.rnn_relu}


def _sig(x):
    return 1 / (1 + np.exp(-x))


def make_params(op, input_size, hidden, num_layers=1, bidirectional=False, bias=True,
                proj=0, dtype=np.float64, seed=0):
    """PyTorch's flat list: per layer and direction w_ih, w_hh[, b_ih, b_hh][, w_hr]."""
    rng = np.random.default_rng(seed)
    g, dirs, h_out = GATES[op] * hidden, 2 if bidirectional else 1, proj or hidden
    shapes = []
    for layer in range(num_layers):
        for _ in range(dirs):
            shapes += [(g, input_size if layer == 0 else dirs * h_out), (g, h_out)]
            shapes += [(g,), (g,)] if bias else []
            shapes += [(proj, hidden)] if proj else []
    return [rng.uniform(-0.6, 0.6, s).astype(dtype) for s in shapes]


def np_layers(op, x, h0, c0, params, bias, num_layers, bidirectional):
    """torch's documented equations in float64 over time-major ``x`` (L, N, H_in); the
    gates are sliced out of the stacked rows by hand. Returns (output, h_n[, c_n])."""
    dirs = 2 if bidirectional else 1
    per = len(params) // (num_layers * dirs)
    hs, cs = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            p = params[k * per:(k + 1) * per]
            w_ih, w_hh = p[0], p[1]
            b_ih, b_hh = (p[2], p[3]) if bias else (0.0, 0.0)
            w_hr = p[-1] if per in (3, 5) and op == "lstm" else None
            hid = w_hh.shape[0] // GATES[op]
            h, c = h0[k], None if c0 is None else c0[k]
            ys = [None] * len(x)
            for t in (range(len(x) - 1, -1, -1) if d else range(len(x))):
                gi, gh = x[t] @ w_ih.T + b_ih, h @ w_hh.T + b_hh
                part = [slice(j * hid, (j + 1) * hid) for j in range(4)]
                if op == "rnn_tanh":
                    h = np.tanh(gi + gh)
                elif op == "rnn_relu":
                    h = np.maximum(gi + gh, 0)
                elif op == "gru":
                    r = _sig(gi[:, part[0]] + gh[:, part[0]])
                    z = _sig(gi[:, part[1]] + gh[:, part[1]])
                    n = np.tanh(gi[:, part[2]] + r * gh[:, part[2]])
                    h = (1 - z) * n + z * h
                else:
                    i, f, g, o = ((gi + gh)[:, s] for s in part)
                    c = _sig(f) * c + _sig(i) * np.tanh(g)
                    h = _sig(o) * np.tanh(c)
                    h = h if w_hr is None else h @ w_hr.T
                ys[t] = h
            outs.append(np.stack(ys))
            hs.append(h)
            cs.append(c)
        x = np.concatenate(outs, -1)
    return (x, np.stack(hs)) + ((np.stack(cs),) if op == "lstm" else ())


def run(op, x, hx, params, bias=True, num_layers=1, dropout=0.0, train=False,
        bidirectional=False, batch_first=False):
    if op == "lstm":
        hx = [] if hx is None else list(hx)
    return OPS[op](x, hx, params, bias, num_layers, dropout, train, bidirectional, batch_first)


CONFIGS = [  # (num_layers, bidirectional, bias, batch_first, with states)
    (1, False, True, False, False), (2, False, True, False, True),
    (1, True, False, True, True), (2, True, True, True, False), (3, True, True, False, True),
]


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
def test_matches_numpy(op, cfg):
    layers, bidi, bias, bf, states = cfg
    L, N, I, H = 4, 3, 2, 3
    rng = np.random.default_rng(1)
    params = make_params(op, I, H, layers, bidi, bias)
    x = rng.standard_normal((L, N, I))
    dl = layers * (2 if bidi else 1)
    h0 = rng.standard_normal((dl, N, H)) if states else np.zeros((dl, N, H))
    c0 = rng.standard_normal((dl, N, H)) if states else np.zeros((dl, N, H))
    want = np_layers(op, x, h0, c0 if op == "lstm" else None, params, bias, layers, bidi)
    xin = E.tensor(x.transpose(1, 0, 2).copy() if bf else x)
    hx = None
    if states:
        hx = (E.tensor(h0), E.tensor(c0)) if op == "lstm" else E.tensor(h0)
    got = run(op, xin, hx, [E.tensor(p) for p in params], bias, layers, 0.0, False, bidi, bf)
    assert len(got) == len(want)
    assert_close(got[0], want[0].transpose(1, 0, 2) if bf else want[0])
    for a, b in zip(got[1:], want[1:]):
        assert_close(a, b)


@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_projection_matches_numpy(bidirectional):
    rng = np.random.default_rng(2)
    params = make_params("lstm", 3, 4, 2, bidirectional, True, proj=2)
    dl = 2 * (2 if bidirectional else 1)
    x, h0, c0 = (rng.standard_normal(s) for s in [(5, 2, 3), (dl, 2, 2), (dl, 2, 4)])
    want = np_layers("lstm", x, h0, c0, params, True, 2, bidirectional)
    got = run("lstm", E.tensor(x), (E.tensor(h0), E.tensor(c0)),
              [E.tensor(p) for p in params], True, 2, 0.0, False, bidirectional)
    assert tuple(got[0].shape) == (5, 2, 2 * (2 if bidirectional else 1))
    for a, b in zip(got, want):
        assert_close(a, b)
    zeros = run("lstm", E.tensor(x), None, [E.tensor(p) for p in params], True, 2, 0.0,
                False, bidirectional)
    ref = np_layers("lstm", x, 0 * h0, 0 * c0, params, True, 2, bidirectional)
    for a, b in zip(zeros, ref):
        assert_close(a, b)


@pytest.mark.parametrize("op, cell", [("lstm", F.lstm_cell), ("gru", F.gru_cell),
                                      ("rnn_tanh", F.rnn_tanh_cell),
                                      ("rnn_relu", F.rnn_relu_cell)])
def test_one_layer_equals_a_loop_of_cells(op, cell):
    E.manual_seed(0)
    x = E.randn(6, 3, 4)
    params = [E.tensor(p) for p in make_params(op, 4, 5, dtype=np.float32)]
    h = E.randn(3, 5)
    state = (h, E.randn(3, 5)) if op == "lstm" else h
    got = run(op, x, tuple(s.unsqueeze(0) for s in state) if op == "lstm" else
              h.unsqueeze(0), params)
    outs = []
    for t in range(6):
        state = cell(x[t], state, *params)
        outs.append(state[0] if op == "lstm" else state)
    np.testing.assert_allclose(to_np(got[0]), to_np(E.stack(outs)), rtol=1e-5, atol=1e-6)
    final = state[0] if op == "lstm" else state
    np.testing.assert_allclose(to_np(got[1][0]), to_np(final), rtol=1e-5, atol=1e-6)


def test_dropout_between_layers_draws_as_the_layers_one_by_one():
    params = [E.tensor(p) for p in make_params("gru", 3, 4, 2)]
    x = E.tensor(np.random.default_rng(3).standard_normal((5, 2, 3)))
    E.manual_seed(7)
    got = run("gru", x, None, params, True, 2, 0.5, True)
    E.manual_seed(7)   # the same draws: layer 0, one dropout mask, layer 1
    first = run("gru", x, None, params[:4], True, 1)
    mid = E.dropout(first[0], 0.5, True)
    second = run("gru", mid, None, params[4:], True, 1)
    assert_close(got[0], to_np(second[0]))
    assert_close(got[1], np.concatenate([to_np(first[1]), to_np(second[1])]))
    assert not np.allclose(to_np(got[0]), to_np(run("gru", x, None, params, True, 2)[0]))
    same = run("gru", x, None, params, True, 2, 0.5, False)   # not train: no dropout
    assert_close(same[0], to_np(run("gru", x, None, params, True, 2)[0]))


def _tiny(op, layers, bidirectional):
    rng = np.random.default_rng(4)
    dl = layers * (2 if bidirectional else 1)
    x = E.tensor(rng.standard_normal((3, 2, 2)), requires_grad=True)
    h0 = E.tensor(rng.standard_normal((dl, 2, 2)), requires_grad=True)
    c0 = E.tensor(rng.standard_normal((dl, 2, 2)), requires_grad=True)
    params = [E.tensor(p, requires_grad=True)
              for p in make_params(op, 2, 2, layers, bidirectional)]
    return x, h0, c0, params


@pytest.mark.parametrize("op", list(OPS))
def test_gradcheck_through_input_states_and_every_parameter(op):
    x, h0, c0, params = _tiny(op, 2, True)

    def fn(x, h0, c0, *ps):
        hx = (h0, c0) if op == "lstm" else h0
        return tuple(run(op, x, hx, list(ps), True, 2, 0.0, False, True))

    assert gradcheck(fn, (x, h0, c0, *params))


@pytest.mark.parametrize("op", ["lstm", "gru", "rnn_tanh"])
def test_gradgradcheck(op):
    x, h0, c0, params = _tiny(op, 1, True)
    fixed = [p.detach() for p in params]

    def fn(x, h0, c0, w_hh):
        hx = (h0, c0) if op == "lstm" else h0
        return tuple(run(op, x, hx, [fixed[0], w_hh] + fixed[2:], True, 1, 0.0, False,
                         True))

    assert gradgradcheck(fn, (x, h0, c0, params[1]))


def test_a_trace_records_one_node():
    params = [E.tensor(p) for p in make_params("lstm", 2, 3, 2, True)]
    x = E.randn(4, 3, 2, dtype=E.float64)
    tm = ember.jit.trace(lambda x: run("lstm", x, None, params, True, 2, 0.0, False, True),
                         (x,))
    kinds = [n.kind for n in tm.graph.nodes()]
    assert kinds.count("ember::lstm.input") == 1
    assert not [k for k in kinds if k.startswith("ember::") and k != "ember::lstm.input"]
    y = E.randn(9, 5, 2, dtype=E.float64)   # another length and batch
    for a, b in zip(tm(y), run("lstm", y, None, params, True, 2, 0.0, False, True)):
        np.testing.assert_array_equal(to_np(a), to_np(b))


def _lstm_args():
    return E.randn(4, 3, 2), [E.tensor(p) for p in make_params("lstm", 2, 3, dtype=np.float32)]


@pytest.mark.parametrize("call, exc, match", [
    (lambda x, p: run("lstm", x[0], None, p), ShapeError, r"3-D input \(L, N, H_in\)"),
    (lambda x, p: run("lstm", x[:0], None, p), ShapeError, "sequence length larger than 0"),
    (lambda x, p: run("lstm", x.long(), None, p), DtypeError, "floating input"),
    (lambda x, p: run("lstm", x, None, p[:3]), ValueError, r"expected 4 .* got 3"),
    (lambda x, p: run("lstm", x, None, p, num_layers=2), ValueError, r"8 in all, got 4"),
    (lambda x, p: run("lstm", x, None, p, num_layers=0), ValueError, "num_layers >= 1"),
    (lambda x, p: run("lstm", x, None, p, dropout=1.5), ValueError, r"dropout in \[0, 1\]"),
    (lambda x, p: run("lstm", x, None, [p[0].t(), *p[1:]]), ShapeError,
     r"params\[0\] \(w_ih of layer 0\) of shape \(12, 2\)"),
    (lambda x, p: run("lstm", x, None, p[:2] + [p[2][:5], p[3]]), ShapeError,
     r"params\[2\] \(b_ih of layer 0\)"),
    (lambda x, p: run("lstm", x, None, [p[0].double(), *p[1:]]), DtypeError,
     "params of the input's dtype"),
    (lambda x, p: run("lstm", x, [E.zeros(1, 3, 3)], p), ValueError, r"\[\] .* or \[h_0, c_0\]"),
    (lambda x, p: run("lstm", x, [E.zeros(1, 2, 3), E.zeros(1, 3, 3)], p), ShapeError,
     r"hx\[0\] of shape .* \(1, 3, 3\), got \(1, 2, 3\)"),
    (lambda x, p: run("lstm", x, [E.zeros(1, 3, 3), E.zeros(1, 3, 3).double()], p),
     DtypeError, r"hx\[1\] of the input's dtype"),
    (lambda x, p: E.gru(x, E.zeros(2, 3, 3), [E.tensor(q) for q in make_params(
        "gru", 2, 3, dtype=np.float32)], True, 1, 0.0, False, False, False), ShapeError,
     r"hx of shape \(D \* num_layers, N, H\) = \(1, 3, 3\)"),
    (lambda x, p: E.gru(x, None, p, True, 1, 0.0, False, False, False), ShapeError,
     r"params\[0\] \(w_ih of layer 0\) of shape \(9, 2\)"),
    (lambda x, p: E.rnn_tanh(x, None, [E.tensor(q) for q in make_params(
        "lstm", 2, 3, proj=2, dtype=np.float32)], True, 1, 0.0, False, False, False),
     ValueError, r"expected 4 params per layer"),
])
def test_errors(call, exc, match):
    x, params = _lstm_args()
    with pytest.raises(exc, match=match):
        call(x, params)
