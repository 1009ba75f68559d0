"""Normalization layers' functions with PyTorch's signatures (``torch.nn.functional``).

batch_norm, layer_norm and group_norm are composite ops (``native_functions.yaml``,
section ``nn: normalization``): ``(x - mean) * rsqrt(var + eps)`` with the biased
variance, then ``* weight + bias``, all ember ops, so autograd differentiates them to any
order (PyTorch's fused kernels give the same values). batch_norm folds the per-channel
statistics, weight and bias into one scale and shift first, ``x * scale + shift``, as
PyTorch's CPU kernel does: two passes over the input instead of four.

layer_norm and group_norm run as fused kernel pairs (``autograd/kernel_pair.py``,
``backends/kernels/normalization.py``: PyTorch's native_layer_norm / native_group_norm
and their backward kernels, mean and rstd computed once and saved); their op-by-op forms
here (``_layer_norm_reference``, ``_group_norm_reference``) are the reference that double
backward differentiates and that a trace records. The kernels see one dtype: weight and
bias of another dtype promote with the input first, as the op-by-op form would.

batch_norm in training mode also updates ``running_mean`` / ``running_var`` in place
under no_grad, ``running = (1 - momentum) * running + momentum * batch``, with the
unbiased batch variance (n / (n - 1) times the biased one) going into running_var, as
PyTorch does. The batch statistics are detached first: a trace does not record grad
mode, and the detach is what keeps a traced update from giving the buffers history. The
op's arguments follow ``torch.nn.functional.batch_norm``'s order (input, running_mean,
running_var, weight, bias, training, momentum, eps), not aten's.

rms_norm, instance_norm and local_response_norm are plain functions of ember ops (not
declared ops, so a trace records the ops they are made of). rms_norm and instance_norm
compute float16/bfloat16 input in float32 and return the input's dtype, as PyTorch's
kernels do (their accumulation type).
"""
from __future__ import annotations

import math
import operator

from ember.ops import namespace as E
from ember._base.grad_mode import no_grad
from ember.autograd import kernel_pair as _fused
from ember.backends.kernels.normalization import (group_norm_backward, group_norm_forward,
                                                  layer_norm_backward, layer_norm_forward)
from ember.errors import ShapeError
from ember.ops.composite import composite

__all__ = ["batch_norm", "layer_norm", "group_norm", "rms_norm", "instance_norm",
           "local_response_norm"]

_HALF = (E.float16, E.bfloat16)


def _check_floating(op: str, x) -> None:
    if not x.is_floating_point():
        raise NotImplementedError(f"{op}(): expected a floating input (float16, bfloat16, "
                                  f"float32, float64), got {x.dtype}; convert it first, "
                                  f"e.g. x.float()")


def _check_shape(op: str, name: str, t, shape: tuple) -> None:
    if t is not None and tuple(t.shape) != shape:
        raise ShapeError(f"{op}(): expected {name} of shape {list(shape)}, got "
                         f"{list(t.shape)}")


def _trailing_shape(op: str, input, normalized_shape) -> tuple:
    """normalized_shape as a tuple, checked against input's trailing dims (layer_norm's
    messages)."""
    try:
        shape = (operator.index(normalized_shape),) if not hasattr(normalized_shape,
                                                                    "__len__") else \
            tuple(operator.index(n) for n in normalized_shape)
    except TypeError:
        raise TypeError(f"{op}(): normalized_shape must be an int or a sequence of ints, got "
                        f"{normalized_shape!r}") from None
    if not shape or any(n < 1 for n in shape):
        raise ShapeError(f"{op}(): normalized_shape must be a non-empty list of positive "
                         f"sizes, got {list(shape)}")
    k = len(shape)
    if input.ndim < k or tuple(input.shape[input.ndim - k:]) != shape:
        raise ShapeError(f"{op}(): Given normalized_shape={list(shape)}, expected input "
                         f"with shape [*, {', '.join(map(str, shape))}], but got input of size "
                         f"{list(input.shape)}")
    return shape


def _statistics(x, dims, eps):
    """The (keepdim) mean, biased variance and rsqrt(var + eps) of x over ``dims``."""
    mean = x.mean(dims, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(dims, keepdim=True)
    return mean, var, E.rsqrt(var + eps), centered


def _normalize(x, dims, eps):
    """(x - mean) / sqrt(biased var + eps) over ``dims``, and the (keepdim) statistics."""
    mean, var, rstd, centered = _statistics(x, dims, eps)
    return centered * rstd, mean, var


def _affine(y, weight, bias, shape):
    if weight is not None and bias is not None:  # one op: y * weight + bias
        return E.addcmul(bias.reshape(shape), y, weight.reshape(shape))
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


def _per_channel(x, mean, rstd, weight, bias, shape):
    """``(x - mean) * rstd * weight + bias`` as ``x * scale + shift`` with ``scale = rstd *
    weight`` and ``shift = bias - mean * scale`` computed on the small statistics first:
    two passes over x instead of four (PyTorch's batch_norm_cpu_transform_input). mean,
    rstd broadcast against x; weight, bias: (C,) or None, viewed as ``shape``."""
    scale = rstd if weight is None else rstd * weight.reshape(shape)
    shift = -mean * scale
    if bias is not None:
        shift = shift + bias.reshape(shape)
    return E.addcmul(shift, x, scale)


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
    if training and input.numel() == 0:
        # an empty batch (PyTorch): an empty result that still depends on weight and bias
        # (their gradients are zeros), the running statistics untouched
        zero = E.zeros(stat_shape, dtype=input.dtype, device=input.device)
        return _per_channel(input, zero, zero + 1, weight, bias, stat_shape)
    if training:
        n = input.numel() // c if c else 0
        if n <= 1:
            raise ShapeError(f"batch_norm(): Expected more than 1 value per channel when "
                             f"training, got input size {list(input.shape)}; use a larger "
                             f"batch, or evaluation mode (training=False)")
        dims = (0,) + tuple(range(2, input.ndim))
        mean, var, rstd, _ = _statistics(input, dims, eps)
        y = _per_channel(input, mean, rstd, weight, bias, stat_shape)
        # NOTE: a trace does not record grad mode, so the no_grad alone would be lost and a
        # replay with grad on would give the buffers history (they would then require
        # grad); the detach keeps "no gradient into the buffers" in the data flow itself.
        mean, var = mean.detach(), var.detach()
        with no_grad():
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
        y = _per_channel(input, mean, E.rsqrt(var + eps), weight, bias, stat_shape)
    return y


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


def _one_dtype(input, weight, bias) -> tuple:
    """The three converted to their common dtype (the composites' result dtype), so the
    kernels see one dtype; a no-op in the usual case of one dtype already."""
    dt = input.dtype
    if (weight is None or weight.dtype is dt) and (bias is None or bias.dtype is dt):
        return input, weight, bias
    for t in (weight, bias):
        if t is not None:
            dt = E.promote_types(dt, t.dtype)
    return tuple(None if t is None else t.to(dt) for t in (input, weight, bias))


def _plain_call(input, weight, bias, shape: tuple) -> bool:
    """Whether a floating input and weight, bias of ``shape`` (or None) pass the checks,
    judged on the arrays' shapes: about 1 us, where the checks cost ~10 us a call (they
    still run, for their messages, when this is False, and while tracing)."""
    return (input._type.scalar_type.is_floating_point
            and (weight is None or weight._data.shape == shape)
            and (bias is None or bias._data.shape == shape) and not _fused.tracing())


@composite("layer_norm")
def _layer_norm(input, normalized_shape, weight, bias, eps):
    shape, xs = normalized_shape, input._data.shape
    k = len(shape)
    if not (shape.__class__ is tuple and 0 < k <= len(xs) and xs[len(xs) - k:] == shape
            and 0 not in shape and _plain_call(input, weight, bias, shape)):
        shape = _trailing_shape("layer_norm", input, normalized_shape)
        _check_floating("layer_norm", input)
        _check_shape("layer_norm", "weight", weight, shape)
        _check_shape("layer_norm", "bias", bias, shape)
    return _fused.run("layer_norm", _layer_norm_reference, layer_norm_forward,
                      layer_norm_backward, _one_dtype(input, weight, bias), (shape, eps))


def _layer_norm_reference(input, weight, bias, shape, eps):
    """layer_norm op by op (the fused kernels' reference for create_graph and tracing)."""
    y = _normalize(input, tuple(range(-len(shape), 0)), eps)[0]
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
    xs = input._data.shape
    if not (len(xs) >= 2 and num_groups >= 1 and xs[1] % num_groups == 0
            and _plain_call(input, weight, bias, xs[1:2])):
        _check_group_norm(input, num_groups, weight, bias)
    return _fused.run("group_norm", _group_norm_reference, group_norm_forward,
                      group_norm_backward, _one_dtype(input, weight, bias), (num_groups, eps))


def _check_group_norm(input, num_groups, weight, bias) -> None:
    if input.ndim < 2:
        raise ShapeError(f"group_norm(): expected an input of shape (N, C, *) with at least "
                         f"2 dims, got shape {list(input.shape)}")
    c = input.shape[1]
    if num_groups < 1 or c % num_groups:
        raise ShapeError(f"group_norm(): Expected number of channels in input to be divisible "
                         f"by num_groups, but got input of shape {list(input.shape)} and "
                         f"num_groups={num_groups}")
    _check_floating("group_norm", input)
    _check_shape("group_norm", "weight", weight, (c,))
    _check_shape("group_norm", "bias", bias, (c,))


def _group_norm_reference(input, weight, bias, num_groups, eps):
    """group_norm op by op (the fused kernels' reference for create_graph and tracing)."""
    n, c = input.shape[:2]
    # NOTE: not _per_channel's fold: its (N, C) scale and shift cost more small ops than
    # they save passes at 1e3 elements, and nothing measurable at 1e6
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


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Root-mean-square normalization over the last len(normalized_shape) dims of
    ``(*, *normalized_shape)``: ``x / sqrt(mean(x**2) + eps) * weight`` (no centering, no
    bias); same shape and dtype as input.

    normalized_shape: a sequence of ints (an int is accepted too, unlike PyTorch's
    functional). weight: of shape normalized_shape, or None. eps: None means
    ``finfo(dtype).eps`` of the computing dtype. float16/bfloat16 input is computed in
    float32 (so eps is float32's) and rounded once at the end, as PyTorch. Floating dtypes.
    Raises ShapeError when the trailing dims or weight do not match normalized_shape,
    NotImplementedError for non-floating input. Reference: torch.nn.functional.rms_norm
    (Zhang & Sennrich, 2019).
    """
    shape = _trailing_shape("rms_norm", input, normalized_shape)
    _check_floating("rms_norm", input)
    _check_shape("rms_norm", "weight", weight, shape)
    x = input.float() if input.dtype in _HALF else input
    if eps is None:
        eps = E.finfo(x.dtype).eps
    dims = tuple(range(-len(shape), 0))
    y = x * E.rsqrt((x * x).mean(dims, keepdim=True) + eps)
    if weight is not None:
        y = y * weight
    return y.to(input.dtype)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Instance normalization of (N, C, *): each (sample, channel) plane normalized over
    its spatial positions, ``(x - mean) / sqrt(var + eps) * weight + bias`` (biased
    variance); same shape and dtype as input.

    use_input_stats: normalize with each instance's statistics and, where
    running_mean / running_var (C,) are given, update them in place (no grad) to
    ``(1 - momentum) * running + momentum * batch``, the batch value being the mean over N
    of the instance means / unbiased variances (PyTorch's rule). Otherwise normalize with
    the running statistics. weight, bias: (C,) or None. float16/bfloat16 input is computed
    in float32 and returned in its own dtype. Raises ShapeError (a ValueError) for rank < 2
    or an instance with one spatial element when use_input_stats ("Expected more than 1
    spatial element when training"), and for (C,) arguments of another shape;
    RuntimeError when use_input_stats is False without running statistics;
    NotImplementedError for non-floating input. Reference:
    torch.nn.functional.instance_norm (Ulyanov et al., 2016).
    """
    if input.ndim < 2:
        raise ShapeError(f"instance_norm(): expected an input of shape (N, C, *) with at "
                         f"least 2 dims, got shape {list(input.shape)}")
    _check_floating("instance_norm", input)
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        _check_shape("instance_norm", name, t, (c,))
    spatial = math.prod(input.shape[2:])
    if use_input_stats and spatial == 1:
        raise ShapeError(f"instance_norm(): Expected more than 1 spatial element when "
                         f"training, got input size {list(input.shape)}; normalize over "
                         f"more positions, or pass use_input_stats=False with running "
                         f"statistics")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("instance_norm(): Expected running_mean and running_var to be "
                           "defined when use_input_stats is false; pass them, or "
                           "use_input_stats=True")
    x = input.float() if input.dtype in _HALF else input
    stat_shape = (1, c) + (1,) * (input.ndim - 2)
    if use_input_stats:
        y, mean, var = _normalize(x, tuple(range(2, input.ndim)), eps)
        mean, var = mean.detach(), var.detach()  # a trace drops no_grad (see batch_norm)
        with no_grad():
            if running_mean is not None and input.shape[0]:
                running_mean.mul_(1 - momentum).add_(mean.reshape(-1, c).mean(0) * momentum)
            if running_var is not None and input.shape[0] and spatial:
                unbiased = var.reshape(-1, c).mean(0) * (spatial / (spatial - 1))
                running_var.mul_(1 - momentum).add_(unbiased * momentum)
    else:
        # NOTE: statistics kept in float32 for a float16 input must not promote the output
        mean = running_mean.reshape(stat_shape).to(x.dtype)
        var = running_var.reshape(stat_shape).to(x.dtype)
        y = (x - mean) * E.rsqrt(var + eps)
    return _affine(y, weight, bias, stat_shape).to(input.dtype)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Local response normalization across channels of (N, C, *) (at least 3 dims):
    ``x / (k + alpha / size * sum of x**2 over the channel window) ** beta``, the window
    running from c - size // 2 to c + (size - 1) // 2 with zeros beyond the edges; same
    shape and dtype as input (float16 computed in float16, as PyTorch).

    Raises ValueError for fewer than 3 dims or size < 1, NotImplementedError for
    non-floating input (PyTorch returns float32 for integer input). Reference:
    torch.nn.functional.local_response_norm (Krizhevsky et al., 2012).
    """
    if input.ndim < 3:
        raise ValueError(f"local_response_norm(): Expected 3D or higher dimensionality input "
                         f"(N, C, *), got {input.ndim} dimensions (shape "
                         f"{list(input.shape)}); add a batch or spatial dim with unsqueeze")
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise ValueError(f"local_response_norm(): size must be a positive int, got {size!r}")
    _check_floating("local_response_norm", input)
    if input.numel() == 0:
        return input
    c = input.shape[1]
    # the channel window as a stride-1 average pool over C (PyTorch pools over C too)
    sq = (input * input).movedim(1, -1)
    windows = E.pad(sq.reshape(-1, 1, c), (size // 2, (size - 1) // 2))
    div = E.avg_pool1d(windows, (size,), (1,)).reshape(sq.shape).movedim(-1, 1)
    return input / (div * alpha + k) ** beta

