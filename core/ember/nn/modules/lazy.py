"""Lazy modules: layers whose input-dependent sizes are inferred on the first call.

``LazyModuleMixin`` registers a forward pre-hook. The first call runs
``initialize_parameters(*args, **kwargs)``, which reads the sizes off the input (the last
dim for ``LazyLinear``, the channel dim for convolutions and norms), ``materialize``-s the
``UninitializedParameter`` / ``UninitializedBuffer`` attributes and calls
``reset_parameters``; then the hook removes itself and the module becomes its
``cls_to_become`` (``LazyLinear`` -> ``Linear``), so later calls cost what the plain layer
costs. Until then ``.shape`` or any op on a lazy parameter raises, saying to run a forward
pass first.

Before the first call ``state_dict`` holds the uninitialized parameters themselves, and
``load_state_dict`` materializes them with the loaded shapes (PyTorch's
``_lazy_load_hook``); the module still becomes its plain class on its first call.

Optimizers: build them after the dry-run forward, as PyTorch's documentation says.
Materialization keeps the parameter objects, so an optimizer built before the dry run
still holds the live parameters (as in PyTorch), but any optimizer or tool that reads a
parameter's values or shape when it is built raises the uninitialized-parameter error.
Convert dtype or device (``module.to(...)``, ``.double()``) before the dry run.

Departures from PyTorch: lazy instance norms infer ``num_features`` from the channel dim of
unbatched input too (dim 0; PyTorch reads dim 1 and then fails its own check), and lazy
norms infer it on the first call even when they hold no parameters or statistics
(``affine=False, track_running_stats=False``: PyTorch leaves 0 there and warns on every
call).
Reference: torch.nn.modules.lazy and the Lazy* layers of torch.nn.
"""
from __future__ import annotations

import itertools

from ... import factories as _f
from ... import types as _t
from ...autograd import no_grad
from ...tensor import Tensor
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from ._sizes import as_int
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .linear import Linear
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """Mixin (listed before the layer class) for modules whose parameters are
    ``UninitializedParameter``-s until the first forward; see the module docstring.

    Subclasses define ``initialize_parameters(*args, **kwargs)`` (infer sizes from the
    forward's arguments, ``materialize`` the lazy tensors, ``reset_parameters()``) and set
    ``cls_to_become``. Raises RuntimeError when a forward leaves a parameter or buffer
    uninitialized. Reference: torch.nn.modules.lazy.LazyModuleMixin.
    """

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module (not its children) is lazy."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(),
                                                       self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Infer the sizes from the forward's arguments and materialize the parameters."""
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{type(self).__name__}")

    def _infer_parameters(self, module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        # as Module's, but a lazy tensor is stored as itself (it has no data to detach)
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars or is_lazy(p) else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars or is_lazy(b) else b.detach()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        both_lazy = []
        for name, t in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if t is None or not is_lazy(t) or key not in state_dict:
                continue
            value = state_dict[key]
            if is_lazy(value):
                both_lazy.append(key)  # nothing to copy; not missing either
            elif isinstance(value, Tensor):
                with no_grad():
                    t.materialize(value.shape)
        if both_lazy:
            state_dict = {k: v for k, v in state_dict.items() if k not in both_lazy}
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)
        missing_keys[:] = [k for k in missing_keys if k not in both_lazy]


def _lazy_param(device, dtype) -> UninitializedParameter:
    return UninitializedParameter(device=device, dtype=dtype)


def _check_size(cls: str, name: str, v) -> int:
    n = as_int(v)
    if n is None or n < 0:
        raise ValueError(f"{cls}: expected {name} to be a non-negative int, got {v!r}")
    return n


# --- linear -------------------------------------------------------------------------------

class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` whose ``in_features`` is inferred from the first input's last dim.

    Args: out_features, bias (default True), device, dtype (as Linear's).
    Before the first call ``weight`` / ``bias`` are ``UninitializedParameter``-s and the
    repr shows ``in_features=0``; the call materializes ``weight (out_features,
    in_features)`` and ``bias (out_features,)`` with Linear's initialisation and the module
    becomes a ``Linear``. Raises ValueError for a bad out_features.
    Reference: torch.nn.LazyLinear.
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None):
        out_features = _check_size("LazyLinear", "out_features", out_features)
        super().__init__(0, 0, False)
        self.weight = _lazy_param(device, dtype)
        self.out_features = out_features
        if bias:
            self.bias = _lazy_param(device, dtype)

    def reset_parameters(self) -> None:
        """Linear's initialisation, once the parameters are materialized."""
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        """Take ``in_features`` from ``input.shape[-1]`` and materialize the parameters."""
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # materialized by load_state_dict
            self.in_features = self.weight.shape[-1]


# --- convolutions -------------------------------------------------------------------------

class _LazyConvXdMixin(LazyModuleMixin):
    """In-channel inference shared by the lazy (transposed) convolutions."""

    def _lazy_weights(self, out_channels, bias, device, dtype) -> None:
        cls = type(self).__name__
        out_channels = _check_size(cls, "out_channels", out_channels)
        if out_channels % self.groups:
            raise ValueError(f"{cls}: out_channels ({out_channels}) must be divisible by "
                             f"groups ({self.groups})")
        self.weight = _lazy_param(device, dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = _lazy_param(device, dtype)

    def reset_parameters(self) -> None:
        """The convolution's initialisation, once the parameters are materialized."""
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input) -> int:
        n = self._n + 1  # unbatched rank
        if input.ndim not in (n, n + 1):
            raise RuntimeError(f"Expected {n}D (unbatched) or {n + 1}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: "
                               f"{list(input.shape)}")
        return input.shape[1] if input.ndim == n + 1 else input.shape[0]

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        """Take ``in_channels`` from the input's channel dim and materialize the weight
        (``(out, in / groups, *k)``, transposed: ``(in, out / groups, *k)``) and bias.
        Raises RuntimeError for an input of another rank, ValueError when in_channels is
        not divisible by groups."""
        if not self.has_uninitialized_params():
            if self.in_channels == 0:  # materialized by load_state_dict
                w = self.weight.shape
                self.in_channels = w[0] if self.transposed else w[1] * self.groups
            return
        in_channels = self._get_in_channels(input)
        if in_channels % self.groups:
            raise ValueError(f"{type(self).__name__}: in_channels ({in_channels}) must be "
                             f"divisible by groups ({self.groups})")
        self.in_channels = in_channels
        g = self.groups
        shape = (in_channels, self.out_channels // g) if self.transposed else \
            (self.out_channels, in_channels // g)
        with no_grad():
            self.weight.materialize(shape + tuple(self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


class _LazyConv(_LazyConvXdMixin):
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None,
                 dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device, dtype)
        self._lazy_weights(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvXdMixin):
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros",
                 device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, device, dtype)
        self._lazy_weights(out_channels, bias, device, dtype)


_LAZY_CONV_DOC = """``{base}`` whose ``in_channels`` is inferred from the first input's
    channel dim (``C_in`` of ``{shape}``, or dim 0 of unbatched input).

    Args: {base}'s without ``in_channels``. The first call materializes ``weight`` and
    ``bias`` with {base}'s initialisation and the module becomes a ``{base}``. Raises
    ValueError for out_channels or in_channels not divisible by groups, RuntimeError for an
    input of another rank. Reference: torch.nn.Lazy{base}.
    """


class LazyConv1d(_LazyConv, Conv1d):
    __doc__ = _LAZY_CONV_DOC.format(base="Conv1d", shape="(N, C_in, L)")
    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    __doc__ = _LAZY_CONV_DOC.format(base="Conv2d", shape="(N, C_in, H, W)")
    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    __doc__ = _LAZY_CONV_DOC.format(base="Conv3d", shape="(N, C_in, D, H, W)")
    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    __doc__ = _LAZY_CONV_DOC.format(base="ConvTranspose1d", shape="(N, C_in, L)")
    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    __doc__ = _LAZY_CONV_DOC.format(base="ConvTranspose2d", shape="(N, C_in, H, W)")
    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    __doc__ = _LAZY_CONV_DOC.format(base="ConvTranspose3d", shape="(N, C_in, D, H, W)")
    cls_to_become = ConvTranspose3d


# --- normalization ------------------------------------------------------------------------

class _LazyNormBase(LazyModuleMixin):
    """``num_features`` inference shared by the lazy batch and instance norms."""

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *,
                 bias: bool = True):
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = _lazy_param(device, dtype)
            if bias:
                self.bias = _lazy_param(device, dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = _f.zeros((), device=device, dtype=_t.int64)

    def reset_parameters(self) -> None:
        """The norm's reset, once the parameters and statistics are materialized."""
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def _feature_dim(self, input) -> int:
        return 1

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        """Take ``num_features`` from the input's channel dim and materialize the affine
        parameters and running statistics (C,). Raises ValueError for an input of a rank
        the layer does not take."""
        self._check_input_dim(input)
        if self.num_features == 0:
            self.num_features = input.shape[self._feature_dim(input)]
        if self.has_uninitialized_params():
            with no_grad():
                for t in (self.weight, self.bias, self.running_mean, self.running_var):
                    if is_lazy(t):
                        t.materialize((self.num_features,))
                self.reset_parameters()


class _LazyInstanceNorm(_LazyNormBase):
    def _feature_dim(self, input) -> int:
        return input.ndim - self._dims[0]  # 0 for unbatched input


_LAZY_NORM_DOC = """``{base}`` whose ``num_features`` is inferred from the first input's
    channel dim (C of ``{shape}``).

    Args: {base}'s without ``num_features``; note that, as in PyTorch, the defaults are
    ``affine=True, track_running_stats=True`` for every lazy norm. The first call
    materializes ``weight``, ``bias``, ``running_mean`` and ``running_var`` (C,) and the
    module becomes a ``{base}``. Raises ValueError for an input of another rank.
    Reference: torch.nn.Lazy{base}.
    """


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    __doc__ = _LAZY_NORM_DOC.format(base="BatchNorm1d", shape="(N, C) or (N, C, L)")
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    __doc__ = _LAZY_NORM_DOC.format(base="BatchNorm2d", shape="(N, C, H, W)")
    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    __doc__ = _LAZY_NORM_DOC.format(base="BatchNorm3d", shape="(N, C, D, H, W)")
    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyInstanceNorm, InstanceNorm1d):
    __doc__ = _LAZY_NORM_DOC.format(base="InstanceNorm1d", shape="(N, C, L) or (C, L)")
    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyInstanceNorm, InstanceNorm2d):
    __doc__ = _LAZY_NORM_DOC.format(base="InstanceNorm2d", shape="(N, C, H, W) or (C, H, W)")
    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyInstanceNorm, InstanceNorm3d):
    __doc__ = _LAZY_NORM_DOC.format(base="InstanceNorm3d",
                                    shape="(N, C, D, H, W) or (C, D, H, W)")
    cls_to_become = InstanceNorm3d
