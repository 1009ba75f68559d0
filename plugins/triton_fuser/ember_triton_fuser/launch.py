"""Launching Triton kernels on CuPy memory, on CuPy's current device and stream.

Triton expects PyTorch: a pointer argument is an object with ``data_ptr()`` and a
``dtype``, and the active driver asks ``torch.cuda`` for the current device and stream
(``triton/backends/driver.py``: ``GPUDriver.__init__`` imports torch). ember's GPU
memory is CuPy's, and torch need not be installed. This module supplies both halves:

* :func:`as_pointer` wraps a CuPy array as a :class:`DevicePointer`;
* :func:`ensure_driver` makes Triton's active driver a subclass of its own ``CudaDriver``
  whose current device, current stream and device capability come from CuPy, so a
  kernel launches where CuPy's next kernel would (``with cupy.cuda.Device(1)``,
  ``with cupy.cuda.Stream()``, ``ember.cuda.stream(s)``); the driver imports no torch.

When torch *is* imported, torch code that launches Triton kernels keeps its behaviour:
while CuPy's current stream is the null stream, the stream is the one the driver active
before :func:`ensure_driver` gives (torch's current stream); a non-null CuPy stream wins.

Triton itself may import torch: where torch is installed, Triton 3.6 and 3.7 import it
the first time they specialize a kernel's arguments, whatever the driver
(``python/src/specialize.cc``, ``init_globals``, reached through ``native_specialize_impl``
from ``triton/runtime/jit.py``'s binder and ``mangle_type``); 3.4, 3.5, 3.8 and 3.9 do
not (``tests/plugins/triton_fuser/test_triton_versions.py``). On 3.6 and 3.7 the first
launch then pays torch's import (a second or two, once), and later launches on CuPy's
null stream ask torch for its current stream, which is its default (null) stream unless
torch code chose another: the same stream. A process that launches ember's kernels stays
free of torch only where torch is not installed or Triton is not 3.6 or 3.7.

Versions: Triton 3.4 to 3.8 construct ``CudaDriver`` as ``utils = CudaUtils();
launcher_cls = CudaLauncher; super().__init__()`` (torch imported unconditionally); 3.9
imports torch only when ``sys.modules`` has it and otherwise uses each device's default
stream. The driver here runs the version's own ``CudaDriver.__init__`` with
``GPUDriver.__init__`` skipped (a class between the two in the MRO), then sets the four
functions from CuPy, so it follows each version's construction without torch.

CuPy and Triton's nvidia backend are imported on first use: this module imports on a
machine with neither a GPU nor CuPy (the interpreter tests).

Reference: Triton ``triton/runtime/driver.py`` (``driver.active``, ``set_active``),
``triton/backends/nvidia/driver.py`` (``CudaDriver``), ``triton/runtime/jit.py``
(``run`` reads ``driver.active.get_current_device()`` and ``get_current_stream(device)``
per launch); CuPy ``cupy.cuda.get_current_stream``, ``cupy.cuda.Device``.
"""
from __future__ import annotations

import sys
import threading
from typing import Any, Callable, Optional

import numpy as np

__all__ = ["DevicePointer", "as_pointer", "pointer_dtype_name", "device_capability",
           "ensure_driver", "restore_driver", "DriverUnavailable"]

# numpy dtype name -> the name Triton's mangle_type maps to a pointer type (*fp32, *bf16,
# ...). bool is stored as one byte and loaded as int8 (`!= 0`): Triton's own "bool" means
# i1/u1, whose loads are not byte loads.
_POINTER_DTYPES = {
    "bool": "int8", "uint8": "uint8", "int8": "int8", "int16": "int16", "int32": "int32",
    "int64": "int64", "float16": "float16", "bfloat16": "bfloat16", "float32": "float32",
    "float64": "float64",
}


class DriverUnavailable(RuntimeError):
    """CuPy or Triton's CUDA driver cannot be set up here (no CuPy, no libcuda, no GPU)."""


def pointer_dtype_name(dtype: Any) -> str:
    """The dtype name a Triton pointer argument carries for elements of ``dtype``.

    ``dtype``: a numpy dtype (what a CuPy array has; bfloat16 is ml_dtypes'), an ember
    ScalarType, or a numpy dtype name. Returns e.g. ``"float32"``, ``"bfloat16"``, and
    ``"int8"`` for bool (stored as one byte). Raises TypeError for dtypes ember's fused
    kernels do not handle (complex, float128, strings, ...).
    """
    if isinstance(dtype, str):
        name = dtype
    else:
        try:
            name = np.dtype(getattr(dtype, "numpy", dtype)).name
        except TypeError:
            name = repr(dtype)
    try:
        return _POINTER_DTYPES[name]
    except KeyError:
        raise TypeError(f"no Triton pointer type for dtype {name!r}: expected one of "
                        f"{', '.join(_POINTER_DTYPES)}") from None


class DevicePointer:
    """A CuPy array as a Triton pointer argument (what ``triton.jit`` kernels take for a
    ``torch.Tensor``).

    ``data_ptr()`` is the device address of the element at index ``(0, ..., 0)``
    (``array.data.ptr``; CuPy includes a view's offset there), plus ``offset`` bytes
    when one is given, whatever the strides:
    generated code indexes with the strides it is given. ``dtype`` is the element type's
    name as :func:`pointer_dtype_name` gives it (``"float32"``; bool -> ``"int8"``),
    which ``triton.runtime.jit.mangle_type`` turns into ``*fp32``, ``*i8``, ...
    The array is kept alive as long as the pointer. ``device_index`` is the array's
    device: a kernel must run with that device current.
    """

    __slots__ = ("array", "dtype", "_ptr")

    def __init__(self, array: Any, offset: int = 0):
        data = getattr(array, "data", None)
        ptr = getattr(data, "ptr", None)
        if not isinstance(ptr, int) or not hasattr(array, "dtype"):
            raise TypeError(f"as_pointer: expected a CuPy ndarray (an object with .data.ptr "
                            f"and .dtype), got {type(array).__module__}."
                            f"{type(array).__qualname__}; host numpy arrays run through "
                            f"ember_triton_fuser.interpreter.as_pointer")
        self.array, self.dtype = array, pointer_dtype_name(array.dtype)
        self._ptr = ptr + offset

    def data_ptr(self) -> int:
        """The device address of element ``(0, ..., 0)``, as an int."""
        return self._ptr

    @property
    def device_index(self) -> int:
        """The CUDA device the array lives on (``array.data.device_id``)."""
        return self.array.data.device_id

    def __repr__(self) -> str:
        return f"DevicePointer(0x{self._ptr:x}, dtype={self.dtype})"


def as_pointer(array: Any, offset: int = 0) -> DevicePointer:
    """Wrap CuPy ``array`` (any shape, strides, offset; a supported dtype) for a Triton
    kernel call, ``offset`` bytes past its element ``(0, ..., 0)`` (a chunk's piece,
    without slicing). Raises TypeError for a non-CuPy object or an unsupported dtype."""
    return DevicePointer(array, offset)


def _cupy():
    try:
        import cupy
    except ImportError as e:
        raise DriverUnavailable(f"launching Triton kernels on ember's GPU memory needs CuPy "
                                f"({e}); install it with pip install 'ember-cuda[cuda12]' "
                                f"(or [cuda13])") from e
    return cupy


def device_capability(index: int) -> tuple[int, int]:
    """``(major, minor)`` compute capability of CUDA device ``index`` (``(9, 0)`` on an
    H100), from CuPy's ``Device(index).compute_capability`` (``"90"``, ``"120"``).

    Raises TypeError for a non-int index, ValueError for one outside the visible devices,
    RuntimeError when CuPy reports something other than a digit string, and
    DriverUnavailable without CuPy. Reference: ``torch.cuda.get_device_capability``.
    """
    if not isinstance(index, int) or isinstance(index, bool):
        raise TypeError(f"device_capability: expected a device index (int), got "
                        f"{type(index).__name__}")
    cupy = _cupy()
    count = cupy.cuda.runtime.getDeviceCount()
    if not 0 <= index < count:
        raise ValueError(f"device_capability: invalid CUDA device index {index}: {count} "
                         f"visible device(s) (see CUDA_VISIBLE_DEVICES)")
    cc = str(cupy.cuda.Device(index).compute_capability)
    if len(cc) < 2 or not cc.isdigit():
        raise RuntimeError(f"device_capability: expected CuPy's compute capability as digits "
                           f"such as '90', got {cc!r} for device {index}")
    return int(cc[:-1]), int(cc[-1])


def stream_getter(cupy, fallback: Callable[[], Optional[Callable[[int], int]]]):
    """``get_current_stream(device) -> int`` for Triton: CuPy's current stream on
    ``device`` (its ``cudaStream_t`` as an int). While torch is imported and CuPy's stream
    is the null stream (0), ``fallback()`` gives the function to ask instead (torch's
    current stream), or None to keep 0; it is called once, on first need."""
    current = cupy.cuda.get_current_stream
    chosen: list = []

    def get_current_stream(device: int) -> int:
        ptr = current(device).ptr
        if ptr or sys.modules.get("torch") is None:
            return ptr
        if not chosen:
            chosen.append(fallback())
        return ptr if chosen[0] is None else chosen[0](device)
    return get_current_stream


def _torch_stream_function(previous) -> Optional[Callable[[int], int]]:
    """What a torch user's Triton asked for the stream: the previous driver's function,
    else torch's (as ``GPUDriver.__init__`` picks it); None for a torch without CUDA."""
    if previous is not None:
        return previous.get_current_stream
    torch = sys.modules.get("torch")
    if getattr(getattr(torch, "version", None), "cuda", None) is None:
        return None  # a CPU build has no streams; CuPy's null stream is the answer
    try:
        from torch._C import _cuda_getCurrentRawStream
        return _cuda_getCurrentRawStream
    except ImportError:
        return lambda index: torch.cuda.current_stream(index).cuda_stream


_DRIVER_CLASS = None


def driver_class():
    """The Triton driver class :func:`ensure_driver` installs, built on first call (it
    imports ``triton.backends.nvidia.driver``). ``cls(cupy, previous)`` runs the
    installed Triton's ``CudaDriver.__init__`` without ``GPUDriver.__init__`` (which
    imports torch in Triton <= 3.8), then takes device, stream and capability from
    ``cupy``; ``previous`` is the driver that was active (or None)."""
    global _DRIVER_CLASS
    if _DRIVER_CLASS is not None:
        return _DRIVER_CLASS
    from triton.backends.driver import GPUDriver
    from triton.backends.nvidia.driver import CudaDriver

    class _TorchFreeGPUDriver(GPUDriver):
        # NOTE: sits between CudaDriver and GPUDriver in the MRO of CuPyCudaDriver, so
        # CudaDriver.__init__'s super().__init__() lands here instead of torch.
        def __init__(self):
            pass

    class CuPyCudaDriver(CudaDriver, _TorchFreeGPUDriver):
        """Triton's CudaDriver on CuPy's current device and stream (see the module)."""

        def __init__(self, cupy, previous=None):
            CudaDriver.__init__(self)  # utils, launcher_cls, and any per-version state
            self.previous = previous
            # instance attributes, as GPUDriver sets them: they shadow CudaDriver's
            self.get_current_device = cupy.cuda.runtime.getDevice
            self.set_current_device = cupy.cuda.runtime.setDevice
            self.get_device_capability = device_capability
            self.get_current_stream = stream_getter(
                cupy, lambda: _torch_stream_function(previous))

    _DRIVER_CLASS = CuPyCudaDriver
    return _DRIVER_CLASS


# ---- installing it -------------------------------------------------------------------------
_lock = threading.Lock()
_installed = None   # our driver, once installed
_previous = None    # the driver active before it (None: Triton had not made one yet)
_config = None      # triton.runtime.driver.driver


def _active(config):
    """The driver ``config`` holds now, without creating Triton's default one."""
    state = vars(config)
    if "_active" in state:  # Triton >= 3.4: None until first use
        return state["_active"]
    active = state.get("active")  # older: a LazyProxy until first use
    proxy = getattr(active, "__dict__", {})
    if "_init_fn" in proxy:
        return proxy.get("_obj")
    return active


def ensure_driver() -> None:
    """Make Triton launch kernels on CuPy's current device and stream (once per process;
    again if something else made another driver active since). Thread-safe; after the
    first call it costs an attribute check.

    Works with torch not installed, and imports none (Triton 3.6 and 3.7 do when they
    first specialize a kernel's arguments: see the module docstring). With torch imported,
    a null CuPy stream defers to the previously active driver's stream. Raises
    DriverUnavailable without CuPy or when Triton's CUDA driver cannot be built (no
    libcuda, no GPU), with the cause chained.
    """
    global _installed, _previous, _config
    config = _config
    if config is not None and _installed is not None and _active(config) is _installed:
        return
    with _lock:
        if _config is None:
            from triton.runtime.driver import driver
            _config = driver
        config = _config
        if _installed is not None and _active(config) is _installed:
            return
        cupy = _cupy()
        previous = _active(config)
        try:
            new = driver_class()(cupy, previous)
        except Exception as e:  # noqa: BLE001 - Triton asserts when libcuda is missing
            raise DriverUnavailable(f"cannot set up Triton's CUDA driver on CuPy: "
                                    f"{type(e).__name__}: {e}; a CUDA GPU, its driver "
                                    f"(libcuda.so.1) and CuPy are needed") from e
        config.set_active(new)
        _installed, _previous = new, previous


def restore_driver() -> None:
    """Undo :func:`ensure_driver`: the driver active before it is active again (or none,
    so Triton makes its default on next use). Does nothing when ours is not active."""
    global _installed, _previous
    with _lock:
        config = _config
        if _installed is None or config is None:
            return
        if _active(config) is _installed:
            if _previous is not None:
                config.set_active(_previous)
            elif "_active" in vars(config):
                # NOTE: reset_active() would build the default driver now, importing
                # torch on Triton <= 3.8; None defers that to the next use, as at start.
                config._active = None
            else:
                config.reset_active()
        _installed = _previous = None
