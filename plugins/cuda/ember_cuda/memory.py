"""Memory statistics of the cuda backend, from CuPy's default memory pool.

``memory_allocated`` is the pool's ``used_bytes()`` (bytes of blocks held by live
arrays, rounded up to CuPy's 512-byte blocks, like PyTorch's caching allocator rounds);
``memory_reserved`` is ``total_bytes()`` (also the cached free blocks). Both are per
device: the pool keeps one arena per device and answers for the current one.

Peaks: the pool counts only current values, so ``install()`` wraps the current CuPy
allocator (the pool's ``malloc`` unless someone set another) in ``set_allocator``: after
every allocation it samples ``used_bytes``/``total_bytes`` of the allocating device and
keeps the maxima. Both numbers only grow when memory is allocated, so sampling there
finds the exact peaks. It costs a Python call per allocation (about a microsecond, next
to the ~5 us of a CuPy kernel launch). ``reset_peak_memory_stats`` sets the peaks to the
current values.

Departures from ``torch.cuda``: the numbers include every CuPy array in the process (ember
tensors, the cuDNN workspace, the user's own CuPy arrays), not only ember's; an allocator
set later with ``cupy.cuda.set_allocator`` replaces the sampling wrapper (peaks then stop
moving); concurrent allocations from several threads may miss a peak by one sample.
``memory_stats`` has PyTorch's key names for what the pool knows.

Reference: CuPy "Memory management" (``MemoryPool``, ``set_allocator``);
``torch.cuda.memory_allocated`` / ``memory_stats``.
"""
from __future__ import annotations

from .devices import index_of, on

__all__ = ["install", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "reset_peak_memory_stats", "empty_cache", "memory_stats"]


class _Tracker:
    """Per-device peaks of the pool's used and total bytes, sampled at allocation."""

    def __init__(self, cupy):
        self.cupy = cupy
        self.pool = cupy.get_default_memory_pool()
        self.peak_used: dict = {}
        self.peak_total: dict = {}
        self.allocs: dict = {}
        self.ooms: dict = {}
        self.inner = cupy.cuda.get_allocator()
        self.malloc = self._make_malloc()

    def _make_malloc(self):
        inner, pool, oom = self.inner, self.pool, self.cupy.cuda.memory.OutOfMemoryError
        peak_used, peak_total, allocs = self.peak_used, self.peak_total, self.allocs

        def malloc(nbytes):
            try:
                mem = inner(nbytes)
            except oom:
                d = self.cupy.cuda.runtime.getDevice()
                self.ooms[d] = self.ooms.get(d, 0) + 1
                raise
            d = mem.device_id  # CuPy allocates on the current device: the pool's arena
            used, total = pool.used_bytes(), pool.total_bytes()
            if used > peak_used.get(d, 0):
                peak_used[d] = used
            if total > peak_total.get(d, 0):
                peak_total[d] = total
            allocs[d] = allocs.get(d, 0) + 1
            return mem
        return malloc

    def current(self, d: int) -> tuple[int, int]:
        with on(d):
            return self.pool.used_bytes(), self.pool.total_bytes()


_tracker: _Tracker | None = None


def install(cupy) -> None:
    """Start sampling peaks (once per process; a plugin reload keeps the tracker)."""
    global _tracker
    if _tracker is not None and cupy.cuda.get_allocator() is _tracker.malloc:
        return
    _tracker = _Tracker(cupy)
    cupy.cuda.set_allocator(_tracker.malloc)


def _tracked():
    if _tracker is None:
        raise RuntimeError("ember-cuda's memory statistics are not installed: the cuda "
                           "backend did not load (see `ember plugins`)")
    return _tracker


def memory_allocated(device=None) -> int:
    """Bytes held by arrays on ``device`` (default: the current one)."""
    t = _tracked()
    return t.current(index_of(device))[0]


def max_memory_allocated(device=None) -> int:
    """The peak of ``memory_allocated`` since start or ``reset_peak_memory_stats``."""
    t, d = _tracked(), index_of(device)
    return max(t.peak_used.get(d, 0), t.current(d)[0])


def memory_reserved(device=None) -> int:
    """Bytes the pool holds on ``device``, in use or cached for reuse."""
    t = _tracked()
    return t.current(index_of(device))[1]


def max_memory_reserved(device=None) -> int:
    """The peak of ``memory_reserved`` since start or ``reset_peak_memory_stats``."""
    t, d = _tracked(), index_of(device)
    return max(t.peak_total.get(d, 0), t.current(d)[1])


def reset_peak_memory_stats(device=None) -> None:
    """Make the peaks of ``device`` its current values."""
    t, d = _tracked(), index_of(device)
    t.peak_used[d], t.peak_total[d] = t.current(d)


def empty_cache() -> None:
    """Give the pool's cached free blocks (and pinned host blocks) back to the driver, on
    every device. Blocks of live arrays stay; a block split by the pool is released only
    once all its parts are free (CuPy's ``free_all_blocks``)."""
    t = _tracked()
    for d in range(t.cupy.cuda.runtime.getDeviceCount()):
        with on(d):
            t.pool.free_all_blocks()
    t.cupy.get_default_pinned_memory_pool().free_all_blocks()


def memory_stats(device=None) -> dict:
    """PyTorch-named statistics of ``device``: ``allocated_bytes.all.current`` and
    ``.peak``, ``reserved_bytes.all.current`` and ``.peak``,
    ``inactive_split_bytes.all.current`` (cached free bytes), ``num_ooms`` (allocations
    that failed) and ``allocation.all.allocated`` (allocations made since start)."""
    t, d = _tracked(), index_of(device)
    used, total = t.current(d)
    return {
        "allocated_bytes.all.current": used,
        "allocated_bytes.all.peak": max(t.peak_used.get(d, 0), used),
        "reserved_bytes.all.current": total,
        "reserved_bytes.all.peak": max(t.peak_total.get(d, 0), total),
        "inactive_split_bytes.all.current": total - used,
        "allocation.all.allocated": t.allocs.get(d, 0),
        "num_ooms": t.ooms.get(d, 0),
    }
