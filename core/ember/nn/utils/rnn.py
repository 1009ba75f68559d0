"""Variable-length sequences for the recurrent layers (``torch.nn.utils.rnn``).

A batch of sequences of different lengths is either *padded*, ``(T, B, *)`` (or
``(B, T, *)`` with ``batch_first``) plus the lengths, or *packed*: a
:class:`PackedSequence` whose ``data`` holds, time step after time step, only the rows of
the sequences still running, ``(sum(lengths), *)``, with ``batch_sizes[t]`` rows at step
``t``. Sequences are packed longest first, so the rows running at step ``t`` are always
the first ``batch_sizes[t]`` of the sorted batch; ``sorted_indices`` and
``unsorted_indices`` map between the sorted and the caller's order.

Packing and unpacking are one ``index_select`` each over a flat view, so both are
differentiable like any other ember op.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...tensor import Tensor

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "pack_sequence", "unpad_sequence", "unpack_sequence"]


class PackedSequence(namedtuple("PackedSequence",
                                ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """A packed batch of variable-length sequences (see the module docstring).

    Fields: ``data`` ``(sum(lengths), *)``; ``batch_sizes`` int64 ``(T,)`` on the CPU,
    non-increasing; ``sorted_indices`` / ``unsorted_indices`` int64 ``(B,)`` or None (None
    when the batch was given sorted). Build one with :func:`pack_padded_sequence` or
    :func:`pack_sequence`, not by hand. Reference: torch.nn.utils.rnn.PackedSequence.
    """

    __slots__ = ()

    def to(self, *args, **kwargs) -> "PackedSequence":
        """``data`` (and the index tensors, to its device) moved/cast as ``Tensor.to``;
        ``batch_sizes`` stays on the CPU. Returns self when nothing changes."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(data.device))
        return type(self)(data, self.batch_sizes, move(self.sorted_indices),
                          move(self.unsorted_indices))

    def cpu(self) -> "PackedSequence":
        """``to("cpu")``."""
        return self.to("cpu")

    def float(self) -> "PackedSequence":
        """``data`` as float32."""
        return self.to(dtype=_dtype("float32"))

    def double(self) -> "PackedSequence":
        """``data`` as float64."""
        return self.to(dtype=_dtype("float64"))

    @property
    def is_cuda(self) -> bool:
        """Whether ``data`` is on a CUDA device."""
        return self.data.is_cuda


def _dtype(name: str):
    from ... import types
    return getattr(types, name)


def _int64(values, device=None) -> Tensor:
    from ... import factories
    return factories.tensor(np.asarray(values, dtype=np.int64), device=device)


def _lengths(lengths, batch: int) -> np.ndarray:
    if isinstance(lengths, Tensor):
        if lengths.ndim != 1 or lengths.dtype.is_floating_point:
            raise TypeError(f"pack_padded_sequence: lengths must be a 1-D integer tensor or a "
                            f"list of ints, got a {lengths.dtype} tensor of shape "
                            f"{list(lengths.shape)}")
        lengths = lengths.cpu().numpy()
    arr = np.asarray(lengths)
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise TypeError(f"pack_padded_sequence: lengths must be a 1-D sequence of ints, got "
                        f"{lengths!r}")
    if arr.size != batch:
        raise ValueError(f"pack_padded_sequence: expected {batch} lengths (the batch size), "
                         f"got {arr.size}")
    if (arr <= 0).any():
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    return arr.astype(np.int64)


def _batch_sizes(sorted_lengths: np.ndarray) -> np.ndarray:
    """``batch_sizes[t]``: how many of the (descending) lengths exceed ``t``."""
    steps = np.arange(int(sorted_lengths[0]))
    return (sorted_lengths[None, :] > steps[:, None]).sum(axis=1)


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) whose
    sequence ``b`` has ``lengths[b]`` valid steps.

    ``lengths``: B positive ints (a list or a 1-D integer tensor; at most T). With
    ``enforce_sorted`` they must be non-increasing; otherwise the batch is sorted here and
    the permutation kept in the result. Differentiable w.r.t. ``input``.

    Raises RuntimeError for unsorted lengths with ``enforce_sorted`` (the message names
    ``enforce_sorted=False``) or a length <= 0; ValueError for a length above T or a
    wrong count; TypeError for non-integer lengths. Reference:
    torch.nn.utils.rnn.pack_padded_sequence.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"pack_padded_sequence: input must be a Tensor, got "
                        f"{type(input).__name__}")
    if input.ndim < 2:
        raise ValueError(f"pack_padded_sequence: input must have at least 2 dims (T, B, *), "
                         f"got shape {list(input.shape)}")
    if batch_first:
        input = input.transpose(0, 1)
    steps, batch = input.shape[0], input.shape[1]
    lens = _lengths(lengths, batch)
    if lens.max(initial=0) > steps:
        raise ValueError(f"pack_padded_sequence: a length of {int(lens.max())} exceeds the "
                         f"input's {steps} time steps")
    if enforce_sorted:
        if (np.diff(lens) > 0).any():
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.")
        order = None
    else:
        order = np.argsort(-lens, kind="stable")
        lens = lens[order]
    bs = _batch_sizes(lens)
    # packed row -> flat (t * B + b) row of the time-major input, b in the sorted order
    cols = np.arange(batch) if order is None else order
    flat = np.concatenate([t * batch + cols[:n] for t, n in enumerate(bs)])
    data = input.reshape((steps * batch,) + tuple(input.shape[2:]))
    data = data.index_select(0, _int64(flat, input.device))
    if order is None:
        return PackedSequence(data, _int64(bs), None, None)
    return PackedSequence(data, _int64(bs), _int64(order, input.device),
                          _int64(np.argsort(order), input.device))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None):
    """Unpack to ``(padded, lengths)``: padded ``(T, B, *)`` (``(B, T, *)`` with
    ``batch_first``) in the caller's original batch order, filled with ``padding_value``
    past each length; ``lengths`` an int64 CPU tensor ``(B,)``. ``total_length`` pads T
    up to that many steps. Differentiable w.r.t. ``sequence.data``.

    Raises ValueError for ``total_length`` below the longest sequence. Reference:
    torch.nn.utils.rnn.pad_packed_sequence.
    """
    from ...ops.namespace import cat, full
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"pad_packed_sequence: expected a PackedSequence, got "
                        f"{type(sequence).__name__}")
    data, bs = sequence.data, sequence.batch_sizes.numpy()
    steps, batch = len(bs), int(bs[0]) if len(bs) else 0
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
        steps = total_length
    # padded (t, b) in the sorted order -> its packed row, or the padding row (the last)
    index = np.full((steps, batch), data.shape[0], dtype=np.int64)
    offset = 0
    for t, n in enumerate(bs):
        index[t, :n] = np.arange(offset, offset + n)
        offset += n
    lengths = (index < data.shape[0]).sum(axis=0)
    unsorted = sequence.unsorted_indices
    if unsorted is not None:
        perm = unsorted.cpu().numpy()
        index, lengths = index[:, perm], lengths[perm]
    pad = full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype,
               device=data.device)
    padded = cat([data, pad]).index_select(0, _int64(index.ravel(), data.device))
    padded = padded.reshape((steps, batch) + tuple(data.shape[1:]))
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, _int64(lengths)


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack tensors ``(L_i, *)`` of one trailing shape into ``(max L, B, *)``
    (``(B, max L, *)`` with ``batch_first``), padding each with ``padding_value`` on
    ``padding_side`` ('right' or 'left'). Differentiable.

    Raises RuntimeError for an empty list or different trailing shapes; ValueError for
    another padding_side. Reference: torch.nn.utils.rnn.pad_sequence.
    """
    from ...ops.namespace import stack
    from ..functional import pad
    if isinstance(sequences, Tensor):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("pad_sequence: received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    trailing = tuple(sequences[0].shape[1:])
    for i, s in enumerate(sequences):
        if s.ndim < 1 or tuple(s.shape[1:]) != trailing:
            raise RuntimeError(f"pad_sequence: every sequence must have shape (L, "
                               f"{', '.join(map(str, trailing)) or '...'}) like sequence 0, "
                               f"but sequence {i} has shape {list(s.shape)}")
    longest = max(s.shape[0] for s in sequences)
    zeros = [0, 0] * len(trailing)
    padded = []
    for s in sequences:
        extra = longest - s.shape[0]
        amounts = zeros + ([0, extra] if padding_side == "right" else [extra, 0])
        padded.append(pad(s, amounts, value=padding_value) if extra else s)
    return stack(padded, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of tensors ``(L_i, *)``: ``pack_padded_sequence(pad_sequence(...),
    lengths)``. Raises as those two. Reference: torch.nn.utils.rnn.pack_sequence."""
    sequences = list(sequences)
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths, batch_first: bool = False) -> list:
    """The inverse of :func:`pad_sequence`: a list of B tensors ``(lengths[b], *)``.
    Reference: torch.nn.utils.rnn.unpad_sequence."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    lens = _lengths(lengths, padded_sequences.shape[0])
    return [padded_sequences[b, :int(n)] for b, n in enumerate(lens)]


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The inverse of :func:`pack_sequence`: the list of sequences in the original order.
    Reference: torch.nn.utils.rnn.unpack_sequence."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
