"""Normalization layers: ``BatchNorm1d/2d/3d``, ``LayerNorm``, ``GroupNorm``, ``RMSNorm``,
``LocalResponseNorm`` and ``CrossMapLRN2d`` (instance norm: ``instancenorm.py``).

Batch norm keeps ``running_mean`` (zeros), ``running_var`` (ones) and
``num_batches_tracked`` (int64 0) buffers when ``track_running_stats``. In training mode
it normalises with batch statistics and updates the running ones in place (inside
``F.batch_norm``) with ``momentum``: ``running = (1 - m) * running + m * batch`` (the
variance unbiased), and ``momentum=None`` means a cumulative average
(``m = 1 / num_batches_tracked``). In eval mode it uses the running statistics, or batch
statistics when it tracks none. Affine weights start at ones, biases at zeros.
Reference: torch.nn.modules.batchnorm, torch.nn.modules.normalization.
"""
from __future__ import annotations

import numbers

from ... import factories as _f
from ... import types as _t
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "RMSNorm",
           "LocalResponseNorm", "CrossMapLRN2d"]


def _affine_parameters(module: Module, shape: tuple, affine: bool, bias: bool, device,
                       dtype) -> None:
    """Register ``weight`` and ``bias`` of ``shape`` (values set by ``_reset_affine``), or
    None for what the layer does not learn."""
    weight_p = Parameter(_f.empty(*shape, device=device, dtype=dtype)) if affine else None
    bias_p = Parameter(_f.empty(*shape, device=device, dtype=dtype)) if affine and bias \
        else None
    module.register_parameter("weight", weight_p)
    module.register_parameter("bias", bias_p)


def _reset_affine(module: Module) -> None:
    """Weight to ones, bias to zeros (where the layer has them)."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class _BatchNorm(Module):
    _dims: tuple = ()  # accepted input ranks

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None,
                 dtype=None, *, bias: bool = True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_parameters(self, (num_features,), affine, bias, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", _f.zeros(num_features, device=device,
                                                          dtype=dtype))
            self.register_buffer("running_var", _f.ones(num_features, device=device,
                                                        dtype=dtype))
            self.register_buffer("num_batches_tracked", _f.zeros((), device=device,
                                                                 dtype=_t.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean to 0, variance to 1, batch count to 0."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Reset the running statistics, weight to ones and bias to zeros."""
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input) -> None:
        if input.ndim not in self._dims:
            want = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"{type(self).__name__}: expected {want} input (got "
                             f"{input.ndim}D input of shape {list(input.shape)})")

    def _count_batch(self) -> float:
        """Count this batch in ``num_batches_tracked`` (training with running stats) and
        return the running-average factor: ``momentum``, or ``1 / num_batches_tracked``
        for the cumulative average (``momentum=None``), as torch's ``_BatchNorm``."""
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        return factor

    def forward(self, input):
        self._check_input_dim(input)
        factor = self._count_batch()
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_running = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_running else None,
                            self.running_var if use_running else None, self.weight, self.bias,
                            bn_training, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


_BN_DOC = """Batch normalization over ``{shape}`` input, per channel ``C``.

    Args:
        num_features: ``C``.
        eps: added to the variance (default 1e-5).
        momentum: running-statistics update factor (default 0.1); None for a cumulative
            average.
        affine: learn a per-channel scale ``weight`` (ones) and shift ``bias`` (zeros).
        track_running_stats: keep running statistics (and use them in eval mode).
        device, dtype: where and how parameters and buffers are created.
        bias (keyword): learn the shift (default True).
    Shapes: output = input's shape.
    Raises ValueError for an input of another rank. Reference: torch.nn.{name}.
    """


class BatchNorm1d(_BatchNorm):
    __doc__ = _BN_DOC.format(shape="(N, C) or (N, C, L)", name="BatchNorm1d")
    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    __doc__ = _BN_DOC.format(shape="(N, C, H, W)", name="BatchNorm2d")
    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    __doc__ = _BN_DOC.format(shape="(N, C, D, H, W)", name="BatchNorm3d")
    _dims = (5,)


class LayerNorm(Module):
    """Normalise over the last ``len(normalized_shape)`` dims of ``(*, *normalized_shape)``
    input, then scale and shift elementwise.

    Args:
        normalized_shape: an int or the trailing shape.
        eps: added to the variance (default 1e-5).
        elementwise_affine: learn ``weight`` (ones) and ``bias`` (zeros) of shape
            ``normalized_shape``.
        bias: learn the shift (default True).
        device, dtype: where and how parameters are created.
    Raises what ``F.layer_norm`` raises for a mismatched input. Reference: torch.nn.LayerNorm.
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(s) for s in normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, device,
                           dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight to ones, bias to zeros."""
        _reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalise ``(N, C, *)`` input over groups of ``C / num_groups`` channels (and all
    spatial positions), then scale and shift per channel.

    Args:
        num_groups: groups to split the channels into.
        num_channels: ``C``, divisible by ``num_groups``.
        eps: added to the variance (default 1e-5).
        affine: learn per-channel ``weight`` (ones) and ``bias`` (zeros).
        device, dtype: where and how parameters are created.
        bias (keyword): learn the shift (default True).
    Raises ValueError if ``num_channels`` is not divisible by ``num_groups``.
    Reference: torch.nn.GroupNorm (Wu & He, 2018).
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        if num_groups <= 0 or num_channels % num_groups != 0:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by "
                             f"num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, (num_channels,), affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight to ones, bias to zeros."""
        _reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """Root-mean-square normalization over the last ``len(normalized_shape)`` dims of
    ``(*, *normalized_shape)`` input, then an elementwise scale (no bias).

    Args:
        normalized_shape: an int or the trailing shape.
        eps: added to the mean square; None (default) means ``finfo(dtype).eps`` of the
            computing dtype (float32's for float16/bfloat16 input).
        elementwise_affine: learn ``weight`` (ones) of shape ``normalized_shape``.
        device, dtype: where and how the parameter is created.
    Shapes: output = input's shape and dtype. Raises what ``F.rms_norm`` raises for a
    mismatched input. Reference: torch.nn.RMSNorm (Zhang & Sennrich, 2019).
    """

    def __init__(self, normalized_shape, eps: float | None = None,
                 elementwise_affine: bool = True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(s) for s in normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        weight = Parameter(_f.empty(*self.normalized_shape, device=device, dtype=dtype)) \
            if elementwise_affine else None
        self.register_parameter("weight", weight)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight to ones."""
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """Local response normalization across the channels of ``(N, C, *)`` input (3 or
    more dims): ``x / (k + alpha / size * sum of x**2 over size neighbouring
    channels) ** beta``; see ``F.local_response_norm``.

    Args: size (channels in the window), alpha (1e-4), beta (0.75), k (1.0).
    Shapes: output = input's shape. Raises ValueError for fewer than 3 dims.
    Reference: torch.nn.LocalResponseNorm (Krizhevsky et al., 2012).
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """Local response normalization across channels of ``(N, C, H, W)`` input only (the
    Lua Torch ``SpatialCrossMapLRN`` layer).

    Args: size, alpha (1e-4), beta (0.75), k (1, an int default as PyTorch's).
    Raises ValueError for input that is not 4-D.

    Departure from PyTorch: torch.nn.CrossMapLRN2d's loop (ported from 1-based Lua) never
    drops channel 0 from the window of the channels from ``(size + 1) // 2`` on, and for an
    even size sums ``size - 1`` channels. ember computes ``F.local_response_norm``'s
    window, which equals Lua Torch's for odd sizes; PyTorch's results differ from it once
    C > (size + 1) // 2. Reference: torch.nn.CrossMapLRN2d.
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        if input.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D (N, C, H, W), got "
                             f"{input.ndim}D instead (shape {list(input.shape)})")
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    extra_repr = LocalResponseNorm.extra_repr
