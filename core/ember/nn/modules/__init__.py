"""``ember.nn`` modules: the Module base class, containers and the layers, one family a file.

Reference: torch.nn.modules.
"""
from . import activation, activation_smooth, container, conv, distance, dropout, flatten, \
    fold, linear, loss, normalization, padding, parameter_container, pixelshuffle, pooling, \
    rnn, rnn_cell, sparse, upsampling
from .activation import *  # noqa: F401,F403
from .activation_smooth import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .module import Module
from .normalization import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .parameter_container import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .rnn_cell import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403

__all__ = ["Module"] + [n for m in (container, parameter_container, linear, conv, pooling,
                                    normalization, dropout, sparse, flatten, fold, padding,
                                    pixelshuffle, upsampling, activation, activation_smooth,
                                    distance, loss, rnn, rnn_cell)
                        for n in m.__all__]

# ==== attention ====
from . import attention, transformer  # noqa: E402
from .attention import *  # noqa: E402,F401,F403
from .transformer import *  # noqa: E402,F401,F403

__all__ += attention.__all__ + transformer.__all__

# ==== extra losses, embedding bags, sampling activations ====
from . import activation_stochastic, adaptive, embedding_bag  # noqa: E402
from .activation_stochastic import *  # noqa: E402,F401,F403
from .adaptive import *  # noqa: E402,F401,F403
from .embedding_bag import *  # noqa: E402,F401,F403

__all__ += activation_stochastic.__all__ + adaptive.__all__ + embedding_bag.__all__

# ==== instance norm, lazy modules ====
from . import instancenorm, lazy  # noqa: E402
from .instancenorm import *  # noqa: E402,F401,F403
from .lazy import *  # noqa: E402,F401,F403

__all__ += instancenorm.__all__ + lazy.__all__
