"""``AvgPool1d/2d/3d``: mean over sliding windows. Reference: torch.nn.AvgPool1d/2d/3d."""
from __future__ import annotations

from ... import functional as F
from ..module import Module

__all__ = ["AvgPool1d", "AvgPool2d", "AvgPool3d"]


def _single(v) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


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


class _AvgPoolNd(Module):
    _fn = None

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
        return getattr(F, self._fn)(input, self.kernel_size, self.stride, self.padding,
                                    self.ceil_mode, self.count_include_pad,
                                    self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


_AVG_DOC = """Mean over sliding windows of ``{shape}`` input (or without ``N``).

    Args:
        kernel_size, stride (default kernel_size), padding: an int or {n} ints.
        ceil_mode: round the output size up.
        count_include_pad: count the zero padding in the divisor (default True).
        divisor_override: divide by this instead of the window size.
    Shapes: out = floor((in + 2*pad - k) / stride) + 1. Floating dtypes; raises what
    ``F.{fn}`` raises. Reference: torch.nn.{name}.
    """


class AvgPool2d(_AvgPoolNd):
    __doc__ = _AVG_DOC.format(shape="(N, C, H, W)", n=2, fn="avg_pool2d", name="AvgPool2d")
    _fn = "avg_pool2d"


class AvgPool3d(_AvgPoolNd):
    __doc__ = _AVG_DOC.format(shape="(N, C, D, H, W)", n=3, fn="avg_pool3d",
                              name="AvgPool3d")
    _fn = "avg_pool3d"
