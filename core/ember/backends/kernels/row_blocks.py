"""Row blocks: a kernel over a large (rows, row_size) array, a few rows at a time.

A kernel that chains several ufuncs (log_softmax: max, subtract, exp, sum, log) reads and
writes its whole array once per ufunc; run over blocks of whole rows of about
:data:`ROW_BLOCK` elements, each chain stays in cache, and the blocks spread over ember's
threads (``parallel_for``). Users: log_softmax (a row's max and sum feed the next steps,
which the elementwise engine's programs cannot do: their reductions are outputs only) and
prelu (one weight per row of (N * C, H * W)).

NOTE: CPU only (numpy); on CuPy one kernel launch per ufunc over the whole array is the
fast way, so callers keep their plain path for it and for arrays under
:data:`ROW_MIN_SIZE` elements.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ... import parallel

__all__ = ["ROW_BLOCK", "ROW_MIN_SIZE", "blocked_rows", "run_rows"]

#: elements of one block (128 KiB of float32: two such arrays fit a 512 KiB L2 cache)
ROW_BLOCK = 1 << 15
#: below this many elements the plain ufunc chain is faster (a block costs ~5 calls)
ROW_MIN_SIZE = 1 << 16
_WIDE = (np.dtype(np.float32), np.dtype(np.float64))


def blocked_rows(xp, a) -> bool:
    """True when a row-block kernel applies to array ``a``: numpy, float32 or float64,
    C-contiguous, at least ROW_MIN_SIZE elements."""
    return xp is np and a.dtype in _WIDE and a.size >= ROW_MIN_SIZE and a.flags.c_contiguous


def run_rows(fn: Callable[[int, int], None], rows: int, row_size: int) -> None:
    """``fn(lo, hi)`` for consecutive row ranges that cover ``range(rows)``, each of about
    ROW_BLOCK elements (at least one row), on ember's threads. ``fn`` must write disjoint
    rows only."""
    step = max(1, ROW_BLOCK // max(row_size, 1))
    parallel.parallel_for(lambda i: fn(i * step, min(rows, (i + 1) * step)), -(-rows // step))
