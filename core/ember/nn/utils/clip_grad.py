"""Gradient clipping: by total norm and by value (``torch.nn.utils.clip_grad``).

Each function takes ``parameters`` as one Tensor or an iterable of Tensors (parameters
whose ``.grad`` is None are skipped) and works under ``no_grad``, writing the gradients in
place, so the clipping itself is never recorded.
"""
from __future__ import annotations

import math
import warnings

from ...autograd import no_grad
from ...tensor import Tensor

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm"]


def _tensors(tensors, what: str) -> list:
    """``tensors`` as a list: one Tensor becomes ``[t]``; raises TypeError for other items."""
    if isinstance(tensors, Tensor):
        return [tensors]
    out = list(tensors)
    for i, t in enumerate(out):
        if not isinstance(t, Tensor):
            raise TypeError(f"{what}: expected Tensors (or one Tensor), but item {i} is "
                            f"{type(t).__name__}")
    return out


def _grads(parameters, what: str) -> list:
    return [p.grad for p in _tensors(parameters, what) if p.grad is not None]


def _norm_type(norm_type, what: str) -> float:
    try:
        p = float(norm_type)
    except (TypeError, ValueError):
        raise TypeError(f"{what}: norm_type must be a number (or 'inf'), got "
                        f"{norm_type!r}") from None
    if math.isnan(p):
        raise ValueError(f"{what}: norm_type must not be NaN")
    return p


@no_grad()
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """The ``norm_type``-norm of all of ``tensors`` together, as if concatenated into one
    vector: the norm of the per-tensor norms. A 0-d Tensor on the first tensor's device,
    in the promoted floating dtype; ``tensor(0.)`` for no tensors. ``norm_type`` may be
    ``inf`` (the largest absolute value).

    ``foreach`` is accepted for PyTorch compatibility (ember has one implementation).
    Raises RuntimeError, when ``error_if_nonfinite``, for a NaN or infinite total norm;
    TypeError for a non-number ``norm_type``. Reference: torch.nn.utils.get_total_norm.
    """
    from ... import factories
    from ...ops.namespace import stack
    p = _norm_type(norm_type, "get_total_norm")
    tensors = _tensors(tensors, "get_total_norm")
    if not tensors:
        return factories.tensor(0.0)
    device = tensors[0].device
    norms = stack([t.norm(p).to(device) for t in tensors])
    total = norms.norm(p)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(
            f"The total norm of order {p} for gradients from `parameters` is non-finite, "
            f"so it cannot be clipped. To disable this error and scale the gradients by the "
            f"non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


@no_grad()
def clip_grads_with_norm_(parameters, max_norm, total_norm: Tensor, foreach=None) -> None:
    """Scale the gradients of ``parameters`` in place by ``min(1, max_norm / (total_norm +
    1e-6))``, given their precomputed ``total_norm`` (from :func:`get_total_norm`).

    Raises TypeError for a non-number ``max_norm``. Reference:
    torch.nn.utils.clip_grads_with_norm_.
    """
    max_norm = float(max_norm)
    grads = _grads(parameters, "clip_grads_with_norm_")
    if not grads:
        return
    # NOTE: multiplied by the clamped coefficient even when it is 1, as PyTorch does, so
    # a NaN total norm turns the gradients into NaN instead of passing them through.
    coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(coef.to(g.device, g.dtype))


@no_grad()
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite: bool = False,
                    foreach=None) -> Tensor:
    """Rescale the gradients of ``parameters`` so that their total ``norm_type``-norm is at
    most ``max_norm``, in place; returns the total norm before clipping (a 0-d Tensor).

    The norm is taken over all gradients together, as if concatenated into one vector;
    each gradient is multiplied by ``min(1, max_norm / (total_norm + 1e-6))``. Raises
    RuntimeError for a non-finite total norm when ``error_if_nonfinite``. Reference:
    torch.nn.utils.clip_grad_norm_ (Pascanu et al., "On the difficulty of training
    recurrent neural networks", 2013).
    """
    parameters = _tensors(parameters, "clip_grad_norm_")
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


@no_grad()
def clip_grad_value_(parameters, clip_value, foreach=None) -> None:
    """Clamp every gradient of ``parameters`` into ``[-clip_value, clip_value]`` in place.

    Raises TypeError for a non-number ``clip_value``. Reference:
    torch.nn.utils.clip_grad_value_.
    """
    try:
        clip_value = float(clip_value)
    except (TypeError, ValueError):
        raise TypeError(f"clip_grad_value_: clip_value must be a number, got "
                        f"{clip_value!r}") from None
    for g in _grads(parameters, "clip_grad_value_"):
        g.clamp_(min=-clip_value, max=clip_value)


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite: bool = False,
                   foreach=None):
    """Deprecated spelling of ``clip_grad_norm_``, which it calls after a FutureWarning.
    Reference: torch.nn.utils.clip_grad_norm."""
    warnings.warn("`ember.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`ember.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
