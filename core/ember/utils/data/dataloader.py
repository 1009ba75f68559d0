"""``DataLoader``: iterate over a dataset in (optionally shuffled) batches, in this process
or in worker processes.

With ``num_workers=0`` (the default) batches load in the calling process. With
``num_workers > 0``, worker processes (``_worker.py``; started and fed by
``_multiprocess.py``) each build whole batches from the index lists the sampler gives and
send them back pickled; batches come out in sampler order, ``prefetch_factor`` per worker
in flight. ``pin_memory`` is accepted as a no-op.

Random streams follow PyTorch: each iterator first draws a base seed from ``generator``
(default: the default cpu generator), then the sampler draws its order from the same
generator, so ``ember.manual_seed`` (or a seeded ``generator``) repeats the batches of
every epoch, with or without workers; worker ``i`` seeds ember, ``random`` and numpy from
``base_seed + i`` (see ``_worker.py``).

With the default ``collate_fn``, a ``TensorDataset`` (or a ``Subset`` of one) is batched
with one ``index_select`` per tensor instead of slicing samples and stacking them; the
batch is the same list of tensors ``default_collate`` would build.

Reference: torch.utils.data.DataLoader.
"""
from __future__ import annotations

import itertools
import multiprocessing
from typing import Callable, Iterator

from ._fetch import StreamFetcher, map_fetcher
from ._multiprocess import MultiProcessIter, check_worker_number, default_context
from ._worker import WorkerSpec
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, _randint

__all__ = ["DataLoader"]


def _check_arguments(dataset, iterable: bool, sampler, batch_sampler, collate_fn) -> None:
    """Refuse, when the loader is made, what would fail only on iteration with a message
    about ``__getitem__`` or ``len()`` (``DataLoader(None)``)."""
    cls = type(dataset)
    if not iterable and not hasattr(cls, "__getitem__"):
        raise TypeError(f"DataLoader(): expected a dataset with __getitem__ and __len__ (a "
                        f"Dataset, TensorDataset or list) or an IterableDataset, got "
                        f"{cls.__name__}; wrap tensors in TensorDataset(x, y)")
    if not iterable and sampler is None and batch_sampler is None and \
            not hasattr(cls, "__len__"):
        raise TypeError(f"DataLoader(): the dataset ({cls.__name__}) has no __len__, which "
                        f"the default sampler needs; define __len__, pass a sampler, or "
                        f"make it an IterableDataset")
    if collate_fn is not None and not callable(collate_fn):
        raise TypeError(f"DataLoader(): collate_fn must be callable (samples -> batch), got "
                        f"{type(collate_fn).__name__}")
    for name, value in (("sampler", sampler), ("batch_sampler", batch_sampler)):
        if value is not None and not hasattr(value, "__iter__"):
            raise TypeError(f"DataLoader(): {name} must be an iterable of "
                            f"{'index lists' if name == 'batch_sampler' else 'indices'}, "
                            f"got {type(value).__name__}")


def _check_worker_arguments(num_workers, timeout, prefetch_factor, persistent_workers,
                            multiprocessing_context):
    """Validate the multiprocessing options (PyTorch's messages); returns
    ``(prefetch_factor, context)`` with their defaults filled in."""
    if not isinstance(num_workers, int) or isinstance(num_workers, bool) or num_workers < 0:
        raise ValueError(f"num_workers option should be non-negative; use num_workers=0 to "
                         f"disable multiprocessing. Got num_workers={num_workers!r}")
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout < 0:
        raise ValueError(f"timeout option should be non-negative, got timeout={timeout!r}")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                         "let num_workers > 0 to enable multiprocessing, otherwise set "
                         "prefetch_factor to None.")
    if num_workers > 0 and prefetch_factor is None:
        prefetch_factor = 2
    elif prefetch_factor is not None and (not isinstance(prefetch_factor, int)
                                          or isinstance(prefetch_factor, bool)
                                          or prefetch_factor < 1):
        raise ValueError(f"prefetch_factor option should be a positive integer (batches "
                         f"each worker loads ahead), got prefetch_factor={prefetch_factor!r}")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    context = multiprocessing_context
    if context is not None:
        if num_workers == 0:
            raise ValueError(f"multiprocessing_context can only be used with multi-process "
                             f"loading (num_workers > 0), but got num_workers={num_workers}")
        if isinstance(context, str):
            methods = multiprocessing.get_all_start_methods()
            if context not in methods:
                raise ValueError(f"multiprocessing_context option should specify a valid "
                                 f"start method in {methods!r}, but got "
                                 f"multiprocessing_context={context!r}")
            context = multiprocessing.get_context(context)
        if not isinstance(context, multiprocessing.context.BaseContext):
            raise TypeError(f"multiprocessing_context option should be a valid context "
                            f"object or a string specifying the start method, but got "
                            f"multiprocessing_context={context!r}")
    return prefetch_factor, context


def _base_seed(generator) -> int:
    """The seed an iterator's workers derive theirs from: one int64 draw from
    ``generator`` (default: the default cpu generator), made for every iterator, with or
    without workers, as torch's ``_BaseDataLoaderIter``."""
    return _randint(2**63, 1, generator)[0]


class DataLoader:
    """Batches of ``dataset``, in the order of a sampler, loaded in this process or in
    ``num_workers`` worker processes.

    Args:
        dataset: a map-style dataset (``__getitem__`` and ``__len__``) or an
            ``IterableDataset``.
        batch_size: samples per batch (default 1); None turns auto-batching off (each
            sample goes through ``collate_fn``, default ``default_convert``, unbatched).
        shuffle: visit samples in a new random order every epoch (default False).
        sampler: an iterable of indices to draw from (exclusive with ``shuffle``).
        batch_sampler: an iterable of index lists (exclusive with ``batch_size``,
            ``shuffle``, ``sampler`` and ``drop_last``).
        num_workers: worker processes that load batches (default 0: this process).
            Each worker gets a copy of ``dataset``; an ``IterableDataset`` is iterated
            whole by every worker unless it shards itself with :func:`get_worker_info`.
        collate_fn: merges a list of samples into a batch (default ``default_collate``).
        pin_memory: accepted for compatibility; a no-op.
        drop_last: drop the last batch when it is smaller than ``batch_size`` (with an
            IterableDataset and workers: each worker's last batch).
        timeout: seconds to wait for a worker's batch before RuntimeError (0: forever).
        worker_init_fn: called as ``worker_init_fn(worker_id)`` in each worker, after its
            seeding and before its first batch.
        multiprocessing_context: a start method name (``"fork"``, ``"spawn"``,
            ``"forkserver"``) or a ``multiprocessing`` context (default: the platform's
            default start method, as torch). Under spawn/forkserver the dataset,
            ``collate_fn`` and ``worker_init_fn`` must pickle.
        generator: the ``ember.Generator`` that shuffling and the workers' base seed draw
            from.
        prefetch_factor: batches each worker loads ahead (default 2 with workers; must
            be None without).
        persistent_workers: keep the workers between epochs (the next ``iter(loader)``
            reuses them; their random state carries on).
    Yields batches; ``len(loader)`` is the number of batches (for an IterableDataset, the
    count its ``__len__`` implies). Tensors reach the main process pickled (as numpy
    arrays), on the cpu.
    Raises ValueError for mutually exclusive options (as PyTorch), a negative
    ``num_workers`` or ``timeout``, a ``prefetch_factor`` that is not a positive int, and
    ``prefetch_factor``, ``persistent_workers`` or ``multiprocessing_context`` without
    workers; TypeError for a ``generator`` that is not an ``ember.Generator``, for a
    ``dataset`` that is neither map-style nor an IterableDataset (None, a number), for a
    ``collate_fn`` that is not callable and a ``sampler`` or ``batch_sampler`` that is not
    iterable. While iterating with workers: a worker's exception is re-raised with its
    type, worker id and traceback text; RuntimeError when a worker dies or the
    ``timeout`` passes.
    Reference: torch.utils.data.DataLoader.
    """

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler=None, batch_sampler=None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable | None = None, multiprocessing_context=None,
                 generator=None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False):
        prefetch_factor, context = _check_worker_arguments(
            num_workers, timeout, prefetch_factor, persistent_workers, multiprocessing_context)
        iterable = isinstance(dataset, IterableDataset)
        _check_arguments(dataset, iterable, sampler, batch_sampler, collate_fn)
        if worker_init_fn is not None and not callable(worker_init_fn):
            raise TypeError(f"DataLoader(): worker_init_fn must be callable (worker_id -> "
                            f"None), got {type(worker_init_fn).__name__}")
        if iterable:
            for name, value in (("shuffle", shuffle), ("sampler", sampler),
                                ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(f"DataLoader with IterableDataset: expected "
                                     f"unspecified {name} option, but got {name}={value!r}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("DataLoader: batch_sampler option is mutually exclusive "
                                 "with batch_size, shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("DataLoader: batch_size=None option disables auto-batching and "
                             "is mutually exclusive with drop_last")
        if sampler is None and not iterable:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None and not iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        elif iterable and batch_size is not None:
            BatchSampler(range(0), batch_size, drop_last)  # validates the two arguments

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler: Sampler | None = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = context
        self.generator = generator
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        auto = batch_sampler is not None or (iterable and batch_size is not None)
        self._auto_collation = auto
        self._default_collate = collate_fn is None
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if auto else default_convert)
        self._fetch = None if iterable else map_fetcher(dataset, auto, self.collate_fn,
                                                        fast=collate_fn is None)
        self._iterator: MultiProcessIter | None = None  # the persistent workers' iterator

    def _tasks(self):
        """The sampler items of one epoch: index lists (auto-batching), indices, or, for
        an IterableDataset, the batch size of every batch (a worker reads until its
        stream ends)."""
        if isinstance(self.dataset, IterableDataset):
            return itertools.repeat(self.batch_size)
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> Iterator:
        if self.num_workers == 0:
            _base_seed(self.generator)  # drawn, as torch, so that shuffles match workers'
            if isinstance(self.dataset, IterableDataset):
                return self._iter_stream()
            return map(self._fetch, self._tasks())
        it = self._iterator
        if self.persistent_workers and it is not None and not it.closed:
            it.reset(self._tasks())
            return it
        check_worker_number(self.num_workers)
        spec = WorkerSpec(self.dataset, isinstance(self.dataset, IterableDataset),
                          self._auto_collation, self.collate_fn, self.drop_last,
                          self._default_collate, self.worker_init_fn, self.num_workers)
        it = MultiProcessIter(spec, self._tasks(), _base_seed(self.generator),
                              self.multiprocessing_context or default_context(),
                              self.prefetch_factor, self.timeout, self.persistent_workers)
        if self.persistent_workers:
            self._iterator = it
        return it

    def _iter_stream(self) -> Iterator:
        fetch = StreamFetcher(self.dataset, self._auto_collation, self.collate_fn,
                              self.drop_last)
        while True:
            try:
                batch = fetch(self.batch_size)
            except StopIteration:
                return
            yield batch

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)  # TypeError, as in PyTorch, for a stream without a length
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self._auto_collation:
            return len(self.batch_sampler)
        return len(self.sampler)
