"""Registers the nnpack_compat convolution algorithms with ember (entry point
``nnpack_compat`` in group ``ember``)."""
from __future__ import annotations

from ember.plugins import hookimpl

from .algorithm import ALGORITHMS


@hookimpl
def ember_convolution_algorithms():
    return list(ALGORITHMS)
