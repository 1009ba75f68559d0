"""``LPPool1d/2d/3d``: power-average pooling, (sum of x^p over the window)^(1/p).
Reference: torch.nn.LPPool1d/2d/3d."""
from __future__ import annotations

from ... import functional as F
from ..module import Module

__all__ = ["LPPool1d", "LPPool2d", "LPPool3d"]


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


_DOC = """Power-average pooling of ``{shape}`` input (or without ``N``): each output is
    (sum of x^p over its window)^(1/p), p = ``norm_type``.

    Args:
        norm_type: p (inf gives the max of |x|).
        kernel_size, stride (default kernel_size): an int or {n} ints each.
        ceil_mode: round the output size up.
    Shapes: out = floor((in - k) / stride) + 1. Raises what ``F.{fn}`` raises.
    Reference: torch.nn.{name}.
    """


class LPPool1d(_LPPoolNd):
    __doc__ = _DOC.format(shape="(N, C, L)", n=1, fn="lp_pool1d", name="LPPool1d")
    _fn = "lp_pool1d"


class LPPool2d(_LPPoolNd):
    __doc__ = _DOC.format(shape="(N, C, H, W)", n=2, fn="lp_pool2d", name="LPPool2d")
    _fn = "lp_pool2d"


class LPPool3d(_LPPoolNd):
    __doc__ = _DOC.format(shape="(N, C, D, H, W)", n=3, fn="lp_pool3d", name="LPPool3d")
    _fn = "lp_pool3d"
