"""Memory layouts for cuDNN: which one a convolution computes in, and its descriptors.

cuDNN describes a tensor by dims in logical order, (N, C, *spatial), and element strides
that say how it lies in memory. Two packed layouts matter:

* ``NCHW`` (C-contiguous, ember's default): strides (C*H*W, H*W, W, 1);
* ``NHWC`` (channels-last): strides (H*W*C, 1, W*C, C); NDHWC for 3-D.

Which one a call computes in (``channels_last``), measure-free:

* float16 and bfloat16 compute in NHWC. Their fast kernels are Tensor Core kernels,
  which are NHWC-native; given NCHW, cuDNN itself pads, folds or transposes to NHWC to
  reach them (cuDNN Developer Guide, "Tensor Core operations: data and filter formats"),
  so our one copy each way replaces a transform cuDNN would do anyway, and lets the
  heuristics rank the NHWC-native engines directly.
* float32 and float64 keep the input's layout: without TF32 (off by default here, see
  ``graphs.py``) they run on CUDA cores, where NCHW engines are native; a channels-last
  input stays channels-last, as PyTorch's ``suggest_memory_format`` does.
* Input, weight and output always share the layout: most engines reject mixed formats
  (PyTorch makes the weight ``contiguous(memory_format)`` of the input for this reason).

Results come back C-contiguous, except that a channels-last input gives channels-last
results of its shape (output, grad_input), as in PyTorch.

A 1-D convolution runs as 2-D with a unit height: (N, C, L) is described as (N, C, 1, L)
(cuDNN convolves 4-D and 5-D tensors only), with the same memory, so no copy.

Descriptors are computed from shape and layout, never read from an array's strides: an
operand is first made packed in the layout (``prepare``), and sizes of 1 may carry any
stride in CuPy, which would make cuDNN see a non-packed tensor.
"""
from __future__ import annotations

from ember.backends.convolution import memory_format_of

ALIGNMENT = 16
"""Bytes every operand's address is a multiple of: the cuDNN Frontend declares 16-byte
aligned tensors by default, so a view at an odd offset is copied first."""


def order(ndim: int, channels_last: bool) -> tuple:
    """Logical dims from outermost to innermost in memory: (0, 1, 2, ..) for NCHW,
    (0, 2, .., ndim - 1, 1) for NHWC."""
    if channels_last:
        return (0, *range(2, ndim), 1)
    return tuple(range(ndim))


def packed_strides(shape: tuple, channels_last: bool) -> tuple:
    """Element strides of a packed array of ``shape`` (N, C, *spatial) in the layout."""
    strides = [0] * len(shape)
    step = 1
    for dim in reversed(order(len(shape), channels_last)):
        strides[dim] = step
        step *= shape[dim]
    return tuple(strides)


def is_packed(a, channels_last: bool) -> bool:
    """Whether array ``a`` is packed in the layout (strides of size-1 dims ignored)."""
    want = packed_strides(a.shape, channels_last)
    have = [s // a.itemsize for s in a.strides]
    return all(n == 1 or h == w for n, h, w in zip(a.shape, have, want))


# dtypes cuDNN convolves in NHWC whatever the input's layout
_NHWC_DTYPES = ("float16", "bfloat16")


def is_channels_last(a) -> bool:
    """PyTorch's ``is_contiguous(memory_format=channels_last)`` for (N, C, *spatial), but
    False when the array is also C-contiguous (C == 1 or 1x1 maps): then it is NCHW
    (the dispatcher's ``memory_format_of``)."""
    return memory_format_of(a) == "channels_last"


def choose(dtype_name: str, input) -> bool:
    """``channels_last`` for a call: NHWC for half types or a channels-last input."""
    return dtype_name in _NHWC_DTYPES or is_channels_last(input)


def choose_for(params) -> bool:
    """``choose`` from a ``ConvParams`` (its dtype and the input's ``memory_format``):
    the layout a call with these parameters computes in, without the array."""
    return params.dtype.name in _NHWC_DTYPES or params.memory_format == "channels_last"


def prepare(xp, a, channels_last: bool, pointer) -> object:
    """``a`` itself when packed in the layout at an ``ALIGNMENT``-byte address, else a
    packed copy (a view with the same (N, C, *spatial) shape)."""
    if is_packed(a, channels_last) and pointer(a) % ALIGNMENT == 0:
        return a
    if channels_last:
        return xp.moveaxis(xp.moveaxis(a, 1, -1).copy(order="C"), -1, 1)
    return a.copy(order="C")


def empty(xp, shape: tuple, dtype, channels_last: bool):
    """An uninitialized array of ``shape`` (N, C, *spatial), packed in the layout."""
    if not channels_last:
        return xp.empty(shape, dtype=dtype)
    return xp.moveaxis(xp.empty((shape[0], *shape[2:], shape[1]), dtype=dtype), -1, 1)


def restore(xp, a, keep_channels_last: bool):
    """A result in the caller's layout: ``a`` when it is channels-last and that is
    kept, else C-contiguous (a copy only when ``a`` is not already)."""
    if keep_channels_last and is_packed(a, True):
        return a
    return xp.ascontiguousarray(a)


def lift(shape: tuple) -> tuple:
    """(N, C, L) -> (N, C, 1, L): a 1-D convolution as 2-D; other ranks unchanged."""
    return (*shape[:2], 1, shape[2]) if len(shape) == 3 else tuple(shape)


def lift_params(values: tuple, fill: int, spatial_dims: int) -> tuple:
    """Per-spatial-dim parameters for the lifted shape: ``fill`` for the unit height."""
    return (fill, *values) if spatial_dims == 1 else tuple(values)


def describe(shape: tuple, channels_last: bool) -> tuple:
    """(dims, strides) of the cuDNN tensor for a packed array of ``shape``."""
    dims = lift(shape)
    return dims, packed_strides(dims, channels_last)
