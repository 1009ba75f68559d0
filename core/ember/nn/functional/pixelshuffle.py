"""Pixel and channel shuffles (``torch.nn.functional.pixel_shuffle`` & co.).

Each is one composite op (``native_functions.yaml``, section ``nn: upsampling``) made of a
reshape, a permute and a reshape, so it is differentiable to any order and its gradient
is the inverse shuffle. Any dtype; leading batch dims are kept as they are.

* pixel_shuffle(r): (*, C r^2, H, W) -> (*, C, H r, W r), out[c, h r + i, w r + j] =
  in[c r^2 + i r + j, h, w] (Shi et al. 2016, "Real-Time Single Image and Video
  Super-Resolution Using an Efficient Sub-Pixel Convolutional Neural Network").
* pixel_unshuffle(r): its inverse, (*, C, H r, W r) -> (*, C r^2, H, W).
* channel_shuffle(g): (N, C, *) -> (N, C, *), out[:, j g + i] = in[:, i (C / g) + j]
  (Zhang et al. 2018, ShuffleNet).
"""
from __future__ import annotations

from ember.ops import namespace as E
from ember.errors import ShapeError
from ember.ops.composite import composite

__all__ = ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle"]


def _check(op: str, x, factor: int, name: str) -> None:
    if x.ndim < 3:
        raise ShapeError(f"{op} expects input to have at least 3 dimensions, but got input "
                         f"with {x.ndim} dimension(s)")
    if factor <= 0:
        raise ShapeError(f"{op} expects a positive {name}, but got {factor}")


@composite("pixel_shuffle")
def _pixel_shuffle(self, upscale_factor):
    r = upscale_factor
    _check("pixel_shuffle", self, r, "upscale_factor")
    *lead, c, h, w = self.shape
    if c % (r * r):
        raise ShapeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                         f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                         f"is not divisible by {r * r}")
    k = len(lead)
    x = self.reshape(*lead, c // (r * r), r, r, h, w)
    # (c, i, j, h, w) -> (c, h, i, w, j)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


@composite("pixel_unshuffle")
def _pixel_unshuffle(self, downscale_factor):
    r = downscale_factor
    _check("pixel_unshuffle", self, r, "downscale_factor")
    *lead, c, h, w = self.shape
    for name, n, d in (("height", h, -2), ("width", w, -1)):
        if n % r:
            raise ShapeError(f"pixel_unshuffle expects {name} to be divisible by "
                             f"downscale_factor, but input.size({d})={n} is not divisible by "
                             f"{r}")
    k = len(lead)
    x = self.reshape(*lead, c, h // r, r, w // r, r)
    # (c, h, i, w, j) -> (c, i, j, h, w)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


@composite("channel_shuffle")
def _channel_shuffle(self, groups):
    if self.ndim <= 2:
        raise ShapeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                         f"sizes {list(self.shape)}")
    if groups <= 0:
        raise ShapeError(f"Number of groups to divide channels in must be positive. Value of "
                         f"groups:{groups}")
    n, c, *rest = self.shape
    if c % groups:
        raise ShapeError(f"Number of channels must be divisible by groups. Got {c} channels "
                         f"and {groups} groups.")
    x = self.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return x.reshape(n, c, *rest)


def pixel_shuffle(input, upscale_factor: int):
    """Rearrange (*, C r^2, H, W) into (*, C, H r, W r), r = ``upscale_factor``.

    out[..., c, h r + i, w r + j] = input[..., c r^2 + i r + j, h, w]. Any dtype; a new
    tensor. Raises ShapeError for fewer than 3 dims, r <= 0, or C r^2 not dividing the
    channel count. Reference: torch.nn.functional.pixel_shuffle (Shi et al. 2016).
    """
    return E.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor: int):
    """Rearrange (*, C, H r, W r) into (*, C r^2, H, W), r = ``downscale_factor``; the
    inverse of :func:`pixel_shuffle`.

    Any dtype. Raises ShapeError for fewer than 3 dims, r <= 0, or H or W not divisible
    by r. Reference: torch.nn.functional.pixel_unshuffle (Shi et al. 2016).
    """
    return E.pixel_unshuffle(input, downscale_factor)


def channel_shuffle(input, groups: int):
    """Interleave the channels of (N, C, *) from ``groups`` groups: view C as (groups,
    C / groups), transpose, flatten. Output (N, C, *), input's dtype.

    Raises ShapeError for fewer than 3 dims, groups <= 0 or C not divisible by groups.
    Reference: torch.nn.functional.channel_shuffle (Zhang et al. 2018, ShuffleNet).
    """
    return E.channel_shuffle(input, groups)
