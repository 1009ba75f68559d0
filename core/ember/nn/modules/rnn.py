"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their base ``RNNBase`` (``torch.nn``).

Parameters have PyTorch's names, shapes and order, so a torch ``state_dict`` loads as is:
per layer ``k`` and direction (suffix ``''`` or ``'_reverse'``) ``weight_ih_l{k}``
``(G * hidden_size, in)``, ``weight_hh_l{k}`` ``(G * hidden_size, H_out)``, then with
``bias`` ``bias_ih_l{k}`` and ``bias_hh_l{k}`` ``(G * hidden_size,)``, then with
``proj_size`` ``weight_hr_l{k}`` ``(proj_size, hidden_size)``. ``G`` is 1 (RNN), 4 (LSTM,
gates i, f, g, o) or 3 (GRU, gates r, z, n); ``in`` is ``input_size`` for layer 0 and
``D * H_out`` above it (``D`` = 2 if bidirectional, ``H_out`` = ``proj_size`` or
``hidden_size``). All are initialised U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).

The layers call the composite ops ``ember.lstm``, ``gru``, ``rnn_tanh`` and ``rnn_relu``
(``nn.functional.rnn_layers``, PyTorch's ``_VF.lstm`` and kin) with the parameters in
PyTorch's flat order: per layer and direction one matmul projects the input of every time
step, then a Python loop runs the recurrent steps. Autograd sees every op inside; a trace
(``ember.jit.trace``, ONNX export) records one node per call, so the traced layer runs any
sequence length and batch size. Without ``hx`` the module passes no state (``[]`` /
None) and the op makes zeros of the run-time batch. A ``PackedSequence`` input
(``nn.utils.rnn``) runs each sequence for its own length only, on the same step functions
in a Python loop here (a trace unrolls it for the traced batch sizes).
"""
from __future__ import annotations

import math
import numbers
import warnings

from ember.ops import namespace as E
from ember.errors import ShapeError

from ... import factories as _f
from .. import init
from ..functional.rnn_layers import _rnn_layers
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from ._sizes import as_int
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _check_int(name: str, v, minimum: int) -> int:
    n = as_int(v)
    if n is None:
        raise TypeError(f"{name} should be of type int, got: {type(v).__name__}")
    if n < minimum:
        raise ValueError(f"{name} must be greater than zero, got {v}" if minimum else
                         f"{name} should be a positive integer or zero to disable "
                         f"projections, got {v}")
    return n


def _no_proj(cls: str, kwargs: dict) -> None:
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
    if kwargs:
        raise TypeError(f"{cls}.__init__() got unexpected keyword arguments {sorted(kwargs)}")


class RNNBase(Module):
    """The parameters and input checks shared by ``RNN``, ``LSTM`` and ``GRU``.

    Args:
        mode: ``'RNN_TANH'``, ``'RNN_RELU'``, ``'LSTM'`` or ``'GRU'``.
        input_size, hidden_size: features of the input and of the hidden state (> 0).
        num_layers: stacked recurrent layers (> 0, default 1).
        bias: use ``b_ih`` and ``b_hh`` (default True).
        batch_first: inputs and outputs are ``(N, L, *)`` instead of ``(L, N, *)``; the
            hidden states stay ``(D * num_layers, N, H)``.
        dropout: probability of dropout on the outputs of every layer but the last, in
            training mode only (default 0).
        bidirectional: run each layer forward and backward and concatenate (D = 2).
        proj_size: LSTM only: project ``h`` to this size (0 < proj_size < hidden_size).
        device, dtype: where and how the parameters are created.
    Raises:
        TypeError: a non-bool ``bias``/``batch_first`` or a non-int size.
        ValueError: a size out of range, ``dropout`` outside [0, 1], an unknown ``mode``.
    Warns UserWarning for ``dropout > 0`` with one layer (nothing to drop between).
    Reference: torch.nn.RNNBase.
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) \
                or not 0 <= dropout <= 1:
            raise ValueError(f"dropout should be a number in range [0, 1] representing the "
                             f"probability of an element being zeroed, got {dropout!r}")
        for name, v in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(v, bool):
                raise TypeError(f"{name} should be of type bool, got: {type(v).__name__}")
        input_size = _check_int("input_size", input_size, 1)
        hidden_size = _check_int("hidden_size", hidden_size, 1)
        num_layers = _check_int("num_layers", num_layers, 1)
        proj_size = _check_int("proj_size", proj_size, 0)
        if proj_size >= hidden_size:
            raise ValueError(f"proj_size has to be smaller than hidden_size, got proj_size="
                             f"{proj_size} and hidden_size={hidden_size}")
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}; expected one of {list(_GATES)}")
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"dropout option adds dropout after all but last recurrent layer, so "
                          f"non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        self.mode = mode
        self.input_size, self.hidden_size = input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional = float(dropout), bidirectional
        self.proj_size = proj_size
        gate_size = _GATES[mode] * hidden_size
        h_out = proj_size or hidden_size
        num_directions = 2 if bidirectional else 1
        self._flat_weights_names, self._all_weights = [], []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else h_out * num_directions
            for direction in range(num_directions):
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, h_out))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                suffix = "_reverse" if direction == 1 else ""
                names = [f"{n}_l{layer}{suffix}" for n, _ in shapes]
                for name, (_, shape) in zip(names, shapes):
                    setattr(self, name,
                            Parameter(_f.empty(*shape, device=device, dtype=dtype)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """Does nothing: PyTorch packs the weights into one buffer for cuDNN; ember keeps
        no such buffer. Kept so code written for PyTorch runs unchanged."""

    @property
    def all_weights(self) -> list:
        """The parameters as one list per layer and direction, in PyTorch's order."""
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def _weights(self, layer: int, direction: int) -> tuple:
        """``(w_ih, w_hh, b_ih, b_hh, w_hr)`` of one layer and direction, None if absent."""
        suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
        return tuple(getattr(self, n + suffix, None)
                     for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))

    def _check_input(self, x, packed: bool) -> None:
        w = self.weight_ih_l0
        if x.dtype is not w.dtype:
            raise ValueError(f"RNN input dtype ({x.dtype}) does not match weight dtype "
                             f"({w.dtype}). Convert input: input.to({w.dtype}), or convert "
                             f"model: model.to({x.dtype})")
        if packed and x.ndim != 2:
            raise ShapeError(f"input must have 2 dimensions, got {x.ndim}")
        if x.shape[-1] != self.input_size:
            raise ShapeError(f"input.size(-1) must be equal to input_size. Expected "
                             f"{self.input_size}, got {x.shape[-1]}")

    def _states(self, hx: tuple, what: tuple, batched: bool, batch: int, x, order) -> list:
        """The initial states: each given one (named as ``what``) checked as PyTorch
        does, with its batch dim added if unbatched and its batch put in the packed
        ``order``; None for the others (the ops make zeros of the run-time batch)."""
        given = [h for h in hx if h is not None]
        dims = 3 if batched else 2
        if any(h.ndim != dims for h in given):
            got = (f"({', '.join(f'{h.ndim}-D' for h in given)}) tensors" if len(given) > 1
                   else f"{given[0].ndim}-D tensor")
            raise ShapeError(f"For {'batched 3-D' if batched else 'unbatched 2-D'} input, "
                             f"{' and '.join(what)} should also be {dims}-D but got {got}")
        layers = self.num_layers * (2 if self.bidirectional else 1)
        sizes = [self.proj_size or self.hidden_size, self.hidden_size]
        states = []
        for k, h in enumerate(hx):
            if h is None:
                states.append(None)
                continue
            expected = (layers, batch, sizes[k])
            h = h if batched else h.unsqueeze(1)
            if tuple(h.shape) != expected:
                label = f"hidden[{k}] size" if len(hx) == 2 else "hidden size"
                raise ShapeError(f"Expected {label} {expected}, got {list(h.shape)}")
            if h.dtype is not x.dtype:
                raise ValueError(f"RNN hidden state dtype ({h.dtype}) does not match weight "
                                 f"dtype ({x.dtype}). Convert it: hx.to({x.dtype})")
            states.append(h if order is None else h.index_select(1, order))
        return states

    def _run_op(self, x, states: list):
        """One call of ``ember.lstm`` / ``gru`` / ``rnn_tanh`` / ``rnn_relu`` on the
        (batched) input ``x``; returns ``(output, [h_n] or [h_n, c_n])``."""
        params = [getattr(self, n) for n in self._flat_weights_names]
        flags = (self.bias, self.num_layers, self.dropout, self.training, self.bidirectional,
                 self.batch_first)
        if self.mode == "LSTM":
            # NOTE: no states -> [] rather than zeros here: zeros sized by this call's
            # batch would become a constant of a trace
            hx = [] if states[0] is None else states
            out, h_n, c_n = E.lstm(x, hx, params, *flags)
            return out, [h_n, c_n]
        op = {"GRU": E.gru, "RNN_TANH": E.rnn_tanh, "RNN_RELU": E.rnn_relu}[self.mode]
        out, h_n = op(x, states[0], params, *flags)
        return out, [h_n]

    def _run_packed(self, x, batch_sizes: list, states: list):
        """The layers over packed data ``x`` with ``batch_sizes`` (a Python loop; a trace
        unrolls it): returns ``(data, [h_n] or [h_n, c_n])``."""
        layers = self.num_layers * (2 if self.bidirectional else 1)
        sizes = [self.proj_size or self.hidden_size, self.hidden_size]
        states = [_f.zeros(layers, batch_sizes[0], sizes[k], dtype=x.dtype, device=x.device)
                  if h is None else h for k, h in enumerate(states)]
        num_directions = 2 if self.bidirectional else 1
        weights = [self._weights(layer, d) for layer in range(self.num_layers)
                   for d in range(num_directions)]
        out, h_n, c_n = _rnn_layers(self.mode, x, batch_sizes, states[0],
                                    states[1] if len(states) == 2 else None, weights,
                                    self.num_layers, self.bidirectional, self.dropout,
                                    self.training)
        return out, ([h_n] if c_n is None else [h_n, c_n])

    def _forward(self, input, hx: tuple, what: tuple):
        """Check ``input`` (a tensor or a PackedSequence) and the initial states ``hx``
        (None or tensors, named as ``what`` in errors), run the layers and give the
        results the input's layout. Returns ``(output, [h_n] or [h_n, c_n])``."""
        cls = type(self).__name__
        if isinstance(input, PackedSequence):
            x, batch_sizes, order, unorder = input
            self._check_input(x, packed=True)
            batch_sizes = batch_sizes.tolist()
            states = self._states(hx, what, True, batch_sizes[0], x, order)
            out, finals = self._run_packed(x, batch_sizes, states)
            out = PackedSequence(out, input.batch_sizes, order, unorder)
            if unorder is not None:
                finals = [f.index_select(1, unorder) for f in finals]
            return out, finals
        if not isinstance(input, E.Tensor) or input.ndim not in (2, 3):
            got = f"{input.ndim}D" if isinstance(input, E.Tensor) else type(input).__name__
            raise ShapeError(f"{cls}: Expected input to be 2D or 3D, got {got} instead")
        self._check_input(input, packed=False)
        batched = input.ndim == 3
        x = input if batched else input.unsqueeze(0 if self.batch_first else 1)
        seq_dim, batch_dim = (1, 0) if self.batch_first else (0, 1)
        if x.shape[seq_dim] == 0:
            raise ShapeError("Expected sequence length to be larger than 0 in RNN")
        states = self._states(hx, what, batched, x.shape[batch_dim], x, None)
        out, finals = self._run_op(x, states)
        if not batched:
            out = out.squeeze(0 if self.batch_first else 1)
            finals = [f.squeeze(1) for f in finals]
        return out, finals

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


def _single_state(cls: str, hx):
    if hx is not None and not isinstance(hx, E.Tensor):
        raise TypeError(f"{cls}: expected hx to be a Tensor h_0 (or None), got "
                        f"{type(hx).__name__}")
    return (hx,)


_SHAPES = """Shapes (L: sequence length, N: batch, D: 2 if bidirectional else 1):
    input ``(L, N, H_in)``, or ``(N, L, H_in)`` with ``batch_first``, or unbatched
    ``(L, H_in)``; ``h_0`` ``(D * num_layers, N, H_out)`` (unbatched
    ``(D * num_layers, H_out)``), zeros if not given. Output ``(L, N, D * H_out)`` (or
    batch-first / unbatched like the input): the last layer's ``h_t`` for every t, the
    two directions concatenated on the last dim; ``h_n`` like ``h_0``: every layer's
    final state (the reverse direction's is the one at t = 0). A ``PackedSequence`` input
    (data ``(sum(lengths), H_in)``) gives a PackedSequence output with the same batch
    sizes and order, and ``h_n`` holds each sequence's state at its own last step."""


class RNN(RNNBase):
    """Elman RNN: per layer ``h_t = act(x_t @ W_ih.T + b_ih + h_{t-1} @ W_hh.T + b_hh)``
    with ``act`` tanh or relu (``nonlinearity``).

    Args: as ``RNNBase`` (no ``proj_size``), and ``nonlinearity`` ``'tanh'`` (default) or
    ``'relu'``. ``forward(input, hx=None)`` returns ``(output, h_n)``.

    {shapes}
    ``H_out`` = ``hidden_size``; the dtype of input and ``h_0`` must be the parameters'.
    Raises (forward): ShapeError for a wrong input or hidden shape, ValueError for a
    dtype other than the parameters', TypeError for a non-tensor ``hx``; (constructor)
    ValueError for an unknown ``nonlinearity`` or a ``proj_size``, and as ``RNNBase``.
    Reference: torch.nn.RNN (Elman 1990).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device=None, dtype=None,
                 **kwargs):
        _no_proj("RNN", kwargs)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             f"'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         0, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        out, (h_n,) = self._forward(input, _single_state("RNN", hx), ("hx",))
        return out, h_n

    def extra_repr(self) -> str:
        s = super().extra_repr()
        return s if self.nonlinearity == "tanh" else s + f", nonlinearity={self.nonlinearity}"


class LSTM(RNNBase):
    """Long short-term memory. Per layer, with ``i, f, g, o`` the four ``hidden_size``
    chunks of ``x_t @ W_ih.T + b_ih + h_{t-1} @ W_hh.T + b_hh``::

        c_t = sigmoid(f) * c_{t-1} + sigmoid(i) * tanh(g)
        h_t = sigmoid(o) * tanh(c_t)          (then h_t @ W_hr.T with proj_size)

    Args: as ``RNNBase``. ``forward(input, hx=None)`` with ``hx`` a pair ``(h_0, c_0)``
    returns ``(output, (h_n, c_n))``.

    {shapes}
    ``H_out`` = ``proj_size`` if set, else ``hidden_size``; ``c_0`` and ``c_n`` are
    ``(D * num_layers, N, hidden_size)``.
    Raises (forward): ShapeError for a wrong input or hidden shape, ValueError for a
    dtype other than the parameters', TypeError for an ``hx`` that is not a pair.
    Reference: torch.nn.LSTM (Hochreiter & Schmidhuber 1997; Gers et al. 2000; Sak et al.
    2014 for the projection).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype)

    def forward(self, input, hx=None):
        if hx is None:
            hx = (None, None)
        elif not isinstance(hx, (tuple, list)) or len(hx) != 2 \
                or not all(isinstance(h, E.Tensor) for h in hx):
            raise TypeError(f"LSTM: expected hx to be a pair (h_0, c_0) of tensors (or None), "
                            f"got {type(hx).__name__}")
        out, (h_n, c_n) = self._forward(input, tuple(hx), ("hx", "cx"))
        return out, (h_n, c_n)


class GRU(RNNBase):
    """Gated recurrent unit. Per layer, with ``r, z, n`` the chunks of the input
    (``i_*``, with ``b_ih``) and hidden (``h_*``, with ``b_hh``) projections::

        r_t = sigmoid(i_r + h_r);  z_t = sigmoid(i_z + h_z)
        n_t = tanh(i_n + r_t * h_n);  h_t = (1 - z_t) * n_t + z_t * h_{t-1}

    Args: as ``RNNBase`` (no ``proj_size``). ``forward(input, hx=None)`` returns
    ``(output, h_n)``.

    {shapes}
    ``H_out`` = ``hidden_size``.
    Raises (forward): ShapeError for a wrong input or hidden shape, ValueError for a
    dtype other than the parameters', TypeError for a non-tensor ``hx``; (constructor)
    ValueError for a ``proj_size``, and as ``RNNBase``.
    Reference: torch.nn.GRU (Cho et al. 2014).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device=None, dtype=None, **kwargs):
        _no_proj("GRU", kwargs)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, 0, device, dtype)

    def forward(self, input, hx=None):
        out, (h_n,) = self._forward(input, _single_state("GRU", hx), ("hx",))
        return out, h_n


for _cls in (RNN, LSTM, GRU):
    _cls.__doc__ = _cls.__doc__.replace("{shapes}", _SHAPES)
