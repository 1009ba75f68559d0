"""Shuffle layers: ``PixelShuffle``, ``PixelUnshuffle``, ``ChannelShuffle``.

Thin modules over ``ember.nn.functional``'s reshape-permute-reshape composites.
Reference: torch.nn.modules.pixelshuffle and torch.nn.modules.channelshuffle.
"""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle", "ChannelShuffle"]


class PixelShuffle(Module):
    """Rearrange ``(*, C r^2, H, W)`` into ``(*, C, H r, W r)``, r = ``upscale_factor``:
    the sub-pixel convolution's upsampling step (Shi et al. 2016).

    Any dtype. Raises what ``F.pixel_shuffle`` raises. Reference: torch.nn.PixelShuffle.
    """

    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Rearrange ``(*, C, H r, W r)`` into ``(*, C r^2, H, W)``, r = ``downscale_factor``;
    the inverse of :class:`PixelShuffle`.

    Any dtype. Raises what ``F.pixel_unshuffle`` raises. Reference: torch.nn.PixelUnshuffle.
    """

    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Interleave the channels of ``(N, C, *)`` input from ``groups`` groups (ShuffleNet,
    Zhang et al. 2018); the shape is kept.

    Any dtype. Raises what ``F.channel_shuffle`` raises. Reference: torch.nn.ChannelShuffle.
    """

    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
