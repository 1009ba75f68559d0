"""Max unpooling: ``max_unpool1d/2d/3d``, the partial inverse of max pooling.

Each value goes to its flat position in a zero plane of the output size (``indices`` as
max pooling returns them: h * W + w, (t * H + h) * W + w); every other cell is 0. Plain
functions over ember ops (PyTorch has no top-level op to mirror): one ``scatter`` per
call, so the gradient is the gather at the same positions and tracing sees the scatter.
With duplicate indices (overlapping windows) which value lands is unspecified, as in
PyTorch. Reference: torch.nn.functional.max_unpool1d/2d/3d.
"""
from __future__ import annotations

import math

from ember.ops import namespace as E
from ember.backends.kernels.pooling import ntuple
from ember.errors import DtypeError, ShapeError

from ._common import check_floating

__all__ = ["max_unpool1d", "max_unpool2d", "max_unpool3d"]


def _max_unpool(op: str, nd: int, x, indices, size: tuple):
    if indices.dtype is not E.int64:
        raise DtypeError(f"{op}(): expected int64 indices (as max pooling returns them), got "
                         f"{indices.dtype}; convert them with indices.long()")
    if tuple(indices.shape) != tuple(x.shape):
        raise ShapeError(f"{op}(): expected indices of the input's shape {list(x.shape)}, got "
                         f"{list(indices.shape)}")
    check_floating(op, x)
    lead, plane = tuple(x.shape[:-nd]), math.prod(size)
    # NOTE: zeros made from x (not from sizes), so a traced batch size stays dynamic in
    # exports
    out = x.new_zeros(()).expand_as(x.flatten(-nd)[..., :1]).expand((-1,) * len(lead) +
                                                                     (plane,))
    try:
        out = out.scatter(-1, indices.flatten(-nd), x.flatten(-nd))
    except IndexError:
        flat = indices.reshape(-1)
        lo, hi = int(flat.min()), int(flat.max())
        raise IndexError(f"{op}(): Found an invalid max index: {lo if lo < 0 else hi} (output "
                         f"volumes are of size {'x'.join(map(str, size))}); pass the input "
                         f"size of the pooling as output_size") from None
    return out.reshape((-1,) + lead[1:] + size)


def _output_size(op: str, nd: int, x, kernel_size, stride, padding, output_size) -> tuple:
    """PyTorch's ``_unpool_output_size``: (in - 1) stride - 2 padding + kernel per dim, or
    ``output_size`` (nd sizes, or nd + 2 with N and C first) within a stride of it."""
    k = ntuple(op, "kernel_size", kernel_size, nd)
    s = k if stride is None else ntuple(op, "stride", stride, nd, default=k)
    p = ntuple(op, "padding", padding, nd)
    if x.ndim not in (nd + 1, nd + 2):
        raise ShapeError(f"{op}(): expected a {nd + 1}-D (unbatched) or {nd + 2}-D (batched) "
                         f"input, got shape {list(x.shape)}")
    if min(s) < 1 or min(p) < 0:
        raise ShapeError(f"{op}(): stride must be positive and padding non-negative, got "
                         f"stride={list(s)}, padding={list(p)}")
    default = tuple((x.shape[n - nd] - 1) * s[n] + k[n] - 2 * p[n] for n in range(nd))
    if output_size is None:
        size = default
    else:
        size = tuple(output_size) if isinstance(output_size, (tuple, list)) else \
            (output_size,)
        if len(size) == nd + 2:
            size = size[2:]
        if len(size) != nd:
            raise ValueError(f"{op}(): output_size should be a sequence containing {nd} or "
                             f"{nd + 2} elements, but it has a length of '{len(size)}'")
        for n in range(nd):
            lo, hi = default[n] - s[n], default[n] + s[n]
            if not lo < size[n] < hi:
                raise ValueError(f'{op}(): invalid output_size "{tuple(output_size)}" (dim {n} '
                                 f'must be between {lo} and {hi})')
    if min(size) < 0:
        raise ValueError(f"{op}(): output_size must contain non-negative spatial dimensions, "
                         f"but got {list(size)}")
    return size


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool1d: (N, C, L_in) or (C, L_in) values and the int64
    positions max_pool1d returned -> (N, C, L_out) zeros holding each value at its
    position, L_out = (L_in - 1) stride - 2 padding + kernel_size or ``output_size``.

    Floating dtypes. Raises ShapeError for another rank or indices of another shape,
    DtypeError for non-int64 indices, ValueError for an output_size of another length or
    more than a stride away from the default, IndexError for an index past L_out.
    Reference: torch.nn.functional.max_unpool1d.
    """
    size = _output_size("max_unpool1d", 1, input, kernel_size, stride, padding, output_size)
    return _max_unpool("max_unpool1d", 1, input, indices, size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool2d: (N, C, H_in, W_in) or (C, H_in, W_in) values and
    the int64 flat positions h * W + w max_pool2d returned -> (N, C, H_out, W_out) zeros
    holding each value at its position; H_out = (H_in - 1) stride - 2 padding +
    kernel_size, or ``output_size`` ((H, W) or (N, C, H, W)) to undo a floor rounding.

    Raises what max_unpool1d raises. Reference: torch.nn.functional.max_unpool2d.
    """
    size = _output_size("max_unpool2d", 2, input, kernel_size, stride, padding, output_size)
    return _max_unpool("max_unpool2d", 2, input, indices, size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool3d: (N, C, D_in, H_in, W_in) or (C, D_in, H_in, W_in)
    values and the int64 flat positions (t * H + h) * W + w max_pool3d returned -> zeros of
    (N, C, D_out, H_out, W_out) holding each value at its position, sizes as in
    max_unpool2d. Raises what max_unpool1d raises.
    Reference: torch.nn.functional.max_unpool3d.
    """
    size = _output_size("max_unpool3d", 3, input, kernel_size, stride, padding, output_size)
    return _max_unpool("max_unpool3d", 3, input, indices, size)
