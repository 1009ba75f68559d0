"""Running generated kernels through Triton's interpreter, on host numpy arrays.

Triton's interpreter (``triton/runtime/interpreter.py``) runs a kernel's Python body with
numpy, one program at a time. Three things make it run ours:

- :class:`HostPointer` stands in for the torch tensors the interpreter expects as pointer
  arguments: ``GridExecutor._init_args_hst`` copies each argument's storage to the host
  (``untyped_storage().cpu()``, ``new_empty(0, device='cpu').set_(storage, offset, size,
  stride)``) and ``_restore_args_dev`` copies it back (``storage.copy_``). A HostPointer's
  storage already is host memory, so every step keeps the same address and the kernel
  reads and writes the caller's array in place;
- :func:`jit` builds the interpreter's ``InterpretedFunction`` (or a compiled
  ``JITFunction``) directly, whatever ``TRITON_INTERPRET`` says, changing no setting;
- :func:`kernel_globals` gives generated source its names; under the interpreter its
  ``libdevice`` is :data:`LIBDEVICE`, numpy versions of the functions ``ops.lower`` emits
  (the interpreter cannot call extern functions: ``create_extern_elementwise`` raises).
  They take the same argument types as CUDA's libdevice (float32 or float64, all alike)
  and raise TypeError for others, so a kernel that passes here also type-checks on a GPU.

Reference: Triton 3.x ``runtime/interpreter.py`` (``GridExecutor``, ``TensorHandle``,
``InterpreterBuilder.create_exp``) and ``language/extra/cuda/libdevice.py``.
"""
from __future__ import annotations

import math
import types

import numpy as np
import triton
import triton.language as tl

from .ops import LIBDEVICE_FUNCTIONS, LIBDEVICE_NAME

__all__ = ["HostPointer", "as_pointer", "jit", "kernel_globals", "LIBDEVICE",
           "pointer_dtype_name"]

# numpy dtype name -> the name Triton's ``mangle_type`` reads from ``arg.dtype``
_POINTER_NAMES = {"bool": "int8", "uint8": "uint8", "int8": "int8", "int16": "int16",
                  "int32": "int32", "int64": "int64", "float16": "float16",
                  "bfloat16": "bfloat16", "float32": "float32", "float64": "float64"}


def pointer_dtype_name(dtype) -> str:
    """The Triton-understood element type name of a numpy dtype (bool is ``"int8"``: the
    kernels load bools as bytes). Raises TypeError for a dtype ember does not have."""
    name = np.dtype(dtype).name
    try:
        return _POINTER_NAMES[name]
    except KeyError:
        raise TypeError(f"expected an array of one of ember's dtypes "
                        f"({', '.join(_POINTER_NAMES)}), got {name}") from None


class _HostStorage:
    """The storage of a HostPointer: host memory at ``address``, already on the host, so
    ``cpu()`` is itself and ``copy_`` between two views of it copies nothing."""

    def __init__(self, address: int, owner: np.ndarray):
        self.address, self.owner = address, owner

    def data_ptr(self) -> int:
        return self.address

    def cpu(self) -> _HostStorage:
        return self

    def copy_(self, other) -> _HostStorage:
        if other.data_ptr() != self.address:
            raise RuntimeError(f"HostPointer storages never move, but a copy from "
                               f"{other.data_ptr():#x} to {self.address:#x} was asked for; "
                               f"was a non-HostPointer argument passed with one?")
        return self


class HostPointer:
    """A numpy array (any strides, any offset) as a pointer argument under Triton's
    interpreter.

    Attributes:
        array: the array (kept alive while the pointer is).
        dtype: the Triton-understood element type name (``"float32"``, ``"bfloat16"``;
            bool arrays are ``"int8"``), which ``triton.runtime.jit.mangle_type`` reads.
    ``data_ptr()`` is the address of the element at index ``(0, ..., 0)`` (plus the
    ``offset`` in bytes it was made with); the kernel
    indexes from it with the strides it is given, so negative strides work too.
    The torch-like methods are the ones ``GridExecutor`` calls; none copies memory.
    """

    def __init__(self, array: np.ndarray, offset: int = 0):
        if not isinstance(array, np.ndarray):
            raise TypeError(f"HostPointer: expected a numpy array, got "
                            f"{type(array).__name__}; use launch.as_pointer for CuPy arrays")
        self.array = array
        self.dtype = pointer_dtype_name(array.dtype)
        self._address = array.__array_interface__["data"][0] + offset

    def data_ptr(self) -> int:
        """Address of the element at index (0, ..., 0)."""
        return self._address

    # ---- what GridExecutor._init_args_hst / _restore_args_dev call -------------------------
    def untyped_storage(self) -> _HostStorage:
        return _HostStorage(self._address, self.array)

    def storage_offset(self) -> int:
        return 0

    def size(self) -> tuple:
        return self.array.shape

    def stride(self) -> tuple:
        return tuple(s // self.array.itemsize for s in self.array.strides)

    def new_empty(self, *size, device=None, **kwargs) -> HostPointer:
        return HostPointer(self.array)

    def set_(self, storage: _HostStorage, offset: int, size=None, stride=None) -> HostPointer:
        self.array = storage.owner
        self._address = storage.data_ptr() + offset * self.array.itemsize
        return self

    def copy_(self, other) -> HostPointer:
        self.untyped_storage().copy_(other.untyped_storage())
        return self

    def __repr__(self) -> str:
        return (f"HostPointer({self.dtype}, shape={self.array.shape}, "
                f"address={self._address:#x})")


def as_pointer(array: np.ndarray, offset: int = 0) -> HostPointer:
    """``array`` as a kernel pointer argument under the interpreter (:class:`HostPointer`),
    ``offset`` bytes past its element ``(0, ..., 0)``. Raises TypeError for a non-numpy
    array or a dtype ember does not have."""
    return HostPointer(array, offset)


def jit(fn, interpret: bool):
    """``triton.jit(fn)``, with the interpreter on (``interpret=True``) or off, whatever
    ``TRITON_INTERPRET`` says; no environment variable or knob changes.

    Under the interpreter Triton reads ``fn``'s source with ``inspect``: generated source
    must be in ``linecache`` under ``fn.__code__.co_filename``.
    """
    if interpret:
        from triton.runtime.interpreter import InterpretedFunction
        return InterpretedFunction(fn)
    from triton.runtime.jit import JITFunction
    return JITFunction(fn)


def kernel_globals(interpret: bool) -> dict:
    """A fresh globals dict for generated kernel source: ``triton``, ``tl`` and
    ``LIBDEVICE_NAME`` (Triton's libdevice, or :data:`LIBDEVICE` under the interpreter).
    Fresh because the interpreter adds its own names to a kernel's globals."""
    if interpret:
        libdevice = LIBDEVICE
    else:
        from triton.language.extra import libdevice
    return {"triton": triton, "tl": tl, LIBDEVICE_NAME: libdevice}


# ---- libdevice under the interpreter ---------------------------------------------------------
def _operand(x, fn: str):
    """(numpy data, triton scalar type, block shape or None) of an argument, typed as
    libdevice's dispatch types it (a Python float is float32, an int int32)."""
    if isinstance(x, tl.constexpr):
        x = x.value
    if isinstance(x, tl.tensor):
        shape = list(x.type.shape) if x.type.is_block() else None
        return x.handle.data, x.dtype, shape
    if isinstance(x, bool):
        return np.array([x]), tl.int1, None
    if isinstance(x, int):
        return np.array([x], np.int32), tl.int32, None
    if isinstance(x, float):
        return np.array([x], np.float32), tl.float32, None
    raise TypeError(f"libdevice.{fn}: expected a tensor or a number, got {type(x).__name__}")


def _libdevice_function(name: str, ufunc):
    def fn(*args, **kwargs):
        from triton.runtime.interpreter import TensorHandle
        ops = [_operand(a, name) for a in args]
        types_ = {str(t) for _, t, _ in ops}
        if len(types_) != 1 or types_.pop() not in ("fp32", "fp64"):
            raise TypeError(f"libdevice.{name}: expected float32 or float64 arguments all of "
                            f"one type (libdevice's overloads), got "
                            f"{', '.join(str(t) for _, t, _ in ops)}")
        dtype = ops[0][1]
        np_type = np.float32 if dtype == tl.float32 else np.float64
        shapes = [s for _, _, s in ops if s is not None]
        with np.errstate(all="ignore"):
            data = np.asarray(ufunc(*(d for d, _, _ in ops)), dtype=np_type)
        if not shapes:
            return tl.tensor(TensorHandle(data.reshape(1), dtype), dtype)
        shape = list(np.broadcast_shapes(*(tuple(s) for s in shapes)))
        data = np.ascontiguousarray(np.broadcast_to(data, shape))
        return tl.tensor(TensorHandle(data, dtype), tl.block_type(dtype, shape))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"libdevice.{name} on the interpreter's numpy data ({ufunc.__name__})."
    return fn


def _vectorized(f):
    v = np.vectorize(f, otypes=[np.float64])

    def ufunc(x):
        return v(x).astype(x.dtype)
    ufunc.__name__ = f"math.{f.__name__}"
    return ufunc


def _pow(x, y):
    """C99's pow, as libdevice's: numpy's SIMD float32/float64 loops give NaN for
    (-inf) ** 0.5 and -0.0 for (-0.0) ** 0.5, where C gives +inf and +0.0."""
    r = np.power(x, y)
    odd = np.mod(y, 2) == 1
    fix = (y > 0) & ~odd & ((x == -np.inf) | (x == 0))
    return np.where(fix, np.abs(x).astype(r.dtype), r)


_NUMPY = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "log10": np.log10,
    "log1p": np.log1p, "expm1": np.expm1, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "erf": _vectorized(math.erf),
    "erfc": _vectorized(math.erfc), "atan2": np.arctan2, "trunc": np.trunc, "rint": np.rint,
    "pow": _pow, "fmod": np.fmod, "copysign": np.copysign,
}
if set(_NUMPY) != LIBDEVICE_FUNCTIONS:  # a function ops.lower emits has no stand-in
    raise ImportError(f"interpreter libdevice stand-in out of date: missing "
                      f"{sorted(LIBDEVICE_FUNCTIONS - set(_NUMPY))}, extra "
                      f"{sorted(set(_NUMPY) - LIBDEVICE_FUNCTIONS)}")

#: The interpreter's libdevice: each function of ``ops.LIBDEVICE_FUNCTIONS`` on numpy data.
LIBDEVICE = types.SimpleNamespace(**{name: _libdevice_function(name, f)
                                     for name, f in _NUMPY.items()})
