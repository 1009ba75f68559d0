"""``MaxPool1d/2d/3d``: max over sliding windows. Reference: torch.nn.MaxPool1d/2d/3d."""
from __future__ import annotations

from ... import functional as F
from ..module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d"]


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
            ``MaxUnpool{n}d`` expects.
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


class MaxPool3d(_MaxPoolNd):
    __doc__ = _MAX_DOC.format(shape="(N, C, D, H, W)", n=3, fn="max_pool3d",
                              name="MaxPool3d")
    _fn = "max_pool3d"
