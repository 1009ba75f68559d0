"""Tensor factories: ``tensor``, ``zeros``, ``arange``, ``rand``, ``*_like``, DLPack, ...

Factories are written by hand rather than generated: they have no tensor operand to
dispatch on, so they pick the backend from ``device=`` (or the default device) and call its
factory kernels (``empty``, ``full``, ``arange``, ``linspace``, ``eye``, ``rand``, ``randn``,
``randint``). A device index (``"cuda:1"``) runs the kernels under the backend's
``device_guard``, so the result is allocated there, as PyTorch's factories do under a
``DeviceGuard``; without an index they allocate on the backend's current device. Defaults
follow PyTorch: floating factories use ``ember.get_default_dtype()``; ``tensor`` infers
int64 for Python ints, bool for bools and the default dtype for floats; an array of a
backend (a CuPy array) stays on its device unless ``device=`` says otherwise.
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from . import _dlpack
from . import dispatch as _d
from . import types as _t
from .backends import registry as _registry
from .backends.kernels.checked_cast import check_fits
from .backends.kernels.copying import cast_scalar
from .host_data import infer_numpy
from .backends.kernels.factory import MAX_BYTES, allocation_error, size_overflow
from .errors import ShapeError
from ._base.hooks import TRACER as _tracer
from ._base.tracing_state import STATE as _tracing
from .random import backend_rng
from .tensor import Tensor

__all__ = ["tensor", "as_tensor", "from_numpy", "from_dlpack", "zeros", "ones", "empty",
           "full", "arange", "linspace", "logspace", "eye", "rand", "randn", "randint",
           "randperm", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
           "randn_like", "randint_like"]


def _traced(kind: str):
    """Record the factory as a node when a trace is open and a size is a SymInt (see
    ``jit/frontend/traced_factories.py``); otherwise the call costs one attribute read more."""
    def deco(fn):
        def factory(*args, **kwargs):
            if _tracing.active:  # the tracer's hook (jit/frontend/traced_factories.py)
                return _tracer.record_factory(kind, fn, args, kwargs)
            return fn(*args, **kwargs)
        factory.__wrapped__ = fn
        for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
            setattr(factory, attr, getattr(fn, attr))
        return factory
    return deco


def _backend(device):
    return _registry.get_backend(device if device is not None else _registry.default_device())


def _target(device) -> tuple:
    """(Backend, device index or None) that ``device`` names (None: the default device)."""
    if device is None:
        d = _registry.default_device()
    else:
        d = device if device.__class__ is _t.Device else _t.Device(device)
    return _registry.get_backend(d), d.index


def _array_backend(data):
    """The backend whose arrays ``data`` is one of (a CuPy array: the cuda backend), or
    None for numpy arrays, Tensors, numbers and sequences."""
    cls = data.__class__
    if cls is np.ndarray or cls in (list, tuple, int, float, bool) or \
            isinstance(data, (Tensor, np.generic)):
        return None
    for b in _registry.all_backends():
        if b.array_type is not np.ndarray and isinstance(data, b.array_type):
            return b
    return None


def _from_backend_array(data, src, dtype, device, copy: bool) -> Tensor:
    """A tensor of ``data``, an array of backend ``src``: on ``data``'s device unless
    ``device`` names another, of ``dtype`` (default: ``data``'s); a copy when ``copy``
    (``tensor``), else sharing memory when nothing changes (``as_tensor``)."""
    t = _d.wrap(data, src)  # shares data's memory
    st = None if dtype is None else _t.to_scalar_type(dtype)
    with src.on_device_of(data):  # casts and copies run on data's device
        out = t.to(dtype=st, device=device)
        return out.clone() if copy and out is t else out


def _finish(arr, backend, requires_grad: bool) -> Tensor:
    t = _d.wrap(arr, backend)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _size(size, fn: str) -> tuple:
    """Accept ``zeros(2, 3)``, ``zeros((2, 3))`` and ``zeros([2, 3])``."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:  # the common case, plain non-negative ints, in one pass
        if s.__class__ is not int or s < 0:
            break
    else:
        return size if size.__class__ is tuple else tuple(size)
    out = tuple(_d.check_int(s, fn, "size", i + 1) for i, s in enumerate(size))
    if any(s < 0 for s in out):
        raise ShapeError(f"{fn}(): negative dimension in size {list(out)}; sizes must be >= 0")
    if _tracing.active:  # keep the trace's SymInts (check_int made them plain ints)
        out = tuple(s if hasattr(s, "_expr") else o for s, o in zip(size, out))
    return out


def _check_count(op: str, n: int, dtype) -> None:
    """Raise ``size_overflow``'s ShapeError when ``n`` elements of ``dtype`` overflow the
    address space, before a kernel that would not fail on it (numpy's linspace raises
    IndexError, its permutation returns an empty array)."""
    err = size_overflow(op, (n,), dtype)
    if err is not None:
        raise err


def _dtype(dtype, default=None) -> _t.ScalarType:
    if dtype is None:
        return default or _t.get_default_dtype()
    return _t.to_scalar_type(dtype)


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (``torch.tensor``).

    Args:
        data: a number, nested lists/tuples of numbers, a numpy array, a Tensor, or an
            array of an installed backend (a CuPy array, as ``torch.tensor`` takes one
            through ``__cuda_array_interface__``).
        dtype: defaults to int64 for ints, bool for bools, the default dtype for floats,
            and the array's dtype for numpy input.
        device: backend name with optional index (``"cuda:1"``); defaults to the device of
            a backend array, else to the default device.
    Raises TypeError for data without a numeric dtype, ValueError for ragged lists or a
    device index the backend does not have.
    """
    src = _array_backend(data)
    if src is not None:
        t = _from_backend_array(data, src, dtype, device, copy=True)
        return t.requires_grad_(True) if requires_grad else t
    try:
        arr = infer_numpy(data, dtype)
    except ValueError as e:
        raise ValueError(f"tensor(): expected a rectangular nested sequence: {e}") from None
    st = _dtype(dtype) if dtype is not None else _t.from_numpy_dtype(arr.dtype)
    check_fits(arr, st.numpy, "tensor")
    b, idx = _target(device)
    return _finish(b.from_numpy(np.array(arr, dtype=st.numpy, copy=True), idx), b,
                   requires_grad)


def _reduce_ex(self, protocol):
    """``Tensor.__reduce_ex__``: a tensor pickles (and ``copy.copy``-ies) as
    ``tensor(<its data as a numpy array>)``, so it loads on the default device without
    history. Installed on ``Tensor`` by ``install`` (``Tensor`` sits below the factories)."""
    return (tensor, (self.numpy(force=True), ), None)


def install(tensor_cls) -> None:
    """Make ``tensor_cls`` pickle through ``tensor`` (once, by the composition root)."""
    tensor_cls.__reduce_ex__ = _reduce_ex


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``tensor`` but shares memory with ``data`` (a Tensor, a numpy array on cpu, a
    backend array such as a CuPy array on its device) when dtype and device allow
    (``torch.as_tensor``)."""
    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device)
    src = _array_backend(data)
    if src is not None:
        return _from_backend_array(data, src, dtype, device, copy=False)
    if isinstance(data, np.ndarray) and (device is None or _backend(device).is_host):
        st = _dtype(dtype) if dtype is not None else _t.from_numpy_dtype(data.dtype)
        check_fits(data, st.numpy, "as_tensor")
        b = _backend(device)
        return _d.wrap(b.from_numpy(data.astype(st.numpy, copy=False), None), b)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A cpu tensor sharing memory with ``array`` (``torch.from_numpy``).

    Raises TypeError for non-arrays or unsupported dtypes (complex, strings, ...).
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy(): expected np.ndarray, got {type(array).__name__}")
    _t.from_numpy_dtype(array.dtype)
    b = _backend("cpu")
    return _d.wrap(b.from_numpy(array, None), b)


def from_dlpack(obj) -> Tensor:
    """A tensor sharing memory with any object that implements ``__dlpack__``.

    The backend is the one whose DLPack device type matches ``obj.__dlpack_device__()``.
    Every ember dtype comes through, bfloat16 too (which numpy alone refuses).
    Raises TypeError if ``obj`` has no DLPack protocol, NoBackendError if no installed
    backend accepts its device.
    """
    if not hasattr(obj, "__dlpack_device__"):
        raise TypeError(f"from_dlpack(): {type(obj).__name__} does not implement __dlpack__")
    dev_type, dev_idx = obj.__dlpack_device__()
    for b in _registry.all_backends():
        if b.dlpack_device_type == int(dev_type):
            arr = _dlpack.import_array(b.xp, obj, _t.bfloat16.numpy)
            return _d.wrap(arr, b)
    raise _registry.NoBackendError(f"from_dlpack(): no installed backend accepts DLPack device "
                                   f"type {int(dev_type)}; install ember-cuda for GPU memory")


@_traced("ember::empty")
def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An uninitialized tensor of shape ``size`` (contents are arbitrary)."""
    b, index = _target(device)
    size, dt = _size(size, "empty"), _dtype(dtype).numpy
    with b.on_device(index):
        try:
            arr = b.kernels["empty"](size, dt)
        except (ValueError, MemoryError) as e:
            raise allocation_error("empty", size, dt, e) from None
    return _finish(arr, b, requires_grad)


def _fill(size: tuple, fill_value, st: _t.ScalarType, device, requires_grad: bool,
          like=None, op: str = "full") -> Tensor:
    """``fill_value`` in a new tensor of checked ``size`` and dtype ``st``; ``like``: a
    backend array whose dense layout to copy (``_layout``), or None for row-major. A size
    too large raises ``allocation_error``'s error, naming ``op``."""
    b, index = _target(device)
    perm = None if like is None else _layout(like)
    if perm is not None:  # allocate in the input's memory order, then view it back
        size = tuple(size[d] for d in perm)
    try:
        if index is None:
            arr = b.kernels["full"](size, fill_value, st.numpy)
        else:
            with b.on_device(index):
                arr = b.kernels["full"](size, fill_value, st.numpy)
    except (ValueError, MemoryError) as e:
        raise allocation_error(op, size, st.numpy, e) from None
    if perm is not None:
        arr = arr.transpose(_inverse(perm))
    return _finish(arr, b, requires_grad)


@_traced("ember::full")
def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value``; the dtype is inferred from the
    value like ``tensor`` does when not given."""
    if dtype is None:
        dtype = _t.scalar_kind(fill_value)
        if dtype is None:
            raise TypeError(f"full(): fill_value must be a number, got "
                            f"{type(fill_value).__name__}")
    st = _dtype(dtype)
    return _fill(_size((size,), "full"), _fill_value(fill_value, st, "full"), st, device,
                 requires_grad)


def _fill_value(value, st: _t.ScalarType, op: str):
    """``value`` checked and converted for dtype ``st`` as PyTorch's factories do: raises
    RuntimeError for a value that would wrap or overflow; -max..-1 wrap into unsigned."""
    if isinstance(value, (int, float, np.integer, np.floating)):
        return cast_scalar(value, st.numpy, op)
    return value


@_traced("ember::zeros")
def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of shape ``size`` filled with 0 (default dtype unless ``dtype``)."""
    return _fill(_size(size, "zeros"), 0, _dtype(dtype), device, requires_grad, op="zeros")


@_traced("ember::ones")
def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of shape ``size`` filled with 1 (default dtype unless ``dtype``)."""
    return _fill(_size(size, "ones"), 1, _dtype(dtype), device, requires_grad, op="ones")


@_traced("ember::arange")
def arange(start, end=None, step=1, *, dtype=None, device=None,
           requires_grad: bool = False) -> Tensor:
    """Values ``start, start + step, ...`` below ``end`` (``torch.arange``).

    The dtype is int64 if all of start/end/step are ints, else the default dtype.
    Raises ValueError for ``step == 0``, a step that moves away from ``end`` or a bound
    that is not finite; ShapeError for more elements than a tensor can hold
    (``arange(0, 1, 1e-20)``), MemoryError for more than fit in memory.
    """
    if end is None:
        start, end = 0, start
    for n, v in (("start", start), ("end", end), ("step", step)):
        if _t.scalar_kind(v) is None:
            raise TypeError(f"arange(): argument '{n}' must be a number, got "
                            f"{type(v).__name__}")
    if step == 0:
        raise ValueError("arange(): step must be nonzero")
    if not all(math.isfinite(v) for v in (start, end, step)):
        raise ValueError(f"arange(): unsupported range: {start} -> {end} with step {step}; "
                         f"start, end and step must be finite")
    if (end - start) * step < 0:
        raise ValueError(f"arange(): upper bound and larger bound inconsistent with step sign "
                         f"(start={start}, end={end}, step={step})")
    all_int = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    st = _dtype(dtype, _t.int64 if all_int else None)
    n = (end - start) / step  # how many values (inf past the float range)
    if n * st.itemsize > MAX_BYTES:
        raise ShapeError(f"arange(): the range {start} -> {end} with step {step} has {n:.4g} "
                         f"elements, more than a tensor can hold (invalid size, possible "
                         f"overflow?); pass a larger step")
    n = math.ceil(n)
    last = start + step * (n - 1)  # the last value made
    check_fits(np.array([start, last]), st.numpy, "arange")
    b, index = _target(device)
    with b.on_device(index):
        try:
            arr = b.kernels["arange"](start, end, step, st.numpy)
        except (ValueError, MemoryError) as e:
            raise allocation_error("arange", (n,), st.numpy, e) from None
    return _finish(arr, b, requires_grad)


def linspace(start, end, steps: int, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    steps = _d.check_int(steps, "linspace", "steps", 3)
    if steps < 0:
        raise ValueError(f"linspace(): number of steps must be non-negative, got {steps}")
    _check_count("linspace", steps, _dtype(dtype).numpy)
    if steps and isinstance(start, (int, float, np.number)) and \
            isinstance(end, (int, float, np.number)):
        check_fits(np.array([start, end] if steps > 1 else [start]), _dtype(dtype).numpy,
                   "linspace")
    b, index = _target(device)
    with b.on_device(index):
        try:
            arr = b.kernels["linspace"](start, end, steps, _dtype(dtype).numpy)
        except (ValueError, MemoryError) as e:
            raise allocation_error("linspace", (steps,), _dtype(dtype).numpy, e) from None
    return _finish(arr, b, requires_grad)


def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` values ``base ** e`` for exponents ``e`` evenly spaced from ``start`` to
    ``end`` inclusive (``torch.logspace``): shape (steps,), the default dtype unless
    ``dtype``. Computed in float64 and rounded once (truncated for integral dtypes, so
    ``logspace(0, 1, 3, dtype=int64)`` is [1, 3, 10], as PyTorch). Raises ValueError for
    negative ``steps``, TypeError for non-number bounds or base.
    """
    steps = _d.check_int(steps, "logspace", "steps", 3)
    if steps < 0:
        raise ValueError(f"logspace(): number of steps must be non-negative, got {steps}")
    _check_count("logspace", steps, _dtype(dtype).numpy)
    for n, v in (("start", start), ("end", end), ("base", base)):
        if _t.scalar_kind(v) is None:
            raise TypeError(f"logspace(): argument '{n}' must be a number, got "
                            f"{type(v).__name__}")
    b, index = _target(device)
    with b.on_device(index):
        try:
            arr = b.kernels["logspace"](start, end, steps, base, _dtype(dtype).numpy)
        except (ValueError, MemoryError) as e:
            raise allocation_error("logspace", (steps,), _dtype(dtype).numpy, e) from None
    return _finish(arr, b, requires_grad)


def eye(n: int, m: int | None = None, *, dtype=None, device=None,
        requires_grad: bool = False) -> Tensor:
    """The ``(n, m)`` identity matrix (``m`` defaults to ``n``).

    Raises ShapeError (a RuntimeError and ValueError) for a negative ``n`` or ``m`` and a
    size too large to address, MemoryError for one that does not fit in memory."""
    n = _d.check_int(n, "eye", "n", 1)
    m = n if m is None else _d.check_int(m, "eye", "m", 2)
    for name, v in (("n", n), ("m", m)):
        if v < 0:
            raise ShapeError(f"eye(): {name} must be greater or equal to 0, got {v}")
    b, index = _target(device)
    with b.on_device(index):
        try:
            arr = b.kernels["eye"](n, m, _dtype(dtype).numpy)
        except (ValueError, MemoryError) as e:
            raise allocation_error("eye", (n, m), _dtype(dtype).numpy, e) from None
    return _finish(arr, b, requires_grad)


def _random(kind: str, size, generator, dtype, device, requires_grad, *extra,
            perm=None) -> Tensor:
    """Draws of ``kind`` of shape ``size``; ``perm`` (from ``_layout``): drawn in that memory
    order of the dims and viewed back, as ``*_like`` keeps a dense input's strides."""
    st = _dtype(dtype)
    if kind != "randint" and not st.is_floating_point:
        raise TypeError(f"{kind}(): expected a floating dtype, got {st}; use randint for "
                        f"integers")
    b, index = _target(device)
    rng = backend_rng(generator, b)
    if perm is not None:
        size = tuple(size[d] for d in perm)
    with b.on_device(index):  # the generator draws from the current device's stream
        try:
            arr = b.kernels[kind](*extra, size, st.numpy, rng)
        except (ValueError, MemoryError) as e:
            raise allocation_error(kind, size, st.numpy, e) from None
    if perm is not None:
        arr = arr.transpose(_inverse(perm))
    return _finish(arr, b, requires_grad)


@_traced("ember::rand")
def rand(*size, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Uniform samples on [0, 1) of shape ``size``, drawn from ``generator``."""
    return _random("rand", _size(size, "rand"), generator, dtype, device, requires_grad)


@_traced("ember::randn")
def randn(*size, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Standard normal samples of shape ``size``, drawn from ``generator``."""
    return _random("randn", _size(size, "randn"), generator, dtype, device, requires_grad)


@_traced("ember::randint")
def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False) -> Tensor:
    """Integers uniform on ``[low, high)``: ``randint(high, size)`` or
    ``randint(low, high, size)``; int64 unless ``dtype``.

    Raises ValueError if ``high <= low``.
    """
    if size is None:
        if not isinstance(high, (tuple, list)):
            raise TypeError("randint(): expected a size tuple, e.g. randint(10, (3,))")
        low, high, size = 0, low, high
    if high <= low:
        raise ValueError(f"randint(): expected low < high, got low={low}, high={high}")
    return _random("randint", _size((size,), "randint"), generator, dtype or _t.int64,
                   device, requires_grad, low, high)


def randperm(n: int, *, generator=None, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """A uniformly random permutation of ``0 .. n-1``, shape (n,), drawn from ``generator``
    (the device's default generator, which ``ember.manual_seed`` seeds); int64 unless
    ``dtype`` (any dtype but bool). Raises ValueError for n < 0, RuntimeError when ``dtype``
    cannot hold n values (300 in uint8), NotImplementedError for bool (torch.randperm).
    """
    n = _d.check_int(n, "randperm", "n", 1)
    if n < 0:
        raise ValueError(f"randperm(): n must be non-negative, got {n}")
    _check_count("randperm", n, np.int64)
    st = _dtype(dtype, _t.int64)
    if st is _t.bool_:
        raise NotImplementedError("randperm(): not implemented for bool (as PyTorch); use "
                                  "int64 and convert")
    # floats must hold every integer up to n exactly (PyTorch: n <= 2 ** digits)
    limit = 2 ** (ml_dtypes.finfo(st.numpy).nmant + 1) if st.is_floating_point else \
        np.iinfo(st.numpy).max + 1
    if n > limit:
        raise RuntimeError(f"randperm(): n = {n} is too large for {st} (at most {limit}); "
                           f"pass a wider dtype (int64 holds any n)")
    b, index = _target(device)
    rng = backend_rng(generator, b)
    with b.on_device(index):  # the generator draws from the current device's stream
        try:
            arr = b.kernels["randperm"](n, st.numpy, rng)
        except (ValueError, MemoryError) as e:
            raise allocation_error("randperm", (n,), st.numpy, e) from None
    return _finish(arr, b, requires_grad)


def _layout(arr):
    """The order of ``arr``'s dims from outermost to innermost in memory when it is dense
    and non-overlapping but not row-major (a transposed or channels-last tensor), else None.

    PyTorch's ``preserve_format``: "if the input is non-overlapping and dense, the output
    strides are the same as the input's"; views with gaps and broadcast (stride-0) inputs
    get row-major results.
    """
    if arr.flags.c_contiguous or arr.ndim < 2:
        return None
    strides, shape = arr.strides, arr.shape
    perm = sorted(range(arr.ndim), key=lambda d: (-strides[d], d))
    expect = arr.itemsize
    for d in reversed(perm):
        if shape[d] != 1:
            if strides[d] != expect:
                return None
            expect *= shape[d]
    return perm


def _inverse(perm) -> list:
    inv = [0] * len(perm)
    for i, d in enumerate(perm):
        inv[d] = i
    return inv


def _like(op: str, t: Tensor, dtype, device):
    """(shape, ScalarType, device, array whose layout to keep or None) of a ``*_like``."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}(): expected a Tensor, got {type(t).__name__}")
    like = t._data if device is None or device == t.device else None
    # NOTE: t.shape, not t._data.shape: under a trace its sizes are recorded (symbolic)
    return (tuple(t.shape), t.dtype if dtype is None else _t.to_scalar_type(dtype),
            t.device if device is None else device, like)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Zeros with the shape (and by default dtype and device) of ``input``; a dense input's
    strides are kept (PyTorch's preserve_format)."""
    shape, st, device, like = _like("zeros_like", input, dtype, device)
    if _tracing.active:  # recorded with its (symbolic) sizes, not as a constant
        return zeros(shape, dtype=st, device=device, requires_grad=requires_grad)
    return _fill(shape, 0, st, device, requires_grad, like, "zeros_like")


def ones_like(input, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Ones with the shape (and by default dtype and device) of ``input``; strides as
    ``zeros_like``."""
    shape, st, device, like = _like("ones_like", input, dtype, device)
    if _tracing.active:
        return ones(shape, dtype=st, device=device, requires_grad=requires_grad)
    return _fill(shape, 1, st, device, requires_grad, like, "ones_like")


def empty_like(input, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Uninitialized, with the shape (and by default dtype and device) of ``input``;
    strides as ``zeros_like``."""
    shape, st, device, like = _like("empty_like", input, dtype, device)
    if _tracing.active:
        return empty(shape, dtype=st, device=device, requires_grad=requires_grad)
    b, index = _target(device)
    perm = None if like is None else _layout(like)
    size = shape if perm is None else tuple(shape[d] for d in perm)
    with b.on_device(index):
        try:
            arr = b.kernels["empty"](size, st.numpy)
        except (ValueError, MemoryError) as e:
            raise allocation_error("empty_like", size, st.numpy, e) from None
    return _finish(arr if perm is None else arr.transpose(_inverse(perm)), b, requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``fill_value`` everywhere, with the shape/dtype/device of ``input``; strides as
    ``zeros_like``."""
    shape, st, device, like = _like("full_like", input, dtype, device)
    if _tracing.active:
        return full(shape, fill_value, dtype=st, device=device, requires_grad=requires_grad)
    return _fill(shape, _fill_value(fill_value, st, "full_like"), st, device, requires_grad,
                 like, "full_like")


def _random_like(kind: str, input, generator, dtype, device, requires_grad, *extra):
    shape, st, device, like = _like(f"{kind}_like", input, dtype, device)
    return _random(kind, shape, generator, st, device, requires_grad, *extra,
                   perm=None if like is None else _layout(like))


def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False):
    """``rand`` with the shape (and by default dtype and device) of ``input``; strides as
    ``zeros_like``."""
    return _random_like("rand", input, generator, dtype, device, requires_grad)


def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False):
    """``randn`` with the shape (and by default dtype and device) of ``input``; strides as
    ``zeros_like``."""
    return _random_like("randn", input, generator, dtype, device, requires_grad)


def randint_like(input, low, high=None, *, generator=None, dtype=None, device=None):
    """``randint`` with the shape (and by default dtype and device) of ``input``; strides as
    ``zeros_like``."""
    if high is None:
        low, high = 0, low
    if high <= low:
        raise ValueError(f"randint_like(): expected low < high, got low={low}, high={high}")
    return _random_like("randint", input, generator, dtype, device, False, low, high)
