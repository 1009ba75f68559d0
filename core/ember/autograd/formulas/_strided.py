"""Backward helpers of the strided views of ``backends/kernels/strided.py``: ``unfold``
and ``as_strided``. Both scatter-add the gradient into zeros through ``index_add``, so
overlapping windows accumulate and the formulas are differentiable again (double
backward).
"""
from __future__ import annotations

import numpy as np

from ...ops import namespace as E


def _index(values, device):
    return E.tensor(np.ascontiguousarray(values, dtype=np.int64).reshape(-1), device=device)


def unfold_backward(grad, input_shape, dimension, size, step):
    """``unfold``: each window's gradient added back at its entries of ``input_shape``
    (torch.ops.aten.unfold_backward). grad: input_shape with dim ``dimension`` replaced by
    the window count, plus (size,) at the end."""
    shape = tuple(input_shape)
    if not shape:  # a 0-d input: (size,) windows of the one element
        return grad.sum().reshape(())
    d = dimension % len(shape)
    count = grad.shape[d]
    where = (np.arange(count) * step)[:, None] + np.arange(size)[None, :]
    g = grad.movedim(-1, d + 1).reshape(shape[:d] + (count * size,) + shape[d + 1:])
    zeros = E.zeros(shape, dtype=grad.dtype, device=grad.device)
    return zeros.index_add(d, _index(where, grad.device), g)


def _positions(size, stride, offset):
    """The storage index of every element of a (size, stride, offset) view, shape size."""
    pos = np.full(tuple(size), offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(size, stride)):
        pos += (np.arange(n, dtype=np.int64) * s).reshape((n,) + (1,) * (len(size) - d - 1))
    return pos


def as_strided_backward(grad, input_shape, input_stride, input_offset, size, stride,
                        storage_offset):
    """``as_strided``: torch's as_strided_backward. The gradient is summed into a zero
    buffer over the storage through the output's (size, stride, storage_offset), then read
    back through the input's own geometry (input_shape, input_stride, input_offset); a
    storage element the input itself reads k times (an expanded input) gives each of those
    entries 1/k of it. Output elements outside the memory the input covers get no
    gradient, as in PyTorch."""
    shape = tuple(input_shape)
    if grad.numel() == 0 or 0 in shape:
        return E.zeros(shape, dtype=grad.dtype, device=grad.device)
    out_pos = _positions(size, stride, storage_offset)
    in_pos = _positions(shape, input_stride, input_offset)
    low = min(int(out_pos.min()), int(in_pos.min()))
    high = max(int(out_pos.max()), int(in_pos.max())) + 1
    buf = E.zeros(high - low, dtype=grad.dtype, device=grad.device)
    buf = buf.index_add(0, _index(out_pos - low, grad.device), grad.reshape(-1))
    out = buf.index_select(0, _index(in_pos - low, grad.device)).reshape(shape)
    counts = np.bincount((in_pos - low).reshape(-1), minlength=high - low)
    if counts.max() > 1:
        per = counts[(in_pos - low)].astype(np.float64)
        out = out / E.tensor(per, dtype=grad.dtype, device=grad.device)
    return out
