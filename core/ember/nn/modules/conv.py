"""Convolution layers: ``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d`` (``torch.nn`` conv).

Weights are ``(out_channels, in_channels / groups, *kernel_size)`` for convolutions and
``(in_channels, out_channels / groups, *kernel_size)`` for transposed ones, initialised as
PyTorch does: ``kaiming_uniform_(a=sqrt(5))`` and a bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)).

Padding: an int or tuple, or ``'valid'`` (none) / ``'same'`` (output size = input size,
stride 1 only). ``'same'`` with an odd total padding puts the extra element on the right,
like PyTorch; the layer then pads explicitly with ``F.pad`` and convolves without padding,
so the functional ops only ever see numeric padding. ``padding_mode`` other than
``'zeros'`` (``'reflect'``, ``'replicate'``, ``'circular'``) also pads with ``F.pad``.
Reference: torch.nn.modules.conv.
"""
from __future__ import annotations

import math

from ... import factories as _f
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ._sizes import as_int
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(v, n: int, what: str, cls: str) -> tuple:
    t = tuple(as_int(x) for x in v) if isinstance(v, (tuple, list)) else (as_int(v),) * n
    if len(t) != n or None in t:
        raise ValueError(f"{cls}: expected {what} to be an int or {n} ints, got {v!r}")
    return t


class _ConvNd(Module):
    """Shared constructor, initialisation and repr of the conv layers."""

    _n = 0  # spatial dims, set by each subclass

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device, dtype):
        super().__init__()
        n, cls = self._n, type(self).__name__
        groups, given = as_int(groups), groups
        if groups is None or groups <= 0:
            raise ValueError(f"{cls}: groups must be a positive integer, got {given!r}")
        in_channels, out_channels = _ntuple((in_channels, out_channels), 2, "in_channels and "
                                            "out_channels", cls)
        if in_channels % groups != 0:
            raise ValueError(f"{cls}: in_channels ({in_channels}) must be divisible by groups "
                             f"({groups})")
        if out_channels % groups != 0:
            raise ValueError(f"{cls}: out_channels ({out_channels}) must be divisible by "
                             f"groups ({groups})")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{cls}: padding_mode must be one of {_PADDING_MODES}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(kernel_size, n, "kernel_size", cls)
        self.stride = _ntuple(stride, n, "stride", cls)
        self.dilation = _ntuple(dilation, n, "dilation", cls)
        self.output_padding = _ntuple(output_padding, n, "output_padding", cls)
        self.transposed, self.groups, self.padding_mode = transposed, groups, padding_mode
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"{cls}: invalid padding string {padding!r}, should be one "
                                 f"of 'same', 'valid'")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(f"{cls}: padding='same' is not supported for strided "
                                 f"convolutions (stride={self.stride}); pass numbers instead")
            self.padding = padding
        else:
            self.padding = _ntuple(padding, n, "padding", cls)
        self._setup_padding()
        shape = (in_channels, out_channels // groups) if transposed else \
            (out_channels, in_channels // groups)
        self.weight = Parameter(_f.empty(*shape, *self.kernel_size, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_f.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _setup_padding(self) -> None:
        # (left, right) per spatial dim, last dim first: the layout F.pad takes.
        pads = []
        for i in reversed(range(self._n)):
            if self.padding == "valid":
                lo = hi = 0
            elif self.padding == "same":
                total = self.dilation[i] * (self.kernel_size[i] - 1)
                lo, hi = total // 2, total - total // 2
            else:
                lo = hi = self.padding[i]
            pads += [lo, hi]
        symmetric = all(pads[j] == pads[j + 1] for j in range(0, len(pads), 2))
        if self.padding_mode == "zeros" and symmetric:
            # NOTE: the common case: the convolution pads by itself.
            self._conv_padding, self._explicit_pad = tuple(pads[-2::-2]), None
        else:
            self._conv_padding, self._explicit_pad = (0,) * self._n, pads

    def reset_parameters(self) -> None:
        """Re-draw weight and bias with PyTorch's defaults."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        n = self._n
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    _fn = None  # the F.convNd name

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        if self._explicit_pad is not None:
            mode = "constant" if self.padding_mode == "zeros" else self.padding_mode
            input = F.pad(input, self._explicit_pad, mode=mode)
        return getattr(F, self._fn)(input, weight, bias, self.stride, self._conv_padding,
                                    self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


_CONV_DOC = """Applies a {n}-D convolution (cross-correlation) over ``{shape}`` input.

    Args:
        in_channels, out_channels: channels of input and output (both divisible by
            ``groups``).
        kernel_size, stride, dilation: an int or {n} ints.
        padding: an int, {n} ints, ``'valid'`` or ``'same'`` (stride 1 only).
        groups: split channels into this many independent convolutions.
        bias: learn an additive bias (default True).
        padding_mode: ``'zeros'`` (default), ``'reflect'``, ``'replicate'``, ``'circular'``.
        device, dtype: where and how the parameters are created.
    Shapes: ``{shape}`` -> ``{out}``, out = floor((in + 2*pad - dilation*(k-1) - 1) /
    stride) + 1; an unbatched input without ``N`` works too. ``weight`` is
    ``(out_channels, in_channels/groups, {k})``.
    Raises ValueError for bad channel/group counts, padding strings or modes.
    Reference: torch.nn.{name}.
    """


class Conv1d(_Conv):
    __doc__ = _CONV_DOC.format(n=1, shape="(N, C_in, L)", out="(N, C_out, L_out)", k="kL",
                               name="Conv1d")
    _n, _fn = 1, "conv1d"


class Conv2d(_Conv):
    __doc__ = _CONV_DOC.format(n=2, shape="(N, C_in, H, W)", out="(N, C_out, H_out, W_out)",
                               k="kH, kW", name="Conv2d")
    _n, _fn = 2, "conv2d"


class Conv3d(_Conv):
    __doc__ = _CONV_DOC.format(n=3, shape="(N, C_in, D, H, W)",
                               out="(N, C_out, D_out, H_out, W_out)", k="kD, kH, kW",
                               name="Conv3d")
    _n, _fn = 3, "conv3d"


class _ConvTranspose(_ConvNd):
    _fn = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None):
        cls = type(self).__name__
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {cls}, got '
                             f"{padding_mode!r}")
        if isinstance(padding, str):
            raise ValueError(f"{cls}: padding must be an int or a tuple of ints, got "
                             f"{padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size) -> tuple:
        """``output_padding``, or the one that yields ``output_size`` (the spatial sizes,
        optionally preceded by N and C). Raises ValueError for an unreachable size."""
        n = self._n
        if output_size is None:
            return self.output_padding
        lead = 2 if input.ndim == n + 2 else 1
        output_size = list(output_size)
        if len(output_size) == lead + n:
            output_size = output_size[lead:]
        if len(output_size) != n:
            raise ValueError(f"{type(self).__name__}: for {input.ndim}D input, output_size "
                             f"must have {n} or {lead + n} elements (got {len(output_size)})")
        lo = [(input.shape[d + lead] - 1) * self.stride[d] - 2 * self.padding[d]
              + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        hi = [lo[d] + self.stride[d] - 1 for d in range(n)]
        for d in range(n):
            if not lo[d] <= output_size[d] <= hi[d]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {lo} to {hi} (for an input of "
                                 f"{list(input.shape[lead:])})")
        return tuple(output_size[d] - lo[d] for d in range(n))

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return getattr(F, self._fn)(input, self.weight, self.bias, self.stride, self.padding,
                                    output_padding, self.groups, self.dilation)


_CONVT_DOC = """Applies a {n}-D transposed convolution (the gradient of Conv{n}d w.r.t. its
    input) over ``{shape}`` input.

    Args: as Conv{n}d, plus ``output_padding`` (an int or {n} ints, each smaller than
        stride or dilation) added to one side of the output; padding is numeric only
        and ``padding_mode`` must be ``'zeros'``. ``forward(input, output_size=None)``
        can derive output_padding from a requested output size.
    Shapes: ``{shape}`` -> ``{out}``, out = (in - 1)*stride - 2*pad + dilation*(k-1) +
    output_padding + 1. ``weight`` is ``(in_channels, out_channels/groups, {k})``.
    Raises ValueError for bad channel/group counts, padding modes, or an output_size out of
    reach.
    Reference: torch.nn.{name}.
    """


class ConvTranspose1d(_ConvTranspose):
    __doc__ = _CONVT_DOC.format(n=1, shape="(N, C_in, L)", out="(N, C_out, L_out)", k="kL",
                                name="ConvTranspose1d")
    _n, _fn = 1, "conv_transpose1d"


class ConvTranspose2d(_ConvTranspose):
    __doc__ = _CONVT_DOC.format(n=2, shape="(N, C_in, H, W)", out="(N, C_out, H_out, W_out)",
                                k="kH, kW", name="ConvTranspose2d")
    _n, _fn = 2, "conv_transpose2d"


class ConvTranspose3d(_ConvTranspose):
    __doc__ = _CONVT_DOC.format(n=3, shape="(N, C_in, D, H, W)",
                                out="(N, C_out, D_out, H_out, W_out)", k="kD, kH, kW",
                                name="ConvTranspose3d")
    _n, _fn = 3, "conv_transpose3d"
