"""Registers the ``cuda`` backend, its convolution algorithms and the ``nccl`` process
group.

``ember_backends`` runs first (the manager calls hooks in ``HOOKS`` order): without CuPy,
without a driver or without a GPU it raises ``PluginUnavailable``, so the plugin registers
nothing and ``ember plugins`` shows the reason.
"""
from __future__ import annotations

from ember.plugins import hookimpl


@hookimpl
def ember_backends():
    """The ``cuda`` Backend on CuPy (``backend.py``); raises PluginUnavailable."""
    from .backend import make_backend
    return [make_backend()]


@hookimpl
def ember_convolution_algorithms():
    """cuDNN convolution when the cuDNN Frontend is installed, and im2col on CuPy."""
    from .convolution import algorithms
    return algorithms()


@hookimpl
def ember_process_group_backends():
    """``nccl`` for ember.distributed on ``cupy.cuda.nccl`` (``distributed.py``)."""
    from .distributed import NcclBackend
    return [NcclBackend()]
