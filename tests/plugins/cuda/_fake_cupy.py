"""Stand-ins for CuPy that run on the host, for the device-free tests of ember-cuda.

``fake_cupy()`` is numpy under CuPy 14.2's names and signatures (``_cupy_api.py``, read
from the real module; ``test_fake_cupy_api.py`` compares them with it where CuPy imports),
and refuses what CuPy refuses:

* a function called with an argument CuPy's signature has not raises TypeError, as
  CuPy's does; numpy's names that CuPy lacks are absent (AttributeError);
* ufuncs are ``cupy.ufunc``s with CuPy's methods: ``at`` only where CuPy has a scatter op
  (add, subtract, maximum, minimum, bitwise and/or/xor), each refusing the dtypes CuPy's
  ``_scatter_op_single`` refuses (``_fake_ufunc.ATOMIC_DTYPES``), float maximum/minimum as
  its atomics compute (NaN skipped, float64 through float32); ``reduce``/``accumulate`` only
  for add and multiply, ``reduceat`` only for add; the rest raise NotImplementedError
  (``ufunc.at``/``reduce``/``accumulate``/``reduceat`` in ``cupy/_core/_kernel.pyx``);
* ``argsort`` is stable without a ``kind`` (CuPy sorts with thrust's stable sort);
* ``asarray``/``array``/``asanyarray`` take ``blocking=`` and append each host-to-device
  copy made without it to ``cupy.nonblocking_copies`` (CuPy copies asynchronously on the
  current stream unless ``blocking=True``: ``_array_default`` in ``cupy/_core/core.pyx``);
  ``cuda.get_current_stream().synchronize()`` appends to ``cupy.synchronized``;
* ``ElementwiseKernel`` records the kernels it is given (computing numpy's floor_divide/
  remainder, the target).

It also has the runtime and memory-pool calls ``make_backend`` makes. ``FakeGPUs`` is
``cupy`` for ``devices.py`` and ``rng.py``: arrays that know their device, and a current
device. ``fake_cupy_gpus`` is ``fake_cupy`` on several devices, for the backend end to
end: its arrays know the device they were made on. ``FAKE_ONLY`` names the attributes the
fakes add for the tests (not CuPy's).
"""
from __future__ import annotations

import contextlib
import functools
import types

import numpy as np

from ._cupy_api import FUNCTIONS, OTHER, UFUNCS
from ._fake_ufunc import ATOMIC_DTYPES, ufunc, with_cupy_signature  # noqa: F401 - re-exported

# what the fakes add for the tests, not CuPy's
FAKE_ONLY = frozenset({"nonblocking_copies", "synchronized", "current", "made",
                       "count", "log", "clock", "streams", "pool", "pinned"})


class ElementwiseKernel:
    """Records each kernel made; calling one computes numpy's result."""

    made: list = []

    def __init__(self, in_params, out_params, operation, name, preamble=""):
        self.name, self.operation, self.preamble, self.dtypes = name, operation, preamble, []
        ElementwiseKernel.made.append(self)

    def __call__(self, a, b):
        self.dtypes.append(np.result_type(a, b))
        fn = {"ember_floor_divide": np.floor_divide, "ember_remainder": np.remainder}
        return fn[self.name](a, b)


def fake_cupy(version: str = "14.2.0", count: int = 1):
    """numpy as ``cupy`` ``version`` with ``count`` devices (see the module docstring)."""
    cp = types.ModuleType("cupy")
    for name in OTHER:
        if hasattr(np, name):
            setattr(cp, name, getattr(np, name))
    cp.ufunc = ufunc
    for name in UFUNCS:
        if hasattr(np, name):
            setattr(cp, name, ufunc(name))
    for name, text in FUNCTIONS.items():
        if hasattr(np, name):
            setattr(cp, name, with_cupy_signature(name, getattr(np, name), text))
    cp.__version__, cp.ndarray, cp.ElementwiseKernel = version, np.ndarray, ElementwiseKernel
    cp.nonblocking_copies = []

    def asnumpy(a, stream=None, order="C", out=None, *, blocking=True):
        return np.asarray(a, order=order) if out is None else np.copyto(out, a) or out

    # NOTE: this fake's device arrays are numpy's: every call without blocking=True counts
    def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *,
              blocking=False):
        if not blocking:
            cp.nonblocking_copies.append(("array", np.shape(obj)))
        return np.array(obj, dtype=dtype, copy=copy, order=order, ndmin=ndmin)

    def asarray(a, dtype=None, order=None, *, copy=None, blocking=False):
        if not blocking:
            cp.nonblocking_copies.append(("asarray", np.shape(a)))
        return np.asarray(a, dtype=dtype, order=order, copy=copy)

    def argsort(a, axis=-1, kind=None):
        return np.argsort(a, axis=axis, kind="stable")  # CuPy: always stable
    cp.asnumpy, cp.array, cp.asarray, cp.asanyarray = asnumpy, array, asarray, asarray
    cp.argsort = argsort
    pool = types.SimpleNamespace(used_bytes=lambda: 0, total_bytes=lambda: 0,
                                 malloc=lambda n: types.SimpleNamespace(device_id=0))
    allocator = [pool.malloc]
    cp.get_default_memory_pool = lambda: pool
    cp.synchronized = []  # one entry a Stream.synchronize call
    stream = types.SimpleNamespace(synchronize=lambda: cp.synchronized.append("stream"))
    cp.cuda = types.SimpleNamespace(
        get_current_stream=lambda device_id=-1: stream,
        runtime=types.SimpleNamespace(getDeviceCount=lambda: count, getDevice=lambda: 0),
        Device=lambda i=None: contextlib.nullcontext(),
        get_allocator=lambda: allocator[0],
        set_allocator=lambda f: allocator.__setitem__(0, f),
        memory=types.SimpleNamespace(OutOfMemoryError=MemoryError))
    return cp


class FakeGPUs:
    """``cupy`` for devices.py, rng.py, memory.py and runtime.py: ``count`` devices, a
    current device, arrays that know their device, streams that can be made current per
    device, events stamped with a counter (``elapsed_time`` = stamps in between), and a
    memory pool per device (blocks rounded to 512 bytes; freed blocks stay reserved until
    ``free_all_blocks``). ``log`` records synchronizations and cache releases."""

    def __init__(self, count: int = 2):
        self.current, self.count, self.log, self.clock = 0, count, [], 0
        self.streams: dict = {}
        gpus = self

        class Array:
            def __init__(self, device):
                self.data = types.SimpleNamespace(device_id=device)

            def copy(self):
                return Array(gpus.current)

        class Device:
            def __init__(self, i=None):
                self.id = gpus.current if i is None else i

            def __enter__(self):
                self.prev, gpus.current = gpus.current, self.id

            def __exit__(self, *exc):
                gpus.current = self.prev

            def synchronize(self):
                gpus.log.append(("synchronize device", self.id))

        class Stream:
            def __init__(self, null=False, non_blocking=False, ptds=False, priority=None):
                self.device_id, self.non_blocking = (-1 if null else gpus.current), non_blocking
                self.priority, self.ptr, self.done, self.waited = priority or 0, id(self), True, []

            def __enter__(self):
                self.prev = gpus.streams.get(gpus.current, Stream.null)
                gpus.streams[gpus.current] = self

            def __exit__(self, *exc):
                gpus.streams[gpus.current] = self.prev

            def synchronize(self):
                gpus.log.append(("synchronize stream", self.ptr))

            def wait_event(self, event):
                self.waited.append(event)
        Stream.null = Stream(null=True)

        class Event:
            def __init__(self, block=False, disable_timing=False, interprocess=False):
                self.device, self.timing, self.done, self.where = \
                    gpus.current, not disable_timing, True, None

            def record(self, stream=None):
                gpus.clock += 1
                self.where, self.stamp = (stream, gpus.current), gpus.clock

            def synchronize(self):
                gpus.log.append(("synchronize event", id(self)))

        class Pool:
            def __init__(self):
                self.used, self.total = [0] * gpus.count, [0] * gpus.count

            def used_bytes(self):
                return self.used[gpus.current]

            def total_bytes(self):
                return self.total[gpus.current]

            def malloc(self, nbytes):
                d, size = gpus.current, -(-nbytes // 512) * 512
                if size > 1 << 40:
                    raise MemoryError(f"out of memory allocating {size} bytes")
                cached = self.total[d] - self.used[d]
                self.used[d] += size
                self.total[d] += max(size - cached, 0)
                return types.SimpleNamespace(device_id=d, size=size)

            def free(self, mem):
                self.used[mem.device_id] -= mem.size

            def free_all_blocks(self):
                self.total[gpus.current] = self.used[gpus.current]
                gpus.log.append(("free_all_blocks", gpus.current))

        self.ndarray, self.pool, self.pinned = Array, Pool(), Pool()
        allocator = [self.pool.malloc]
        self.get_default_memory_pool = lambda: self.pool
        self.get_default_pinned_memory_pool = lambda: self.pinned
        self.cuda = types.SimpleNamespace(
            Device=Device, Stream=Stream, Event=Event,
            get_current_stream=lambda d=-1: self.streams.get(self.current if d < 0 else d,
                                                             Stream.null),
            get_elapsed_time=lambda start, end: float(end.stamp - start.stamp),
            get_allocator=lambda: allocator[0],
            set_allocator=lambda f: allocator.__setitem__(0, f),
            memory=types.SimpleNamespace(OutOfMemoryError=MemoryError),
            runtime=types.SimpleNamespace(
                getDevice=lambda: self.current, getDeviceCount=lambda: self.count,
                setDevice=lambda i: setattr(self, "current", i),
                getDeviceProperties=lambda i: {"name": f"Fake GPU {i}".encode(), "major": 9,
                                               "minor": 0}))


def fake_cupy_gpus(count: int = 2):
    """``fake_cupy`` with ``count`` devices whose arrays know their device, for ember end to
    end (factories, ``ember.tensor``, ``copy_``) without a GPU.

    ``cupy.ndarray`` is a numpy subclass stamped with the device current when it was made,
    as CuPy allocates (a view keeps its base's device); ``arr.data.device_id`` reads it.
    ``cuda.Device(i)`` makes ``i`` current for a block and ``cuda.runtime.getDevice``
    returns it (``cp.current``). ``asarray``/``array`` copy host data onto the current
    device and return device arrays as they are; the creation functions and the random
    generators return device arrays. Departure: numpy's ``asarray`` converts a fake array
    silently, where CuPy's raises TypeError (no implicit device-to-host copies).
    """
    cp = fake_cupy(count=count)
    cp.current = 0

    class ndarray(np.ndarray):
        def __array_finalize__(self, obj):
            base = getattr(obj, "device_id", None) if self.base is not None else None
            self.device_id = cp.current if base is None else base

        @property
        def data(self):
            return types.SimpleNamespace(device_id=self.device_id)

        def diagonal(self, offset=0, axis1=0, axis2=1):
            v = np.ndarray.diagonal(self, offset, axis1, axis2)
            if self.flags.writeable:
                v.setflags(write=True)  # CuPy's diagonal is a writable view, numpy's not
            return v

    def on_device(fn):
        @functools.wraps(fn)  # CuPy's signature (inspect follows __wrapped__)
        def made(*args, **kwargs):
            out = fn(*args, **kwargs)
            return out.view(ndarray) if out.__class__ is np.ndarray else out
        return made

    def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *,
              blocking=False):
        if isinstance(obj, ndarray) and not copy and obj.ndim >= ndmin and \
                (dtype is None or obj.dtype == dtype):
            return obj  # already on a device: CuPy's asarray returns it
        if not blocking and not isinstance(obj, ndarray):  # host data
            cp.nonblocking_copies.append(("array", np.shape(obj)))
        return np.array(obj, dtype=dtype, copy=True, order=order, ndmin=ndmin).view(ndarray)

    def asarray(a, dtype=None, order=None, *, copy=None, blocking=False):
        if not blocking and not isinstance(a, ndarray):  # host data
            cp.nonblocking_copies.append(("asarray", np.shape(a)))
        return array(a, dtype, copy=bool(copy), order=order or "K", blocking=True)

    class Device:
        def __init__(self, i=None):
            self.id = cp.current if i is None else i

        def __enter__(self):
            if not 0 <= self.id < count:
                raise RuntimeError(f"cudaErrorInvalidDevice: invalid device ordinal {self.id}")
            self.prev, cp.current = cp.current, self.id

        def __exit__(self, *exc):
            cp.current = self.prev

    class Generator:
        def __init__(self, bit_generator):
            self._g = np.random.Generator(bit_generator)

        def __getattr__(self, name):
            return on_device(getattr(self._g, name))

    for name in ("empty", "full", "zeros", "ones", "arange", "linspace", "eye", "empty_like",
                 "zeros_like", "ones_like", "full_like", "ascontiguousarray"):
        setattr(cp, name, on_device(getattr(cp, name)))

    def broadcast_to(array, shape):
        return np.broadcast_to(array, shape, subok=True)  # a device view

    def asnumpy(a, stream=None, order="C", out=None, *, blocking=True):
        host = np.array(a, copy=True, order=order).view(np.ndarray)
        return host if out is None else np.copyto(out, host) or out
    cp.ndarray, cp.asarray, cp.array, cp.asanyarray = ndarray, asarray, array, asarray
    cp.broadcast_to, cp.asnumpy = broadcast_to, asnumpy
    cp.random = types.SimpleNamespace(Generator=Generator, XORWOW=np.random.PCG64)
    cp.cuda.Device = Device
    cp.cuda.runtime.getDevice = lambda: cp.current
    return cp
