"""Datasets, samplers and the DataLoader (``torch.utils.data``'s single-process subset).

``Dataset`` / ``IterableDataset`` / ``TensorDataset`` / ``Subset`` / ``ConcatDataset`` /
``random_split`` live in ``dataset.py``; samplers in ``sampler.py``; ``default_collate`` in
``collate.py``; ``DataLoader`` in ``dataloader.py``.
"""
from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import (ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset,
                      random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler)

__all__ = ["DataLoader", "Dataset", "IterableDataset", "TensorDataset", "Subset",
           "ConcatDataset", "random_split", "Sampler", "SequentialSampler", "RandomSampler",
           "SubsetRandomSampler", "BatchSampler", "default_collate", "default_convert"]
