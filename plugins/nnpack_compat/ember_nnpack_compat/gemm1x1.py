"""1x1 convolution as one GEMM per image over channels (NNPACK's direct 1x1 path).

With a 1x1 kernel and padding 0 (NNPACK's padding < kernel rule), output pixel p of image
n is ``W (K, C) @ x[n, :, p]``: the convolution *is* a matrix product of the weight with
the image viewed as (C, H*W). A stride keeps every stride-th pixel (a strided view,
copied once). Shapes as in ``algorithm.py``; float32/float64 in their own precision.
"""
from __future__ import annotations

import numpy as np

__all__ = ["forward", "grad_input", "grad_weight"]


def _sampled(x, stride):
    """(N, C, OH*OW): the pixels a strided 1x1 convolution reads."""
    sh, sw = stride
    if (sh, sw) != (1, 1):
        x = x[:, :, ::sh, ::sw]
    n, c = x.shape[:2]
    return x.reshape(n, c, -1), x.shape[2:]


def forward(x, w, padding, stride):
    """(N, C, H, W) x (K, C, 1, 1) -> (N, K, OH, OW); ``padding`` must be (0, 0)."""
    cols, out = _sampled(x, stride)
    y = np.matmul(w.reshape(w.shape[0], -1), cols)
    return y.reshape(x.shape[0], w.shape[0], *out)


def grad_input(gy, w, input_shape, padding, stride):
    """dL/dx (N, C, H, W) = W^T @ gy per image, placed at the pixels the stride read."""
    n, k = gy.shape[:2]
    g = np.matmul(w.reshape(k, -1).T, gy.reshape(n, k, -1)).reshape(
        n, w.shape[1], *gy.shape[2:])
    if tuple(stride) == (1, 1):
        return g
    gx = np.zeros(input_shape, dtype=gy.dtype)
    gx[:, :, ::stride[0], ::stride[1]] = g
    return gx


def grad_weight(gy, x, weight_shape, padding, stride):
    """dL/dW (K, C, 1, 1) = sum over images of gy[n] (K, P) @ x[n]^T (P, C), accumulated
    image by image: BLAS reads the transposed operand in place, where one GEMM over the
    N*P axis (``tensordot``) would first copy both operands into (K, N*P) / (N*P, C)."""
    cols, _ = _sampled(x, stride)
    n, k = gy.shape[:2]
    rows = gy.reshape(n, k, -1)
    gw = rows[0] @ cols[0].T
    for i in range(1, n):
        gw += rows[i] @ cols[i].T
    return gw.reshape(weight_shape)
