"""cuDNN convolution for the cuda backend, through the cuDNN Frontend Python package.

CuPy 14 dropped its cuDNN bindings, so convolution reaches cuDNN through NVIDIA's
frontend (``pip install "ember-cuda[cuda13,cudnn]"``: ``nvidia-cudnn-frontend`` below
1.29, which has no hard dependencies, and the cuDNN runtime wheel). Modules:

* ``frontend.py``: loading the package, data types, CuPy's runtime services, handles;
* ``layout.py``: NCHW / NHWC choice and tensor descriptors;
* ``graphs.py``: the fprop / dgrad / wgrad graphs, plan choice, the graph cache;
* ``algorithm.py``: ``CudnnConvolution``, the algorithm registered as ``cudnn``.

``make_algorithm(cupy, native)`` returns the algorithm, or None when the frontend or its
backend library is missing; ``unavailable_reason()`` then says why (and
``ember.backends.cudnn.is_available()`` is False).
"""
from __future__ import annotations

from .algorithm import CudnnConvolution
from .frontend import load

__all__ = ["CudnnConvolution", "make_algorithm", "unavailable_reason"]

_reason: str | None = None


def make_algorithm(cupy, native):
    """``CudnnConvolution`` on ``cupy`` falling back to ``native``, or None (no cuDNN)."""
    global _reason
    fe, _reason = load()
    return CudnnConvolution(fe, cupy, native) if fe is not None else None


def unavailable_reason() -> str | None:
    """Why the last ``make_algorithm`` returned None (None if it did not)."""
    return _reason
