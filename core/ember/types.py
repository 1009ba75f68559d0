"""ScalarType, type promotion, Device, Backend and Type: the vocabulary of dispatch.

A **ScalarType** is an element type (``ember.float32``). A **Backend** is what a plugin
registers: a name that is also its entry-point name (``"cpu"``), the array namespace it
computes with (numpy, CuPy) and its kernel table. A **Type** is one (Backend, ScalarType)
pair, named as in the seeds (``CPUFloatType``); it resolves an op name to a kernel once and
caches it, so the hot path is one dict lookup.

Promotion follows PyTorch (``torch.result_type``): categories bool < integral < floating;
within the operands of one op, tensors with dimensions outrank zero-dim tensors, which
outrank Python scalars, unless a lower-priority operand is of a higher category. Python
scalars never upcast a tensor within its category (``int8 tensor + 1000`` stays int8,
``float16 tensor + 2.5`` stays float16).
"""
from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import ml_dtypes
import numpy as np

__all__ = [
    "ScalarType", "bool_", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
    "float32", "float64", "all_scalar_types", "promote_types", "result_type", "can_cast",
    "get_default_dtype", "set_default_dtype", "Device", "Backend", "Type",
]


class ScalarType:
    """An element type: ``ember.float32`` and friends (``torch.dtype``).

    Attributes: ``name`` (``"float32"``), ``type_name`` (the seeds' name, ``"Float"``, used in
    Type names like ``CPUFloatType``), ``itemsize`` in bytes, ``is_floating_point``,
    ``is_signed``, and ``numpy`` (the numpy dtype that stores it; bfloat16 comes from
    ml_dtypes). There is exactly one object per dtype, so compare with ``is``.
    """

    __slots__ = ("name", "type_name", "numpy", "itemsize", "is_floating_point", "is_signed",
                 "_category", "_rank")

    def __init__(self, name: str, type_name: str, np_dtype: Any, category: int, rank: int):
        self.name = name
        self.type_name = type_name
        self.numpy = np.dtype(np_dtype)
        self.itemsize = self.numpy.itemsize
        self.is_floating_point = category == 2
        self.is_signed = name not in ("bool", "uint8")
        self._category = category  # 0 bool, 1 integral, 2 floating
        self._rank = rank          # order used to promote within a category

    def __repr__(self) -> str:
        return f"ember.{self.name}"

    def __reduce__(self):  # pickle by name: there is one object per dtype
        return (_by_name, (self.name,))


bool_ = ScalarType("bool", "Bool", np.bool_, 0, 0)
uint8 = ScalarType("uint8", "Byte", np.uint8, 1, 1)
int8 = ScalarType("int8", "Char", np.int8, 1, 1)
int16 = ScalarType("int16", "Short", np.int16, 1, 2)
int32 = ScalarType("int32", "Int", np.int32, 1, 3)
int64 = ScalarType("int64", "Long", np.int64, 1, 4)
float16 = ScalarType("float16", "Half", np.float16, 2, 1)
bfloat16 = ScalarType("bfloat16", "BFloat16", ml_dtypes.bfloat16, 2, 1)
float32 = ScalarType("float32", "Float", np.float32, 2, 2)
float64 = ScalarType("float64", "Double", np.float64, 2, 3)

all_scalar_types: tuple[ScalarType, ...] = (
    bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
_BY_NAME = {s.name: s for s in all_scalar_types}
_BY_NUMPY: dict[np.dtype, ScalarType] = {s.numpy: s for s in all_scalar_types}
# Aliases PyTorch users type: ember.float, ember.long, ember.half, ...
ALIASES = {"float": float32, "double": float64, "half": float16, "long": int64, "int": int32,
           "short": int16, "bool": bool_}


def _by_name(name: str) -> ScalarType:
    return _BY_NAME[name]


def from_numpy_dtype(dtype: Any) -> ScalarType:
    """Map a numpy dtype (or anything ``np.dtype`` accepts) to its ScalarType.

    Raises TypeError for dtypes ember does not support (complex, float128, strings, ...).
    """
    try:
        return _BY_NUMPY[np.dtype(dtype)]
    except (KeyError, TypeError):
        supported = ", ".join(s.name for s in all_scalar_types)
        raise TypeError(f"ember does not support dtype {dtype!r}; supported: {supported}") from None


def to_scalar_type(dtype: Any, what: str = "dtype") -> ScalarType:
    """Accept a ScalarType, a Python type (``float``/``int``/``bool``) or a numpy dtype."""
    if isinstance(dtype, ScalarType):
        return dtype
    if dtype is float:
        return float64
    if dtype is int:
        return int64
    if dtype is bool:
        return bool_
    if isinstance(dtype, str):  # only ember's own names: "float" would mean float64 to numpy
        if dtype in _BY_NAME:
            return _BY_NAME[dtype]
        raise TypeError(f"expected an ember dtype for {what} (e.g. ember.float32), got the "
                        f"string {dtype!r}; known names: {', '.join(_BY_NAME)}")
    try:
        return from_numpy_dtype(dtype)
    except TypeError:
        raise TypeError(f"expected an ember dtype for {what} (e.g. ember.float32), "
                        f"got {dtype!r}") from None


def promote_types(a: ScalarType, b: ScalarType) -> ScalarType:
    """The smallest ScalarType both ``a`` and ``b`` convert to safely (``torch.promote_types``).

    Matches PyTorch's table: ``uint8 + int8 -> int16``, ``float16 + bfloat16 -> float32``,
    ``int64 + float16 -> float16`` (an integral never upcasts a floating type).
    """
    if a is b:
        return a
    return _PROMOTE[a, b]


def _promote_slow(a: ScalarType, b: ScalarType) -> ScalarType:
    if a._category != b._category:
        return a if a._category > b._category else b
    if a._category == 2:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a._rank > b._rank else b
    if a._category == 1:
        if uint8 in (a, b):  # uint8 with a signed type needs the next signed size up
            other = b if a is uint8 else a
            return int16 if other is int8 else other
        return a if a._rank > b._rank else b
    return a


_PROMOTE = {(a, b): _promote_slow(a, b) for a in all_scalar_types for b in all_scalar_types}


def can_cast(from_: ScalarType, to: ScalarType) -> bool:
    """Whether an in-place or ``out=`` result of dtype ``from_`` may be stored in ``to``.

    PyTorch's ``torch.can_cast``: no cast to a lower category (floating -> integral,
    integral -> bool); anything within or up a category is allowed.
    """
    return from_._category <= to._category


class _DefaultDtype(threading.local):
    dtype = float32


_default = _DefaultDtype()


def get_default_dtype() -> ScalarType:
    """The floating dtype of factories and of int / int true division (float32 at start)."""
    return _default.dtype


def set_default_dtype(dtype: ScalarType) -> None:
    """Set the default floating dtype (``torch.set_default_dtype``). Raises TypeError for a
    non-floating dtype."""
    dtype = to_scalar_type(dtype)
    if not dtype.is_floating_point:
        raise TypeError(f"set_default_dtype: expected a floating dtype, got {dtype}")
    _default.dtype = dtype


def scalar_kind(value: Any) -> ScalarType | None:
    """The ScalarType a Python scalar takes part in promotion with, or None if not a scalar.

    ``bool -> bool``, ``int -> int64``, ``float -> the default dtype`` (torch's wrapped numbers).
    """
    cls = type(value)
    if cls is float:
        return _default.dtype
    if cls is int:
        return int64
    if cls is bool:
        return bool_
    if isinstance(value, (np.floating,)):
        return _default.dtype
    if isinstance(value, (np.bool_,)):
        return bool_
    if isinstance(value, (np.integer,)):
        return int64
    return None


def result_type(dim_tensors, zero_dim_tensors=(), scalars=()) -> ScalarType:
    """PyTorch's ``result_type`` over three priority groups of operands.

    Args:
        dim_tensors: ScalarTypes of the operands that are tensors with ``ndim >= 1``.
        zero_dim_tensors: ScalarTypes of zero-dim tensors.
        scalars: the Python scalars themselves (bool, int, float).
    Returns the ScalarType the op computes in. Raises TypeError for a non-number scalar.
    """
    groups = []
    for group in (dim_tensors, zero_dim_tensors):
        st = None
        for s in group:
            st = s if st is None else _PROMOTE[st, s]
        groups.append(st)
    st = None
    for v in scalars:
        k = scalar_kind(v)
        if k is None:
            raise TypeError(f"expected a number, got {type(v).__name__}")
        st = k if st is None else _PROMOTE[st, k]
    groups.append(st)
    return _combine(groups[0], _combine(groups[1], groups[2]))


def _combine(higher: ScalarType | None, lower: ScalarType | None) -> ScalarType | None:
    if higher is None:
        return lower
    if lower is None or higher._category >= lower._category:
        # A lower-priority operand promotes only when it is of a higher category.
        if higher._category == 0 and lower is not None:
            return _PROMOTE[higher, lower]
        return higher
    return _PROMOTE[higher, lower]


@dataclass(frozen=True)
class Device:
    """Where a tensor lives: a backend name plus an optional index (``torch.device``).

    ``Device("cpu")``, ``Device("cuda:1")``, ``Device("cuda", 1)``. The type is the name of
    the backend plugin that owns the memory. Raises ValueError for a malformed string.
    """

    type: str
    index: int | None = None

    def __init__(self, type: str | Device, index: int | None = None):  # noqa: A002
        if isinstance(type, Device):
            type, index = type.type, type.index if index is None else index
        elif not isinstance(type, str):
            raise TypeError(f"expected a device string like 'cpu' or 'cuda:0', got "
                            f"{type.__class__.__name__}")
        elif ":" in type:
            name, _, idx = type.partition(":")
            if index is not None or not idx.isdigit():
                raise ValueError(f"invalid device string {type!r}: expected 'name' or "
                                 f"'name:index' such as 'cuda:0'")
            type, index = name, int(idx)
        if index is not None and (not isinstance(index, int) or index < 0):
            raise ValueError(f"device index must be a non-negative int, got {index!r}")
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "index", index)

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        idx = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{idx})"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = Device(other)
        return (isinstance(other, Device) and self.type == other.type
                and (self.index or 0) == (other.index or 0))

    def __hash__(self) -> int:
        return hash((self.type, self.index or 0))


@dataclass(eq=False)
class Backend:
    """A compute backend, registered by a plugin through ``ember_backends``.

    Args:
        name: the plugin's entry-point name, also the device type (``"cpu"``, ``"cuda"``).
        xp: the array namespace its kernels compute with (``numpy``, ``cupy``).
        kernels: op name (``"add"``, ``"max.dim"``) -> kernel. A kernel takes backend arrays
            and plain Python values in schema order and returns backend arrays.
        type_prefix: the prefix of its Type names (``"CPU"`` -> ``CPUFloatType``).
        array_type: the class of the arrays it holds (``numpy.ndarray``).
        device_count: how many devices it drives.
        to_numpy: array -> numpy array (host copy where needed).
        from_numpy: (numpy array, device index or None) -> backend array.
        device_of: array -> device index or None.
        make_rng: seed -> the backend's random generator object.
        unsupported: op name -> ScalarTypes for which that kernel must not be used.
        dlpack_device_type: the DLPack device code it accepts in ``from_dlpack`` (1 = CPU,
            2 = CUDA).
        runtime: the device runtime behind ``ember.cuda`` (streams, events, memory
            statistics, synchronize; the protocol is in ``ember/cuda.py``), or None.
        device_guard: device index -> a context manager within which the backend's
            kernels run on, and allocate on, that device (PyTorch's ``DeviceGuard``); the
            factories run under it when ``device=`` names an index (``"cuda:1"``). It
            raises ValueError for an index the backend does not have. None for a backend
            with one device.
        is_host: whether its arrays live in host memory that numpy reads directly
            (``to_numpy`` copies nothing), so ``Tensor.numpy()`` and the other host-only
            paths accept its tensors; True for ``cpu`` and a numpy-backed custom backend,
            False (the default) for device memory such as ``cuda``.
    """

    name: str
    xp: Any
    kernels: Mapping[str, Callable]
    type_prefix: str
    array_type: type
    to_numpy: Callable
    from_numpy: Callable
    device_count: int = 1
    device_of: Callable = lambda arr: None
    make_rng: Callable | None = None
    unsupported: Mapping[str, frozenset] = field(default_factory=dict)
    dlpack_device_type: int = 1
    runtime: Any = None
    device_guard: Callable | None = None
    is_host: bool = False
    _types: dict = field(default_factory=dict, repr=False)
    # numpy dtype -> Type, filled up front: dispatch.wrap looks results up here (hot path).
    types_by_dtype: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        for st in all_scalar_types:
            self.types_by_dtype[st.numpy] = self.type(st)

    def type(self, scalar_type: ScalarType) -> Type:
        """The one Type object for (self, scalar_type)."""
        t = self._types.get(scalar_type)
        if t is None:
            t = self._types.setdefault(scalar_type, Type(self, scalar_type))
        return t

    def on_device(self, index):
        """A context manager making device ``index`` current for the code inside (the
        backend's ``device_guard``), so allocations there (factories, CuPy's
        ``ones_like`` and ``copy``) land on it; a no-op for ``index`` None or a
        single-device backend. Raises ValueError (from the guard) for an index the
        backend does not have."""
        if index is None or self.device_guard is None:
            return contextlib.nullcontext()
        return self.device_guard(index)

    def on_device_of(self, arr):
        """``on_device`` of ``arr``'s device (``device_of``)."""
        if self.device_guard is None:  # (the cpu backend: backward() reads this per call)
            return contextlib.nullcontext()
        return self.device_guard(self.device_of(arr))

    def type_for_array(self, arr) -> Type:
        """The Type of a backend array, from its dtype. Raises TypeError if unsupported."""
        t = self.types_by_dtype.get(arr.dtype)
        return t if t is not None else self.type(from_numpy_dtype(arr.dtype))

    def __repr__(self) -> str:
        return f"Backend({self.name!r}, {len(self.kernels)} kernels)"


def _no_kernel_error(op: str, typ: Type) -> NotImplementedError:
    """The bare error, until ``dispatch`` hands down its own (``set_missing_kernel_error``)."""
    return NotImplementedError(f"{op}: no kernel for {typ.name} ({typ.scalar_type} on "
                               f"'{typ.backend.name}')")


_missing_kernel_error: Callable = _no_kernel_error


def set_missing_kernel_error(make_error: Callable) -> None:
    """Make ``make_error(op, Type)`` the NotImplementedError a Type raises for a kernel its
    backend lacks or excludes for its dtype. ``dispatch`` hands down its
    ``missing_kernel_error`` at import: the message names who has the op and the way out,
    which needs the backend registry and the install hints, a layer above this one."""
    global _missing_kernel_error
    _missing_kernel_error = make_error


class _KernelCache(dict):
    """op name -> kernel for one Type; a miss resolves through the backend once."""

    __slots__ = ("type",)

    def __missing__(self, op: str) -> Callable:
        kernel = self.type._resolve(op)
        self[op] = kernel
        return kernel


class Type:
    """One (Backend, ScalarType) pair, the seeds' ATen Type (``CPUFloatType``).

    ``Type.kernels[op]`` is the kernel for ``op``; a kernel a backend lacks, or excludes
    for this dtype, raises NotImplementedError naming the Types that do have it and the
    way out (``dispatch.missing_kernel_error``, handed down: ``set_missing_kernel_error``).
    """

    __slots__ = ("backend", "scalar_type", "name", "kernels", "np_dtype")

    def __init__(self, backend: Backend, scalar_type: ScalarType):
        self.backend = backend
        self.scalar_type = scalar_type
        self.np_dtype = scalar_type.numpy
        self.name = f"{backend.type_prefix}{scalar_type.type_name}Type"
        self.kernels = _KernelCache()
        self.kernels.type = self

    def _resolve(self, op: str) -> Callable:
        kernel = self.backend.kernels.get(op)
        if kernel is not None and self.scalar_type not in self.backend.unsupported.get(op, ()):
            return kernel
        raise _missing_kernel_error(op, self)

    def __repr__(self) -> str:
        return self.name
