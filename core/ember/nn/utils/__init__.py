"""``ember.nn.utils``: helpers for training loops (``torch.nn.utils``).

* ``clip_grad``: ``clip_grad_norm_``, ``clip_grad_value_``, ``get_total_norm``,
  ``clip_grads_with_norm_``;
* ``convert_parameters``: ``parameters_to_vector``, ``vector_to_parameters``;
* ``rnn``: ``PackedSequence`` and packing/padding of variable-length sequences;
* ``parametrize``: tensors computed from others (``register_parametrization``), with
  ``parametrizations.weight_norm`` / ``spectral_norm`` built on it, and the older
  hook-based ``weight_norm`` / ``spectral_norm`` with their ``remove_*``;
* ``fusion``: folding an eval-mode BatchNorm into the conv or linear layer before it.
"""
from . import parametrizations, parametrize, rnn
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_,
                        get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,
                     fuse_linear_bn_weights)
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm",
           "parameters_to_vector", "vector_to_parameters", "fuse_conv_bn_eval",
           "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights",
           "weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm",
           "parametrizations", "parametrize", "rnn"]
