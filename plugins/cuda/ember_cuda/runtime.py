"""The runtime behind ``ember.cuda``: devices, streams, events and memory statistics.

This module is ``Backend.runtime`` of the cuda backend and implements the protocol listed
in ``ember/cuda.py`` on CuPy (``cupy.cuda.Stream``, ``Event``, ``Device``, the runtime
API); the memory functions come from ``memory.py``. Devices are given as None (the
current one), an int, ``"cuda:1"`` or an ``ember.Device``.

Semantics follow ``torch.cuda``:

* Every CuPy kernel launches on the current stream of the current device, so
  ``with ember.cuda.stream(s):`` makes ``s``'s device current and ``s`` its current stream
  for the block; ``Stream`` is itself a context manager doing the same.
* ``Stream(device, priority)`` creates a non-blocking stream (PyTorch's pool streams do not
  synchronize with the legacy default stream either); lower priority numbers run first.
* ``Event.record(stream=None)`` records on the *current* stream (CuPy's own default is
  the null stream). The CUDA event is created on first record, on the stream's device,
  as PyTorch does; ``query()`` of an unrecorded event is True.
* ``elapsed_time(end)`` is milliseconds from ``self`` to ``end``; it waits for ``end``
  first (PyTorch makes the caller synchronize), so it never fails as "not ready".

Reference: PyTorch ``torch/cuda/streams.py`` and ``torch/cuda/__init__.py``; CuPy
"Streams and events" (``cupy.cuda.Stream``, ``cupy.cuda.get_elapsed_time``).
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

from ember.types import Device

from .devices import index_of
from .memory import (empty_cache, max_memory_allocated, max_memory_reserved, memory_allocated,
                     memory_reserved, memory_stats, reset_peak_memory_stats)

__all__ = ["Stream", "Event", "stream", "current_stream", "default_stream", "synchronize",
           "current_device", "set_device", "device_count", "get_device_name",
           "get_device_capability", "memory_allocated", "max_memory_allocated",
           "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats",
           "empty_cache", "memory_stats"]

_entered = threading.local()  # per thread: the stream() contexts Stream.__enter__ opened


def _cupy():
    import cupy
    return cupy


def device_count() -> int:
    """The number of visible CUDA devices."""
    return _cupy().cuda.runtime.getDeviceCount()


def _index(device) -> int:
    return index_of(device, device_count())


class Stream:
    """A CUDA stream on one device (``torch.cuda.Stream``).

    Args:
        device: where the stream lives (default: the current device).
        priority: lower numbers are higher priorities; CUDA clamps to the device's range
            (typically -5..0 on recent GPUs; 0 is the default priority).
    Attributes: ``device`` (``ember.Device``), ``device_index``, ``priority``,
    ``cuda_stream`` (the raw ``cudaStream_t`` as an int).
    """

    def __init__(self, device=None, priority: int = 0):
        cupy = _cupy()
        self.device_index = _index(device)
        with cupy.cuda.Device(self.device_index):
            self._stream = cupy.cuda.Stream(non_blocking=True, priority=priority)

    @classmethod
    def _wrap(cls, cupy_stream, device_index: int) -> "Stream":
        s = cls.__new__(cls)
        s._stream, s.device_index = cupy_stream, device_index
        return s

    @property
    def device(self) -> Device:
        return Device("cuda", self.device_index)

    @property
    def priority(self) -> int:
        return self._stream.priority

    @property
    def cuda_stream(self) -> int:
        return self._stream.ptr

    def query(self) -> bool:
        """True when all work queued on the stream has finished."""
        return self._stream.done

    def synchronize(self) -> None:
        """Block the host until all work queued on the stream has finished."""
        self._stream.synchronize()

    def wait_event(self, event: "Event") -> None:
        """Make later work on this stream wait for ``event`` (a no-op if never recorded)."""
        if event._event is not None:
            self._stream.wait_event(event._event)

    def wait_stream(self, stream: "Stream") -> None:
        """Make later work on this stream wait for the work queued on ``stream`` so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event: "Event | None" = None) -> "Event":
        """Record ``event`` (a new one if None) on this stream and return it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def __enter__(self) -> "Stream":
        ctx = stream(self)
        ctx.__enter__()
        _entered.__dict__.setdefault("stack", []).append(ctx)
        return self

    def __exit__(self, *exc):
        return _entered.stack.pop().__exit__(*exc)

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream and \
            self.device_index == other.device_index

    def __hash__(self) -> int:
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self) -> str:
        return f"<ember.cuda.Stream device=cuda:{self.device_index} " \
               f"cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A CUDA event: a marker in a stream to wait for or to time (``torch.cuda.Event``).

    Args:
        enable_timing: record timestamps, so ``elapsed_time`` works (costs a little).
        blocking: ``synchronize`` sleeps instead of spinning (cudaEventBlockingSync).
        interprocess: shareable with other processes; cannot time.
    Raises ValueError for ``enable_timing`` together with ``interprocess`` (CUDA requires
    interprocess events to disable timing).
    """

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False):
        if enable_timing and interprocess:
            raise ValueError("Event: an interprocess event cannot record timing (CUDA needs "
                             "cudaEventDisableTiming for it); pass enable_timing=False or "
                             "interprocess=False")
        self.enable_timing, self.blocking, self.interprocess = \
            enable_timing, blocking, interprocess
        self._event = None
        self.device_index: int | None = None

    def _created_on(self, device_index: int):
        if self._event is None:
            cupy = _cupy()
            with cupy.cuda.Device(device_index):
                self._event = cupy.cuda.Event(block=self.blocking,
                                              disable_timing=not self.enable_timing,
                                              interprocess=self.interprocess)
            self.device_index = device_index
        elif device_index != self.device_index:
            raise ValueError(f"Event: recorded before on cuda:{self.device_index}, it cannot "
                             f"be recorded on a stream of cuda:{device_index}; use one "
                             f"Event per device")
        return self._event

    def record(self, stream: Stream | None = None) -> None:
        """Record the event on ``stream`` (default: the current stream)."""
        stream = current_stream() if stream is None else stream
        event = self._created_on(stream.device_index)
        with _cupy().cuda.Device(stream.device_index):
            event.record(stream._stream)

    def wait(self, stream: Stream | None = None) -> None:
        """Make later work on ``stream`` (default: the current one) wait for this event."""
        (current_stream() if stream is None else stream).wait_event(self)

    def query(self) -> bool:
        """True when the work before the event's record has finished (or never recorded)."""
        return True if self._event is None else self._event.done

    def synchronize(self) -> None:
        """Block the host until the work before the event's record has finished."""
        if self._event is not None:
            self._event.synchronize()

    def elapsed_time(self, end: "Event") -> float:
        """Milliseconds between this event's record and ``end``'s (waits for ``end``).

        Raises ValueError unless both events were created with ``enable_timing=True``,
        RuntimeError if either was never recorded."""
        if not (self.enable_timing and end.enable_timing):
            raise ValueError("elapsed_time: both events must be created with "
                             "Event(enable_timing=True)")
        if self._event is None or end._event is None:
            raise RuntimeError("elapsed_time: both events must be recorded before "
                               "calculating elapsed time")
        end._event.synchronize()
        return _cupy().cuda.get_elapsed_time(self._event, end._event)

    def __repr__(self) -> str:
        where = "unrecorded" if self._event is None else f"cuda:{self.device_index}"
        return f"<ember.cuda.Event {where} timing={self.enable_timing}>"


def current_stream(device=None) -> Stream:
    """The stream CuPy launches on for ``device`` (default: the current device)."""
    d = _index(device)
    return Stream._wrap(_cupy().cuda.get_current_stream(d), d)


def default_stream(device=None) -> Stream:
    """The legacy default (null) stream of ``device``."""
    return Stream._wrap(_cupy().cuda.Stream.null, _index(device))


@contextmanager
def stream(s: Stream | None):
    """Within the block, ``s``'s device is current and ``s`` is its current stream (None
    changes nothing), like ``torch.cuda.stream``."""
    if s is None:
        yield
        return
    cupy = _cupy()
    with cupy.cuda.Device(s.device_index), s._stream:
        yield


def synchronize(device=None) -> None:
    """Block the host until all work queued on ``device`` (every stream) has finished."""
    _cupy().cuda.Device(_index(device)).synchronize()


def current_device() -> int:
    """The index of the current device."""
    return _cupy().cuda.runtime.getDevice()


def set_device(device) -> None:
    """Make ``device`` current: where ``"cuda"`` tensors and new streams go."""
    _cupy().cuda.runtime.setDevice(_index(device))


def _properties(device) -> dict:
    return _cupy().cuda.runtime.getDeviceProperties(_index(device))


def get_device_name(device=None) -> str:
    """The device's marketing name, e.g. ``"NVIDIA H100 80GB HBM3"``."""
    name = _properties(device)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def get_device_capability(device=None) -> tuple[int, int]:
    """The compute capability ``(major, minor)``, e.g. ``(9, 0)`` for Hopper."""
    p = _properties(device)
    return int(p["major"]), int(p["minor"])
