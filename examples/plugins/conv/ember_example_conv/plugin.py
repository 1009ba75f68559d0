"""Registers ``TapGemm`` with ember (entry point ``example_conv`` in group ``ember``)."""
from __future__ import annotations

from ember.plugins import hookimpl

from .algorithm import TapGemm


@hookimpl
def ember_convolution_algorithms():
    """``[TapGemm()]``: conv2d on the cpu backend, ranked above native im2col and nnpack."""
    return [TapGemm()]
