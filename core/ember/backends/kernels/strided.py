"""Strided views over a tensor's memory: ``unfold`` (sliding windows), ``as_strided`` (any
sizes and strides over the storage) and ``view.dtype`` (the same bytes read as another
dtype).

Each result is a real view (``xp.lib.stride_tricks.as_strided`` or ``ndarray.view``) of its
input's memory. ``unfold`` and ``_as_strided`` are kernels of ``-> Tensor(a)`` ops, so ember
marks their results as views of ``self``; ``view_dtype`` serves the ``view.dtype``
composite (``ops/composite_shape.py``), which is not an autograd view, as in PyTorch.

*Storage*: PyTorch's ``as_strided`` and ``view(dtype)`` count offsets from the start of
the storage, not of the tensor. ember has no Storage object: the composites pass the
tensor's place in the memory of its base tensor (where ``Tensor.storage_offset()`` counts
from), and ``_as_strided`` checks that every byte it may read lies inside the array that
owns the memory, so no view reaches memory ember does not hold.

Reference: torch.Tensor.unfold, torch.as_strided, torch.Tensor.view(dtype).
"""
from __future__ import annotations

import numpy as np

__all__ = ["address", "bounds", "view_dtype", "TORCH_NAMES"]

# PyTorch's names of the scalar types in its view(dtype) messages ("view Float as Short")
TORCH_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half",
               "bfloat16": "BFloat16", "int8": "Char", "uint8": "Byte", "int16": "Short",
               "int32": "Int", "int64": "Long", "bool": "Bool"}


def address(arr) -> int:
    """The address of ``arr``'s first element (numpy or CuPy)."""
    iface = getattr(arr, "__array_interface__", None)  # CuPy has the cuda one
    if iface is None:
        iface = arr.__cuda_array_interface__
    return iface["data"][0]


def bounds(arr) -> tuple:
    """(low, high) byte addresses of the memory ``arr`` spans (numpy's byte_bounds)."""
    low = high = address(arr)
    if arr.size == 0:
        return low, low
    for n, s in zip(arr.shape, arr.strides):
        if s < 0:
            low += (n - 1) * s
        else:
            high += (n - 1) * s
    return low, high + arr.itemsize


def _storage_window(xp, a, start: int, nbytes: int):
    """The ``nbytes`` bytes from address ``start`` as a 1-D array of ``a``'s dtype, taken
    from the array that owns ``a``'s memory; RuntimeError if they are not all inside it."""
    owner = a
    while isinstance(owner.base, type(a)):
        owner = owner.base
    low, high = bounds(owner)
    flat = owner.ravel(order="K")
    if (flat.base is None and flat is not owner) or address(flat) != low:
        raise NotImplementedError(
            "as_strided(): the tensor's memory is laid out with gaps or negative strides "
            f"(shape {list(owner.shape)}, byte strides {list(owner.strides)}); call "
            ".contiguous() first and take as_strided of that")
    if not low <= start <= start + nbytes <= high:
        raise RuntimeError(f"as_strided(): the storage ({nbytes} bytes at byte {start - low})"
                           f" is not inside the memory the tensor holds ({high - low} "
                           f"bytes); call .contiguous() first")
    usable = nbytes - nbytes % a.itemsize
    return flat.view(xp.uint8)[start - low:start - low + usable].view(a.dtype)


def _writeable(a) -> bool:
    return getattr(a.flags, "writeable", True)  # CuPy arrays have no read-only flag


def _strided(xp, a, shape, strides, writeable):
    if xp is np:
        return np.lib.stride_tricks.as_strided(a, shape, strides, writeable=writeable)
    out = xp.lib.stride_tricks.as_strided(a, shape, strides)
    # NOTE: CuPy builds the result from a.data, so its .base is None, and ember marks a
    # kernel's result as a view of self by its .base (dispatch.wrap_view): a view of the
    # result keeps it an autograd view sharing self's version counter
    if out.__class__ is not a.__class__:
        return out.view(a.__class__)
    return out.view() if out.base is None else out


def kernels(xp) -> dict:
    def unfold(a, dimension, size, step):
        ndim = max(a.ndim, 1)
        if not -ndim <= dimension < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-ndim}, {ndim - 1}], but got {dimension})")
        d = dimension % ndim
        n = a.shape[d] if a.ndim else 1
        if size > n:
            raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is "
                               f"{size}; choose size <= {n}")
        if size < 0:
            raise RuntimeError(f"size is {size} but must be >= 0")
        if step <= 0:
            raise RuntimeError(f"step is {step} but must be > 0")
        if a.ndim == 0:
            return a.reshape(1)[:size]
        count = (n - size) // step + 1
        st = a.strides
        shape = a.shape[:d] + (count,) + a.shape[d + 1:] + (size,)
        strides = st[:d] + (st[d] * step,) + st[d + 1:] + (st[d],)
        return _strided(xp, a, shape, strides, _writeable(a))

    def as_strided(a, size, stride, storage_offset, input_stride, input_offset,
                   storage_nbytes):
        # input_stride, input_offset, storage_nbytes: a's place in its storage, passed by
        # the as_strided composite (input_stride is for the backward only)
        size, stride = tuple(size), tuple(stride)
        if len(size) != len(stride):
            raise RuntimeError(f"mismatch in length of strides and shape: sizes {list(size)} "
                               f"has {len(size)} entries, strides {list(stride)} has "
                               f"{len(stride)}")
        if any(s < 0 for s in stride):
            raise RuntimeError(f"as_strided: Negative strides are not supported at the "
                               f"moment, got strides: {list(stride)}")
        if any(n < 0 for n in size):
            raise RuntimeError(f"as_strided: sizes must be >= 0, got sizes: {list(size)}")
        if storage_offset < 0:
            raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}; it must "
                               f"be >= 0")
        item = a.itemsize
        strides = tuple(s * item for s in stride)
        if 0 in size:
            return _strided(xp, a, size, strides, _writeable(a))
        need = item * (storage_offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1)
        if need > storage_nbytes:
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                f"{storage_offset}, and itemsize {item} requiring a storage size of {need} "
                f"are out of bounds for storage of size {storage_nbytes}; keep offset + "
                f"sum((size - 1) * stride) below {storage_nbytes // item} elements")
        flat = _storage_window(xp, a, address(a) - input_offset * item, storage_nbytes)
        return _strided(xp, flat[storage_offset:], size, strides, _writeable(a))

    return {"unfold": unfold, "_as_strided": as_strided}


def view_dtype(xp, a, dtype, storage_offset: int):
    """``a``'s bytes read as ``dtype`` (a view): torch's view(dtype) rules and messages.

    Same itemsize: shape and strides kept. Different itemsize: the last dim (stride 1) is
    scaled by the itemsize ratio; raises RuntimeError for a 0-d ``a``, a last stride != 1,
    or (larger itemsize) a last dim, storage offset or other stride not divisible by the
    ratio. ``storage_offset``: where ``a`` starts in its storage, in elements. Called by
    the ``view.dtype`` composite, which shares the version counter without making an
    autograd view (as PyTorch: the result has no ``_base``).
    """
    dtype = np.dtype(dtype) if xp is np else dtype
    old, new = a.itemsize, dtype.itemsize
    if old == new:
        return a.view(dtype)
    what = (f"to view {TORCH_NAMES.get(a.dtype.name, a.dtype.name)} as "
            f"{TORCH_NAMES.get(dtype.name, dtype.name)} (different element sizes)")
    if a.ndim == 0:
        raise RuntimeError(f"self.dim() cannot be 0 {what}; unsqueeze(0) it first")
    if a.strides[-1] != old and a.shape[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got "
                           f"{a.strides[-1] // old}; call .contiguous() first")
    if new > old:
        ratio = new // old
        if a.shape[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but "
                               f"got {a.shape[-1]}")
        offset = storage_offset
        if offset % ratio:
            raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} "
                               f"{what}, but got {offset}")
        for i, s in enumerate(a.strides[:-1]):
            if (s // old) % ratio:
                raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} "
                                   f"{what}, but got {s // old}")
    if a.strides[-1] != old:  # a size-1 last dim: any stride reads the same bytes
        a = _strided(xp, a, a.shape, a.strides[:-1] + (old,), _writeable(a))
    return a.view(dtype)
