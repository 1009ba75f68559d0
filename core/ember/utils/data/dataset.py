"""Datasets: ``Dataset``, ``IterableDataset``, ``TensorDataset``, ``Subset``,
``ConcatDataset`` and ``random_split``.

A map-style dataset defines ``__getitem__(i)`` and ``__len__``; an iterable-style one
defines ``__iter__``. ``TensorDataset`` and ``Subset`` of one also fetch a whole batch at
once (one ``index_select`` per tensor), which ``DataLoader`` uses instead of collating
per-sample items when no ``collate_fn`` is given: same values, far fewer ops a batch.

Reference: torch.utils.data.dataset.
"""
from __future__ import annotations

import bisect
import math
import warnings
from itertools import accumulate
from typing import Sequence

import numpy as np

from ...errors import ShapeError
from ...factories import from_numpy
from ...tensor import Tensor
from .sampler import randperm

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset",
           "random_split"]


class Dataset:
    """Base class of map-style datasets: subclasses define ``__getitem__(index)`` and
    usually ``__len__``. ``a + b`` concatenates two datasets.

    Reference: torch.utils.data.Dataset.
    """

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __add__(self, other) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """Base class of iterable-style datasets (streams): subclasses define ``__iter__``.
    A DataLoader batches the items in the order the iterator yields them; samplers and
    ``shuffle`` do not apply.

    Reference: torch.utils.data.IterableDataset.
    """

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __add__(self, other):
        raise TypeError("IterableDataset does not support '+' (ConcatDataset needs "
                        "map-style datasets); chain the iterators with itertools.chain")


class TensorDataset(Dataset):
    """Samples are slices of tensors along their first dimension:
    ``dataset[i] == (t[i] for t in tensors)``.

    Args:
        *tensors: one or more Tensors of shapes ``(N, ...)`` sharing the same ``N``.
    Raises TypeError for a non-Tensor, ValueError with no tensors, ShapeError for a 0-dim
    tensor or first dimensions that differ.
    Reference: torch.utils.data.TensorDataset.
    """

    def __init__(self, *tensors: Tensor):
        if not tensors:
            raise ValueError("TensorDataset: expected at least one tensor, got none")
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset: expected Tensors, got "
                                f"{type(t).__name__} at position {i}; convert with "
                                f"ember.as_tensor")
            if t.ndim == 0:
                raise ShapeError(f"TensorDataset: tensor at position {i} is 0-dim; every "
                                 f"tensor needs a first (sample) dimension")
        n = tensors[0].shape[0]
        bad = [i for i, t in enumerate(tensors) if t.shape[0] != n]
        if bad:
            sizes = ", ".join(f"{tuple(t.shape)}" for t in tensors)
            raise ShapeError(f"TensorDataset: size mismatch between tensors: expected the "
                             f"same first dimension {n} in all, got shapes {sizes}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def _fetch_batch(self, indices: list) -> list:
        """``default_collate([self[i] for i in indices])`` with one ``index_select`` a
        tensor: a list of tensors of shapes ``(len(indices), ...)``."""
        # NOTE: from_numpy is ~6x cheaper than tensor() on a list; this runs every batch.
        idx = np.asarray(indices, dtype=np.int64)
        if idx.size and idx.min() < 0:  # negative indices count from the end, as self[i]
            n = len(self)
            if idx.min() < -n:
                raise IndexError(f"TensorDataset: index {int(idx.min())} is out of range "
                                 f"for a dataset of {n} samples")
            idx = np.where(idx < 0, idx + n, idx)
        host = from_numpy(idx)
        out, by_device = [], {}
        for t in self.tensors:
            idx = by_device.get(t.device)
            if idx is None:
                idx = by_device[t.device] = host.to(device=t.device)
            out.append(t.index_select(0, idx))
        return out


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``: ``subset[i] == dataset[indices[i]]``.

    Reference: torch.utils.data.Subset.
    """

    def __init__(self, dataset, indices: Sequence[int]):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """The samples of several map-style datasets, one after another.

    Raises ValueError with no datasets, TypeError for an IterableDataset.
    Reference: torch.utils.data.ConcatDataset.
    """

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: expected at least one dataset, got none")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset does not support IterableDataset; use "
                                "itertools.chain over the iterators")
        self.cumulative_sizes = list(accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int):
        n = len(self)
        if idx < 0:
            if -idx > n:
                raise ValueError(f"ConcatDataset: index {idx} out of range for length {n}")
            idx += n
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        if which == len(self.datasets):
            raise IndexError(f"ConcatDataset: index {idx} out of range for length {n}")
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


def batch_fetcher(dataset):
    """A callable ``indices -> collated batch`` for datasets that can fetch a batch at
    once (a TensorDataset, or Subsets of one, whose ``__getitem__`` is not overridden), or
    None. DataLoader uses it in place of per-sample fetching plus ``default_collate``."""
    cls = type(dataset)
    if cls.__getitem__ is TensorDataset.__getitem__ and isinstance(dataset, TensorDataset):
        return dataset._fetch_batch
    if cls.__getitem__ is Subset.__getitem__ and isinstance(dataset, Subset):
        inner = batch_fetcher(dataset.dataset)
        if inner is not None:
            indices = dataset.indices
            return lambda batch: inner([indices[i] for i in batch])
    return None


def random_split(dataset, lengths: Sequence, generator=None) -> list:
    """Split ``dataset`` into non-overlapping ``Subset``s of the given lengths, in a
    random order drawn from ``generator`` (an ``ember.Generator``; default: the default cpu
    generator, so ``ember.manual_seed`` makes it repeat).

    Args:
        lengths: ints summing to ``len(dataset)``, or fractions summing to 1 (each split
            gets ``floor(len * frac)`` items; the remainder goes round-robin to the first
            splits).
    Raises ValueError if a fraction is outside [0, 1], a length is negative, or the lengths
    do not add up to ``len(dataset)``.
    Reference: torch.utils.data.random_split.
    """
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if not 0 <= frac <= 1:
                raise ValueError(f"random_split: fraction at index {i} is {frac}, not "
                                 f"between 0 and 1")
            sizes.append(int(math.floor(n * frac)))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0:
                warnings.warn(f"random_split: length of split at index {i} is 0; this "
                              f"might result in an empty dataset", stacklevel=2)
        lengths = sizes
    for i, size in enumerate(lengths):
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise ValueError(f"random_split: expected non-negative int lengths or fractions "
                             f"summing to 1, got {size!r} at index {i}")
    if sum(lengths) != n:
        raise ValueError(f"random_split: sum of input lengths {sum(lengths)} does not equal "
                         f"the length of the input dataset ({n})")
    order = randperm(n, generator)
    return [Subset(dataset, order[end - size:end])
            for end, size in zip(accumulate(lengths), lengths)]
