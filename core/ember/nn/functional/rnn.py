"""Recurrent cells: ``rnn_tanh_cell``, ``rnn_relu_cell``, ``lstm_cell``, ``gru_cell``.

One time step of the Elman RNN, the LSTM and the GRU with PyTorch's gate layout
(``torch.rnn_tanh_cell``, ``torch.lstm_cell``, ...). They are plain Python functions of
ember ops (``linear``/``addmm``, ``sigmoid``, ``tanh``, ``chunk``), not native ops, so
autograd (to any order) and the tracer see through them.

Each cell is split in two: the input projection ``x @ W_ih.T + b_ih``, which does not
depend on the hidden state, and a ``_*_step`` that adds the recurrent part. The stacked
layers of ``nn.RNN`` / ``LSTM`` / ``GRU`` (the composite ops ``ember.lstm``, ``gru``,
``rnn_tanh``, ``rnn_relu`` of ``rnn_layers.py``, PyTorch's ``_VF.lstm`` and kin) compute
the projection for all time steps in one matmul per layer and direction and then call the
same ``_*_step`` functions, one per step.
"""
from __future__ import annotations

from ember.errors import ShapeError

from .linear import linear
from .rnn_layers import _gru_step, _in_proj, _lstm_step, _rnn_step

__all__ = ["rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell"]


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
