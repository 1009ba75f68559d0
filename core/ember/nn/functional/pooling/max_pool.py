"""Max pooling: ``max_pool1d/2d/3d`` and their ``*_with_indices`` forms.

The 2-D and 3-D ops are kernels (``max_pool2d/3d_with_indices`` and their backwards, one
N-d code path in ``backends/kernels/pooling.py``); the 1-D ones run the 2-D kernel on a
(.., 1, L) view (``max_pool1d`` as a kernel pair that skips the argmax indices when no
gradient is recorded). Indices are flat positions in each (N, C) plane of the input, as
PyTorch's, so ``max_unpool1d/2d/3d`` consume them.
Reference: torch.nn.functional.max_pool1d/2d/3d.
"""
from __future__ import annotations

import functools

from ember.ops import namespace as E
from ember._base.grad_mode import is_grad_enabled
from ember.ops.composite import composite

from ember.autograd import kernel_pair as _fused
from ember.backends.kernels.pooling import max_pool_values, pool_geometry, table
from ember.backends.kernels.reduction import LOW_FLOATS

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


# NOTE: max_pool1d runs as a kernel pair (autograd/kernel_pair.py): without a gradient to
# record, the forward takes the maxima alone (K strided passes, ``max_pool_values``); the
# argmax indices are computed only when the call records a graph, and saved for the
# backward's scatter. The op-by-op form stays the reference (double backward, tracing).
_geometry = functools.lru_cache(maxsize=256)(pool_geometry)


def _max_pool1d_reference(self, k, s, p, d, ceil_mode, *_):
    """max_pool2d_with_indices on the (.., 1, L) view; k, s, p, d as ``_args_1d`` gives."""
    x = as_2d("max_pool1d", self)
    return E.max_pool2d_with_indices(x, k, s, p, d, ceil_mode)[0].squeeze(-2)


def _max_pool1d_forward(xp, arrays, args):
    (a,), (k, s, p, d, ceil_mode, geometry, want_grad) = arrays, args
    x = a.reshape((-1, 1, a.shape[-1]))
    if x.dtype in LOW_FLOATS:  # compare in float32, as the kernels do
        x = x.astype(xp.float32)
    shape = a.shape[:-1] + geometry[-1][-1:]
    if not want_grad:
        vals = max_pool_values(xp, x, *geometry)
        return vals.astype(a.dtype, copy=False).reshape(shape), None
    vals, idx = table(xp)["max_pool2d_with_indices"](x, k, s, p, d, ceil_mode)
    return vals.astype(a.dtype, copy=False).reshape(shape), idx


def _max_pool1d_backward(xp, grad, arrays, idx, args, needs):
    (a,), (k, s, p, d, ceil_mode) = arrays, args[:5]
    if idx is None:  # recorded while want_grad was False: not reachable through run()
        idx = _max_pool1d_forward(xp, arrays, args[:6] + (True,))[1]
    gx = table(xp)["max_pool2d_with_indices_backward"](
        grad.reshape(idx.shape), a.reshape((-1, 1, a.shape[-1])), k, s, p, d, ceil_mode, idx)
    return (gx.reshape(a.shape),)


@composite("max_pool1d")
def _max_pool1d(self, kernel_size, stride, padding, dilation, ceil_mode):
    k, s, p, d = _args_1d(kernel_size, stride, padding, dilation)
    if self.dtype is E.bool:  # the reference raises the kernels' error
        return _max_pool1d_reference(self, k, s, p, d, ceil_mode)
    if self.ndim not in (2, 3):
        as_2d("max_pool1d", self)  # raises its ShapeError
    shape = tuple(self.shape[:-1]) + (1, self.shape[-1])
    geometry = _geometry("max_pool2d", shape, 2, k, s, p, d, bool(ceil_mode))
    want_grad = self.requires_grad and is_grad_enabled()
    return _fused.run("max_pool1d", _max_pool1d_reference, _max_pool1d_forward,
                      _max_pool1d_backward, (self,),
                      (k, s, p, d, bool(ceil_mode), geometry, want_grad))


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
