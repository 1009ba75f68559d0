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
says otherwise. Measured with ``python benchmarks/bench_threads.py --repeat 3`` (``ember
train digits --epochs 40``; seconds of training, fastest of 3, and CPU seconds of the
process; 2 cores, shared with other jobs at a load average of about 2; "loaded" is one
``while True: pass`` beside it; OpenBLAS 0.3.31, pthreads)::

    BLAS threads     idle  (CPU s)   loaded  (CPU s)   loaded / idle   (budget 1.5 x)
    1 (the default)   5.1    (9.9)      5.5    (9.9)       1.08 x
    2 (OpenBLAS's)    6.1   (17.2)     13.8   (23.5)       2.26 x

Single runs with 2 BLAS threads took up to 128.6 s loaded (28.9 s "idle" while other jobs
ran), 23 x the 1-thread time: the issue's 12-28 x. OpenBLAS's idle threads busy-wait for
the next call (the CPU column), so with a core taken by another process a GEMM split in
two waits for the half whose thread the scheduler parked, while the spinning steals the
core from the Python thread. The digits GEMMs are small (64x128 @ 128x64, 32x144 @
144x1024, ...; 20-200 us on one thread); per GEMM, 2 threads over 1 took 0.8-3.2 x the
time on a quiet machine and 1.0-11.6 x beside one busy process. With the spinning cut
(``OPENBLAS_THREAD_TIMEOUT=4``, read when OpenBLAS loads, so no knob ember can turn after
``import numpy``), 10 loaded epochs with 2 threads took 1.5-2.0 s instead of 3.3-4.2 s,
against 1.1-1.3 s with 1 thread: spinning is most of the cost, the split the rest.

Only large products gain from BLAS threads: 1024x1024 @ 1024x1024 took 0.55 x on a quiet
machine, 1.2 x loaded. Choosing the BLAS threads per matmul size would keep that gain, but
costs a call per matmul: ``threadpool_limits`` ~600 us, ``ThreadpoolController.limit``
~6 us, a lib controller's ``set_num_threads`` ~1.6 us; if ever, that belongs in the matmul
kernels, not here. ember's own pool keeps the count: its workers block on a queue instead
of spinning, and 1 or 2 of them made no measurable difference, loaded or idle (``--jit``
training, where the CPU fuser's elementwise engine uses them).

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

import numpy  # noqa: F401 - loads the BLAS, so that threadpoolctl finds it
import threadpoolctl

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
    :func:`set_num_threads` is called; before that it keeps the limit ``import ember`` set
    (``DEFAULT_BLAS_THREADS``, see the module docstring)."""
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
            limiter.restore_original_limits()
            _release_blas_control()


def _set_count(n: Optional[int]) -> None:
    global _num_threads
    _num_threads = n


def _limit_blas(n: int):
    """Limit the BLAS libraries loaded in this process (numpy's OpenBLAS) to ``n`` threads
    through threadpoolctl; returns the limiter, which can restore the limits before."""
    # NOTE: a new controller each time (~3 ms) sees BLAS libraries loaded since the last
    # call (scipy's own OpenBLAS, torch's MKL)
    limiter = threadpoolctl.ThreadpoolController().limit(limits=n, user_api="blas")
    _release_blas_control()
    return limiter


def _release_blas_control() -> None:
    """Let other Python threads set the BLAS limit after this one: threadpoolctl >= 3.8
    lets only the first thread that limited a pthreads OpenBLAS change it again (other
    threads are silently ignored) until that thread releases it; ``with`` blocks release
    on exit, a plain ``limit()`` call never does. Without this, ``import ember`` on the
    main thread would make ``set_num_threads`` on any other thread a no-op."""
    openblas = getattr(threadpoolctl, "OpenBLASController", None)
    release = getattr(openblas, "clear_controlling_thread", None)  # older: no such rule
    if release is not None:
        release()  # NOTE: releases only when this thread holds the control


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


def _reset_after_fork() -> None:
    """A forked child (a DataLoader worker) has none of the parent's pool threads: drop the
    pool, so that the next parallel_for starts new ones instead of queueing tasks for
    threads that do not exist (a deadlock), and the lock another thread may have held."""
    global _pool, _pool_size, _lock
    _pool, _pool_size = None, 0
    _lock = threading.Lock()


# NOTE: at import, not on first use: ember's first matmul never asks for the thread count
_init_blas()
if hasattr(os, "register_at_fork"):  # not on Windows
    os.register_at_fork(after_in_child=_reset_after_fork)
