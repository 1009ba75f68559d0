"""Normalization layers' functions with PyTorch's signatures (``torch.nn.functional``).

batch_norm, layer_norm and group_norm are composite ops (``native_functions.yaml``,
section ``nn: normalization``): ``(x - mean) * rsqrt(var + eps)`` with the biased
variance, then ``* weight + bias``, all ember ops, so autograd differentiates them to any
order (PyTorch's fused kernels give the same values).

batch_norm in training mode also updates ``running_mean`` / ``running_var`` in place
under no_grad, ``running = (1 - momentum) * running + momentum * batch``, with the
unbiased batch variance (n / (n - 1) times the biased one) going into running_var, as
PyTorch does. The op's arguments follow ``torch.nn.functional.batch_norm``'s order
(input, running_mean, running_var, weight, bias, training, momentum, eps), not aten's.
"""
from __future__ import annotations

import math

import ember as E
from ember.errors import ShapeError
from ember.ops.composite import composite

__all__ = ["batch_norm", "layer_norm", "group_norm"]


def _check_floating(op: str, x) -> None:
    if not x.is_floating_point():
        raise NotImplementedError(f"{op}(): expected a floating input (float16, bfloat16, "
                                  f"float32, float64), got {x.dtype}; convert it first, "
                                  f"e.g. x.float()")


def _check_shape(op: str, name: str, t, shape: tuple) -> None:
    if t is not None and tuple(t.shape) != shape:
        raise ShapeError(f"{op}(): expected {name} of shape {list(shape)}, got "
                         f"{list(t.shape)}")


def _normalize(x, dims, eps):
    """(x - mean) / sqrt(biased var + eps) over ``dims``, and the (keepdim) statistics."""
    mean = x.mean(dims, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(dims, keepdim=True)
    return centered * E.rsqrt(var + eps), mean, var


def _affine(y, weight, bias, shape):
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


@composite("batch_norm")
def _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps):
    if input.ndim < 2:
        raise ShapeError(f"batch_norm(): expected an input of shape (N, C, *) with at least "
                         f"2 dims, got shape {list(input.shape)}")
    _check_floating("batch_norm", input)
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        _check_shape("batch_norm", name, t, (c,))
    stat_shape = (1, c) + (1,) * (input.ndim - 2)
    if training:
        n = input.numel() // c if c else 0
        if n <= 1:
            raise ShapeError(f"batch_norm(): Expected more than 1 value per channel when "
                             f"training, got input size {list(input.shape)}; use a larger "
                             f"batch, or evaluation mode (training=False)")
        dims = (0,) + tuple(range(2, input.ndim))
        y, mean, var = _normalize(input, dims, eps)
        with E.no_grad():
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(mean.reshape(c) * momentum)
            if running_var is not None:
                running_var.mul_(1 - momentum).add_(var.reshape(c) * (momentum * n / (n - 1)))
    else:
        if running_mean is None or running_var is None:
            raise ValueError("batch_norm(): running_mean and running_var must be given in "
                             "evaluation mode (training=False); pass them, or training=True "
                             "to use the batch statistics")
        # NOTE: statistics kept in float32 for a float16 input must not promote the output
        mean = running_mean.reshape(stat_shape).to(input.dtype)
        var = running_var.reshape(stat_shape).to(input.dtype)
        y = (input - mean) * E.rsqrt(var + eps)
    return _affine(y, weight, bias, stat_shape)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Batch normalization over every dim but C of (N, C), (N, C, L), (N, C, H, W), ...:
    ``(x - mean) / sqrt(var + eps) * weight + bias``, same shape and dtype as input.

    training: the batch's mean and biased variance; running_mean / running_var (C,), when
    given, are updated in place to ``(1 - momentum) * running + momentum * batch`` (the
    unbiased variance for running_var). Otherwise the running statistics are used.
    weight, bias: (C,) or None. Floating dtypes. Raises ShapeError for rank < 2, (C,)
    arguments of another shape, and a training batch with one value per channel
    ("Expected more than 1 value per channel when training"); ValueError for missing
    running statistics in evaluation. Reference: torch.nn.functional.batch_norm
    (Ioffe & Szegedy, 2015).
    """
    return E.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                        eps)


@composite("layer_norm")
def _layer_norm(input, normalized_shape, weight, bias, eps):
    shape = tuple(normalized_shape)
    k = len(shape)
    if not k or any(n < 1 for n in shape):
        raise ShapeError(f"layer_norm(): normalized_shape must be a non-empty list of positive "
                         f"sizes, got {list(shape)}")
    if input.ndim < k or tuple(input.shape[input.ndim - k:]) != shape:
        raise ShapeError(f"layer_norm(): Given normalized_shape={list(shape)}, expected input "
                         f"with shape [*, {', '.join(map(str, shape))}], but got input of size "
                         f"{list(input.shape)}")
    _check_floating("layer_norm", input)
    _check_shape("layer_norm", "weight", weight, shape)
    _check_shape("layer_norm", "bias", bias, shape)
    y = _normalize(input, tuple(range(-k, 0)), eps)[0]
    return _affine(y, weight, bias, shape)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Layer normalization over the last len(normalized_shape) dims of (*,
    *normalized_shape): ``(x - mean) / sqrt(var + eps) * weight + bias`` (biased variance),
    same shape and dtype as input.

    normalized_shape: an int or a sequence; weight, bias: of shape normalized_shape or
    None. Floating dtypes. Raises ShapeError when the trailing dims or weight/bias do not
    match normalized_shape. Reference: torch.nn.functional.layer_norm (Ba et al., 2016).
    """
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return E.layer_norm(input, tuple(normalized_shape), weight, bias, eps)


@composite("group_norm")
def _group_norm(input, num_groups, weight, bias, eps):
    if input.ndim < 2:
        raise ShapeError(f"group_norm(): expected an input of shape (N, C, *) with at least "
                         f"2 dims, got shape {list(input.shape)}")
    n, c = input.shape[:2]
    if num_groups < 1 or c % num_groups:
        raise ShapeError(f"group_norm(): Expected number of channels in input to be divisible "
                         f"by num_groups, but got input of shape {list(input.shape)} and "
                         f"num_groups={num_groups}")
    _check_floating("group_norm", input)
    _check_shape("group_norm", "weight", weight, (c,))
    _check_shape("group_norm", "bias", bias, (c,))
    per_group = c // num_groups * math.prod(input.shape[2:])
    x = input.reshape(n, num_groups, per_group)
    y = _normalize(x, (-1,), eps)[0].reshape(input.shape)
    return _affine(y, weight, bias, (1, c) + (1,) * (input.ndim - 2))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Group normalization of (N, C, *): the C channels split into num_groups groups, each
    normalized over its channels and all spatial positions (biased variance), then
    ``* weight + bias`` per channel; same shape and dtype as input.

    weight, bias: (C,) or None. Floating dtypes. Raises ShapeError for rank < 2, C not
    divisible by num_groups, and weight/bias not of shape (C,).
    Reference: torch.nn.functional.group_norm (Wu & He, 2018).
    """
    return E.group_norm(input, num_groups, weight, bias, eps)
