"""``ember.nn.functional`` (import as ``F``): the stateless neural-network ops.

Each submodule holds one family, with PyTorch's signatures (``torch.nn.functional``):
``conv`` (conv1d..conv3d, conv_transpose1d..3d), ``pooling`` (max, average, adaptive, LP,
fractional pooling and unpooling), ``normalization`` (batch_norm, layer_norm, group_norm,
rms_norm, instance_norm, local_response_norm), ``activation``, ``activation_smooth`` and
``activation_stochastic`` (rrelu, gumbel_softmax), ``loss``, ``regression_loss``,
``margin_loss``, ``multilabel_loss`` and ``ctc`` (ctc_loss), ``distance`` (normalize,
cosine_similarity, pairwise_distance, pdist), ``linear`` (linear, bilinear), ``dropout``,
``sparse`` (embedding, one_hot) and ``embedding_bag``, ``padding`` (pad), ``upsampling``
(interpolate), ``vision`` (affine_grid, grid_sample), ``pixelshuffle`` (pixel_shuffle,
pixel_unshuffle, channel_shuffle), ``fold`` (unfold, fold), ``attention``
(scaled_dot_product_attention) and ``multihead_attention``, and ``rnn`` (lstm_cell,
gru_cell, rnn_tanh_cell, rnn_relu_cell). Most are composite ops declared in
``ops/native_functions.yaml`` or plain functions of ember ops, so autograd (to any order)
and the tracer see through them; convolution and max pooling have kernels.
"""
from . import (activation, activation_smooth, activation_stochastic, attention, conv, ctc,
               distance, dropout, embedding_bag, fold, linear, loss, margin_loss,
               multihead_attention, multilabel_loss, normalization, padding,
               pixelshuffle, pooling, regression_loss, rnn, sparse, upsampling,
               vision)

# NOTE: built before the star imports, which rebind names such as ``dropout``, ``linear``,
# ``fold`` and ``embedding_bag`` from the submodule to the function of the same name.
_FAMILIES = (activation, activation_smooth, activation_stochastic, attention, conv, ctc, distance,
             dropout, embedding_bag, fold, linear, loss, margin_loss,
             multihead_attention, multilabel_loss, normalization, padding,
             pixelshuffle, pooling, regression_loss, rnn, sparse, upsampling, vision)
__all__ = [n for m in _FAMILIES for n in m.__all__]

from .activation import *  # noqa: E402,F401,F403
from .activation_smooth import *  # noqa: E402,F401,F403
from .activation_stochastic import *  # noqa: E402,F401,F403
from .attention import *  # noqa: E402,F401,F403
from .conv import *  # noqa: E402,F401,F403
from .ctc import *  # noqa: E402,F401,F403
from .distance import *  # noqa: E402,F401,F403
from .dropout import *  # noqa: E402,F401,F403
from .embedding_bag import *  # noqa: E402,F401,F403
from .fold import *  # noqa: E402,F401,F403
from .linear import *  # noqa: E402,F401,F403
from .loss import *  # noqa: E402,F401,F403
from .margin_loss import *  # noqa: E402,F401,F403
from .multihead_attention import *  # noqa: E402,F401,F403
from .multilabel_loss import *  # noqa: E402,F401,F403
from .normalization import *  # noqa: E402,F401,F403
from .padding import *  # noqa: E402,F401,F403
from .pixelshuffle import *  # noqa: E402,F401,F403
from .pooling import *  # noqa: E402,F401,F403
from .regression_loss import *  # noqa: E402,F401,F403
from .rnn import *  # noqa: E402,F401,F403
from .sparse import *  # noqa: E402,F401,F403
from .upsampling import *  # noqa: E402,F401,F403
from .vision import *  # noqa: E402,F401,F403
