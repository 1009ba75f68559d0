"""Antialiased bilinear and bicubic resampling (``interpolate(..., antialias=True)``).

PyTorch's ``_upsample_bilinear2d_aa`` / ``_upsample_bicubic2d_aa`` (the algorithm of
PIL's ``ImagingResample``): separable, each output cell ``i`` of a spatial dim a weighted
sum of the input cells around ``center = scale * (i + 0.5)``, where ``scale`` is the
input / output step (``area_pixel_compute_scale``: ``(n_in - 1) / (n_out - 1)`` with
align_corners, ``1 / scale_factor`` when one is given, else ``n_in / n_out``). When
downscaling (``scale >= 1``) the filter is stretched by ``scale`` so that it low-passes:
its support grows from ``interp_size / 2`` (1 for the triangle, 2 for the cubic) to
``scale`` times that, and its argument shrinks by ``1 / scale``. The weights of each output
cell are normalized to sum 1 (the edge cells see a truncated filter). Filters: the
triangle ``max(0, 1 - |x|)`` (bilinear) and Keys' cubic with ``a = -0.5`` (bicubic, PIL's;
the non-antialiased bicubic uses -0.75).

The weights are a host-side (n_out, n_in) matrix per dim, computed in float64 by
PyTorch's formulas (``HelperInterpBase::_compute_index_ranges_weights``); the device applies
them with two matmuls, so autograd (to any order) sees through it.

Reference: aten/src/ATen/native/cpu/UpSampleKernel.cpp (PyTorch 2.x).
"""
from __future__ import annotations

import functools

import numpy as np

from ember.ops import namespace as E
from ember.errors import ShapeError

__all__ = ["interpolate_aa"]

_BICUBIC_A = -0.5  # PIL's and PyTorch's choice for the antialiased cubic


def _triangle(x: np.ndarray) -> np.ndarray:
    x = np.abs(x)
    return np.where(x < 1.0, 1.0 - x, 0.0)


def _cubic(x: np.ndarray) -> np.ndarray:
    a = _BICUBIC_A
    x = np.abs(x)
    near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    far = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return np.where(x < 1.0, near, np.where(x < 2.0, far, 0.0))


def _scale(n_in: int, n_out: int, align_corners: bool, scale) -> float:
    """PyTorch's ``area_pixel_compute_scale``: input cells per output cell."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    if scale is not None and scale > 0:
        return 1.0 / scale
    return n_in / n_out


@functools.lru_cache(maxsize=256)
def _weights(n_in: int, n_out: int, cubic: bool, align_corners: bool, scale) -> np.ndarray:
    """The (n_out, n_in) float64 matrix of one dim (see the module docstring)."""
    s = _scale(n_in, n_out, align_corners, scale)
    half = 2.0 if cubic else 1.0   # interp_size / 2
    support = half * s if s >= 1.0 else half
    invscale = 1.0 / s if s >= 1.0 else 1.0
    fn = _cubic if cubic else _triangle
    w = np.zeros((n_out, n_in))
    for i in range(n_out):
        center = s * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)   # C++'s truncating int64 cast
        hi = min(int(center + support + 0.5), n_in)
        if hi <= lo:
            continue
        j = np.arange(lo, hi)
        wi = fn((j - center + 0.5) * invscale)
        total = wi.sum()
        w[i, lo:hi] = wi / total if total != 0 else wi
    w.setflags(write=False)
    return w


def interpolate_aa(x, output_size, mode: str, align_corners: bool, scales):
    """Antialiased resampling of a (N, C, H, W) floating ``x`` to ``output_size`` (oh, ow).

    Args:
        x: (N, C, H, W), float16 / bfloat16 / float32 / float64.
        output_size: (oh, ow), each >= 1.
        mode: 'bilinear' or 'bicubic'.
        align_corners: PyTorch's flag (only changes the scale; see the module docstring).
        scales: (scale_h, scale_w) from ``scale_factor`` or None each.
    Returns:
        (N, C, oh, ow) of ``x``'s dtype; differentiable to any order.
    Raises:
        ShapeError: an empty input or an output size below 1.
        NotImplementedError: a non-floating input (convert it first, e.g. ``x.float()``).
    Reference: torch._C._nn._upsample_bilinear2d_aa / _upsample_bicubic2d_aa.
    """
    n_h, n_w = int(x.shape[2]), int(x.shape[3])
    oh, ow = (int(n) for n in output_size)
    if min(n_h, n_w, oh, ow) <= 0:
        raise ShapeError(f"upsample_{mode}2d_aa(): input and output sizes should be greater "
                         f"than 0, but got input (H: {n_h}, W: {n_w}) output (H: {oh}, W: {ow})")
    if not x.is_floating_point():
        raise NotImplementedError(f"upsample_{mode}2d_aa(): expected a floating input "
                                  f"(float16, bfloat16, float32, float64), got {x.dtype}; "
                                  f"convert it first, e.g. x.float()")
    cubic = mode == "bicubic"
    sh, sw = scales
    wh = E.tensor(_weights(n_h, oh, cubic, bool(align_corners), sh), dtype=x.dtype,
                  device=x.device)
    ww = E.tensor(_weights(n_w, ow, cubic, bool(align_corners), sw), dtype=x.dtype,
                  device=x.device)
    out = E.matmul(x, ww.t())          # (N, C, H, ow): the last dim first, as PyTorch
    return E.matmul(wh, out)           # (N, C, oh, ow)
