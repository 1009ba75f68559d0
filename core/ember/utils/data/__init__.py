"""Datasets, samplers and the DataLoader (``torch.utils.data``).

``Dataset`` / ``IterableDataset`` / ``TensorDataset`` / ``Subset`` / ``ConcatDataset`` /
``random_split`` live in ``dataset.py``; samplers in ``sampler.py``; ``default_collate`` in
``collate.py``; ``DataLoader`` in ``dataloader.py``, its worker processes in ``_worker.py``
(``get_worker_info``) and ``_multiprocess.py``; ``DistributedSampler`` in
``distributed.py``.
"""
from .collate import default_collate, default_convert
from ._worker import get_worker_info
from .dataloader import DataLoader
from .distributed import DistributedSampler
from .dataset import (ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset,
                      random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler)

__all__ = ["DataLoader", "Dataset", "IterableDataset", "TensorDataset", "Subset",
           "ConcatDataset", "random_split", "Sampler", "SequentialSampler", "RandomSampler",
           "SubsetRandomSampler", "BatchSampler", "default_collate", "default_convert",
           "get_worker_info", "DistributedSampler"]
