"""Upsampling layers: ``Upsample``, ``UpsamplingNearest2d``, ``UpsamplingBilinear2d``.

Thin modules over ``F.interpolate``; a scale factor is stored as a float (or a tuple of
floats) and printed as PyTorch does. Reference: torch.nn.modules.upsampling.
"""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Resample ``(N, C, L)``, ``(N, C, H, W)`` or ``(N, C, D, H, W)`` input to ``size``
    or by ``scale_factor`` (give exactly one).

    Args:
        size: the output spatial size, an int or one int per spatial dim.
        scale_factor: a float or one float per spatial dim; out = floor(in * scale).
        mode: 'nearest' (default), 'nearest-exact', 'linear', 'bilinear', 'bicubic',
            'trilinear' or 'area'.
        align_corners: for the interpolating modes (default False).
        recompute_scale_factor: sample with in / out instead of 1 / scale_factor.
    Shapes: (N, C, *in) -> (N, C, *out); floating dtypes (any for the nearest modes).
    Raises what ``F.interpolate`` raises. Reference: torch.nn.Upsample.
    """

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest",
                 align_corners=None, recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """``Upsample(size, scale_factor, mode='nearest')`` for ``(N, C, H, W)`` input.

    Reference: torch.nn.UpsamplingNearest2d.
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(size, scale_factor, mode='bilinear', align_corners=True)`` for ``(N, C,
    H, W)`` input. Reference: torch.nn.UpsamplingBilinear2d.
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
