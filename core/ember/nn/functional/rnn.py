"""Recurrent cells: ``rnn_tanh_cell``, ``rnn_relu_cell``, ``lstm_cell``, ``gru_cell``.

One time step of the Elman RNN, the LSTM and the GRU with PyTorch's gate layout
(``torch.rnn_tanh_cell``, ``torch.lstm_cell``, ...). They are plain Python functions of
ember ops (``linear``/``addmm``, ``sigmoid``, ``tanh``, ``chunk``), not native ops, so
autograd (to any order) and the tracer see through them.

Each cell is split in two: the input projection ``x @ W_ih.T + b_ih``, which does not
depend on the hidden state, and a ``_*_step`` that adds the recurrent part. The stacked
layers of ``nn.RNN`` / ``LSTM`` / ``GRU`` (``_rnn_layers``, PyTorch's ``_VF.lstm`` and
kin) compute the projection for all time steps in one matmul per layer and direction and
then call the ``_*_step`` functions, one per step, on padded or packed batches.
"""
from __future__ import annotations

import ember as E
from ember.errors import ShapeError

from .dropout import dropout as _dropout
from .linear import linear

__all__ = ["rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell"]


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
            x = _dropout(x, dropout, True)
    return x, E.stack(h_n, 0), (E.stack(c_n, 0) if mode == "LSTM" else None)


def _check_dtype(op: str, what: str, t, w) -> None:
    if t.dtype is not w.dtype:
        raise ValueError(f"{op}: {what} dtype ({t.dtype}) does not match weight dtype "
                         f"({w.dtype}). Convert {what}: {what}.to({w.dtype}), or convert the "
                         f"weights to {t.dtype}")


def _check_cell(op: str, gates: int, input, hx: tuple, w_ih, w_hh, b_ih, b_hh) -> None:
    """PyTorch's cell checks (``check_rnn_cell_forward_input`` / ``_hidden``), plus the
    weight shapes and dtypes, which PyTorch leaves to matmul's errors."""
    if w_ih.ndim != 2 or w_hh.ndim != 2 or w_ih.shape[0] != gates * w_hh.shape[1] \
            or w_hh.shape[0] != w_ih.shape[0]:
        raise ShapeError(f"{op}: expected w_ih of shape ({gates} * hidden_size, input_size) and "
                         f"w_hh of shape ({gates} * hidden_size, hidden_size), got "
                         f"{tuple(w_ih.shape)} and {tuple(w_hh.shape)}")
    for name, b in (("b_ih", b_ih), ("b_hh", b_hh)):
        if b is not None and tuple(b.shape) != (w_ih.shape[0],):
            raise ShapeError(f"{op}: expected {name} of shape ({gates} * hidden_size,) = "
                             f"({w_ih.shape[0]},), got {tuple(b.shape)}")
    input_size, hidden_size = w_ih.shape[1], w_hh.shape[1]
    if input.ndim != 2:
        raise ShapeError(f"{op}: expected input of shape (N, input_size) = (N, {input_size}), "
                         f"got {tuple(input.shape)}; add a batch dim with input.unsqueeze(0)")
    if input.shape[1] != input_size:
        raise ShapeError(f"input has inconsistent input_size: got {input.shape[1]} expected "
                         f"{input_size}")
    _check_dtype(op, "input", input, w_ih)
    for k, h in enumerate(hx):
        if h.ndim != 2:
            raise ShapeError(f"{op}: expected hidden{k} of shape (N, hidden_size) = "
                             f"({input.shape[0]}, {hidden_size}), got {tuple(h.shape)}")
        if h.shape[0] != input.shape[0]:
            raise ShapeError(f"Input batch size {input.shape[0]} doesn't match hidden{k} "
                             f"batch size {h.shape[0]}")
        if h.shape[1] != hidden_size:
            raise ShapeError(f"hidden{k} has inconsistent hidden_size: got {h.shape[1]}, "
                             f"expected {hidden_size}")
        _check_dtype(op, "hx", h, w_ih)


def _rnn_cell(op, nonlinearity, input, hx, w_ih, w_hh, b_ih, b_hh):
    _check_cell(op, 1, input, (hx,), w_ih, w_hh, b_ih, b_hh)
    return _rnn_step(_in_proj(input, w_ih, b_ih, b_hh), hx, w_hh, nonlinearity)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman RNN step ``h' = tanh(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh)``.

    Args:
        input: ``(N, input_size)``.
        hx: ``(N, hidden_size)``, of ``input``'s floating dtype.
        w_ih: ``(hidden_size, input_size)``; w_hh: ``(hidden_size, hidden_size)``.
        b_ih, b_hh: ``(hidden_size,)`` or None.
    Returns:
        ``h'`` of shape ``(N, hidden_size)``.
    Raises:
        ShapeError: inconsistent shapes (PyTorch's messages where it has them).
        ValueError: ``input`` or ``hx`` of another dtype than the weights.
    Reference: torch.rnn_tanh_cell (Elman 1990).
    """
    return _rnn_cell("rnn_tanh_cell", "tanh", input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman RNN step with ReLU: ``h' = relu(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh)``.

    Shapes, dtypes and errors as ``rnn_tanh_cell``. Reference: torch.rnn_relu_cell.
    """
    return _rnn_cell("rnn_relu_cell", "relu", input, hx, w_ih, w_hh, b_ih, b_hh)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step.

    With ``i, f, g, o`` the four ``hidden_size`` chunks of
    ``x @ w_ih.T + b_ih + h @ w_hh.T + b_hh``::

        c' = sigmoid(f) * c + sigmoid(i) * tanh(g)
        h' = sigmoid(o) * tanh(c')

    Args:
        input: ``(N, input_size)``.
        hx: a pair ``(h, c)``, both ``(N, hidden_size)``, of ``input``'s floating dtype.
        w_ih: ``(4 * hidden_size, input_size)``; w_hh: ``(4 * hidden_size, hidden_size)``.
        b_ih, b_hh: ``(4 * hidden_size,)`` or None.
    Returns:
        The pair ``(h', c')``, both ``(N, hidden_size)``.
    Raises:
        TypeError: ``hx`` not a pair of tensors.
        ShapeError: inconsistent shapes (PyTorch's messages where it has them).
        ValueError: ``input`` or ``hx`` of another dtype than the weights.
    Reference: torch.lstm_cell (Hochreiter & Schmidhuber 1997, with the forget gate of
    Gers et al. 2000).
    """
    if not isinstance(hx, (tuple, list)) or len(hx) != 2:
        raise TypeError(f"lstm_cell: expected hx to be a pair (h, c) of tensors, got "
                        f"{type(hx).__name__}")
    _check_cell("lstm_cell", 4, input, tuple(hx), w_ih, w_hh, b_ih, b_hh)
    return _lstm_step(_in_proj(input, w_ih, b_ih, b_hh), hx[0], hx[1], w_hh)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step.

    With ``r, z, n`` the chunks of the input (``i_*``, with ``b_ih``) and hidden (``h_*``,
    with ``b_hh``) projections::

        r = sigmoid(i_r + h_r);  z = sigmoid(i_z + h_z)
        n = tanh(i_n + r * h_n);  h' = (1 - z) * n + z * h

    Args:
        input: ``(N, input_size)``.
        hx: ``(N, hidden_size)``, of ``input``'s floating dtype.
        w_ih: ``(3 * hidden_size, input_size)``; w_hh: ``(3 * hidden_size, hidden_size)``.
        b_ih, b_hh: ``(3 * hidden_size,)`` or None.
    Returns:
        ``h'`` of shape ``(N, hidden_size)``.
    Raises:
        ShapeError: inconsistent shapes (PyTorch's messages where it has them).
        ValueError: ``input`` or ``hx`` of another dtype than the weights.
    Reference: torch.gru_cell (Cho et al. 2014).
    """
    _check_cell("gru_cell", 3, input, (hx,), w_ih, w_hh, b_ih, b_hh)
    return _gru_step(linear(input, w_ih, b_ih), hx, w_hh, b_hh)
