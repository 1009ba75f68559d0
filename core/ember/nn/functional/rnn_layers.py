"""The stacked recurrent layers as composite ops: ``lstm``, ``gru``, ``rnn_tanh`` and
``rnn_relu`` (PyTorch's ``aten::lstm.input`` and kin, section "nn: recurrent layers" of
``native_functions.yaml``), and the one-step functions they loop over.

Each op takes PyTorch's flat parameter list: per layer and direction ``w_ih``
``(G * H, in)``, ``w_hh`` ``(G * H, H_out)``, then with ``has_biases`` ``b_ih`` and
``b_hh`` ``(G * H,)``, then, LSTM only, ``w_hr`` ``(H_out, H)`` for a projection; ``G`` is
4 (LSTM, gates i, f, g, o), 3 (GRU, gates r, z, n) or 1. Per layer and direction one
matmul projects the input of every time step (with ``b_hh`` folded in where it only adds,
not the GRU's n gate); a Python loop over the *run-time* sequence length then runs the
recurrent steps. Being composites, they trace as one ``ember::lstm`` node whose plan
calls the op, so a traced layer follows the sequence length and batch size of each
call, and autograd reaches every order through the ops inside.

Departures from PyTorch's schemas: ``lstm``'s ``hx`` may be an empty list and ``gru``'s
and ``rnn_*``'s ``hx`` None, meaning zero initial states built inside the op from the
input's batch (so a trace holds no batch size); the projection of ``lstm`` is read from
the number of parameters per layer (PyTorch reads it from ``hx``, which may be absent
here).

``nn.RNN``/``LSTM``/``GRU`` call these ops; a ``PackedSequence`` input runs
:func:`_rnn_layers` with its batch sizes directly (PyTorch's ``.data`` overloads are not
declared). Reference: ``aten/src/ATen/native/RNN.cpp``.
"""
from __future__ import annotations

from collections import namedtuple

from ember.ops import namespace as E
from ember.errors import DtypeError, ShapeError
from ember.ops.composite import composite

from .linear import linear

__all__: list = []   # the ops are ember.lstm, ember.gru, ember.rnn_tanh, ember.rnn_relu

# as the generated wrappers name them: a namedtuple is what the tracer records as outputs
_LSTM = namedtuple("lstm", ["result0", "result1", "result2"], module="ember.return_types")
_PAIRS = {op: namedtuple(op, ["result0", "result1"], module="ember.return_types")
          for op in ("gru", "rnn_tanh", "rnn_relu")}


# ---- one step ------------------------------------------------------------------------------

def _in_proj(input, w_ih, b_ih, b_hh):
    """``input @ w_ih.T`` plus both biases: outside a nonlinearity they only add, so
    folding ``b_hh`` in here saves an add per time step (not for the GRU's n gate)."""
    if b_ih is None or b_hh is None:
        bias = b_ih if b_hh is None else b_hh
    else:
        bias = b_ih + b_hh
    return linear(input, w_ih, bias)


def _rnn_step(gi, h, w_hh, nonlinearity):
    """``act(gi + h @ w_hh.T)``; ``gi`` is the input projection with both biases."""
    pre = E.addmm(gi, h, w_hh.t())
    return E.tanh(pre) if nonlinearity == "tanh" else E.relu(pre)


def _lstm_step(gi, h, c, w_hh, w_hr=None):
    """One LSTM step from the input projection ``gi`` (both biases in); gate order i, f,
    g, o. ``w_hr`` projects the new hidden state (``proj_size``); returns ``(h', c')``."""
    i, f, g, o = E.addmm(gi, h, w_hh.t()).chunk(4, 1)
    c = E.sigmoid(f) * c + E.sigmoid(i) * E.tanh(g)
    h = E.sigmoid(o) * E.tanh(c)
    return (h if w_hr is None else E.matmul(h, w_hr.t())), c


def _gru_step(gi, h, w_hh, b_hh):
    """One GRU step from the input projection ``gi`` (``b_ih`` in, ``b_hh`` not: the n
    gate scales ``h @ W_hn.T + b_hn`` by r); gate order r, z, n."""
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = linear(h, w_hh, b_hh).chunk(3, 1)
    r = E.sigmoid(i_r + h_r)
    z = E.sigmoid(i_z + h_z)
    n = E.tanh(i_n + r * h_n)
    return n + z * (h - n)  # (1 - z) * n + z * h, one multiply fewer


# ---- layers --------------------------------------------------------------------------------

def _direction(mode, steps, weights, h, c, reverse: bool):
    """One layer in one direction: the ``_*_step`` over the input projections ``steps``
    (one ``(b_t, G)`` tensor a time step) from the state ``h`` (and ``c``) ``(B, H)``;
    returns the per-step outputs in time order and the final state.

    A packed batch runs only its first ``b_t`` sequences at step t (``b_t`` does not
    increase with t); the others keep their state, which makes it the final state of a
    sequence that has ended and the initial one of a reversed sequence yet to start.
    """
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    ys = [None] * len(steps)
    for t in (range(len(steps) - 1, -1, -1) if reverse else range(len(steps))):
        g, b = steps[t], steps[t].shape[0]
        h_t, c_t = (h, c) if b == h.shape[0] else (h[:b], None if c is None else c[:b])
        if mode == "LSTM":
            h_t, c_t = _lstm_step(g, h_t, c_t, w_hh, w_hr)
        elif mode == "GRU":
            h_t = _gru_step(g, h_t, w_hh, b_hh)
        else:
            h_t = _rnn_step(g, h_t, w_hh, "tanh" if mode == "RNN_TANH" else "relu")
        ys[t] = h_t
        if b == h.shape[0]:
            h, c = h_t, c_t
        else:
            h = E.cat([h_t, h[b:]], 0)
            c = None if c is None else E.cat([c_t, c[b:]], 0)
    return ys, h, c


def _rnn_layers(mode, x, batch_sizes, h0, c0, weights, num_layers: int,
                bidirectional: bool, dropout: float, training: bool):
    """The stacked recurrent layers, as PyTorch's ``_VF.rnn_tanh`` / ``lstm`` / ``gru``.

    Args:
        mode: ``'RNN_TANH'``, ``'RNN_RELU'``, ``'LSTM'`` or ``'GRU'``.
        x: time-major ``(L, N, H_in)``, or with ``batch_sizes`` (a list of ints) packed
            data ``(sum(batch_sizes), H_in)``.
        h0, c0: ``(D * num_layers, N, H)``; ``c0`` None unless LSTM.
        weights: per layer and direction (index ``layer * D + direction``) the tuple
            ``(w_ih, w_hh, b_ih, b_hh, w_hr)``, None for the absent ones.
        dropout, training: dropout on every layer's output but the last's, if training.
    Returns ``(output, h_n, c_n)``: output like ``x`` with ``D * H_out`` features,
    ``h_n``/``c_n`` like ``h0``/``c0``.
    """
    num_directions = 2 if bidirectional else 1
    h0 = h0.unbind(0)
    c0 = c0.unbind(0) if c0 is not None else [None] * len(h0)
    h_n, c_n = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(num_directions):
            k = layer * num_directions + d
            w_ih, w_hh, b_ih, b_hh, _ = weights[k]
            # NOTE: the input projection of all time steps is one matmul; only the
            # recurrent part is left inside the loop.
            if mode == "GRU":
                gi = linear(x, w_ih, b_ih)
            else:
                gi = _in_proj(x, w_ih, b_ih, b_hh)
            steps = gi.unbind(0) if batch_sizes is None else gi.split(batch_sizes, 0)
            ys, h, c = _direction(mode, steps, weights[k], h0[k], c0[k], reverse=d == 1)
            outs.append(E.stack(ys, 0) if batch_sizes is None else E.cat(ys, 0))
            h_n.append(h)
            c_n.append(c)
        x = outs[0] if num_directions == 1 else E.cat(outs, -1)
        if training and dropout > 0 and layer < num_layers - 1:
            x = E.dropout(x, dropout, True)
    return x, E.stack(h_n, 0), (E.stack(c_n, 0) if mode == "LSTM" else None)


# ---- the ops' argument checks --------------------------------------------------------------

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _layout(op: str, input, num_layers, dropout, batch_first: bool):
    """``input`` time-major ``(L, N, H_in)``, after checking it and the plain arguments."""
    if num_layers < 1:
        raise ValueError(f"{op}(): expected num_layers >= 1, got {num_layers}")
    if not 0 <= dropout <= 1:
        raise ValueError(f"{op}(): expected dropout in [0, 1], got {dropout}")
    if input.ndim != 3:
        layout = "(N, L, H_in)" if batch_first else "(L, N, H_in)"
        raise ShapeError(f"{op}(): expected a 3-D input {layout}, got shape "
                         f"{tuple(input.shape)}; add the batch dim of an unbatched input "
                         f"with input.unsqueeze({0 if batch_first else 1})")
    if not input.dtype.is_floating_point:
        raise DtypeError(f"{op}(): expected a floating input, got {input.dtype}; convert "
                         f"it with input.float()")
    x = input.transpose(0, 1) if batch_first else input
    if x.shape[0] == 0:
        raise ShapeError(f"{op}(): expected a sequence length larger than 0, got input of "
                         f"shape {tuple(input.shape)}")
    return x


def _layer_weights(op: str, mode: str, x, params, has_biases: bool, num_layers: int,
                   bidirectional: bool):
    """Check ``params`` (PyTorch's flat list) against ``x`` and group them per layer and
    direction as ``(w_ih, w_hh, b_ih, b_hh, w_hr)``; returns ``(weights, H, H_out)``."""
    gates, dirs = _GATES[mode], 2 if bidirectional else 1
    base = 4 if has_biases else 2
    per = len(params) // (num_layers * dirs)
    fits = per * num_layers * dirs == len(params) and (
        per == base or (per == base + 1 and mode == "LSTM"))
    if not fits:
        extra = " (+1 with a projection w_hr)" if mode == "LSTM" else ""
        raise ValueError(f"{op}(): expected {base}{extra} params per layer and direction "
                         f"(w_ih, w_hh{', b_ih, b_hh' if has_biases else ''}) for "
                         f"num_layers={num_layers}, bidirectional={bidirectional}, "
                         f"has_biases={has_biases}: {base * num_layers * dirs} in all, got "
                         f"{len(params)}")
    # the hidden size is w_hh's width, or w_hr's with a projection (to H_out rows)
    last = params[base] if per > base else params[1]
    hidden = last.shape[-1] if last.ndim == 2 else -1
    h_out = last.shape[0] if per > base and last.ndim == 2 else hidden
    weights = []
    for k in range(num_layers * dirs):
        group = list(params[k * per:(k + 1) * per])
        layer_in = x.shape[2] if k < dirs else dirs * h_out
        shapes = [(gates * hidden, layer_in), (gates * hidden, h_out)]
        shapes += [(gates * hidden,)] * (2 if has_biases else 0)
        shapes += [(h_out, hidden)] if per > base else []
        names = ["w_ih", "w_hh"] + (["b_ih", "b_hh"] if has_biases else []) + \
            (["w_hr"] if per > base else [])
        for j, (t, shape, name) in enumerate(zip(group, shapes, names)):
            if tuple(t.shape) != shape:
                raise ShapeError(f"{op}(): expected params[{k * per + j}] ({name} of layer "
                                 f"{k // dirs}{', reverse' if k % dirs else ''}) of shape "
                                 f"{shape} for input size {x.shape[2]} and hidden size "
                                 f"{hidden}, got {tuple(t.shape)}")
            if t.dtype is not x.dtype:
                raise DtypeError(f"{op}(): expected params of the input's dtype {x.dtype}, "
                                 f"got {t.dtype} for params[{k * per + j}]; convert the "
                                 f"input or the parameters with .to()")
        if not has_biases:
            group[2:2] = [None, None]
        weights.append(tuple(group) + ((None,) if len(group) == 4 else ()))
    return weights, hidden, h_out


def _state(op: str, what: str, h, x, layers: int, size: int):
    """The initial state ``h`` checked as ``(layers, N, size)``, or zeros if None."""
    shape = (layers, x.shape[1], size)
    if h is None:
        return E.zeros(shape, dtype=x.dtype, device=x.device)
    if tuple(h.shape) != shape:
        raise ShapeError(f"{op}(): expected {what} of shape (D * num_layers, N, H) = {shape}, "
                         f"got {tuple(h.shape)}")
    if h.dtype is not x.dtype:
        raise DtypeError(f"{op}(): expected {what} of the input's dtype {x.dtype}, got "
                         f"{h.dtype}; convert it with {what}.to({x.dtype})")
    return h


def _single(op: str, mode: str, input, hx, params, has_biases, num_layers, dropout, train,
            bidirectional, batch_first):
    """gru, rnn_tanh, rnn_relu: ``(output, h_n)``."""
    x = _layout(op, input, num_layers, dropout, batch_first)
    weights, hidden, _ = _layer_weights(op, mode, x, params, has_biases, num_layers,
                                        bidirectional)
    layers = num_layers * (2 if bidirectional else 1)
    h0 = _state(op, "hx", hx, x, layers, hidden)
    out, h_n, _ = _rnn_layers(mode, x, None, h0, None, weights, num_layers, bidirectional,
                              dropout, train)
    return _PAIRS[op](out.transpose(0, 1) if batch_first else out, h_n)


# ---- the ops ---------------------------------------------------------------------------------

@composite("lstm.input")
def _lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
          batch_first):
    x = _layout("lstm", input, num_layers, dropout, batch_first)
    weights, hidden, h_out = _layer_weights("lstm", "LSTM", x, params, has_biases, num_layers,
                                            bidirectional)
    if len(hx) not in (0, 2):
        raise ValueError(f"lstm(): expected hx to be [] (zero states) or [h_0, c_0], got "
                         f"{len(hx)} tensors")
    h0, c0 = hx if hx else (None, None)
    layers = num_layers * (2 if bidirectional else 1)
    h0 = _state("lstm", "hx[0]", h0, x, layers, h_out)
    c0 = _state("lstm", "hx[1]", c0, x, layers, hidden)
    out, h_n, c_n = _rnn_layers("LSTM", x, None, h0, c0, weights, num_layers, bidirectional,
                                dropout, train)
    return _LSTM(out.transpose(0, 1) if batch_first else out, h_n, c_n)


@composite("gru.input")
def _gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
         batch_first):
    return _single("gru", "GRU", input, hx, params, has_biases, num_layers, dropout, train,
                   bidirectional, batch_first)


@composite("rnn_tanh.input")
def _rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
              batch_first):
    return _single("rnn_tanh", "RNN_TANH", input, hx, params, has_biases, num_layers,
                   dropout, train, bidirectional, batch_first)


@composite("rnn_relu.input")
def _rnn_relu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
              batch_first):
    return _single("rnn_relu", "RNN_RELU", input, hx, params, has_biases, num_layers,
                   dropout, train, bidirectional, batch_first)
