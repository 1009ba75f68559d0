"""DLPack for bfloat16, which numpy cannot exchange itself.

DLPack names bfloat16 ``(code kDLBfloat = 4, bits 16, lanes 1)``; numpy has no bfloat16
(ember stores it as ``ml_dtypes.bfloat16``), so ``numpy.from_dlpack`` refuses such a
tensor and ``ndarray.__dlpack__`` refuses to export one. Both ways go through the 16-bit
pattern instead: a capsule is relabelled in place between kDLBfloat and kDLUInt 16, before
anyone consumes it, and the array is viewed back as bfloat16. The memory is shared as
DLPack shares it; only the dtype field of the producer's (still unconsumed) DLTensor
changes. No maintained library does this (ml_dtypes has no DLPack), hence the ctypes.

* :func:`import_array` ``(xp, obj, bfloat16)``: ``xp.from_dlpack(obj)``, bfloat16 too.
* :func:`export_capsule` ``(arr, bfloat16, args, kwargs)``: ``arr.__dlpack__(...)``,
  bfloat16 too.

Reference: the DLPack C header ``dlpack.h`` (v1.0: ``DLManagedTensorVersioned``) and the
Python array API's ``__dlpack__`` protocol. This module imports nothing from ember.
"""
from __future__ import annotations

import ctypes

__all__ = ["import_array", "export_capsule"]

_K_DL_UINT, _K_DL_BFLOAT = 1, 4


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.c_void_p),
                ("strides", ctypes.c_void_p), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):           # capsule name "dltensor"
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class _DLManagedTensorVersioned(ctypes.Structure):  # capsule name "dltensor_versioned"
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


_LAYOUTS = {b"dltensor": _DLManagedTensor, b"dltensor_versioned": _DLManagedTensorVersioned}

# own prototypes: setting argtypes on ctypes.pythonapi's shared ones would change them for
# every other user in the process
_get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
    ("PyCapsule_GetName", ctypes.pythonapi))
_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


def _dtype_field(capsule) -> _DLDataType | None:
    """The DLDataType inside an unconsumed DLPack capsule, or None for another capsule
    (a consumed one is renamed ``used_dltensor``)."""
    name = _get_name(capsule)
    layout = _LAYOUTS.get(name)
    if layout is None:
        return None
    return layout.from_address(_get_pointer(capsule, name)).dl_tensor.dtype


def _relabel(capsule, src: int, dst: int) -> bool:
    """Change a 16-bit scalar dtype code ``src`` to ``dst`` in place; True if it did."""
    dt = _dtype_field(capsule)
    if dt is None or (dt.code, dt.bits, dt.lanes) != (src, 16, 1):
        return False
    dt.code = dst
    return True


class _BFloat16AsUInt16:
    """``obj`` seen through the DLPack protocol with bfloat16 relabelled as uint16; the
    consumer's keywords (``stream``, ``max_version``, ``copy``, ...) go to ``obj``."""

    def __init__(self, obj):
        self.obj, self.relabelled = obj, False

    def __dlpack_device__(self):
        return self.obj.__dlpack_device__()

    def __dlpack__(self, *args, **kwargs):
        capsule = self.obj.__dlpack__(*args, **kwargs)
        self.relabelled = _relabel(capsule, _K_DL_BFLOAT, _K_DL_UINT)
        return capsule


def import_array(xp, obj, bfloat16):
    """``xp.from_dlpack(obj)`` (``xp``: numpy or CuPy), also when ``obj`` holds bfloat16:
    then an array of dtype ``bfloat16`` (the ml_dtypes numpy dtype) sharing ``obj``'s
    memory, as for every other dtype. Raises what ``xp.from_dlpack`` raises."""
    seen = _BFloat16AsUInt16(obj)
    arr = xp.from_dlpack(seen)
    return arr.view(bfloat16) if seen.relabelled else arr


def export_capsule(arr, bfloat16, args: tuple, kwargs: dict):
    """``arr.__dlpack__(*args, **kwargs)``, also for a bfloat16 ``arr``: its 16-bit
    pattern is exported and the capsule says kDLBfloat, so the consumer sees bfloat16 and
    shares ``arr``'s memory."""
    if arr.dtype != bfloat16:
        return arr.__dlpack__(*args, **kwargs)
    capsule = arr.view("uint16").__dlpack__(*args, **kwargs)
    if not _relabel(capsule, _K_DL_UINT, _K_DL_BFLOAT):  # never hand out bfloat16 as uint16
        raise RuntimeError(f"__dlpack__: could not mark the exported capsule as bfloat16 "
                           f"(capsule {_get_name(capsule)!r}); convert first with "
                           f".to(ember.float32)")
    return capsule
