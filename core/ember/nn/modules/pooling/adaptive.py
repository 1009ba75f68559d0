"""``AdaptiveAvgPool1d/2d/3d`` and ``AdaptiveMaxPool1d/2d/3d``: pooling to a given output
size, windows floor(i n / out) .. ceil((i + 1) n / out) along each dim.
Reference: torch.nn.AdaptiveAvgPool1d/2d/3d, torch.nn.AdaptiveMaxPool1d/2d/3d.
"""
from __future__ import annotations

from ... import functional as F
from ..module import Module

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d"]


class _AdaptiveAvgPoolNd(Module):
    _fn = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return getattr(F, self._fn)(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


_AVG_DOC = """Mean pooling of ``{shape}`` input (or without ``N``) to ``(N, C,
    *output_size)``.

    Args:
        output_size: an int (the same for each dim) or {n} sizes{none}.
    Floating dtypes; raises what ``F.{fn}`` raises. Reference: torch.nn.{name}.
    """


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    __doc__ = _AVG_DOC.format(shape="(N, C, L)", n=1, none="", fn="adaptive_avg_pool1d",
                              name="AdaptiveAvgPool1d")
    _fn = "adaptive_avg_pool1d"


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    __doc__ = _AVG_DOC.format(shape="(N, C, H, W)", n=2, fn="adaptive_avg_pool2d",
                              none=", where None keeps that input size; "
                                   "``AdaptiveAvgPool2d(1)`` is global average pooling",
                              name="AdaptiveAvgPool2d")
    _fn = "adaptive_avg_pool2d"


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    __doc__ = _AVG_DOC.format(shape="(N, C, D, H, W)", n=3, fn="adaptive_avg_pool3d",
                              none=", where None keeps that input size",
                              name="AdaptiveAvgPool3d")
    _fn = "adaptive_avg_pool3d"


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


_MAX_DOC = """Max pooling of ``{shape}`` input (or without ``N``) to ``(N, C,
    *output_size)``.

    Args:
        output_size: an int (the same for each dim) or {n} sizes{none}.
        return_indices: also return the int64 flat positions {index} of the maxima, as
            ``MaxUnpool`` expects.
    Floating dtypes; raises what ``F.{fn}`` raises. Reference: torch.nn.{name}.
    """


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    __doc__ = _MAX_DOC.format(shape="(N, C, L)", n=1, none="", index="l",
                              fn="adaptive_max_pool1d", name="AdaptiveMaxPool1d")
    _fn = "adaptive_max_pool1d"


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    __doc__ = _MAX_DOC.format(shape="(N, C, H, W)", n=2, none=", None keeping that size",
                              index="h * W + w", fn="adaptive_max_pool2d",
                              name="AdaptiveMaxPool2d")
    _fn = "adaptive_max_pool2d"


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    __doc__ = _MAX_DOC.format(shape="(N, C, D, H, W)", n=3, none=", None keeping that size",
                              index="(t * H + h) * W + w", fn="adaptive_max_pool3d",
                              name="AdaptiveMaxPool3d")
    _fn = "adaptive_max_pool3d"
