"""``ember.nn.functional`` (import as ``F``): the stateless neural-network ops.

Each submodule holds one family, with PyTorch's signatures (``torch.nn.functional``):
``conv`` (conv1d..conv3d, conv_transpose1d..3d), ``pooling``, ``normalization``
(batch_norm, layer_norm, group_norm, rms_norm, instance_norm,
local_response_norm), ``activation`` and ``activation_smooth``,
``loss``, ``regression_loss`` and ``margin_loss``, ``distance`` (normalize,
cosine_similarity, pairwise_distance), ``linear`` (linear, bilinear), ``dropout``,
``sparse`` (embedding, one_hot), ``padding`` (pad), ``upsampling`` (interpolate),
``pixelshuffle`` (pixel_shuffle, pixel_unshuffle, channel_shuffle), ``fold`` (unfold,
fold) and ``rnn`` (lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell: plain functions,
not declared ops). Most are composite ops declared in ``ops/native_functions.yaml`` and
implemented here with ember ops, so autograd (to any order) and the tracer see through
them; convolution and max pooling have kernels.
"""
from . import activation, activation_smooth, conv, distance, dropout, fold, linear, loss, \
    margin_loss, normalization, padding, pixelshuffle, pooling, regression_loss, rnn, sparse, \
    upsampling

# NOTE: built before the star imports, which rebind names such as ``dropout``, ``linear``
# and ``fold`` from the submodule to the function of the same name.
__all__ = [n for m in (activation, activation_smooth, conv, distance, dropout, fold, linear,
                       loss, margin_loss, normalization, padding, pixelshuffle, pooling,
                       regression_loss, rnn, sparse, upsampling) for n in m.__all__]

from .activation import *  # noqa: E402,F401,F403
from .activation_smooth import *  # noqa: E402,F401,F403
from .conv import *  # noqa: E402,F401,F403
from .distance import *  # noqa: E402,F401,F403
from .dropout import *  # noqa: E402,F401,F403
from .fold import *  # noqa: E402,F401,F403
from .linear import *  # noqa: E402,F401,F403
from .loss import *  # noqa: E402,F401,F403
from .margin_loss import *  # noqa: E402,F401,F403
from .normalization import *  # noqa: E402,F401,F403
from .padding import *  # noqa: E402,F401,F403
from .pixelshuffle import *  # noqa: E402,F401,F403
from .pooling import *  # noqa: E402,F401,F403
from .regression_loss import *  # noqa: E402,F401,F403
from .rnn import *  # noqa: E402,F401,F403
from .sparse import *  # noqa: E402,F401,F403
from .upsampling import *  # noqa: E402,F401,F403

# ==== attention ====
# scaled_dot_product_attention, multi_head_attention_forward: plain functions of ember ops
from . import attention, multihead_attention  # noqa: E402
from .attention import *  # noqa: E402,F401,F403
from .multihead_attention import *  # noqa: E402,F401,F403

__all__ += attention.__all__ + multihead_attention.__all__

# ==== extra losses, embedding bags, sampling activations, grid sampling ====
from . import activation_stochastic, ctc, multilabel_loss, vision  # noqa: E402
from . import embedding_bag as _embedding_bag  # noqa: E402 - the function takes the name
from .activation_stochastic import *  # noqa: E402,F401,F403
from .ctc import *  # noqa: E402,F401,F403
from .embedding_bag import *  # noqa: E402,F401,F403
from .multilabel_loss import *  # noqa: E402,F401,F403
from .vision import *  # noqa: E402,F401,F403

__all__ += (activation_stochastic.__all__ + ctc.__all__ + _embedding_bag.__all__
            + multilabel_loss.__all__ + vision.__all__)
