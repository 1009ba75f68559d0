"""``ember.nn.utils``: helpers for training loops (``torch.nn.utils``).

* ``clip_grad``: ``clip_grad_norm_``, ``clip_grad_value_``, ``get_total_norm``,
  ``clip_grads_with_norm_``;
* ``convert_parameters``: ``parameters_to_vector``, ``vector_to_parameters``;
* ``rnn``: ``PackedSequence`` and packing/padding of variable-length sequences.
"""
from . import rnn
from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "vector_to_parameters"]
