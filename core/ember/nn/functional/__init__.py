"""``ember.nn.functional`` (import as ``F``): the stateless neural-network ops.

Each submodule holds one family, with PyTorch's signatures (``torch.nn.functional``):
``conv`` (conv1d..conv3d, conv_transpose1d..3d), ``pooling``, ``normalization``
(batch_norm, layer_norm, group_norm), ``activation``, ``loss``, ``linear`` (linear,
bilinear), ``dropout``, ``sparse`` (embedding), ``padding`` (pad), ``rnn`` (lstm_cell,
gru_cell, rnn_tanh_cell, rnn_relu_cell: plain functions, not declared ops). Most are composite
ops declared in ``ops/native_functions.yaml`` and implemented here with ember ops, so
autograd (to any order) and the tracer see through them; convolution and max pooling
have kernels.
"""
from . import activation, conv, dropout, linear, loss, normalization, padding, pooling, rnn, \
    sparse

# NOTE: built before the star imports, which rebind names such as ``dropout`` and ``linear``
# from the submodule to the function of the same name.
__all__ = [n for m in (activation, conv, dropout, linear, loss, normalization, padding, pooling,
                       rnn, sparse) for n in m.__all__]

from .activation import *  # noqa: E402,F401,F403
from .conv import *  # noqa: E402,F401,F403
from .dropout import *  # noqa: E402,F401,F403
from .linear import *  # noqa: E402,F401,F403
from .loss import *  # noqa: E402,F401,F403
from .normalization import *  # noqa: E402,F401,F403
from .padding import *  # noqa: E402,F401,F403
from .pooling import *  # noqa: E402,F401,F403
from .rnn import *  # noqa: E402,F401,F403
from .sparse import *  # noqa: E402,F401,F403
