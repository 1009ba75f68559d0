"""F.rnn_tanh_cell, rnn_relu_cell, lstm_cell, gru_cell against numpy float64 references of
torch's equations, with gradcheck / gradgradcheck and the shape and dtype errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import ShapeError
from helpers import FLOAT_DTYPES, assert_close, make, to_np

N, H_IN, H = 3, 4, 5


def _sig(x):
    return 1 / (1 + np.exp(-x))


def _ref(name, x, hx, w_ih, w_hh, b_ih, b_hh):
    """One step, with each gate's rows of the stacked weights sliced out by hand."""
    b_ih = np.zeros(w_ih.shape[0]) if b_ih is None else b_ih
    b_hh = np.zeros(w_hh.shape[0]) if b_hh is None else b_hh

    def gate(k, h):  # the k-th gate's input and hidden parts
        rows = slice(k * H, (k + 1) * H)
        return x @ w_ih[rows].T + b_ih[rows], h @ w_hh[rows].T + b_hh[rows]

    if name in ("rnn_tanh_cell", "rnn_relu_cell"):
        a = sum(gate(0, hx))
        return np.tanh(a) if name == "rnn_tanh_cell" else np.maximum(a, 0)
    if name == "gru_cell":
        (i_r, h_r), (i_z, h_z), (i_n, h_n) = (gate(k, hx) for k in range(3))
        r, z = _sig(i_r + h_r), _sig(i_z + h_z)
        n = np.tanh(i_n + r * h_n)
        return (1 - z) * n + z * hx
    h, c = hx
    i, f, g, o = (sum(gate(k, h)) for k in range(4))
    c = _sig(f) * c + _sig(i) * np.tanh(g)
    return _sig(o) * np.tanh(c), c


_GATES = {"rnn_tanh_cell": 1, "rnn_relu_cell": 1, "lstm_cell": 4, "gru_cell": 3}


def _args(name, dtype, bias=True, seed=0):
    """``(tensors, numpy twins)`` for input, hx, w_ih, w_hh, b_ih, b_hh."""
    g = _GATES[name]
    shapes = [(N, H_IN), (N, H), (g * H, H_IN), (g * H, H), (g * H,), (g * H,)]
    pairs = [make(s, dtype, low=-1.0, high=1.0, seed=seed + k) for k, s in enumerate(shapes)]
    ts, ns = [p[0] for p in pairs], [p[1] for p in pairs]
    if name == "lstm_cell":
        c, cn = make((N, H), dtype, low=-1.0, high=1.0, seed=seed + 9)
        ts[1], ns[1] = (ts[1], c), (ns[1], cn)
    if not bias:
        ts[4:], ns[4:] = [None, None], [None, None]
    return ts, ns


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("name", list(_GATES))
def test_values(name, bias, dtype):
    ts, ns = _args(name, dtype, bias)
    got, want = getattr(F, name)(*ts), _ref(name, *ns)
    if name == "lstm_cell":
        assert_close(got[0], want[0], dtype=dtype)
        assert_close(got[1], want[1], dtype=dtype)
    else:
        assert_close(got, want, dtype=dtype)


def test_one_bias_only():
    ts, ns = _args("lstm_cell", E.float64)
    ts[5], ns[5] = None, None
    assert_close(F.lstm_cell(*ts)[0], _ref("lstm_cell", *ns)[0])


def _leaves(name, seed=0):
    ts, _ = _args(name, E.float64, seed=seed)
    hx = ts[1]
    flat = [ts[0]] + (list(hx) if isinstance(hx, tuple) else [hx]) + ts[2:]
    return [t.detach().requires_grad_() for t in flat]


def _call(name):
    if name == "lstm_cell":
        return lambda x, h, c, *w: F.lstm_cell(x, (h, c), *w)
    return getattr(F, name)


@pytest.mark.parametrize("name", list(_GATES))
def test_gradcheck(name):
    leaves = _leaves(name)
    if name == "rnn_relu_cell":  # finite differences across relu's kink would be wrong
        x, h, w_ih, w_hh, b_ih, b_hh = (to_np(t.detach()) for t in leaves)
        assert np.abs(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh).min() > 1e-4
    assert gradcheck(_call(name), tuple(leaves))


@pytest.mark.parametrize("name", ["lstm_cell", "gru_cell"])
def test_gradgradcheck(name):
    assert gradgradcheck(_call(name), tuple(_leaves(name, seed=3)))


def _z(*shape, dtype=E.float32):
    return E.zeros(shape, dtype=dtype)


@pytest.mark.parametrize("args, exc, match", [
    ((_z(3, 5), _z(3, 20), _z(20, 10), _z(20, 20)), ShapeError,
     "input has inconsistent input_size: got 5 expected 10"),
    ((_z(3, 10), _z(2, 20), _z(20, 10), _z(20, 20)), ShapeError,
     "Input batch size 3 doesn't match hidden0 batch size 2"),
    ((_z(3, 10), _z(3, 7), _z(20, 10), _z(20, 20)), ShapeError,
     "hidden0 has inconsistent hidden_size: got 7, expected 20"),
    ((_z(10), _z(20), _z(20, 10), _z(20, 20)), ShapeError,
     r"expected input of shape \(N, input_size\) = \(N, 10\), got \(10,\)"),
    ((_z(3, 10), _z(3, 20), _z(20, 10), _z(10, 20)), ShapeError,
     r"w_hh of shape \(1 \* hidden_size, hidden_size\), got \(20, 10\) and \(10, 20\)"),
    ((_z(3, 10), _z(3, 20), _z(20, 10), _z(20, 20), _z(3)), ShapeError,
     r"expected b_ih of shape \(1 \* hidden_size,\) = \(20,\), got \(3,\)"),
    ((_z(3, 10, dtype=E.float64), _z(3, 20), _z(20, 10), _z(20, 20)), ValueError,
     r"input dtype \(ember.float64\) does not match weight dtype \(ember.float32\)"),
    ((_z(3, 10), _z(3, 20, dtype=E.float64), _z(20, 10), _z(20, 20)), ValueError,
     r"hx dtype \(ember.float64\) does not match weight dtype"),
])
def test_errors(args, exc, match):
    with pytest.raises(exc, match=match):
        F.rnn_tanh_cell(*args)


def test_lstm_cell_errors():
    w_ih, w_hh = _z(80, 10), _z(80, 20)
    with pytest.raises(TypeError, match=r"pair \(h, c\) of tensors, got Tensor"):
        F.lstm_cell(_z(3, 10), _z(3, 20), w_ih, w_hh)
    with pytest.raises(ShapeError, match="hidden1 has inconsistent hidden_size: got 7"):
        F.lstm_cell(_z(3, 10), (_z(3, 20), _z(3, 7)), w_ih, w_hh)
    with pytest.raises(ShapeError, match=r"\(4 \* hidden_size, input_size\)"):
        F.lstm_cell(_z(3, 10), (_z(3, 20), _z(3, 20)), _z(60, 10), _z(60, 20))
