"""What runs inside a DataLoader worker process, and what it sends back.

A worker (``worker_loop``) seeds its random number generators, records its
``WorkerInfo`` (see :func:`get_worker_info`), runs ``worker_init_fn``, then takes tasks
``(batch number, sampler item)`` from its index queue and puts ``(batch number, pickled
batch)`` on the data queue shared by all workers. A batch that fails is sent as an
``ExceptionWrapper`` (the exception's type, by name, and its traceback text), which the
main process re-raises; an exhausted ``IterableDataset`` copy is reported once with
``StreamEnd``. ``None`` on the index queue (or, once its queue is empty, the main
process's done event) ends the worker; ``Resume`` starts a new epoch
with the same process (``persistent_workers=True``).

Seeding is PyTorch's: worker ``i`` of an iterator whose base seed is ``b`` calls
``ember.manual_seed(b + i)`` and ``random.seed(b + i)``, and seeds numpy's legacy global
generator with ``SeedSequence([i, b & 0xFFFFFFFF, b >> 32]).generate_state(4)`` (the
same four words as torch's ``_generate_state(b, i)``, which re-implements SeedSequence).

Reference: torch.utils.data._utils.worker, torch._utils.ExceptionWrapper.
"""
from __future__ import annotations

import importlib
import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import numpy as np

from ...parallel import set_num_threads
from ...random import manual_seed
from ._fetch import StreamFetcher, map_fetcher

__all__ = ["WorkerInfo", "get_worker_info"]

#: seconds a worker waits on its index queue before checking that its parent lives and
#: that the main process is not shutting the workers down
CHECK_INTERVAL = 0.25

_worker_info: WorkerInfo | None = None


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """About the DataLoader worker process this code runs in (read-only).

    Attributes:
        id: this worker's number, ``0 .. num_workers - 1``.
        num_workers: how many workers the iterator started.
        seed: the seed this worker gave ``ember.manual_seed`` and ``random.seed``
            (the iterator's base seed + ``id``).
        dataset: this process's copy of the dataset (a different object from the main
            process's: shard an ``IterableDataset`` through it).
    Reference: torch.utils.data._utils.worker.WorkerInfo.
    """

    id: int
    num_workers: int
    seed: int
    dataset: Any


def get_worker_info() -> WorkerInfo | None:
    """The :class:`WorkerInfo` of the DataLoader worker process calling it, None in the
    main process.

    Use it in an ``IterableDataset.__iter__`` to give each worker its own share of the
    stream (``info.id``, ``info.num_workers``), or in ``worker_init_fn`` to configure
    ``info.dataset`` or seed other libraries with ``info.seed``.
    Reference: torch.utils.data.get_worker_info.
    """
    return _worker_info


class WorkerSpec(NamedTuple):
    """Everything a worker needs to build batches (pickled once per worker under the
    spawn and forkserver start methods)."""
    dataset: Any
    iterable: bool
    auto_collation: bool
    collate_fn: Callable
    drop_last: bool
    fast: bool  # the default collate_fn: whole-batch fetch of a TensorDataset allowed
    worker_init_fn: Callable | None
    num_workers: int


@dataclass(frozen=True)
class StreamEnd:
    """Sent once by a worker whose copy of the IterableDataset is exhausted."""
    worker_id: int


@dataclass(frozen=True)
class Resume:
    """Asks a persistent worker to start a new epoch; it answers ``(Resume(), None)``."""


class _KeyErrorMessage(str):
    """KeyError shows ``repr(message)``; this keeps the traceback's line breaks."""

    def __repr__(self) -> str:
        return self


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process as text: the type
    by module and name (so an exception class the main process cannot import still
    arrives) and the formatted traceback. ``reraise()`` raises the same type when it can
    be built from a message, else RuntimeError, with a message naming the worker.

    Reference: torch._utils.ExceptionWrapper.
    """

    def __init__(self, worker_id: int):
        exc_type, exc, tb = sys.exc_info()
        self.type_module = exc_type.__module__
        self.type_name = exc_type.__qualname__
        self.where = f"in DataLoader worker process {worker_id}"
        self.text = "".join(traceback.format_exception(exc_type, exc, tb))

    def _type(self):
        try:
            obj = importlib.import_module(self.type_module)
            for part in self.type_name.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError):
            return None
        return obj if isinstance(obj, type) and issubclass(obj, BaseException) else None

    def reraise(self):
        """Raise the worker's exception in this process."""
        msg = f"Caught {self.type_name} {self.where}.\nOriginal {self.text}"
        exc_type = self._type()
        if exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exc = exc_type(msg) if exc_type is not None else None
        except Exception:  # noqa: BLE001 - a constructor that wants other arguments
            exc = None
        if exc is None:
            raise RuntimeError(msg) from None
        raise exc


def worker_seeds(base_seed: int, worker_id: int) -> tuple[int, np.ndarray]:
    """``(seed for ember and random, seed words for numpy)`` of worker ``worker_id``."""
    words = np.random.SeedSequence([worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32])
    return base_seed + worker_id, words.generate_state(4)


def _make_fetcher(spec: WorkerSpec) -> Callable:
    if spec.iterable:
        return StreamFetcher(spec.dataset, spec.auto_collation, spec.collate_fn,
                             spec.drop_last)
    return map_fetcher(spec.dataset, spec.auto_collation, spec.collate_fn, spec.fast)


def worker_loop(spec: WorkerSpec, index_queue, data_queue, done_event, base_seed: int,
                worker_id: int) -> None:
    """The body of worker process ``worker_id`` (see the module docstring). Returns when
    it gets None, or when the process that started it has died."""
    global _worker_info
    parent = os.getppid()
    try:
        set_num_threads(1)  # as torch: the workers already use the cores
        seed, np_seed = worker_seeds(base_seed, worker_id)
        manual_seed(seed)
        random.seed(seed)
        np.random.seed(np_seed)
        _worker_info = WorkerInfo(worker_id, spec.num_workers, seed, spec.dataset)
        init_error = fetch = None
        try:
            if spec.worker_init_fn is not None:
                spec.worker_init_fn(worker_id)
            fetch = _make_fetcher(spec)
        except Exception:  # noqa: BLE001 - sent with the first task
            init_error = ExceptionWrapper(worker_id)
        ended = False  # this worker's stream is exhausted: skip tasks until Resume/None
        while os.getppid() == parent:
            try:
                task = index_queue.get(timeout=CHECK_INTERVAL)
            except queue.Empty:
                # NOTE: the None that ends a worker may never come: an iterator shut down
                # by the garbage collector has had its index queues' feeder threads
                # finalized first (weakref callbacks run before __del__)
                if done_event.is_set():
                    break
                continue
            if isinstance(task, Resume):
                data_queue.put((task, None))
                ended = False
                try:
                    fetch = _make_fetcher(spec)
                except Exception:  # noqa: BLE001
                    init_error = ExceptionWrapper(worker_id)
                continue
            if task is None:
                break
            if ended or done_event.is_set():
                continue
            batch_number, item = task
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    # NOTE: pickled here, not in the queue's feeder thread, so that a batch
                    # that cannot be pickled is an error of this batch, not a lost batch
                    data = pickle.dumps(fetch(item), protocol=pickle.HIGHEST_PROTOCOL)
                except StopIteration:
                    if not spec.iterable:
                        data = ExceptionWrapper(worker_id)
                    else:
                        data, ended = StreamEnd(worker_id), True
                except Exception:  # noqa: BLE001 - re-raised in the main process
                    data = ExceptionWrapper(worker_id)
            data_queue.put((batch_number, data))
            del data, item, task  # a batch is not kept alive while waiting for the next
    except KeyboardInterrupt:  # the main process gets it too and shuts the workers down
        pass
    if done_event.is_set() or os.getppid() != parent:
        # NOTE: nobody may read the data queue any more: exit without flushing it
        data_queue.cancel_join_thread()
        data_queue.close()
