"""Pooling layers, one concept a module as in ``nn.functional.pooling``: ``max_pool``
(MaxPool1d/2d/3d), ``avg_pool`` (AvgPool1d/2d/3d), ``adaptive`` (AdaptiveAvgPool1d/2d/3d,
AdaptiveMaxPool1d/2d/3d), ``lp_pool`` (LPPool1d/2d/3d), ``unpool`` (MaxUnpool1d/2d/3d)
and ``fractional`` (FractionalMaxPool2d/3d).

Thin modules over ``ember.nn.functional``'s pooling ops; they store their arguments as
PyTorch does (``stride`` defaults to ``kernel_size``) and print them as PyTorch does.
Reference: torch.nn.modules.pooling.
"""
from . import adaptive, avg_pool, fractional, lp_pool, max_pool, unpool
from .adaptive import *  # noqa: F401,F403
from .avg_pool import *  # noqa: F401,F403
from .fractional import *  # noqa: F401,F403
from .lp_pool import *  # noqa: F401,F403
from .max_pool import *  # noqa: F401,F403
from .unpool import *  # noqa: F401,F403

__all__ = [n for m in (max_pool, avg_pool, adaptive, lp_pool, unpool, fractional)
           for n in m.__all__]
