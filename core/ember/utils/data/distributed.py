"""``DistributedSampler``: the share of a dataset that one rank of a data-parallel job visits.

Each of ``num_replicas`` ranks takes every ``num_replicas``-th index of one common order,
starting at its ``rank``, so the ranks see disjoint parts of the dataset and, together,
all of it once an epoch. The common order is ``range(len(dataset))`` or, with
``shuffle``, a permutation drawn from an ``ember.Generator`` seeded ``seed + epoch``:
every rank draws the same one, and ``set_epoch`` changes it from epoch to epoch.
To give every rank the same number of samples, the order is padded by wrapping round
to a multiple of ``num_replicas`` (or, with ``drop_last``, cut down to one).

The partition is PyTorch's index for index without shuffling; with shuffling it has the
same structure, but the permutation differs (ember's generators are not PyTorch's).
Reference: torch.utils.data.distributed.DistributedSampler.
"""
from __future__ import annotations

import math
from typing import Iterator

from ... import distributed as _dist
from ...random import Generator
from .sampler import Sampler, randperm

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """The indices of ``dataset`` that rank ``rank`` of ``num_replicas`` visits.

    Args:
        dataset: a sized dataset (``len(dataset)`` is all that is used).
        num_replicas: how many ranks share the dataset (default: the world size of the
            default process group).
        rank: this rank (default: ``ember.distributed.get_rank()``).
        shuffle: draw a new order each epoch (seed ``seed + epoch``), else ``0 .. n-1``.
        seed: the shuffling seed; must be the same on every rank.
        drop_last: cut the tail so that the order divides evenly, instead of padding it
            with indices from its start.
    Yields ``len(self)`` = ``num_samples`` Python ints: ``ceil(n / num_replicas)``, or
    ``ceil((n - num_replicas) / num_replicas)`` with ``drop_last`` and an uneven ``n``.
    Raises ValueError for a rank outside ``[0, num_replicas - 1]``; with ``num_replicas``
    or ``rank`` not given, the error of ``ember.distributed`` when no process group is
    initialised. Reference: torch.utils.data.distributed.DistributedSampler.
    """

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False):
        if num_replicas is None:
            num_replicas = _dist.get_world_size()
        if rank is None:
            rank = _dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=g)
        else:
            indices = list(range(n))
        if not self.drop_last:  # pad by wrapping round, as often as needed
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use ``epoch`` for the next ``__iter__``: with ``shuffle``, each epoch draws its
        own order (seed ``seed + epoch``). Call it at the start of every epoch, before
        making the DataLoader iterator, or every epoch repeats the same order."""
        self.epoch = epoch
