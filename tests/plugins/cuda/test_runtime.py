"""``ember.cuda``'s runtime (``ember_cuda/runtime.py`` and ``memory.py``).

Device-free (CI): the protocol's plumbing on ``_fake_cupy.FakeGPUs`` (two fake devices):
streams made current per device and restored, events recorded on the current stream,
elapsed_time's checks, device parsing, and the memory peaks sampled at allocation.

On a GPU (marked ``cuda``): streams and events order and time real work, memory
statistics follow a large tensor's life, and empty_cache gives cached blocks back.
"""
from __future__ import annotations

import sys

import pytest

import ember as E
from ember_cuda import memory, runtime

from ._fake_cupy import FakeGPUs


@pytest.fixture
def gpus(monkeypatch):
    fake = FakeGPUs(count=2)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(memory, "_tracker", None)
    return fake


# ==== device-free: streams, events, devices =====================================================

def test_stream_is_made_current_on_its_device_and_restored(gpus):
    s = runtime.Stream(device="cuda:1", priority=-1)
    assert s.device == E.Device("cuda", 1) and s._stream.device_id == 1
    assert s._stream.non_blocking and s.priority == -1
    before = runtime.current_stream()
    with runtime.stream(s):
        assert runtime.current_device() == 1 and runtime.current_stream() == s
        assert runtime.current_stream(0) == runtime.default_stream(0)  # device 0 untouched
    assert runtime.current_device() == 0 and runtime.current_stream() == before
    with s as entered:
        assert entered is s and runtime.current_stream(1) == s
    assert runtime.current_stream(1) != s
    with runtime.stream(None):
        assert runtime.current_device() == 0


def test_events_record_on_the_current_stream_and_time(gpus):
    start, end = runtime.Event(enable_timing=True), runtime.Event(enable_timing=True)
    assert start.query() and repr(start) == "<ember.cuda.Event unrecorded timing=True>"
    s = runtime.Stream()
    with s:
        start.record()
        end.record()
    assert start._event.where == (s._stream, 0) and start.device_index == 0
    assert start.elapsed_time(end) == 1.0
    assert ("synchronize event", id(end._event)) in gpus.log  # elapsed_time waits for end
    other = runtime.Stream()
    other.wait_stream(s)
    assert len(other._stream.waited) == 1
    e = s.record_event()
    assert e._event.where == (s._stream, 0)
    with pytest.raises(ValueError, match="recorded before on cuda:0, it cannot be recorded"):
        start.record(runtime.Stream(device=1))


def test_event_errors_say_what_to_do():
    with pytest.raises(ValueError, match="interprocess event cannot record timing"):
        runtime.Event(enable_timing=True, interprocess=True)
    a, b = runtime.Event(enable_timing=True), runtime.Event(enable_timing=True)
    with pytest.raises(RuntimeError, match="both events must be recorded"):
        a.elapsed_time(b)
    with pytest.raises(ValueError, match=r"created with Event\(enable_timing=True\)"):
        runtime.Event().elapsed_time(b)
    runtime.Event().synchronize()  # never recorded: nothing to wait for


def test_devices_synchronize_and_properties(gpus):
    runtime.set_device("cuda:1")
    assert runtime.current_device() == 1
    runtime.synchronize()
    runtime.synchronize(0)
    assert gpus.log == [("synchronize device", 1), ("synchronize device", 0)]
    assert runtime.get_device_name(0) == "Fake GPU 0"
    assert runtime.get_device_capability() == (9, 0)
    with pytest.raises(ValueError, match="invalid CUDA device index 2"):
        runtime.set_device(2)
    with pytest.raises(ValueError, match="expected a cuda device"):
        runtime.synchronize("cpu")


# ==== device-free: memory statistics ============================================================

def test_peaks_are_sampled_at_allocation(gpus):
    memory.install(gpus)
    tracker = memory._tracker
    memory.install(gpus)  # a plugin reload keeps the tracker
    assert memory._tracker is tracker and gpus.cuda.get_allocator() is tracker.malloc
    malloc = gpus.cuda.get_allocator()
    malloc(1000)
    b = malloc(3000)  # blocks of 1024 and 3072 bytes
    assert memory.memory_allocated() == 4096 == memory.max_memory_allocated()
    gpus.pool.free(b)
    assert memory.memory_allocated() == 1024 and memory.max_memory_allocated() == 4096
    assert memory.memory_reserved() == 4096 == memory.max_memory_reserved()
    memory.reset_peak_memory_stats()
    assert memory.max_memory_allocated() == 1024 and memory.max_memory_reserved() == 4096
    with gpus.cuda.Device(1):
        malloc(512)
    assert memory.memory_allocated("cuda:1") == 512 and memory.memory_allocated(0) == 1024
    with pytest.raises(MemoryError):
        malloc(1 << 41)
    stats = memory.memory_stats(0)
    assert stats == {"allocated_bytes.all.current": 1024, "allocated_bytes.all.peak": 1024,
                     "reserved_bytes.all.current": 4096, "reserved_bytes.all.peak": 4096,
                     "inactive_split_bytes.all.current": 3072, "allocation.all.allocated": 2,
                     "num_ooms": 1}
    memory.empty_cache()
    assert memory.memory_reserved(0) == 1024
    assert [e for e in gpus.log if e[0] == "free_all_blocks"] == \
        [("free_all_blocks", 0), ("free_all_blocks", 1), ("free_all_blocks", 0)]  # + pinned


def test_memory_statistics_need_the_backend(gpus):
    with pytest.raises(RuntimeError, match="memory statistics are not installed"):
        memory.memory_allocated()


# ==== on a GPU ==================================================================================

@pytest.fixture
def cuda():
    pytest.importorskip("cupy")
    assert E.cuda.is_available() and E.cuda.device_count() >= 1
    E.cuda.synchronize()
    return E.cuda


@pytest.mark.cuda
def test_ember_cuda_forwards_to_this_runtime(cuda):
    assert cuda.Stream is runtime.Stream and cuda.memory_allocated is memory.memory_allocated
    assert isinstance(cuda.get_device_name(), str) and cuda.get_device_capability()[0] >= 3
    assert cuda.current_device() == 0 or cuda.device_count() > 1


@pytest.mark.cuda
def test_work_on_a_side_stream_is_ordered_and_timed(cuda):
    x = E.randn(2048, 2048, device="cuda")
    s = cuda.Stream()
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    s.wait_stream(cuda.current_stream())  # x was made on the current stream
    with cuda.stream(s):
        assert cuda.current_stream() == s
        start.record()
        for _ in range(4):
            y = x @ x
        end.record()
    assert cuda.current_stream() != s
    cuda.current_stream().wait_stream(s)
    ms = start.elapsed_time(end)
    assert end.query() and 0 < ms < 10_000
    s.synchronize()
    assert s.query()
    ref = (x.cpu().double() @ x.cpu().double()).float()
    assert float((y.cpu() - ref).abs().max().item()) < 1e-2 * float(ref.abs().max().item())
    assert cuda.default_stream() != s and cuda.Stream(priority=-1).priority <= 0


@pytest.mark.cuda
def test_memory_statistics_follow_a_tensor(cuda):
    cuda.empty_cache()
    base = cuda.memory_allocated()
    cuda.reset_peak_memory_stats()
    t = E.empty(16 << 20, dtype=E.float32, device="cuda")  # 64 MiB
    assert cuda.memory_allocated() - base >= 64 << 20
    assert cuda.max_memory_allocated() >= base + (64 << 20)
    assert cuda.memory_reserved() >= cuda.memory_allocated()
    stats = cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == cuda.memory_allocated()
    assert stats["allocated_bytes.all.peak"] == cuda.max_memory_allocated()
    del t
    assert cuda.memory_allocated() < base + (64 << 20)
    assert cuda.max_memory_allocated() >= base + (64 << 20)  # the peak stays
    reserved = cuda.memory_reserved()
    cuda.empty_cache()
    assert cuda.memory_reserved() <= reserved - (64 << 20)
    cuda.reset_peak_memory_stats()
    assert cuda.max_memory_allocated() == cuda.memory_allocated()


@pytest.mark.cuda
def test_synchronize_and_devices(cuda):
    E.ones(1000, device="cuda").sum()
    cuda.synchronize()
    cuda.synchronize("cuda:0")
    previous = cuda.current_device()
    cuda.set_device(0)
    assert cuda.current_device() == 0
    cuda.set_device(previous)
    with pytest.raises(ValueError, match="invalid CUDA device index"):
        cuda.set_device(cuda.device_count())
