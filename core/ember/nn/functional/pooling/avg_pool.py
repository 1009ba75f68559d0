"""Average pooling: ``avg_pool1d/2d/3d``, composite ops built from slicing and sums, so
autograd differentiates them to any order.

One N-d routine serves 2-D and 3-D: it zero-pads with ``cat`` only when it must (padding
or a ceil_mode window past the edge), then sums the windows one dim at a time (k strided
slices per dim: kd + kh + kw slices instead of kd * kh * kw). Non-overlapping windows
without padding take one reshape and sum when small. The divisor is
``divisor_override`` or the product over dims of each window's length, clipped to the
padded input (``count_include_pad``) or to the input itself. 1-D runs the 2-D op on a (..,
1, L) view. Accuracy (float32 against float64, N(0, 1) input): within 1.1 ulp of max|x|.
Reference: torch.nn.functional.avg_pool1d/2d/3d.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ember.ops import namespace as E
from ember.backends.kernels.pooling import pool_geometry
from ember.ops.composite import composite

from ._common import args_1d, as_2d, check_floating

__all__ = ["avg_pool1d", "avg_pool2d", "avg_pool3d"]

# NOTE: above this many elements tiles are summed one dim at a time like other windows:
# numpy's sum over several short strided axes of a reshape is 5-20x slower than k
# strided adds per dim
_TILE_SUM_MAX = 32768


def _zero_pad(x, dim: int, before: int, after: int):
    """x with ``before`` / ``after`` zeros along ``dim`` (negative dims)."""
    if not before and not after:
        return x
    parts = []
    for n in (before, x, after):
        if isinstance(n, int):
            if n:
                shape = list(x.shape)
                shape[dim] = n
                parts.append(E.zeros(shape, dtype=x.dtype, device=x.device))
        else:
            parts.append(n)
    return E.cat(parts, dim)


def _window_sums(x, dim: int, k: int, s: int, n_out: int):
    """Sum of the k strided slices along ``dim`` (negative) that make n_out windows."""
    index = [slice(None)] * x.ndim
    total = None
    for i in range(k):
        index[dim] = slice(i, i + (n_out - 1) * s + 1, s)
        part = x[tuple(index)]
        total = part if total is None else total + part
    return total


def _window_counts(n: int, k: int, s: int, p: int, n_out: int, include_pad: bool) -> list:
    """Per output position of one dim, how many cells its window averages (PyTorch's rule:
    clipped to the padded input, or to the input itself without count_include_pad)."""
    counts = []
    for o in range(n_out):
        start = o * s - p
        end = min(start + k, n + p)
        if not include_pad:
            start, end = max(start, 0), min(end, n)
        counts.append(end - start)
    return counts


def _avg_pool(op: str, nd: int, x, kernel_size, stride, padding, ceil_mode,
              count_include_pad, divisor_override):
    k, s, p, _, out = pool_geometry(op, x.shape, nd, kernel_size, stride, padding, 1,
                                    ceil_mode)
    check_floating(op, x)
    if divisor_override is not None and divisor_override == 0:
        raise ValueError(f"{op}(): divisor_override must be non-zero, got 0; pass None "
                         f"to divide by the window size")
    sizes, lead = tuple(x.shape[-nd:]), tuple(x.shape[:-nd])
    if not any(p) and s == k and all(o * kn <= n for o, kn, n in zip(out, k, sizes)) \
            and x.numel() < _TILE_SUM_MAX:
        # small tiles: every window is whole, so one reshape and sum (fewest ops)
        crop = x[(...,) + tuple(slice(0, o * kn) for o, kn in zip(out, k))]
        tiled = crop.reshape(lead + tuple(v for o, kn in zip(out, k) for v in (o, kn)))
        return tiled.sum(tuple(range(-2 * nd + 1, 0, 2))) / (divisor_override or math.prod(k))
    for n in range(nd):
        x = _zero_pad(x, n - nd, p[n], max(0, (out[n] - 1) * s[n] + k[n] - sizes[n] - p[n]))
    for n in range(nd):
        x = _window_sums(x, n - nd, k[n], s[n], out[n])
    if divisor_override is not None:
        return x / divisor_override
    counts = [np.array(_window_counts(*a, count_include_pad), dtype=np.float64)
              for a in zip(sizes, k, s, p, out)]
    divisor = functools.reduce(np.multiply.outer, counts)
    return x / E.tensor(divisor, dtype=x.dtype, device=x.device)


@composite("avg_pool2d")
def _avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
    return _avg_pool("avg_pool2d", 2, self, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


@composite("avg_pool3d")
def _avg_pool3d(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
    return _avg_pool("avg_pool3d", 3, self, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


@composite("avg_pool1d")
def _avg_pool1d(self, kernel_size, stride, padding, ceil_mode, count_include_pad):
    k, s, p = args_1d("avg_pool1d", ("kernel_size", kernel_size), ("stride", stride),
                      ("padding", padding))
    x = as_2d("avg_pool1d", self)
    return E.avg_pool2d(x, k, s, p, ceil_mode, count_include_pad, None).squeeze(-2)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-D average pooling: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out), H_out as in
    max_pool2d (without dilation).

    Each window sum (padding is zeros) is divided by ``divisor_override`` if given, else by
    the window's size clipped to the padded input (``count_include_pad=True``) or to the
    input itself. Floating dtypes. Raises ShapeError as max_pool2d, ValueError for
    divisor_override=0, NotImplementedError for integral input.
    Reference: torch.nn.functional.avg_pool2d.
    """
    stride = () if stride is None else stride
    return E.avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """3-D average pooling: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out, H_out, W_out),
    each size as in max_pool3d (without dilation).

    kernel_size, stride (None: kernel_size) and padding are ints or (d, h, w) triples; the
    divisor is avg_pool2d's, over three dims. Floating dtypes (PyTorch's CPU kernel also
    averages integers; ember asks for a conversion, as its avg_pool2d does). Raises
    ShapeError as max_pool3d, ValueError for divisor_override=0, NotImplementedError for
    integral input. Reference: torch.nn.functional.avg_pool3d.
    """
    stride = () if stride is None else stride
    return E.avg_pool3d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """1-D average pooling: (N, C, L) or (C, L) -> (N, C, L_out), as avg_pool2d along L.

    Raises ShapeError for another rank and what avg_pool2d raises.
    Reference: torch.nn.functional.avg_pool1d.
    """
    stride = () if stride is None else stride
    return E.avg_pool1d(input, kernel_size, stride, padding, ceil_mode, count_include_pad)
