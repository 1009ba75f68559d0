"""Stand-ins for CuPy that run on the host, for the device-free tests of ember-cuda.

``fake_cupy()`` is numpy under CuPy's name, with the CuPy behaviours that
``ember_cuda/kernels.py`` works around: ``add.at`` refuses the dtypes CuPy's scatter_add
refuses, ``argsort`` is stable without a ``kind``, and ``ElementwiseKernel`` records the
kernels it is given (computing numpy's floor_divide/remainder, the target). It also has
the runtime and memory-pool calls ``make_backend`` makes. ``FakeGPUs`` is ``cupy`` for
``devices.py`` and ``rng.py``: arrays that know their device, and a current device.
``fake_cupy_gpus`` is ``fake_cupy`` on several devices, for the backend end to end: its
arrays know the device they were made on.
"""
from __future__ import annotations

import contextlib
import types

import numpy as np

# the dtypes CuPy's atomicAdd-based scatter_add takes (cupy/_core/_routines_indexing.pyx)
ATOMICS = {np.dtype(t) for t in ("int32", "uint32", "uint64", "float16", "float32", "float64")}


class AtomicAdd:
    """``np.add`` whose ``.at`` refuses the dtypes CuPy's scatter_add refuses."""

    def __call__(self, *args, **kwargs):
        return np.add(*args, **kwargs)

    def at(self, a, indices, b):
        if a.dtype not in ATOMICS:
            raise TypeError(f"scatter_add only supports int32, float16, float32, float64, "
                            f"uint32, uint64, as data type (got {a.dtype})")
        np.add.at(a, indices, b)


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
    cp.__dict__.update({k: v for k, v in vars(np).items() if not k.startswith("__")})
    cp.__version__, cp.ndarray, cp.asnumpy = version, np.ndarray, np.asarray
    cp.add, cp.ElementwiseKernel = AtomicAdd(), ElementwiseKernel
    cp.argsort = lambda a, axis=-1: np.argsort(a, axis=axis, kind="stable")  # CuPy: stable
    pool = types.SimpleNamespace(used_bytes=lambda: 0, total_bytes=lambda: 0,
                                 malloc=lambda n: types.SimpleNamespace(device_id=0))
    allocator = [pool.malloc]
    cp.get_default_memory_pool = lambda: pool
    cp.cuda = types.SimpleNamespace(
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

    def on_device(fn):
        def made(*args, **kwargs):
            out = fn(*args, **kwargs)
            return out.view(ndarray) if out.__class__ is np.ndarray else out
        return made

    def array(a, dtype=None, copy=True, order="K", ndmin=0):
        if isinstance(a, ndarray) and not copy and a.ndim >= ndmin and \
                (dtype is None or a.dtype == dtype):
            return a  # already on a device: CuPy's asarray returns it
        return np.array(a, dtype=dtype, copy=True, order=order, ndmin=ndmin).view(ndarray)

    def asarray(a, dtype=None, order=None):
        return array(a, dtype, copy=False, order=order or "K")

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
        setattr(cp, name, on_device(getattr(np, name)))
    cp.ndarray, cp.asarray, cp.array = ndarray, asarray, array
    cp.broadcast_to = lambda a, shape: np.broadcast_to(a, shape, subok=True)  # a view
    cp.asnumpy = lambda a: np.array(a, copy=True).view(np.ndarray)
    cp.random = types.SimpleNamespace(Generator=Generator, XORWOW=np.random.PCG64)
    cp.cuda.Device = Device
    cp.cuda.runtime.getDevice = lambda: cp.current
    return cp
