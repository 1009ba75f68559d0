"""``DataLoader``: iterate over a dataset in (optionally shuffled) batches.

Loading happens in the calling process: ``num_workers`` other than 0 raises
NotImplementedError, and ``pin_memory`` is accepted as a no-op. Shuffling draws from the
``generator`` argument (default: the default cpu generator), so a seeded generator or
``ember.manual_seed`` repeats the order of every epoch.

With the default ``collate_fn``, a ``TensorDataset`` (or a ``Subset`` of one) is batched
with one ``index_select`` per tensor instead of slicing samples and stacking them; the
batch is the same list of tensors ``default_collate`` would build.

Reference: torch.utils.data.DataLoader.
"""
from __future__ import annotations

from typing import Callable, Iterator

from .collate import default_collate, default_convert
from .dataset import IterableDataset, batch_fetcher
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

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


class DataLoader:
    """Batches of ``dataset``, in the order of a sampler.

    Args:
        dataset: a map-style dataset (``__getitem__`` and ``__len__``) or an
            ``IterableDataset``.
        batch_size: samples per batch (default 1); None turns auto-batching off (each
            sample goes through ``collate_fn``, default ``default_convert``, unbatched).
        shuffle: visit samples in a new random order every epoch (default False).
        sampler: an iterable of indices to draw from (exclusive with ``shuffle``).
        batch_sampler: an iterable of index lists (exclusive with ``batch_size``,
            ``shuffle``, ``sampler`` and ``drop_last``).
        num_workers: must be 0 (batches load in this process).
        collate_fn: merges a list of samples into a batch (default ``default_collate``).
        pin_memory: accepted for compatibility; a no-op.
        drop_last: drop the last batch when it is smaller than ``batch_size``.
        generator: the ``ember.Generator`` that shuffling draws from.
    Yields batches; ``len(loader)`` is the number of batches (for an IterableDataset, the
    count its ``__len__`` implies).
    Raises ValueError for mutually exclusive options (as PyTorch) or a negative
    ``num_workers``, NotImplementedError for ``num_workers > 0``, TypeError for a
    ``generator`` that is not an ``ember.Generator``, for a ``dataset`` that is neither
    map-style nor an IterableDataset (None, a number), for a ``collate_fn`` that is not
    callable and a ``sampler`` or ``batch_sampler`` that is not iterable.
    Reference: torch.utils.data.DataLoader.
    """

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler=None, batch_sampler=None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, generator=None):
        if not isinstance(num_workers, int) or isinstance(num_workers, bool) \
                or num_workers < 0:
            raise ValueError(f"num_workers option should be a non-negative integer, got "
                             f"num_workers={num_workers!r}")
        if num_workers > 0:
            raise NotImplementedError(
                f"DataLoader(num_workers={num_workers}): worker processes are not "
                f"implemented in ember; use num_workers=0 (the default), which loads "
                f"batches in the main process")
        iterable = isinstance(dataset, IterableDataset)
        _check_arguments(dataset, iterable, sampler, batch_sampler, collate_fn)
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
        self.generator = generator
        auto = batch_sampler is not None or (iterable and batch_size is not None)
        self._auto_collation = auto
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if auto else default_convert)
        self._fetch_batch = batch_fetcher(dataset) if auto and collate_fn is None else None

    def __iter__(self) -> Iterator:
        if isinstance(self.dataset, IterableDataset):
            return self._iter_stream()
        if not self._auto_collation:
            return (self.collate_fn(self.dataset[i]) for i in self.sampler)
        if self._fetch_batch is not None:
            return map(self._fetch_batch, self.batch_sampler)
        return self._iter_batches()

    def _iter_batches(self) -> Iterator:
        dataset, collate = self.dataset, self.collate_fn
        getitems = getattr(dataset, "__getitems__", None)
        for indices in self.batch_sampler:
            samples = getitems(indices) if getitems else [dataset[i] for i in indices]
            yield collate(samples)

    def _iter_stream(self) -> Iterator:
        collate = self.collate_fn
        if not self._auto_collation:
            for item in self.dataset:
                yield collate(item)
            return
        batch = []
        for item in self.dataset:
            batch.append(item)
            if len(batch) == self.batch_size:
                yield collate(batch)
                batch = []
        if batch and not self.drop_last:
            yield collate(batch)

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)  # TypeError, as in PyTorch, for a stream without a length
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self._auto_collation:
            return len(self.batch_sampler)
        return len(self.sampler)
