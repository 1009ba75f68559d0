"""Recurrent cells: ``RNNCell``, ``LSTMCell``, ``GRUCell`` and their base ``RNNCellBase``.

One time step as a module, over the functional cells of ``nn.functional.rnn``. Parameters
have PyTorch's names and shapes: ``weight_ih`` ``(G * hidden_size, input_size)``,
``weight_hh`` ``(G * hidden_size, hidden_size)``, ``bias_ih`` and ``bias_hh``
``(G * hidden_size,)`` (None with ``bias=False``), with ``G`` 1 (RNN), 4 (LSTM, gates i, f,
g, o) or 3 (GRU, gates r, z, n), all initialised U(-1/sqrt(hidden_size),
1/sqrt(hidden_size)). Reference: torch.nn.RNNCell / LSTMCell / GRUCell.
"""
from __future__ import annotations

import math

from ember.ops import namespace as E
from ember.errors import ShapeError

from ... import factories as _f
from .. import init
from ..functional.rnn import gru_cell, lstm_cell, rnn_relu_cell, rnn_tanh_cell
from ..parameter import Parameter
from ._sizes import as_int
from .module import Module

__all__ = ["RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


class RNNCellBase(Module):
    """The parameters and input handling shared by the cells.

    Args:
        input_size, hidden_size: features of the input and of the hidden state (>= 0).
        bias: use ``bias_ih`` and ``bias_hh``.
        num_chunks: gates per cell (``G`` above).
        device, dtype: where and how the parameters are created.
    Raises TypeError for a non-int size or a non-bool ``bias``, ValueError for a negative
    size. Reference: torch.nn.RNNCellBase.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None):
        super().__init__()
        cls = type(self).__name__
        sizes = []
        for name, v in (("input_size", input_size), ("hidden_size", hidden_size)):
            n = as_int(v)
            if n is None:
                raise TypeError(f"{cls}: {name} should be of type int, got: {type(v).__name__}")
            if n < 0:
                raise ValueError(f"{cls}: {name} must be non-negative, got {v}")
            sizes.append(n)
        input_size, hidden_size = sizes
        if not isinstance(bias, bool):
            raise TypeError(f"{cls}: bias should be of type bool, got: {type(bias).__name__}")
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        gates = num_chunks * hidden_size
        self.weight_ih = Parameter(_f.empty(gates, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(_f.empty(gates, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_f.empty(gates, device=device, dtype=dtype))
            self.bias_hh = Parameter(_f.empty(gates, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batch(self, input, hx: tuple):
        """Check ranks and add the batch dim to an unbatched ``input`` (1-D) and ``hx``;
        states not given become zeros. Returns ``(input, hx, batched)``."""
        cls = type(self).__name__
        if input.ndim not in (1, 2):
            raise ShapeError(f"{cls}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        batched = input.ndim == 2
        for k, h in enumerate(hx):
            label = "hidden" if len(hx) == 1 else f"hx[{k}]"
            if h is not None and not isinstance(h, E.Tensor):
                raise TypeError(f"{cls}: expected {label} to be a Tensor (or None), got "
                                f"{type(h).__name__}")
            if h is not None and h.ndim != input.ndim:
                raise ShapeError(f"{cls}: Expected {label} to be {input.ndim}D like the input "
                                 f"({'batched' if batched else 'unbatched'}), got {h.ndim}D")
        if not batched:
            input = input.unsqueeze(0)
        zeros = None
        states = []
        for h in hx:
            if h is None:
                if zeros is None:
                    zeros = _f.zeros(input.shape[0], self.hidden_size, dtype=input.dtype,
                                     device=input.device)
                h = zeros
            elif not batched:
                h = h.unsqueeze(0)
            states.append(h)
        return input, states, batched

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s


def _unbatch(t, batched: bool):
    return t if batched else t.squeeze(0)


class RNNCell(RNNCellBase):
    """An Elman RNN cell: ``h' = act(x @ W_ih.T + b_ih + h @ W_hh.T + b_hh)``.

    Args:
        input_size, hidden_size, bias, device, dtype: as ``RNNCellBase``.
        nonlinearity: ``'tanh'`` (default) or ``'relu'``.
    Shapes: ``forward(input, hx=None)``: input ``(N, input_size)`` or ``(input_size,)``,
    ``hx`` ``(N, hidden_size)`` or ``(hidden_size,)`` (zeros if None) -> ``h'`` of hx's
    shape. Floating dtype, the parameters'.
    Raises ValueError for an unknown ``nonlinearity`` (at construction; PyTorch waits for
    the first call) or a dtype other than the parameters', ShapeError for inconsistent
    shapes. Reference: torch.nn.RNNCell (Elman 1990).
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             f"'relu'.")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, (h,), batched = self._batch(input, (hx,))
        cell = rnn_tanh_cell if self.nonlinearity == "tanh" else rnn_relu_cell
        h = cell(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return _unbatch(h, batched)


class LSTMCell(RNNCellBase):
    """A long short-term memory cell: with ``i, f, g, o`` the four chunks of
    ``x @ W_ih.T + b_ih + h @ W_hh.T + b_hh``, ``c' = sigmoid(f) * c + sigmoid(i) *
    tanh(g)`` and ``h' = sigmoid(o) * tanh(c')``.

    Args: input_size, hidden_size, bias, device, dtype as ``RNNCellBase``.
    Shapes: ``forward(input, hx=None)``: input ``(N, input_size)`` or ``(input_size,)``,
    ``hx`` a pair ``(h, c)`` of ``(N, hidden_size)`` or ``(hidden_size,)`` (zeros if None)
    -> the pair ``(h', c')`` of the same shapes. Floating dtype, the parameters'.
    Raises TypeError for an ``hx`` that is not a pair, ShapeError for inconsistent shapes,
    ValueError for a dtype other than the parameters'.
    Reference: torch.nn.LSTMCell (Hochreiter & Schmidhuber 1997; Gers et al. 2000).
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        if hx is None:
            hx = (None, None)
        elif not isinstance(hx, (tuple, list)) or len(hx) != 2 \
                or not all(isinstance(h, E.Tensor) for h in hx):
            raise TypeError(f"LSTMCell: expected hx to be a pair (h, c) of tensors (or None), "
                            f"got {type(hx).__name__}")
        input, states, batched = self._batch(input, tuple(hx))
        h, c = lstm_cell(input, tuple(states), self.weight_ih, self.weight_hh, self.bias_ih,
                         self.bias_hh)
        return _unbatch(h, batched), _unbatch(c, batched)


class GRUCell(RNNCellBase):
    """A gated recurrent unit cell: with ``r, z, n`` the chunks of the input (``i_*``) and
    hidden (``h_*``) projections, ``r = sigmoid(i_r + h_r)``, ``z = sigmoid(i_z + h_z)``,
    ``n = tanh(i_n + r * h_n)``, ``h' = (1 - z) * n + z * h``.

    Args: input_size, hidden_size, bias, device, dtype as ``RNNCellBase``.
    Shapes: ``forward(input, hx=None)``: input ``(N, input_size)`` or ``(input_size,)``,
    ``hx`` ``(N, hidden_size)`` or ``(hidden_size,)`` (zeros if None) -> ``h'`` of hx's
    shape. Floating dtype, the parameters'.
    Raises ShapeError for inconsistent shapes, ValueError for a dtype other than the
    parameters'. Reference: torch.nn.GRUCell (Cho et al. 2014).
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        input, (h,), batched = self._batch(input, (hx,))
        h = gru_cell(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return _unbatch(h, batched)
