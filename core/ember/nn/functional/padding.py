"""Padding (``torch.nn.functional.pad``).

``pad(input, pad, mode='constant', value=None)`` is one composite op built from
``narrow``, ``cat`` and ``index_select``, so it is differentiable to any order:

* ``constant``: per padded dim, crop (negative amounts, ``narrow``) then ``cat`` blocks of
  ``value`` on either side;
* ``reflect`` / ``replicate`` / ``circular`` with non-negative amounts below the dim's
  size: per padded dim, one ``cat`` of x with its edge blocks (replicate: the edge cell
  expanded; reflect: the cells next to the edge, flipped; circular: the other end);
* otherwise (crops, amounts at the size): per padded dim, one ``index_select`` with a
  source index computed on the device from ``arange`` (output position ``j`` runs from
  ``-left`` to ``size + right``): reflect ``(n-1) - |(n-1) - |j||``, replicate
  ``clamp(j, 0, n-1)``, circular ``j mod m`` over the cropped size ``m``.

Negative amounts crop in every mode, with PyTorch's results (for circular the crop comes
first and the wrap is over what remains). Like PyTorch, the non-constant modes pad the last
1, 2 or 3 dims of (batched or unbatched) inputs of rank 2-3, 3-4 or 4-5; constant pads any
number of trailing dims. The result is always a new tensor, never a view of ``input``.
"""
from __future__ import annotations

from ember.ops import namespace as E
from ember.errors import ShapeError
from ember.ops.composite import composite

__all__ = ["pad"]

_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_constant(x, pad, value):
    padded = False
    for i in range(len(pad) // 2):
        dim = x.ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        n = x.shape[dim]
        start, keep = max(-left, 0), n - max(-left, 0) - max(-right, 0)
        if keep < 0:
            raise ShapeError(f"pad(): the negative padding ({left}, {right}) crops more than "
                             f"the size {n} of dim {dim} of input {tuple(x.shape)}")
        if keep != n:
            x = x.narrow(dim, start, keep)
        if left > 0 or right > 0:
            parts = []
            for amount in (left, right):
                shape = list(x.shape)
                shape[dim] = max(amount, 0)
                parts.append(E.full(shape, value, dtype=x.dtype, device=x.device))
            x = E.cat([parts[0], x, parts[1]], dim)
            padded = True
    # NOTE: a pure crop (or no-op) must still return a new tensor, as PyTorch does
    return x if padded else x.clone()


def _source_index(mode, n, left, right, dim, shape, device):
    """The int64 index into a dim of size ``n`` that pads it by (left, right)."""
    where = f"padding ({left}, {right}) at dim {dim} of input {shape}"
    if n == 0:
        raise ShapeError(f"pad(): mode '{mode}' cannot pad an empty dim: {where}")
    if mode == "circular":
        start, m = max(-left, 0), n - max(-left, 0) - max(-right, 0)
        if m < 0:
            raise ShapeError(f"pad(): negative padding crops more than the dim's size: {where}")
        if left > m or right > m:
            raise ShapeError(f"pad(): circular padding wraps around more than once: {where}; "
                             f"each amount can be at most the (cropped) size {m}")
        j = E.arange(-max(left, 0), m + max(right, 0), dtype=E.int64, device=device)
        return E.remainder(j, max(m, 1)) + start
    if mode == "reflect" and (left >= n or right >= n):
        raise ShapeError(f"pad(): reflect padding must be less than the corresponding input "
                         f"dim's size {n}, got {where}")
    if n + left + right < 1:
        raise ShapeError(f"pad(): input is too small for {where}: the output would have size "
                         f"{n + left + right}")
    j = E.arange(-left, n + right, dtype=E.int64, device=device)
    if mode == "replicate":
        return E.clamp(j, E.zeros((), dtype=E.int64, device=device),
                       E.full((), n - 1, dtype=E.int64, device=device))
    return (n - 1) - E.abs((n - 1) - E.abs(j))


def _edges(mode, x, dim, left, right):
    """The (left, right) blocks (None for 0) that pad ``dim`` of x, as views (replicate: an expanded
    edge cell; circular: the other end) or flipped copies (reflect), for non-negative
    amounts that fit; None otherwise (the index_select path checks and crops). A cat of
    them has a slice-and-sum backward, not index_select's scatter-add."""
    n = x.shape[dim]
    if left < 0 or right < 0 or n == 0 or left >= n or right >= n:
        return None

    def block(start, size, repeat=1):
        if not repeat or not size:
            return None
        b = x.narrow(dim, start, size)
        if mode == "reflect":
            return b.flip(dim)
        return b.expand(*[(repeat if d == dim else -1) for d in range(x.ndim)]) \
            if repeat > 1 else b
    if mode == "replicate":
        return block(0, 1, left), block(n - 1, 1, right)
    if mode == "reflect":
        return block(1, left), block(n - 1 - right, right)
    return block(n - left, left), block(0, right)           # circular


@composite("pad")
def _pad(input, pad, mode, value):
    if len(pad) % 2:
        raise ValueError(f"pad(): padding length must be divisible by 2 (left, right, top, "
                         f"bottom, ...), got {len(pad)}: {tuple(pad)}")
    k = len(pad) // 2
    if k > input.ndim:
        raise ShapeError(f"pad(): padding length should be at most two times the input's "
                         f"dims, got padding length {len(pad)} for input of shape "
                         f"{tuple(input.shape)}")
    if mode == "constant":
        return _pad_constant(input, pad, 0 if value is None else value)
    if mode not in _MODES:
        raise ValueError(f"pad(): unknown padding mode '{mode}'; expected one of {_MODES}")
    if value is not None and value != 0:
        raise ValueError(f"pad(): mode '{mode}' takes no value argument, got value={value}; "
                         f"use mode='constant' to pad with a value")
    if k not in (1, 2, 3) or input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"pad(): mode '{mode}' with padding length {len(pad)} is not supported for a "
            f"{input.ndim}-D input; supported: padding length 2 for 2-D or 3-D input (pads "
            f"the last dim), 4 for 3-D or 4-D (last 2 dims), 6 for 4-D or 5-D (last 3 dims)")
    x = input
    for i in range(k):
        dim = input.ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        if left == 0 and right == 0:
            continue
        edges = _edges(mode, x, dim, left, right)
        if edges is not None:
            x = E.cat([b for b in (edges[0], x, edges[1]) if b is not None], dim)
            continue
        index = _source_index(mode, x.shape[dim], left, right, dim, tuple(input.shape),
                              input.device)
        x = E.index_select(x, dim, index)
    return x if x is not input else input.clone()


# The functional front is the generated op wrapper: the schema matches PyTorch's.
pad = E.pad
