"""Registers the nnpack_compat convolution algorithms with ember (entry point
``nnpack_compat`` in group ``ember``)."""
from __future__ import annotations

from ember.plugins import hookimpl

from .algorithm import ALGORITHMS


@hookimpl
def ember_convolution_algorithms():
    """The four nnpack algorithms (1x1 GEMM, Winograd F(4x4) and F(2x2), FFT), each a
    CPU ``NnpackAlgorithm`` ranked above native im2col."""
    return list(ALGORITHMS)
