"""The ``logcpu`` kernel table: ember's numpy kernels, each wrapped to log its calls.

``make_kernels()`` returns op name -> kernel for the ops in ``KERNELS``: the minimal set
every backend needs (``ember.plugins.validation.REQUIRED_KERNELS``: factories, random
numbers, autograd, a ``Linear`` + ``mse_loss`` + ``SGD`` training step), nothing more.
Each kernel is the one ember's cpu plugin instantiates
(``ember.backends.array_api.make_kernels(numpy)``), wrapped so that a call logs one DEBUG
record to the ``ember_example_logging_backend`` logger::

    logcpu addmm((2,) float64, (8, 3) float64, (3, 2) float64, 1, 1)

Array arguments print as shape and dtype, other arguments as their ``repr``. The records
cost nothing unless the logger is enabled for DEBUG (``logging.basicConfig(level=
logging.DEBUG)``, or ``logger.setLevel``). An op outside ``KERNELS`` raises ember's
NotImplementedError naming the op and the Types that have it.
"""
from __future__ import annotations

import functools
import logging

import numpy as np

from ember.backends import array_api
from ember.plugins.validation import REQUIRED_KERNELS

__all__ = ["KERNELS", "logger", "make_kernels"]

logger = logging.getLogger("ember_example_logging_backend")

KERNELS = tuple(sorted({k for group in REQUIRED_KERNELS.values() for k in group.kernels}))


def _describe(arg) -> str:
    if isinstance(arg, np.ndarray):
        return f"{arg.shape} {arg.dtype}"
    return repr(arg)


def logged(name: str, kernel):
    """``kernel`` wrapped to log ``logcpu name(args)`` at DEBUG before each call."""
    @functools.wraps(kernel)
    def call(*args, **kwargs):
        if logger.isEnabledFor(logging.DEBUG):
            parts = [_describe(a) for a in args]
            parts += [f"{k}={_describe(v)}" for k, v in kwargs.items()]
            logger.debug("logcpu %s(%s)", name, ", ".join(parts))
        return kernel(*args, **kwargs)
    return call


def make_kernels() -> dict:
    """op name -> logging kernel, for every op in ``KERNELS``."""
    numpy_kernels = array_api.make_kernels(np)
    return {op: logged(op, numpy_kernels[op]) for op in KERNELS}
