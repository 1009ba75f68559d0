"""Shared timing helpers for the side-by-side benchmarks (no assertions: print ratios)."""
from __future__ import annotations

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
