"""Max pooling: ``max_pool1d/2d/3d`` and their ``*_with_indices`` forms.

The 2-D and 3-D ops are kernels (``max_pool2d/3d_with_indices`` and their backwards, one
N-d code path in ``backends/kernels/pooling.py``); the 1-D ones run the 2-D kernel on a
(.., 1, L) view. Indices are flat positions in each (N, C) plane of the input, as
PyTorch's, so ``max_unpool1d/2d/3d`` consume them.
Reference: torch.nn.functional.max_pool1d/2d/3d.
"""
from __future__ import annotations

import ember as E
from ember.ops.composite import composite

from ._common import args_1d, as_2d

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
           "max_pool2d_with_indices", "max_pool3d_with_indices"]


@composite("max_pool2d")
def _max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode):
    return E.max_pool2d_with_indices(self, kernel_size, stride, padding, dilation,
                                     ceil_mode)[0]


@composite("max_pool3d")
def _max_pool3d(self, kernel_size, stride, padding, dilation, ceil_mode):
    return E.max_pool3d_with_indices(self, kernel_size, stride, padding, dilation,
                                     ceil_mode)[0]


def _args_1d(kernel_size, stride, padding, dilation):
    return args_1d("max_pool1d", ("kernel_size", kernel_size), ("stride", stride),
                   ("padding", padding), ("dilation", dilation))


@composite("max_pool1d")
def _max_pool1d(self, kernel_size, stride, padding, dilation, ceil_mode):
    x = as_2d("max_pool1d", self)
    k, s, p, d = _args_1d(kernel_size, stride, padding, dilation)
    return E.max_pool2d_with_indices(x, k, s, p, d, ceil_mode)[0].squeeze(-2)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-D max pooling: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out), with H_out =
    (H + 2 padding - dilation (kernel_size - 1) - 1) // stride + 1 (rounded up with
    ceil_mode, keeping a last window that starts inside the input or its left padding).

    kernel_size, stride (None: kernel_size), padding and dilation are ints or (h, w)
    pairs. Any dtype but bool. With ``return_indices`` also returns int64 indices of the
    output's shape: the flat position h * W + w of each maximum in its input plane, as
    PyTorch's (for max_unpool2d). Padding counts as -inf; ties go to the first element of
    the window. Raises ShapeError for a bad rank, zero C/H/W, non-positive kernel_size,
    stride or dilation, padding above kernel_size // 2 and an empty output.
    Reference: torch.nn.functional.max_pool2d.
    """
    stride = () if stride is None else stride
    if return_indices:
        return tuple(E.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation,
                                               ceil_mode))
    return E.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """3-D max pooling: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out, H_out, W_out), each
    size as in max_pool2d.

    kernel_size, stride (None: kernel_size), padding and dilation are ints or (d, h, w)
    triples. Any dtype but bool. With ``return_indices`` also returns int64 indices: the
    flat position (t * H + h) * W + w of each maximum in its input volume (for
    max_unpool3d). Raises what max_pool2d raises, over three dims.
    Reference: torch.nn.functional.max_pool3d.
    """
    stride = () if stride is None else stride
    if return_indices:
        return tuple(E.max_pool3d_with_indices(input, kernel_size, stride, padding, dilation,
                                               ceil_mode))
    return E.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-D max pooling: (N, C, L) or (C, L) -> (N, C, L_out), L_out as in max_pool2d.

    kernel_size, stride (None: kernel_size), padding and dilation are ints (or one-int
    tuples). With ``return_indices`` also returns int64 positions in L of each maximum.
    Raises ShapeError for another rank and what max_pool2d raises.
    Reference: torch.nn.functional.max_pool1d.
    """
    stride = () if stride is None else stride
    if not return_indices:
        return E.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)
    k, s, p, d = _args_1d(kernel_size, stride, padding, dilation)
    out, idx = E.max_pool2d_with_indices(as_2d("max_pool1d", input), k, s, p, d, ceil_mode)
    return out.squeeze(-2), idx.squeeze(-2)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """max_pool1d returning (output, indices) whatever ``return_indices`` says (PyTorch
    keeps the argument for the signature). Reference:
    torch.nn.functional.max_pool1d_with_indices."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """max_pool2d returning (output, indices) whatever ``return_indices`` says. Reference:
    torch.nn.functional.max_pool2d_with_indices."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """max_pool3d returning (output, indices) whatever ``return_indices`` says. Reference:
    torch.nn.functional.max_pool3d_with_indices."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)
