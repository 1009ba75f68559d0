"""Helpers shared by the distributions (``torch.distributions.utils``): ``broadcast_all``,
``logits_to_probs`` / ``probs_to_logits`` / ``clamp_probs`` and ``lazy_property``."""
from __future__ import annotations

import functools
import numbers

from ember.ops import namespace as E
from ember._base.grad_mode import enable_grad
from ember.tensor import Size, Tensor

__all__ = ["broadcast_all", "clamp_probs", "euler_constant", "lazy_property",
           "logits_to_probs", "probs_to_logits"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def broadcast_all(*values):
    """Broadcast Tensors and Python numbers to one shape (``torch.distributions.utils
    .broadcast_all``).

    Numbers become Tensors of the first Tensor's dtype and device (the default dtype if all
    are numbers). Returns a tuple of Tensors, all of the broadcast shape.
    Raises ValueError for anything but a Tensor or a number, and the broadcasting error
    where shapes do not broadcast.
    """
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        bad = next(type(v).__name__ for v in values
                   if not isinstance(v, (Tensor, numbers.Number)))
        raise ValueError(f"Input arguments must all be instances of Number or ember.Tensor, "
                         f"got {bad}")
    if not all(isinstance(v, Tensor) for v in values):
        options = {"dtype": E.get_default_dtype()}
        for v in values:
            if isinstance(v, Tensor):
                options = {"dtype": v.dtype, "device": v.device}
                break
        values = [v if isinstance(v, Tensor) else E.tensor(float(v), **options)
                  for v in values]
    return E.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    return E.empty(shape, dtype=dtype, device=device).normal_()


def _uniform_open(shape, dtype, device):
    """Uniform draws in the open interval ``(0, 1)``: the ends would give ``log(0)``."""
    tiny = E.finfo(dtype).tiny
    return E.empty(shape, dtype=dtype, device=device).uniform_(tiny, 1.0)


def _sum_rightmost(value, dim: int):
    """``value`` summed over its ``dim`` rightmost dims."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


def _size(shape) -> Size:
    return Size(int(s) for s in shape)


def logits_to_probs(logits, is_binary: bool = False):
    """Probabilities from logits: ``sigmoid`` (binary: log-odds) or ``softmax`` over the
    last dim (unnormalized log-probabilities). Same shape and dtype as ``logits``."""
    if is_binary:
        return E.sigmoid(logits)
    return E.softmax(logits, dim=-1)


def clamp_probs(probs):
    """``probs`` clamped to ``[eps, 1 - eps]`` (``eps`` = the dtype's machine epsilon), so
    that their logs are finite."""
    eps = E.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary: bool = False):
    """Logits from probabilities: log-odds (binary) or ``log(probs)`` (the last dim holds
    each event's probability). Probabilities are clamped first (``clamp_probs``)."""
    ps = clamp_probs(probs)
    if is_binary:
        return E.log(ps) - E.log1p(-ps)
    return E.log(ps)


class lazy_property:
    """A decorator for an attribute computed on first access, then stored on the instance
    (a non-data descriptor), as ``torch.distributions.utils.lazy_property``.

    Computed under ``enable_grad`` so a parameter derived lazily (``probs`` from ``logits``)
    stays differentiable even if first read under ``no_grad``.
    """

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value
