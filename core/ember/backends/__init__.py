"""Backends: the registry, the generic array-API kernels, the convolution dispatcher
(``ember.backends.convolution``) and the NNPACK switch (``ember.backends.nnpack``)."""
from . import convolution, nnpack  # noqa: F401
