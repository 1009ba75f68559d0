"""``ember.nn`` modules: the Module base class, containers and the layers, one family a file.

Reference: torch.nn.modules.
"""
from . import (activation, activation_smooth, activation_stochastic, adaptive, attention,
               batchnorm_sync, container, conv, distance, dropout, embedding_bag, flatten, fold,
               instancenorm, lazy, linear, loss, normalization, padding,
               parameter_container, pixelshuffle, pooling, rnn, rnn_cell, sparse,
               transformer, upsampling)
from .module import Module

# NOTE: built before the star imports, which rebind names such as ``embedding_bag``
# from the submodule to the class or function of the same name.
_FAMILIES = (activation, activation_smooth, activation_stochastic, adaptive, attention,
             batchnorm_sync, container,
             conv, distance, dropout, embedding_bag, flatten, fold, instancenorm,
             lazy, linear, loss, normalization, padding, parameter_container,
             pixelshuffle, pooling, rnn, rnn_cell, sparse, transformer, upsampling)
__all__ = ["Module"] + [n for m in _FAMILIES for n in m.__all__]

from .activation import *  # noqa: E402,F401,F403
from .activation_smooth import *  # noqa: E402,F401,F403
from .activation_stochastic import *  # noqa: E402,F401,F403
from .adaptive import *  # noqa: E402,F401,F403
from .attention import *  # noqa: E402,F401,F403
from .batchnorm_sync import *  # noqa: E402,F401,F403
from .container import *  # noqa: E402,F401,F403
from .conv import *  # noqa: E402,F401,F403
from .distance import *  # noqa: E402,F401,F403
from .dropout import *  # noqa: E402,F401,F403
from .embedding_bag import *  # noqa: E402,F401,F403
from .flatten import *  # noqa: E402,F401,F403
from .fold import *  # noqa: E402,F401,F403
from .instancenorm import *  # noqa: E402,F401,F403
from .lazy import *  # noqa: E402,F401,F403
from .linear import *  # noqa: E402,F401,F403
from .loss import *  # noqa: E402,F401,F403
from .normalization import *  # noqa: E402,F401,F403
from .padding import *  # noqa: E402,F401,F403
from .parameter_container import *  # noqa: E402,F401,F403
from .pixelshuffle import *  # noqa: E402,F401,F403
from .pooling import *  # noqa: E402,F401,F403
from .rnn import *  # noqa: E402,F401,F403
from .rnn_cell import *  # noqa: E402,F401,F403
from .sparse import *  # noqa: E402,F401,F403
from .transformer import *  # noqa: E402,F401,F403
from .upsampling import *  # noqa: E402,F401,F403
