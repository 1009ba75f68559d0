"""Pooling layers: ``MaxPool1d/2d``, ``AvgPool1d/2d``, ``AdaptiveAvgPool1d/2d``,
``AdaptiveMaxPool1d/2d``, ``LPPool1d/2d``.

Thin modules over ``ember.nn.functional``'s pooling ops; they store their arguments as
given (``stride`` defaults to ``kernel_size``) and print them as PyTorch does.
Reference: torch.nn.modules.pooling.
"""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "LPPool1d", "LPPool2d"]


def _single(v) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


class _MaxPoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return getattr(F, self._fn)(input, self.kernel_size, self.stride, self.padding,
                                    self.dilation, ceil_mode=self.ceil_mode,
                                    return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                f", dilation={self.dilation}, ceil_mode={self.ceil_mode}")


_MAX_DOC = """Max over sliding windows of ``{shape}`` input (or without ``N``).

    Args:
        kernel_size, stride (default kernel_size), padding (implicit -inf, at most half the
            kernel), dilation: an int or {n} ints.
        return_indices: also return the flat argmax positions per plane (int64), as
            ``MaxUnpool`` expects.
        ceil_mode: round the output size up instead of down.
    Shapes: out = floor((in + 2*pad - dilation*(k-1) - 1) / stride) + 1 (ceil in ceil_mode).
    Raises what ``F.{fn}`` raises for bad sizes. Reference: torch.nn.{name}.
    """


class MaxPool1d(_MaxPoolNd):
    __doc__ = _MAX_DOC.format(shape="(N, C, L)", n=1, fn="max_pool1d", name="MaxPool1d")
    _fn = "max_pool1d"


class MaxPool2d(_MaxPoolNd):
    __doc__ = _MAX_DOC.format(shape="(N, C, H, W)", n=2, fn="max_pool2d", name="MaxPool2d")
    _fn = "max_pool2d"


class AvgPool1d(Module):
    """Mean over sliding windows of ``(N, C, L)`` input (or ``(C, L)``).

    Args:
        kernel_size, stride (default kernel_size), padding: an int or a 1-tuple (stored as
            1-tuples, as PyTorch does).
        ceil_mode: round the output size up.
        count_include_pad: count the zero padding in the divisor (default True).
    Shapes: L_out = floor((L + 2*pad - k) / stride) + 1.
    Reference: torch.nn.AvgPool1d.
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    """Mean over sliding windows of ``(N, C, H, W)`` input (or ``(C, H, W)``).

    Args:
        kernel_size, stride (default kernel_size), padding: an int or 2 ints.
        ceil_mode: round the output size up.
        count_include_pad: count the zero padding in the divisor (default True).
        divisor_override: divide by this instead of the window size.
    Shapes: out = floor((in + 2*pad - k) / stride) + 1.
    Reference: torch.nn.AvgPool2d.
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool1d(Module):
    """Mean pooling of ``(N, C, L)`` (or ``(C, L)``) input to length ``output_size`` (an
    int or a 1-tuple), windows chosen so they cover the input.

    Computed as ``adaptive_avg_pool2d`` over a height-1 view (same windows, one op less to
    maintain). Reference: torch.nn.AdaptiveAvgPool1d.
    """

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        size = _single(self.output_size)[0]
        return F.adaptive_avg_pool2d(input.unsqueeze(-2), (1, size)).squeeze(-2)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(Module):
    """Mean pooling of ``(N, C, H, W)`` input to ``(N, C, *output_size)``.

    Args:
        output_size: an int (square) or ``(H_out, W_out)``, where None keeps that input
            size. ``AdaptiveAvgPool2d(1)`` is global average pooling.
    Reference: torch.nn.AdaptiveAvgPool2d.
    """

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class _AdaptiveMaxPoolNd(Module):
    _fn = None

    def __init__(self, output_size, return_indices: bool = False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return getattr(F, self._fn)(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling of ``(N, C, L)`` (or ``(C, L)``) input to length ``output_size`` (an
    int), windows floor(i L / out) .. ceil((i + 1) L / out).

    Args:
        output_size: the output length.
        return_indices: also return the int64 positions of the maxima.
    Floating dtypes. Raises what ``F.adaptive_max_pool1d`` raises.
    Reference: torch.nn.AdaptiveMaxPool1d.
    """

    _fn = "adaptive_max_pool1d"


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling of ``(N, C, H, W)`` (or ``(C, H, W)``) input to ``(N, C,
    *output_size)``.

    Args:
        output_size: an int (square) or ``(H_out, W_out)``, None keeping that input size.
        return_indices: also return the flat int64 positions h * W + w of the maxima.
    Floating dtypes. Raises what ``F.adaptive_max_pool2d`` raises.
    Reference: torch.nn.AdaptiveMaxPool2d.
    """

    _fn = "adaptive_max_pool2d"


class _LPPoolNd(Module):
    _fn = None

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return getattr(F, self._fn)(input, float(self.norm_type), self.kernel_size, self.stride,
                                    self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride="
                f"{self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling of ``(N, C, L)`` (or ``(C, L)``) input: each output is (sum
    of x^p over its window)^(1/p), p = ``norm_type``.

    Args:
        norm_type: p (inf gives the max of |x|).
        kernel_size, stride (default kernel_size): ints.
        ceil_mode: round the output length up.
    Shapes: L_out = floor((L - k) / stride) + 1. Raises what ``F.lp_pool1d`` raises.
    Reference: torch.nn.LPPool1d.
    """

    _fn = "lp_pool1d"


class LPPool2d(_LPPoolNd):
    """Power-average pooling of ``(N, C, H, W)`` (or ``(C, H, W)``) input: each output is
    (sum of x^p over its window)^(1/p), p = ``norm_type``.

    Args:
        norm_type: p (inf gives the max of |x|).
        kernel_size, stride (default kernel_size): an int or a pair each.
        ceil_mode: round the output size up.
    Shapes: out = floor((in - k) / stride) + 1. Raises what ``F.lp_pool2d`` raises.
    Reference: torch.nn.LPPool2d.
    """

    _fn = "lp_pool2d"
