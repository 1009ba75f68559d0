"""Device indices, the device guard of multi-GPU kernels, and copies between devices.

CuPy launches every kernel on the *current* device and allocates its results there; an
operand on another device is read through peer access when the GPUs have it and refused
otherwise. PyTorch instead runs an op on the device of its tensors (a ``DeviceGuard``)
and refuses tensors of two devices. On a machine with more than one GPU the backend's
kernel table is a ``GuardedKernels``: each kernel first finds the device of its array
arguments (one level into lists and tuples: ``cat``'s list, an index tuple), raises
``DeviceMismatchError`` if there are two, and runs under ``cupy.cuda.Device(i)`` when
``i`` is not current. ``copy_`` is the exception, as in PyTorch: its source may live on
another GPU and is copied over first. With one GPU every array is on device 0 and the
table is a plain dict: the guard costs nothing there.

NOTE: factory kernels (``empty``, ``rand``, ...) have no array argument and run on the
current device; ``ember.factories`` runs them under the backend's ``device_guard`` (``on``
below) when ``device=`` names an index, so ``"cuda:1"`` allocates on device 1.

References: PyTorch's ``c10::cuda::CUDAGuard`` and ``TensorIterator``'s device check;
CuPy's "Device management" guide (``cupy.cuda.Device`` as a context manager).
"""
from __future__ import annotations

from contextlib import nullcontext

from ember.errors import DeviceMismatchError
from ember.types import Device

__all__ = ["index_of", "on", "to_device", "GuardedKernels"]


def index_of(device, count: int | None = None) -> int:
    """The CUDA device index ``device`` names: None is the current device; an int, a
    ``"cuda"``/``"cuda:1"`` string or an ``ember.Device``. Raises ValueError for another
    device type, or (when ``count`` is given) an index outside ``[0, count)``."""
    import cupy
    if device is None:
        return cupy.cuda.runtime.getDevice()
    if isinstance(device, int) and not isinstance(device, bool):
        index = device
    else:
        d = Device(device)
        if d.type != "cuda":
            raise ValueError(f"expected a cuda device such as 'cuda:0' or an int, got "
                             f"{str(d)!r}")
        index = cupy.cuda.runtime.getDevice() if d.index is None else d.index
    if count is not None and not 0 <= index < count:
        raise ValueError(f"invalid CUDA device index {index}: this machine has {count} "
                         f"visible device(s), cuda:0 to cuda:{count - 1} (see "
                         f"CUDA_VISIBLE_DEVICES)")
    return index


def on(index: int | None):
    """A context manager that makes device ``index`` current (None: stay where we are)."""
    import cupy
    return nullcontext() if index is None else cupy.cuda.Device(index)


def to_device(arr, index: int | None):
    """A CuPy array with ``arr``'s values on device ``index`` (None: the current one):
    ``arr`` itself when it is already there, else a copy. CuPy's ``ndarray.copy`` copies
    between devices without peer access (through a contiguous staging copy)."""
    import cupy
    with on(index):
        if arr.data.device_id == cupy.cuda.runtime.getDevice():
            return arr
        return arr.copy()


def _device_of_arrays(op: str, args, ndarray) -> int | None:
    """The device of the CuPy arrays among ``args`` (None if there are none)."""
    found = None
    for x in args:
        items = x if x.__class__ is list or x.__class__ is tuple else (x,)
        for y in items:
            if isinstance(y, ndarray):
                d = y.data.device_id
                if found is None:
                    found = d
                elif d != found:
                    raise DeviceMismatchError(
                        f"{op}(): expected all tensors on one device, but found tensors on "
                        f"cuda:{found} and cuda:{d}; move them with .to('cuda:{found}')")
    return found


def guard(op: str, kernel):
    """``kernel`` run on the device of its array arguments; DeviceMismatchError for two."""
    import cupy
    ndarray, current, Dev = cupy.ndarray, cupy.cuda.runtime.getDevice, cupy.cuda.Device

    if op == "copy_":
        def copy_(dst, src, non_blocking):
            d = dst.data.device_id
            with Dev(d):  # PyTorch copies between devices: bring src over first
                return kernel(dst, to_device(src, d), non_blocking)
        return copy_

    def run(*args):
        d = _device_of_arrays(op, args, ndarray)
        if d is None or d == current():
            return kernel(*args)
        with Dev(d):
            return kernel(*args)
    run.__wrapped__ = kernel
    return run


class GuardedKernels(dict):
    """A kernel table whose entries are wrapped by ``guard``, also those added later
    (the core adds ``_convolution`` with ``setdefault`` when the backend registers)."""

    def __init__(self, table):
        super().__init__()
        for op, fn in table.items():
            self[op] = fn

    def __setitem__(self, op, fn):
        super().__setitem__(op, guard(op, fn))

    def setdefault(self, op, fn=None):
        if op not in self:
            self[op] = fn
        return self[op]

    def update(self, *args, **kwargs):
        for op, fn in dict(*args, **kwargs).items():
            self[op] = fn
