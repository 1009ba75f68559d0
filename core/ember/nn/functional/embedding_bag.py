"""Bags of embeddings (``torch.nn.functional.embedding_bag``): the sum, mean or max of the
looked-up rows of each bag, without materializing the per-index embeddings as a user
tensor.

A Python function over ember ops, not a declared op: the rows are looked up once with
``embedding`` (so ``max_norm``, ``scale_grad_by_freq`` and the padding row's zero
gradient behave as there), laid out as a padded ``(bags, longest bag, D)`` block by one
``index_select`` with a host-built position table, and reduced with a mask: indices equal
to ``padding_idx`` and the padding of short bags do not count (a bag with nothing left
gives zeros, in every mode). Autograd differentiates w.r.t. ``weight`` and
``per_sample_weights``; 'max' sends each output's gradient to one row, as PyTorch.

Departure from PyTorch: ``scale_grad_by_freq`` divides each row's gradient by its index's
count in the input, exactly as ``embedding`` does. PyTorch's CPU embedding_bag kernel
scales differently (for input [1, 2, 4, 5, 4, 3, 2, 0] and a summed output it gives rows
3 and 5 a gradient of 0.5 and row 4 one of 2, where embedding gives 1 to each).
"""
from __future__ import annotations

import numpy as np

from ember.ops import namespace as E
from ember.errors import DtypeError, ShapeError

from .sparse import embedding

__all__ = ["embedding_bag"]

_MODES = ("sum", "mean", "max")


def _check_indices(name: str, t) -> None:
    if t.dtype is not E.int64 and t.dtype is not E.int32:
        raise DtypeError(f"embedding_bag: expected {name} of dtype int64 or int32, got "
                         f"{t.dtype}; convert it with .long()")


def _bags(input, offsets, include_last_offset: bool):
    """(positions (B, L) into input's flat index, mask (B, L) of the real entries)."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("embedding_bag: if input is 2-D (a batch of fixed-length bags), "
                             "offsets has to be None")
        b, length = input.shape
        pos = np.arange(b * length, dtype=np.int64).reshape(b, length)
        return pos, np.ones((b, length), dtype=bool)
    if input.ndim != 1:
        raise ShapeError(f"embedding_bag: expected input of shape (B, N) (fixed-length "
                         f"bags) or (M,) with offsets, got {tuple(input.shape)}")
    if offsets is None or offsets.ndim != 1:
        raise ValueError(f"embedding_bag: a 1-D input needs 1-D offsets (where each bag "
                         f"starts), got "
                         f"{None if offsets is None else tuple(offsets.shape)}")
    _check_indices("offsets", offsets)
    m = input.shape[0]
    starts = offsets.tolist()
    if starts and starts[0] != 0:
        raise RuntimeError(f"embedding_bag: offsets[0] has to be 0 (the first bag starts at "
                           f"position 0), got {starts[0]}")
    if starts and starts[-1] > m:
        raise RuntimeError(f"embedding_bag: offsets[-1] can not be greater than input's "
                           f"length {m}, got {starts[-1]}")
    if any(a > b for a, b in zip(starts, starts[1:])):
        raise RuntimeError(f"embedding_bag: offsets must be non-decreasing, got {starts}")
    if include_last_offset:
        # NOTE: as PyTorch, the last bag runs to the input's end whatever offsets[-1] says
        starts = starts[:-1]
    ends = starts[1:] + [m]
    lens = np.array([e - s for s, e in zip(starts, ends)], dtype=np.int64)
    width = int(lens.max()) if len(lens) else 0
    j = np.arange(width, dtype=np.int64)
    mask = j[None, :] < lens[:, None]
    pos = np.where(mask, np.array(starts, dtype=np.int64)[:, None] + j[None, :], 0)
    return pos, mask


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """Sum, mean or max of the rows of ``weight`` looked up by each bag of indices.

    Args:
        input: int64 / int32 indices: ``(B, N)`` (B bags of N) or ``(M,)`` with offsets.
        weight: ``(num_embeddings, D)`` floating table.
        offsets: ``(B,)`` int start of each bag in a 1-D input; None for 2-D input. With
            include_last_offset, ``(B + 1,)`` whose last entry is the input's length (as
            in PyTorch, the last bag runs to the input's end whatever it says).
        max_norm, norm_type, scale_grad_by_freq, sparse: as ``embedding``.
        mode: 'sum', 'mean' or 'max'.
        per_sample_weights: floating, input's shape; each row is scaled by its weight
            before summing ('sum' only).
        padding_idx: an index (negative counts from the end) left out of every bag (not
            counted by 'mean'); its row gets no gradient.
    Returns: ``(B, D)`` in weight's dtype; an empty bag gives zeros.
    Raises ValueError for a bad mode, offsets with 2-D input or none with 1-D input, a
    per_sample_weights of another shape, padding_idx out of range; RuntimeError for
    offsets that do not start at 0, decrease or pass the input's end; NotImplementedError
    for per_sample_weights outside 'sum'; DtypeError for non-integer indices or offsets;
    ShapeError for other ranks; IndexError for an index out of range.
    Reference: torch.nn.functional.embedding_bag.
    """
    op = "embedding_bag"
    if mode not in _MODES:
        raise ValueError(f"{op}: mode has to be one of 'sum', 'mean' or 'max', got {mode!r}")
    _check_indices("input", input)
    if weight.ndim != 2:
        raise ShapeError(f"{op}: expected weight of shape (num_embeddings, embedding_dim), "
                         f"got {tuple(weight.shape)}")
    n_rows, dim = weight.shape
    if padding_idx is not None:
        if not -n_rows <= padding_idx < n_rows:
            raise ValueError(f"{op}: padding_idx must be within num_embeddings: expected an "
                             f"index in [{-n_rows}, {n_rows}), got {padding_idx}")
        padding_idx %= n_rows
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(f"{op}: per_sample_weights is only supported for "
                                      f"mode='sum', got mode={mode!r}")
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(f"{op}: per_sample_weights must have input's shape "
                             f"{tuple(input.shape)}, got {tuple(per_sample_weights.shape)}")
    if input.ndim == 2 and offsets is None and padding_idx is None and input.numel():
        # fixed-length bags, every entry counts: a plain reduction of the (B, N, D) rows
        n_bags, width = input.shape
        rows = embedding(input.reshape(-1), weight, None, max_norm, norm_type,
                         scale_grad_by_freq, sparse)
        if per_sample_weights is not None:
            rows = rows * per_sample_weights.reshape(-1, 1).to(rows.dtype)
        block = rows.view(n_bags, width, dim)
        if mode == "max":
            return block.max(1)[0]
        total = block.sum(1)
        return total if mode == "sum" else total / width
    pos, mask = _bags(input, offsets, include_last_offset)
    flat = input.reshape(-1)
    n_bags, width = pos.shape
    if width == 0 or flat.shape[0] == 0:
        if flat.shape[0]:
            embedding(flat, weight, padding_idx, max_norm, norm_type)  # the index checks
        # empty bags (or none): zeros that still depend on weight, whose gradient is then
        # zeros rather than None, as PyTorch's
        return E.zeros((n_bags, dim), dtype=weight.dtype, device=weight.device) + \
            weight[:0].sum(0)
    rows = embedding(flat, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq,
                     sparse)                                                     # (M, D)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1).to(rows.dtype)
    dev = weight.device
    pos_t = E.tensor(pos.reshape(-1), dtype=E.int64, device=dev)
    block = E.index_select(rows, 0, pos_t).view(n_bags, width, dim)
    keep = E.tensor(mask, device=dev)
    if padding_idx is not None:
        keep = keep & (E.index_select(flat, 0, pos_t).view(n_bags, width) != padding_idx)
    keep = keep.unsqueeze(2)
    if mode == "max":
        best = E.where(keep, block, float("-inf")).max(1)[0]
        return E.where(keep.any(1), best, 0.0)
    total = E.where(keep, block, 0.0).sum(1)
    if mode == "sum":
        return total
    return total / keep.sum(1).clamp_min(1).to(total.dtype)
