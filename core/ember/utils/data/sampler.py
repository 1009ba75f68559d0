"""Samplers: which dataset indices a DataLoader visits, and in which order.

A sampler is an iterable of indices (``SequentialSampler``, ``RandomSampler``,
``SubsetRandomSampler``); ``BatchSampler`` groups another sampler's indices into lists.
Random order is drawn on the host from an ``ember.Generator`` (the default cpu generator
when none is given), so ``ember.manual_seed(s)`` or ``Generator().manual_seed(s)`` makes
an epoch's order repeat exactly. Streams differ from PyTorch's (different bit generators).

Reference: torch.utils.data.sampler.
"""
from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np

from ...backends import registry as _registry
from ...random import Generator, backend_rng

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "BatchSampler"]


def _rng(generator):
    """``(backend, random generator object)`` behind ``generator`` (default: the default
    cpu generator). Raises TypeError for anything but an ``ember.Generator`` or None."""
    if generator is None:
        backend = _registry.get_backend("cpu")
    elif isinstance(generator, Generator):
        backend = _registry.get_backend(generator.device)
    else:
        raise TypeError(f"expected generator to be an ember.Generator or None, got "
                        f"{type(generator).__name__}")
    return backend, backend_rng(generator, backend)


def randperm(n: int, generator=None) -> list:
    """A random permutation of ``range(n)`` as a list of Python ints, drawn from
    ``generator`` (an ``ember.Generator``; default: the default cpu generator).

    Raises TypeError for a generator that is not an ``ember.Generator``.
    Reference: torch.randperm(n, generator=...).tolist().
    """
    backend, rng = _rng(generator)
    return np.asarray(backend.to_numpy(rng.permutation(n))).tolist()


def _randint(high: int, size: int, generator=None) -> list:
    backend, rng = _rng(generator)
    return np.asarray(backend.to_numpy(rng.integers(0, high, size))).tolist()


class Sampler:
    """Base class: an iterable over dataset indices; subclasses define ``__iter__`` and,
    when the count is known, ``__len__``.

    Reference: torch.utils.data.Sampler.
    """

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    """Indices ``0, 1, ..., len(data_source) - 1`` in order.

    Reference: torch.utils.data.SequentialSampler.
    """

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """Indices of ``data_source`` in random order.

    Args:
        data_source: a sized dataset.
        replacement: draw ``num_samples`` indices with replacement (default False: a
            permutation, repeated as often as ``num_samples`` needs).
        num_samples: how many indices an iteration yields (default ``len(data_source)``).
        generator: the ``ember.Generator`` to draw from (default: the default cpu one).
    Raises TypeError if ``replacement`` is not a bool, ValueError if ``num_samples`` is not
    a positive int.
    Reference: torch.utils.data.RandomSampler.
    """

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator=None):
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, got "
                            f"{type(replacement).__name__}: {replacement!r}")
        if generator is not None and not isinstance(generator, Generator):
            raise TypeError(f"RandomSampler: expected generator to be an ember.Generator or "
                            f"None, got {type(generator).__name__}")
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        n = self.num_samples
        if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
            raise ValueError(f"num_samples should be a positive integer value, got "
                             f"num_samples={n!r}")

    @property
    def num_samples(self) -> int:
        """How many indices one iteration yields."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n, count = len(self.data_source), self.num_samples
        if self.replacement:
            yield from _randint(n, count, self.generator)
            return
        for _ in range(count // n):
            yield from randperm(n, self.generator)
        yield from randperm(n, self.generator)[:count % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in random order (drawn from ``generator``).

    Reference: torch.utils.data.SubsetRandomSampler.
    """

    def __init__(self, indices: Sequence[int], generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in randperm(len(self.indices), self.generator):
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size``.

    Args:
        sampler: any iterable of indices (a Sampler, a range, a list).
        batch_size: positive int.
        drop_last: drop the last batch if it is smaller than ``batch_size``.
    Raises ValueError for a batch_size that is not a positive int or a drop_last that is
    not a bool.
    Example: ``list(BatchSampler(range(5), 2, False)) == [[0, 1], [2, 3], [4]]``.
    Reference: torch.utils.data.BatchSampler.
    """

    def __init__(self, sampler, batch_size: int, drop_last: bool):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, got "
                             f"batch_size={batch_size!r}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, got "
                             f"drop_last={drop_last!r}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list]:
        batch, size = [], self.batch_size
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
