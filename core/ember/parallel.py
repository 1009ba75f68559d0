"""Threads: ``ember.set_num_threads`` / ``ember.get_num_threads`` and ember's one thread pool.

ember computes with numpy (or CuPy), whose ufuncs release the GIL while they run, so
Python threads running ufuncs on disjoint blocks of an array use several cores. ember owns
one pool of worker threads for that (:func:`parallel_for`; the blocked elementwise engine,
:mod:`ember.backends.elementwise`, is its main user). Matrix products go to the BLAS library
numpy links (OpenBLAS, MKL), whose own threads ember limits through threadpoolctl.

The count, ``get_num_threads()``, is what PyTorch starts with: ``OMP_NUM_THREADS`` when it
holds a positive integer, else the cores this process may use (``os.sched_getaffinity``).
``set_num_threads(n)`` sets it and limits the BLAS to ``n`` threads too.

The BLAS default is 1 thread, not the count: ``import ember`` limits the BLAS to
``DEFAULT_BLAS_THREADS`` unless ``OMP_NUM_THREADS`` (then that count) or a BLAS variable
(``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS``, ...: then ember leaves the BLAS alone)
says otherwise. Why, measured with ``benchmarks/bench_threads.py`` (``ember train digits
--epochs 40``, seconds of training; 2 cores; "loaded" is one ``while True: pass`` beside
it; the machine was shared with other jobs, load average about 2)::

    BLAS threads     idle    loaded   loaded / idle
    2 (OpenBLAS's)   28.9     128.6       4.45 x       23 x the 1-thread loaded time
    1 (the default)   5.5       4.5       0.82 x

On a quiet machine, 2 BLAS threads took 6.7 s and 15 s of CPU against 4.9 s and 8.5 s for
1. The digits GEMMs are small (64x128 @ 128x64, 32x144 @ 144x1024, ...): each takes 3-170
us on one thread. OpenBLAS splits any GEMM above ~260k multiply-adds over its threads, and
its idle threads busy-wait for the next one; with one core taken by another process, each
GEMM waits for a thread the scheduler has parked behind it, and the spinning steals the
core from the useful thread: 2 threads were up to 6x slower per GEMM even with no load.
Limiting the BLAS per GEMM size instead (one thread below a size, more above) would keep
multithreaded BLAS for large products, where 2 threads gave ~1.4x on a quiet machine, but
needs a call per matmul: ``threadpool_limits`` costs ~600 us, ``ThreadpoolController.limit``
~6 us, OpenBLAS's ``openblas_set_num_threads`` through ctypes ~0.3 us; that belongs in the
matmul kernels, not here. ember's own pool is not limited: its workers block on a queue
instead of spinning, and 1 or 2 of them made no measurable difference loaded or idle
(``--jit`` training, where the fuser's elementwise engine uses them).

BLAS libraries loaded after ``import ember`` (scipy's own OpenBLAS, torch's MKL) keep their
defaults until the next ``set_num_threads``.

Reference: ``torch.set_num_threads`` / ``torch.get_num_threads`` (``at::set_num_threads``,
``ATen/Parallel.h``: ``at::parallel_for`` with a grain size); threadpoolctl's
``ThreadpoolController.limit``; OpenBLAS's ``OPENBLAS_THREAD_TIMEOUT`` (how long its idle
threads spin).
"""
from __future__ import annotations

import contextlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterator, Optional

__all__ = ["set_num_threads", "get_num_threads", "num_threads", "parallel_for",
           "default_num_threads", "in_parallel_region", "DEFAULT_BLAS_THREADS"]

#: BLAS threads ember sets at import when the environment names no count (see above)
DEFAULT_BLAS_THREADS = 1
#: variables the BLAS libraries read at load time, before OMP_NUM_THREADS
_BLAS_ENV = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS")

_lock = threading.Lock()
_num_threads: Optional[int] = None  # None: default_num_threads(), computed on first use
_pool: Optional[ThreadPoolExecutor] = None
_pool_size = 0
_state = threading.local()


def _env_count(name: str) -> Optional[int]:
    """The positive integer in environment variable ``name``, else None."""
    value = os.environ.get(name, "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def default_num_threads() -> int:
    """The thread count ember starts with: ``OMP_NUM_THREADS`` when it holds a positive
    integer, else the number of cores this process may run on. Never raises (an unusable
    ``OMP_NUM_THREADS`` is ignored, as PyTorch ignores it)."""
    env = _env_count("OMP_NUM_THREADS")
    if env is not None:
        return env
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


def get_num_threads() -> int:
    """The number of threads ember's parallel kernels use (``torch.get_num_threads``): the
    size of its pool, counting the calling thread. The BLAS follows it once
    :func:`set_num_threads` is called; before that it runs on ``DEFAULT_BLAS_THREADS``."""
    n = _num_threads
    if n is None:
        with _lock:
            if _num_threads is None:
                _set_count(default_num_threads())
            n = _num_threads
    return n


def _check(n, where: str) -> None:
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{where}: expected an int number of threads, got "
                        f"{type(n).__name__} {n!r}")
    if n < 1:
        raise ValueError(f"{where}: expected a number of threads >= 1, got {n}; use 1 to "
                         f"run on the calling thread only")


def set_num_threads(n: int) -> None:
    """Use ``n`` threads for ember's parallel kernels and for the BLAS library
    (``torch.set_num_threads``). ``n = 1`` runs everything on the calling thread, which is
    the fastest on a machine shared with other busy processes (see the module docstring).

    Raises TypeError when ``n`` is not an int, ValueError when it is below 1; nothing
    changes then.
    """
    _check(n, "set_num_threads")
    with _lock:
        _set_count(n)
        _limit_blas(n)


@contextlib.contextmanager
def num_threads(n: int) -> Iterator[None]:
    """``with num_threads(n):`` runs the block as after ``set_num_threads(n)``, then puts
    back the thread count and the BLAS limits there were before (tests, benchmarks).
    Raises as :func:`set_num_threads` does, before changing anything."""
    _check(n, "num_threads")
    with _lock:
        before = _num_threads
        _set_count(n)
        limiter = _limit_blas(n)
    try:
        yield
    finally:
        with _lock:
            _set_count(before)
            if limiter is not None:
                limiter.restore_original_limits()
                _release_blas_control()


def _set_count(n: Optional[int]) -> None:
    global _num_threads
    _num_threads = n


def _limit_blas(n: int):
    """Limit the BLAS libraries loaded in this process (numpy's OpenBLAS) to ``n`` threads
    through threadpoolctl; returns the limiter (it can restore the limits before), or None
    without threadpoolctl."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency of ember
        return None
    import numpy  # noqa: F401 - loads the BLAS so the controller sees it
    # NOTE: a new controller each time (~3 ms) sees BLAS libraries loaded since the last
    # call (scipy's own OpenBLAS, torch's MKL)
    limiter = ThreadpoolController().limit(limits=n, user_api="blas")
    _release_blas_control()
    return limiter


def _release_blas_control() -> None:
    """Let other Python threads set the BLAS limit after this one: threadpoolctl >= 3.8
    lets only the first thread that limited a pthreads OpenBLAS change it again (other
    threads are silently ignored) until that thread releases it; ``with`` blocks release
    on exit, a plain ``limit()`` call never does. Without this, ``import ember`` on the
    main thread would make ``set_num_threads`` on any other thread a no-op."""
    try:
        from threadpoolctl import OpenBLASController
        OpenBLASController.clear_controlling_thread()  # only if this thread holds it
    except (ImportError, AttributeError):  # older threadpoolctl: no such rule
        pass


def _get_pool(workers: int) -> ThreadPoolExecutor:
    """The pool, with at least ``workers`` threads: it grows, never shrinks (an idle
    worker waits on a queue and costs no CPU), so alternating counts never rebuild it."""
    global _pool, _pool_size
    with _lock:
        if _pool is None or _pool_size < workers:
            old = _pool
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ember")
            _pool_size = workers
            if old is not None:
                old.shutdown(wait=False)  # its queued tasks still run
        return _pool


def in_parallel_region() -> bool:
    """Whether the calling thread is running a task of :func:`parallel_for`
    (``torch.in_parallel_region``); nested loops then run serially."""
    return getattr(_state, "active", False)


def _run_task(fn: Callable[[int], None], i: int) -> None:
    _state.active = True
    try:
        fn(i)
    finally:
        _state.active = False


def parallel_for(fn: Callable[[int], None], n_tasks: int, threads: Optional[int] = None) -> None:
    """Call ``fn(i)`` for every ``i`` in ``range(n_tasks)``, spread over ember's threads
    (``at::parallel_for``): thread ``t`` of ``w`` runs tasks ``t, t + w, ...``, the calling
    thread is thread 0, and the call returns when every task has finished. Tasks must
    touch disjoint memory.

    Runs serially, in order, on the calling thread when ``n_tasks`` or the thread count
    (``threads``, default :func:`get_num_threads`) is 1, and inside another
    ``parallel_for`` task (:func:`in_parallel_region`). When a task raises, the tasks its
    thread had not started are skipped, the other threads finish theirs, and then the first
    exception is re-raised here: no task runs once the call has returned.
    """
    workers = min(get_num_threads() if threads is None else threads, n_tasks)
    if workers <= 1 or in_parallel_region():
        for i in range(n_tasks):
            fn(i)
        return
    pool = _get_pool(workers - 1)

    def share(t: int) -> None:
        for i in range(t, n_tasks, workers):
            _run_task(fn, i)
    futures = [pool.submit(share, t) for t in range(1, workers)]
    error = None
    try:
        share(0)
    except BaseException as e:  # noqa: BLE001 - re-raised once the workers are done
        error = e
    for f in futures:
        try:
            f.result()
        except BaseException as e:  # noqa: BLE001
            error = error or e
    if error is not None:
        raise error


def _default_blas_threads() -> Optional[int]:
    """The BLAS limit ember sets at import: None (leave the BLAS as it set itself up) when
    a BLAS variable holds a count, as the library reads those first; else
    ``OMP_NUM_THREADS`` when it holds one (the count, as after ``set_num_threads``: the
    library itself would cap it at the cores); else ``DEFAULT_BLAS_THREADS``."""
    if any(_env_count(name) is not None for name in _BLAS_ENV):
        return None
    return _env_count("OMP_NUM_THREADS") or DEFAULT_BLAS_THREADS


def _init_blas() -> None:
    n = _default_blas_threads()
    if n is not None:
        _limit_blas(n)


# NOTE: at import, not on first use: ember's first matmul never asks for the thread count
_init_blas()
