"""RNNCell, LSTMCell, GRUCell: parameters as PyTorch names them, batched / unbatched /
default-state forward against numpy float64, errors, repr, and tracing an LSTMCell."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ember as E
import ember.jit
from ember import nn
from ember.errors import ShapeError
from helpers import assert_close, to_np


def _sig(x):
    return 1 / (1 + np.exp(-x))


def _ref(cell, x, h, c=None):
    """One step of torch's documented equations, gates sliced out of the rows by hand."""
    p = {k: to_np(v).astype(np.float64) for k, v in cell.state_dict().items()}
    hs = cell.hidden_size
    b_ih = p.get("bias_ih", np.zeros(len(p["weight_ih"])))
    b_hh = p.get("bias_hh", np.zeros(len(p["weight_hh"])))

    def part(k, h):  # the k-th gate's input and hidden parts
        rows = slice(k * hs, (k + 1) * hs)
        return x @ p["weight_ih"][rows].T + b_ih[rows], h @ p["weight_hh"][rows].T + b_hh[rows]

    if isinstance(cell, nn.RNNCell):
        a = sum(part(0, h))
        return np.tanh(a) if cell.nonlinearity == "tanh" else np.maximum(a, 0)
    if isinstance(cell, nn.GRUCell):
        (i_r, h_r), (i_z, h_z), (i_n, h_n) = (part(k, h) for k in range(3))
        r, z = _sig(i_r + h_r), _sig(i_z + h_z)
        n = np.tanh(i_n + r * h_n)
        return (1 - z) * n + z * h
    i, f, g, o = (sum(part(k, h)) for k in range(4))
    c = _sig(f) * c + _sig(i) * np.tanh(g)
    return _sig(o) * np.tanh(c), c


CELLS = [lambda **kw: nn.RNNCell(3, 4, **kw),
         lambda **kw: nn.RNNCell(3, 4, nonlinearity="relu", **kw),
         lambda **kw: nn.LSTMCell(3, 4, **kw), lambda **kw: nn.GRUCell(3, 4, **kw)]


@pytest.mark.parametrize("make_cell", CELLS, ids=["tanh", "relu", "lstm", "gru"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("given", [True, False])
def test_forward_matches_numpy(make_cell, bias, batched, given):
    E.manual_seed(0)
    cell = make_cell(bias=bias, dtype=E.float64)
    rng = np.random.default_rng(0)
    x, h, c = rng.standard_normal((2, 3)), rng.standard_normal((2, 4)), rng.standard_normal((2, 4))
    if not given:
        h, c = np.zeros_like(h), np.zeros_like(c)
    want = _ref(cell, x, h, c)
    lstm = isinstance(cell, nn.LSTMCell)
    if not batched:
        x, h, c = x[0], h[0], c[0]
        want = tuple(w[0] for w in want) if lstm else want[0]
    hx = ((E.tensor(h), E.tensor(c)) if lstm else E.tensor(h)) if given else None
    got = cell(E.tensor(x), hx)
    if lstm:
        assert_close(got[0], want[0])
        assert_close(got[1], want[1])
    else:
        assert_close(got, want)


def test_parameters_match_pytorch():
    cell = nn.LSTMCell(3, 4)
    assert [(k, tuple(v.shape)) for k, v in cell.state_dict().items()] == [
        ("weight_ih", (16, 3)), ("weight_hh", (16, 4)), ("bias_ih", (16,)), ("bias_hh", (16,))]
    gru = nn.GRUCell(3, 4, bias=False)
    assert [(k, tuple(v.shape)) for k, v in gru.state_dict().items()] == [
        ("weight_ih", (12, 3)), ("weight_hh", (12, 4))]
    assert gru.bias_ih is None and gru.bias_hh is None
    assert [tuple(v.shape) for v in nn.RNNCell(3, 4).parameters()] == [(4, 3), (4, 4), (4,),
                                                                       (4,)]


def test_default_init_bounds_and_dtype():
    E.manual_seed(0)
    cell = nn.GRUCell(5, 64, dtype=E.float64)
    bound = 1 / math.sqrt(64)
    for p in cell.parameters():
        w = to_np(p)
        assert p.dtype is E.float64
        assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound


def test_reprs():
    assert repr(nn.RNNCell(10, 20, bias=False, nonlinearity="relu")) == \
        "RNNCell(10, 20, bias=False, nonlinearity=relu)"
    assert repr(nn.LSTMCell(3, 4)) == "LSTMCell(3, 4)"
    assert repr(nn.GRUCell(3, 4, bias=False)) == "GRUCell(3, 4, bias=False)"


def test_trace_of_lstm_cell_matches_eager_values_and_gradients():
    E.manual_seed(0)
    cell = nn.LSTMCell(3, 4, dtype=E.float64)
    rng = np.random.default_rng(0)
    t = lambda *s: E.tensor(rng.standard_normal(s), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        traced = ember.jit.trace(cell, (t(2, 3), (t(2, 4), t(2, 4))))
    x, h, c = t(2, 3), t(2, 4), t(2, 4)
    wrt = [x, h, c] + list(cell.parameters())
    got, want = traced(x, (h, c)), cell(x, (h, c))
    g_got = E.autograd.grad((got[0] * got[1]).sum(), wrt)
    g_want = E.autograd.grad((want[0] * want[1]).sum(), wrt)
    for a, b in zip(got + g_got, want + g_want):
        assert_close(a.detach(), to_np(b.detach()))


@pytest.mark.parametrize("call, exc, match", [
    (lambda: nn.LSTMCell(10, 20)(E.zeros(2, 3, 10)), ShapeError,
     "LSTMCell: Expected input to be 1D or 2D, got 3D instead"),
    (lambda: nn.LSTMCell(10, 20)(E.zeros(3, 5)), ShapeError,
     "input has inconsistent input_size: got 5 expected 10"),
    (lambda: nn.GRUCell(10, 20)(E.zeros(3, 10), E.zeros(2, 20)), ShapeError,
     "Input batch size 3 doesn't match hidden0 batch size 2"),
    (lambda: nn.RNNCell(10, 20)(E.zeros(10), E.zeros(3, 20)), ShapeError,
     r"RNNCell: Expected hidden to be 1D like the input \(unbatched\), got 2D"),
    (lambda: nn.LSTMCell(10, 20)(E.zeros(3, 10), E.zeros(3, 20)), TypeError,
     r"pair \(h, c\)"),
    (lambda: nn.GRUCell(10, 20)(E.zeros(3, 10), (E.zeros(3, 20),)), TypeError,
     "expected hidden to be a Tensor"),
    (lambda: nn.GRUCell(10, 20)(E.zeros(3, 10, dtype=E.float64)), ValueError,
     r"input dtype \(ember.float64\) does not match weight dtype \(ember.float32\)"),
    (lambda: nn.RNNCell(10, 20, nonlinearity="gelu"), ValueError, "Unknown nonlinearity"),
    (lambda: nn.LSTMCell(10, -1), ValueError, "hidden_size must be non-negative, got -1"),
    (lambda: nn.GRUCell(10.0, 3), TypeError, "input_size should be of type int"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
