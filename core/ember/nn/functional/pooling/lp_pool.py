"""Power-average pooling: ``lp_pool1d/2d/3d``, PyTorch's Python functions over average
pooling: (avg_pool(x^p) * window size)^(1/p), with p = +-inf through max pooling of |x|.
Reference: torch.nn.functional.lp_pool1d/2d/3d.
"""
from __future__ import annotations

import math

from ember.ops import namespace as E
from ember.backends.kernels.pooling import ntuple

from ._common import one
from .avg_pool import avg_pool1d, avg_pool2d, avg_pool3d
from .max_pool import max_pool1d, max_pool2d, max_pool3d

__all__ = ["lp_pool1d", "lp_pool2d", "lp_pool3d"]

_INF = float("inf")


def _lp_pool(avg_pool, max_pool, input, norm_type, kernel_size, stride, ceil_mode,
             window: int):
    if norm_type == _INF:  # the max (min) of |x| over the window, as PyTorch special-cases
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -_INF:
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    # sign * relu(abs): clamps the small negative averages rounding leaves at 0 (PyTorch's)
    return (E.sign(out) * E.relu(E.abs(out))).mul(window).pow(1.0 / norm_type)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out) with each
    output (sum over the window of x^p)^(1/p), p = ``norm_type`` (p = 1: sum pooling; p =
    inf: max of |x|, -inf: min of |x|). H_out as in avg_pool2d without padding.

    Computed as PyTorch does, avg_pool2d(x^p) * kh * kw to the 1/p, so with ceil_mode a
    window clipped at the edge is scaled by the full window size. Floating dtypes;
    differentiable where the window sum is positive. Raises what avg_pool2d raises.
    Reference: torch.nn.functional.lp_pool2d.
    """
    k = ntuple("lp_pool2d", "kernel_size", kernel_size, 2)
    return _lp_pool(avg_pool2d, max_pool2d, input, norm_type, kernel_size, stride,
                    ceil_mode, math.prod(k))


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over (D, H, W): (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out,
    H_out, W_out), each output (sum over the window of x^p)^(1/p); as lp_pool2d over three
    dims (avg_pool3d(x^p) * kd * kh * kw to the 1/p).

    Raises what avg_pool3d raises. Reference: torch.nn.functional.lp_pool3d.
    """
    k = ntuple("lp_pool3d", "kernel_size", kernel_size, 3)
    return _lp_pool(avg_pool3d, max_pool3d, input, norm_type, kernel_size, stride,
                    ceil_mode, math.prod(k))


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over L: (N, C, L) or (C, L) -> (N, C, L_out), each output
    (sum over the window of x^p)^(1/p), p = ``norm_type``; as lp_pool2d along one dim.

    Raises what avg_pool1d raises. Reference: torch.nn.functional.lp_pool1d.
    """
    k = one("lp_pool1d", "kernel_size", kernel_size)
    return _lp_pool(avg_pool1d, max_pool1d, input, norm_type, kernel_size, stride,
                    ceil_mode, k)
