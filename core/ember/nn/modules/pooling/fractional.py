"""``FractionalMaxPool2d/3d``: max pooling with pseudo-random window steps (Graham,
"Fractional Max-Pooling", 2014). Reference: torch.nn.FractionalMaxPool2d/3d.
"""
from __future__ import annotations

from ... import functional as F
from ..module import Module

__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d"]


def _ntuple(v, n: int):
    if v is None:
        return None
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _FractionalMaxPoolNd(Module):
    _fn, _n = None, 0

    def __init__(self, kernel_size, output_size=None, output_ratio=None,
                 return_indices: bool = False, _random_samples=None):
        super().__init__()
        name = type(self).__name__
        kernel = _ntuple(kernel_size, self._n)
        if min(kernel) <= 0:
            raise ValueError(f"{name}: kernel_size must be greater than 0, but got "
                             f"{kernel_size}")
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a "
                             f"pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError(f"{name}: only one of output_size and output_ratio may be "
                             f"specified, got output_size={output_size}, output_ratio="
                             f"{output_ratio}")
        ratio = _ntuple(output_ratio, self._n)
        if ratio is not None and not all(0 < r < 1 for r in ratio):
            raise ValueError(f"{name}: output_ratio must be between 0 and 1 (got "
                             f"{output_ratio})")
        self.kernel_size = kernel
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, self._n)
        self.output_ratio = ratio

    def forward(self, input):
        return getattr(F, self._fn)(input, self.kernel_size, self.output_size,
                                    self.output_ratio, self.return_indices,
                                    _random_samples=self._random_samples)


_DOC = """Fractional max pooling of ``{shape}`` input (or without ``N``): the max over
    windows of ``kernel_size`` placed at pseudo-random steps, to ``output_size`` or
    int(``output_ratio`` * input size).

    Args:
        kernel_size: an int or {n} ints (stored as a {n}-tuple), each at least 1.
        output_size / output_ratio: exactly one; ratios in (0, 1).
        return_indices: also return the int64 flat positions of the maxima (for
            ``MaxUnpool{n}d``).
        _random_samples: an ({samples}) tensor that fixes the windows (a buffer); None
            draws fresh samples on every call.
    Raises ValueError for a bad kernel_size, output_size/output_ratio combination or
    ratio, and what ``F.{fn}`` raises. Prints as ``{name}()``, as PyTorch's.
    Reference: torch.nn.{name}.
    """


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    __doc__ = _DOC.format(shape="(N, C, H, W)", n=2, samples="N, C, 2",
                          fn="fractional_max_pool2d", name="FractionalMaxPool2d")
    _fn, _n = "fractional_max_pool2d", 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    __doc__ = _DOC.format(shape="(N, C, D, H, W)", n=3, samples="N, C, 3",
                          fn="fractional_max_pool3d", name="FractionalMaxPool3d")
    _fn, _n = "fractional_max_pool3d", 3
