"""The ``cuda`` Backend: CuPy arrays, ember's generic kernels on CuPy, and ``ember.cuda``.

``make_backend()`` imports CuPy only when called (the plugin hook calls it) and raises
``ember.errors.PluginUnavailable`` with the reason and the way out when this machine
cannot run it: CuPy not installed or failing to import (its CUDA libraries missing), no
usable driver, no visible GPU, or a CuPy older than 13. The plugin manager then registers
nothing, without a warning, and ``ember plugins`` shows the reason.

Otherwise the Backend holds:

* Types ``CUDAFloatType``, ``CUDAHalfType``, ... (prefix ``CUDA``) over ``cupy.ndarray``;
* kernels from ``kernels.make_kernels`` (the generic ones, CuPy's differences overridden),
  in a ``devices.GuardedKernels`` table on machines with several GPUs;
* ``from_numpy(arr, index)``: a copy on device ``index`` (None: the current device),
  finished when it returns, as PyTorch's pageable copy is: ``cupy.asarray`` copies host
  data asynchronously on the current stream unless ``blocking=True`` (CuPy >= 13.0,
  ``asarray`` in ``cupy/_creation/from_data.py``; ``_array_default`` in
  ``cupy/_core/core.pyx`` then synchronizes the stream, except for a 0-d array, which
  it fills with a kernel: that one is waited for here), and work on another
  (non-blocking) stream could read the array before the data arrives. It also takes a
  CuPy array from another GPU and copies it across; ``to_numpy`` is ``cupy.asnumpy``
  (synchronous); ``device_of(arr)`` is the index of the array's device;
  ``device_guard(index)`` makes device ``index`` current for a block (``cupy.cuda.Device``),
  so ``ember.zeros(3, device="cuda:1")`` allocates on device 1;
* ``make_rng`` = ``rng.CudaGenerator``; ``dlpack_device_type`` 2 (kDLCUDA), so
  ``ember.from_dlpack`` takes CuPy arrays and torch CUDA tensors without copying, and
  ``cupy.from_dlpack(tensor)`` / ``torch.from_dlpack(tensor)`` take ember's;
* ``runtime``: the ``runtime`` module (streams, events, memory statistics).

bfloat16 needs CuPy >= 14 (its ml_dtypes support); with CuPy 13 every kernel declines it
and ``from_numpy`` raises TypeError naming the upgrade.

Reference: CuPy "Installation" (wheels per CUDA major version) and "Interoperability"
(DLPack); PyTorch's ``torch.cuda.is_available`` (never raises, False without a GPU).
"""
from __future__ import annotations

import os

import numpy as np

from ember.errors import PluginUnavailable
from ember.plugins.hints import install_hint
from ember.types import Backend, bfloat16

__all__ = ["make_backend"]

INSTALL = install_hint("cuda")  # the published name and, in a checkout, plugins/cuda
MIN_CUPY = (13, 0)
BF16_CUPY = (14, 0)


def make_backend() -> Backend:
    """The ``cuda`` Backend; raises PluginUnavailable (reason + way out) without CuPy, a
    driver or a GPU."""
    cupy = _import_cupy()
    count = _device_count(cupy)
    version = _version(cupy)
    if version < MIN_CUPY:
        raise PluginUnavailable(f"ember-cuda needs CuPy >= {MIN_CUPY[0]}, found "
                                f"{cupy.__version__}: upgrade with {INSTALL}")
    from . import kernels, memory, runtime
    from .devices import GuardedKernels
    from .rng import CudaGenerator

    has_bf16 = version >= BF16_CUPY
    table = kernels.make_kernels(cupy, has_bf16)
    memory.install(cupy)
    return Backend(
        name="cuda", xp=cupy, kernels=GuardedKernels(table) if count > 1 else table,
        type_prefix="CUDA", array_type=cupy.ndarray, to_numpy=cupy.asnumpy,
        from_numpy=_from_numpy_for(cupy, count, has_bf16), device_count=count,
        device_of=_device_of, make_rng=CudaGenerator,
        unsupported=kernels.unsupported(table, has_bf16), dlpack_device_type=2,
        runtime=runtime, device_guard=_device_guard_for(count),
    )


def _import_cupy():
    try:
        import cupy
    except ImportError as e:
        if e.name == "cupy":
            raise PluginUnavailable(f"CuPy is not installed: {INSTALL}") from None
        raise PluginUnavailable(f"CuPy failed to import ({type(e).__name__}: {e}); its "
                                f"CUDA libraries are probably missing or of another CUDA "
                                f"version: reinstall with {INSTALL}") from None
    except Exception as e:  # noqa: BLE001 - a broken CuPy install, not a bug of ember's
        raise PluginUnavailable(f"CuPy failed to import ({type(e).__name__}: {e}): "
                                f"reinstall with {INSTALL}") from None
    return cupy


def _device_count(cupy) -> int:
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as e:  # noqa: BLE001 - CUDARuntimeError: no driver, too old, ...
        if "cudaErrorNoDevice" in str(e):  # a driver, but no GPU (or none visible)
            count = 0
        else:
            raise PluginUnavailable(f"no usable CUDA driver ({type(e).__name__}: {e}): "
                                    f"install or update the NVIDIA driver, or pick the CuPy "
                                    f"build of the driver's CUDA version: {INSTALL}") from None
    if count == 0:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        hint = f" (CUDA_VISIBLE_DEVICES={visible!r})" if visible is not None else ""
        raise PluginUnavailable(f"no CUDA device is visible{hint}: the cuda backend needs "
                                f"an NVIDIA GPU")
    return count


def _version(cupy) -> tuple:
    parts = []
    for p in str(cupy.__version__).split(".")[:2]:
        digits = "".join(c for c in p if c.isdigit()) or "0"
        parts.append(int(digits))
    return tuple(parts + [0] * (2 - len(parts)))


def _device_of(arr) -> int:
    return arr.data.device_id


def _device_guard_for(count: int):
    from .devices import index_of, on

    def device_guard(index: int):
        """Device ``index`` current within the block; ValueError outside [0, count)."""
        return on(index_of(index, count))
    return device_guard


def _from_numpy_for(cupy, count: int, has_bf16: bool):
    from .devices import on, to_device
    ndarray, bf16 = cupy.ndarray, bfloat16.numpy

    def from_numpy(arr, index):
        """``arr`` (numpy, or CuPy from another GPU) copied onto device ``index``."""
        if index is not None and not 0 <= index < count:
            raise ValueError(f"invalid CUDA device index {index}: this machine has {count} "
                             f"visible device(s), cuda:0 to cuda:{count - 1}")
        if not has_bf16 and arr.dtype == bf16:
            from .kernels import no_bfloat16_message
            raise TypeError(no_bfloat16_message(cupy.__version__))
        if isinstance(arr, ndarray):
            return to_device(arr, index)
        host = np.asarray(arr)
        with on(index):  # NOTE: blocking: see the module docstring
            out = cupy.asarray(host, blocking=True)
            if host.ndim == 0:  # a fill kernel, which blocking=True does not wait for
                cupy.cuda.get_current_stream().synchronize()
            return out
    return from_numpy
