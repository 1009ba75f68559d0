"""The convolution algorithms of the cuda backend, for the ``ember_convolution_algorithms``
hook: cuDNN (``cudnn``, priority 100) when the cuDNN Frontend and its library load, and
always the native im2col + GEMM (``native_im2col``, priority 0) on CuPy, which runs every
call cuDNN declines (``ember.backends.convolution.explain`` says which and why).

CuPy and cuDNN are imported here, on the first call, never at module import: the hook
runs after ``ember_backends`` has found CuPy and a GPU.
"""
from __future__ import annotations

__all__ = ["algorithms"]


def algorithms() -> list:
    """``[CudnnConvolution, Im2colConvolution(cupy, "cuda")]``, or only the latter
    without cuDNN (``ember_cuda.cudnn.unavailable_reason()`` says why)."""
    import cupy

    from ember.backends.im2col import Im2colConvolution

    from .cudnn import make_algorithm

    native = Im2colConvolution(cupy, "cuda")
    cudnn = make_algorithm(cupy, native)
    return [native] if cudnn is None else [cudnn, native]
