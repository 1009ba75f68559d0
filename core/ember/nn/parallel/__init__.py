"""``ember.nn.parallel``: data parallelism across processes (``DistributedDataParallel``).

``distributed.py`` holds the module wrapper, ``reducer.py`` the gradient buckets and their
overlapped all-reduce. Reference: torch.nn.parallel.
"""
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
