"""``nnpack_spatial_convolution``: the seeds' ATen function, as a public ember function."""
from __future__ import annotations

import ember as E
from ember.backends.convolution import make_params

from .algorithm import ALGORITHMS
from .selection import using

__all__ = ["nnpack_spatial_convolution"]


def _pair(value, what: str) -> tuple:
    if isinstance(value, int) and not isinstance(value, bool):
        return (value, value)
    if isinstance(value, (tuple, list)) and len(value) == 2 and \
            all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return tuple(value)
    raise TypeError(f"nnpack_spatial_convolution: expected {what} to be an int or a pair of "
                    f"ints (h, w), got {value!r}")


def nnpack_spatial_convolution(input, weight, bias, padding, stride=1):
    """2-D convolution with NNPACK's algorithms, like ``torch._nnpack_spatial_convolution``.

    ``input`` (N, C, H, W), ``weight`` (K, C, kh, kw), ``bias`` (K,) or None, all float32
    or float64 ember tensors on the CPU; ``padding`` and ``stride`` ints or (h, w) pairs.
    Returns (N, K, OH, OW) with OH = (H + 2 padding_h - kh) // stride_h + 1. Runs the
    fastest nnpack algorithm that can compute the call (1x1 GEMM, Winograd F(4x4, 3x3)
    for 3x3 stride 1, else FFT), whatever the crossover rules would say.

    Differentiable to any order: like PyTorch's, its gradient is the generic
    ``convolution_backward``, which selects an algorithm as usual.

    Raises ShapeError/DtypeError for shapes or dtypes a convolution rejects, and
    RuntimeError naming NNPACK's limit when the call is outside it (kernel above 16,
    padding not smaller than the kernel, a dtype other than float32/float64); use
    ``ember.nn.functional.conv2d`` there.
    """
    padding, stride = _pair(padding, "padding"), _pair(stride, "stride")
    params = make_params(input.device.type, input.dtype, input._data, weight._data,
                         None if bias is None else bias._data, stride, padding, (1, 1),
                         False, (0, 0), 1)
    reasons = []
    for algo in sorted(ALGORITHMS, key=lambda a: -a.priority):
        verdict = algo.fits(params)
        if verdict:
            with using(algo.name):
                return E._convolution(input, weight, bias, list(stride), list(padding),
                                      [1, 1], False, [0, 0], 1, False, False, True)
        reasons.append(f"{algo.name}: {verdict.reason}")
    raise RuntimeError("nnpack_spatial_convolution: the call is outside NNPACK's limits ("
                       + "; ".join(reasons) + "); use ember.nn.functional.conv2d, which "
                       "falls back to im2col")
