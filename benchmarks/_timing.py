"""Shared timing helpers for the side-by-side benchmarks (no assertions: print ratios)."""
from __future__ import annotations

import gc
import time
import timeit


def best_of(fn, repeat: int = 7, min_time: float = 0.05) -> float:
    """Best per-call time of ``fn`` in microseconds over ``repeat`` runs of >= ``min_time`` s."""
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    number = max(1, int(number * min_time / 0.2))
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e6


def try_import_torch(single_thread: bool = True):
    """torch if installed (benchmarks compare against it when present), else None.

    ``single_thread``: pin torch to one thread, as numpy's per-op paths are (tiny-op
    overhead benchmarks); pass False where BLAS-sized work lets both use every core."""
    try:
        import torch
        if single_thread:
            torch.set_num_threads(1)
        return torch
    except ImportError:
        return None


def interleaved(fns: dict, repeat: int = 7, min_time: float = 0.05) -> dict:
    """Best per-call time (microseconds) of each of ``fns`` (name -> callable), timed in
    turn within each of ``repeat`` rounds, so that machine load hits every candidate
    alike; each gets ``number`` calls per round sized to ``min_time`` seconds."""
    timers = {k: timeit.Timer(f) for k, f in fns.items()}
    numbers = {}
    for k, t in timers.items():
        n, took = t.autorange()
        numbers[k] = max(1, int(n * min_time / max(took, 1e-9)))
    best = {k: float("inf") for k in fns}
    for _ in range(repeat):
        for k, t in timers.items():
            best[k] = min(best[k], t.timeit(numbers[k]) / numbers[k] * 1e6)
    return best


def interleaved_capped(fns: dict, repeat: int = 5, min_time: float = 0.002, cap: float = 0.5,
                       first: dict = None) -> dict:
    """Best per-call time (microseconds) of each of ``fns`` (name -> callable), timed in turn
    within each of at most ``repeat`` rounds (wall time, ``time.perf_counter``, garbage
    collector off), for benchmarks with hundreds of cases: each callable gets ``number``
    calls a round, sized from one warm-up call (or from ``first``, name -> seconds of a call
    already made) to ``min_time`` seconds, and rounds stop after the first once ``cap``
    seconds have gone, so an op that takes seconds costs one round, not ``repeat``; a call
    of ``first`` that took over ``cap`` seconds is its time, and is not run again."""
    first = dict(first or {})
    for k, f in fns.items():
        if k not in first:
            start = time.perf_counter()
            f()
            first[k] = time.perf_counter() - start
    numbers = {k: max(1, min(100_000, int(min_time / max(first[k], 1e-9)))) for k in fns}
    best = {k: (first[k] * 1e6 if first[k] > cap else float("inf")) for k in fns}
    todo = {k: f for k, f in fns.items() if first[k] <= cap}
    enabled = gc.isenabled()
    gc.disable()
    start = time.perf_counter()
    try:
        for r in range(repeat):
            if r and time.perf_counter() - start > cap:
                break
            for k, f in todo.items():
                n = numbers[k]
                t0 = time.perf_counter()
                for _ in range(n):
                    f()
                best[k] = min(best[k], (time.perf_counter() - t0) / n * 1e6)
    finally:
        if enabled:
            gc.enable()
    return best
