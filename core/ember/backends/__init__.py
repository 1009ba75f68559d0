"""Backends: the registry, the generic array-API kernels, and the convolution dispatcher
(``ember.backends.convolution``)."""
from . import convolution  # noqa: F401
