"""ember-nnpack-compat: NNPACK's fast CPU convolution algorithms for ember, in numpy.

The seeds ported NNPACK into ATen as ``nnpack_spatial_convolution``, used when a call fits
NNPACK's limits. This plugin registers the same family of algorithms with ember's
convolution dispatcher (``ember.backends.convolution``), above the native im2col:

* ``nnpack_winograd_f4x4_3x3`` / ``nnpack_winograd_f2x2_3x3``: Winograd F(m x m, 3 x 3)
  for 3x3 kernels with stride 1 (Lavin & Gray 2016), ``winograd.py``;
* ``nnpack_fft``: FFT convolution for kernels up to 16x16, like NNPACK's ft8x8/ft16x16,
  ``fft.py``;
* ``nnpack_gemm1x1``: a 1x1 convolution as one GEMM, ``gemm1x1.py``.

Which one runs, and when im2col is faster, is decided in ``selection.py`` (measured
crossovers); ``ember.backends.nnpack.enabled`` switches them all off, and
``ember.backends.convolution.explain(x, w, ...)`` names the one chosen.
"""
from .algorithm import ALGORITHMS, NnpackAlgorithm
from .api import nnpack_spatial_convolution
from .selection import using

__all__ = ["ALGORITHMS", "NnpackAlgorithm", "nnpack_spatial_convolution", "using"]
