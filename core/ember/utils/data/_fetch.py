"""Fetchers: turn one sampler item into one batch, the same way in the main process
(``num_workers=0``) and in a DataLoader worker process.

A map-style fetcher is a callable ``indices -> batch`` (``index -> sample`` when
auto-batching is off); a stream fetcher owns one iterator over an ``IterableDataset`` and
is called with the number of items a batch takes (None when auto-batching is off), raising
StopIteration when the stream is exhausted.

Reference: torch.utils.data._utils.fetch (``_MapDatasetFetcher``,
``_IterableDatasetFetcher``).
"""
from __future__ import annotations

from typing import Callable

from .dataset import batch_fetcher

__all__ = ["map_fetcher", "StreamFetcher"]


def map_fetcher(dataset, auto_collation: bool, collate_fn: Callable,
                fast: bool) -> Callable:
    """The callable that makes the batch of one sampler item of a map-style ``dataset``.

    ``fast`` allows the whole-batch fetch of a TensorDataset (or a Subset of one), used
    when the loader's ``collate_fn`` is the default; otherwise samples are fetched with
    ``__getitems__`` (when the dataset has it) or one ``dataset[i]`` each, then collated.
    """
    if not auto_collation:
        return lambda index: collate_fn(dataset[index])
    whole = batch_fetcher(dataset) if fast else None
    if whole is not None:
        return whole
    getitems = getattr(dataset, "__getitems__", None)
    if getitems is not None:
        return lambda indices: collate_fn(getitems(indices))
    return lambda indices: collate_fn([dataset[i] for i in indices])


class StreamFetcher:
    """Batches of an ``IterableDataset``, read from one ``iter(dataset)``.

    ``fetcher(n)`` collates the next ``n`` items (a smaller last batch unless
    ``drop_last``); ``fetcher(None)`` converts the next item alone (auto-batching off).
    Raises StopIteration once the stream has no batch left.
    """

    def __init__(self, dataset, auto_collation: bool, collate_fn: Callable, drop_last: bool):
        self._iter = iter(dataset)
        self._auto = auto_collation
        self._collate = collate_fn
        self._drop_last = drop_last
        self._ended = False

    def __call__(self, batch_size: int | None):
        if self._ended:
            raise StopIteration
        if not self._auto:
            return self._collate(next(self._iter))
        batch = []
        for _ in range(batch_size):
            try:
                batch.append(next(self._iter))
            except StopIteration:
                self._ended = True
                break
        if not batch or (self._drop_last and len(batch) < batch_size):
            raise StopIteration
        return self._collate(batch)
