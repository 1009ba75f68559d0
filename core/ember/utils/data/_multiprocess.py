"""The main-process side of ``DataLoader(num_workers > 0)``: start the worker processes,
hand them sampler items, and yield their batches in sampler order.

Batch ``k`` goes to worker ``k % num_workers`` (skipping workers whose stream has ended);
``prefetch_factor * num_workers`` batches are in flight at a time, and a batch that
arrives before its turn waits in a buffer. While waiting for a batch the iterator checks
every ``POLL_INTERVAL`` seconds that the workers live, so a worker killed by a signal (or
by the kernel's out-of-memory killer) is a RuntimeError naming it and its exit code, not
a hang. Workers stop when the iterator is exhausted, deleted or garbage collected, and at
interpreter exit; with ``persistent_workers=True`` they stay for the next epoch and only
the last two end them.

Reference: torch.utils.data.dataloader._MultiProcessingDataLoaderIter (its NOTE on the
shutdown logic).
"""
from __future__ import annotations

import atexit
import itertools
import multiprocessing
import os
import pickle
import queue
import signal
import time
import warnings
import weakref

from ._worker import ExceptionWrapper, Resume, StreamEnd, WorkerSpec, worker_loop

__all__ = ["MultiProcessIter", "check_worker_number"]

#: seconds between checks that the workers live while the main process waits for a batch
POLL_INTERVAL = 0.1
#: seconds a worker is given to finish at shutdown before it is terminated
JOIN_TIMEOUT = 5.0

_live: weakref.WeakSet = weakref.WeakSet()  # iterators whose workers run
_atexit_registered = False


def _shutdown_all() -> None:
    for it in list(_live):
        it.shutdown()


def _register_atexit() -> None:
    # NOTE: registered after multiprocessing's own exit handler (the first Queue imports
    # multiprocessing.util), so it runs before it: workers get None, not SIGTERM
    global _atexit_registered
    if not _atexit_registered:
        atexit.register(_shutdown_all)
        _atexit_registered = True


def check_worker_number(num_workers: int) -> None:
    """Warn, as torch, when more workers are asked for than this process may use cores."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cores = os.cpu_count()
    if cores is not None and num_workers > cores:
        warnings.warn(f"This DataLoader will create {num_workers} worker processes in "
                      f"total. Our suggested max number of worker in current system is "
                      f"{cores}, which is smaller than what this DataLoader is going to "
                      f"create. Please be aware that excessive worker creation might get "
                      f"DataLoader running slow or even freeze, lower the worker number to "
                      f"avoid potential slowness/freeze if necessary.", UserWarning,
                      stacklevel=3)


def _exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"exit code {code} (killed by signal {signal.Signals(-code).name})"
        except ValueError:
            pass
    return f"exit code {code}"


class MultiProcessIter:
    """Iterator over the batches of one epoch, loaded by ``spec.num_workers`` processes.

    Args:
        spec: what the workers need to build batches.
        tasks: the epoch's sampler items (index lists, indices, or batch sizes for a stream).
        base_seed: the seed worker ``i`` derives its seeds from (``base_seed + i``).
        context: the multiprocessing context that starts the workers.
        prefetch_factor, timeout, persistent: the DataLoader's arguments.
    ``reset(tasks)`` starts a new epoch on the same workers (persistent workers).
    Raises (from ``__next__``) the exception of a worker's batch (see ExceptionWrapper),
    RuntimeError when a worker died or, with ``timeout > 0``, no batch came in time.
    """

    def __init__(self, spec: WorkerSpec, tasks, base_seed: int, context, prefetch_factor: int,
                 timeout: float, persistent: bool):
        n = spec.num_workers
        self._num_workers = n
        self._in_flight = prefetch_factor * n
        self._timeout = timeout
        self._persistent = persistent
        self._closed = False
        self._workers, self._index_queues = [], []
        self._data_queue = context.Queue()
        self._done_event = context.Event()
        _register_atexit()
        _live.add(self)
        try:
            for i in range(n):
                index_queue = context.Queue()
                index_queue.cancel_join_thread()  # never block exit on a dead reader
                w = context.Process(target=worker_loop, name=f"DataLoader worker {i}",
                                    args=(spec, index_queue, self._data_queue,
                                          self._done_event, base_seed, i), daemon=True)
                w.start()
                self._index_queues.append(index_queue)
                self._workers.append(w)
        except BaseException:
            self.shutdown()
            raise
        self._start_epoch(tasks)

    @property
    def closed(self) -> bool:
        """Whether the workers have been shut down."""
        return self._closed

    def _start_epoch(self, tasks) -> None:
        self._tasks = iter(tasks)
        self._send_idx = self._rcvd_idx = 0
        self._task_info: dict = {}  # batch number -> (worker,) or (worker, data)
        self._active = [True] * self._num_workers
        self._cycle = itertools.cycle(range(self._num_workers))
        for _ in range(self._in_flight):
            self._put_task()

    def reset(self, tasks) -> None:
        """Start a new epoch on the same workers; what they still send from the last one
        is dropped."""
        for q in self._index_queues:
            q.put(Resume())
        waiting = self._num_workers
        while waiting:
            batch_number, _ = self._get()
            if isinstance(batch_number, Resume):
                waiting -= 1
        self._start_epoch(tasks)

    def _put_task(self) -> None:
        try:
            item = next(self._tasks)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker = next(self._cycle)
            if self._active[worker]:
                break
        else:
            return  # every stream has ended
        self._index_queues[worker].put((self._send_idx, item))
        self._task_info[self._send_idx] = (worker,)
        self._send_idx += 1

    def __iter__(self) -> MultiProcessIter:
        return self

    def __next__(self):
        while True:
            if self._closed:
                raise StopIteration
            while self._rcvd_idx < self._send_idx:  # skip batches of ended streams
                info = self._task_info[self._rcvd_idx]
                if len(info) == 2 or self._active[info[0]]:
                    break
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self.shutdown()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:  # arrived before its turn
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process(info[1])
            batch_number, data = self._get()
            if isinstance(data, StreamEnd):
                self._active[data.worker_id] = False
                if not self._persistent:
                    self._index_queues[data.worker_id].put(None)
                self._put_task()
            elif batch_number != self._rcvd_idx:
                self._task_info[batch_number] += (data,)
            else:
                del self._task_info[batch_number]
                self._rcvd_idx += 1
                return self._process(data)

    def _process(self, data):
        self._put_task()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return pickle.loads(data)

    def _get(self):
        """The next ``(batch number, data)`` any worker sends."""
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = POLL_INTERVAL if deadline is None else \
                max(0.0, min(POLL_INTERVAL, deadline - time.monotonic()))
            try:
                return self._data_queue.get(timeout=wait)
            except queue.Empty:
                pass
            self._check_workers()
            if deadline is not None and time.monotonic() >= deadline:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def _check_workers(self) -> None:
        for i, w in enumerate(self._workers):
            if (self._active[i] or self._persistent) and not w.is_alive():
                code = w.exitcode
                self.shutdown()
                raise RuntimeError(
                    f"DataLoader worker {i} (pid {w.pid}) exited unexpectedly with "
                    f"{_exit_text(code)}. Workers are killed so when the system runs out "
                    f"of memory or by a signal from outside; run with num_workers=0 to load "
                    f"in this process and see the error there")

    def shutdown(self) -> None:
        """Stop the workers: ask them to finish, wait up to ``JOIN_TIMEOUT`` seconds, then
        terminate those still running, and reap them all (no zombies). Idempotent."""
        if self._closed:
            return
        self._closed = True
        _live.discard(self)
        try:
            self._done_event.set()
            for q in self._index_queues:
                q.put(None)
            for w in self._workers:
                w.join(timeout=JOIN_TIMEOUT)
            for q in self._index_queues:
                q.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join()
            self._data_queue.cancel_join_thread()
            self._data_queue.close()

    def __del__(self):
        if not getattr(self, "_closed", True):
            try:
                self.shutdown()
            except Exception:  # noqa: BLE001 - at interpreter exit modules may be gone
                pass


def default_context():
    """The multiprocessing context torch uses when none is given: the platform's default
    start method (fork on Linux before Python 3.14, spawn on macOS and Windows)."""
    return multiprocessing.get_context()
