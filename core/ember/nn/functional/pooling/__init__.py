"""Pooling with PyTorch's signatures (``torch.nn.functional``), one concept a module:

* ``max_pool``: max_pool1d/2d/3d and their ``*_with_indices`` forms (kernels for 2-D and
  3-D, one N-d code path in ``backends/kernels/pooling.py``).
* ``avg_pool``: avg_pool1d/2d/3d, composites of strided slices and sums.
* ``adaptive``: adaptive_avg_pool1d/2d/3d and adaptive_max_pool1d/2d/3d (composites).
* ``lp_pool``: lp_pool1d/2d/3d, PyTorch's Python functions over average pooling.
* ``unpool``: max_unpool1d/2d/3d, the partial inverse of max pooling (one scatter).
* ``fractional``: fractional_max_pool2d/3d (Graham, 2014), with PyTorch's interval rule.

Argument normalization is PyTorch's: ``stride=None`` means ``kernel_size``, an int means
the same value for each spatial dim, and ``None`` in adaptive ``output_size`` keeps that
dim's input size. Indices are flat positions in each (N, C) plane of the input (h * W + w,
(t * H + h) * W + w), so max_unpool consumes what the max poolings return.
"""
from . import adaptive, avg_pool, fractional, lp_pool, max_pool, unpool
from .adaptive import *  # noqa: F401,F403
from .avg_pool import *  # noqa: F401,F403
from .avg_pool import _window_counts  # noqa: F401  (the ONNX symbolics share the divisors)
from .fractional import *  # noqa: F401,F403
from .lp_pool import *  # noqa: F401,F403
from .max_pool import *  # noqa: F401,F403
from .unpool import *  # noqa: F401,F403

__all__ = [n for m in (max_pool, avg_pool, adaptive, lp_pool, unpool, fractional)
           for n in m.__all__]
