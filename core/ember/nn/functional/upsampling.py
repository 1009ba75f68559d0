"""Resampling (``torch.nn.functional.interpolate``).

``interpolate`` is PyTorch's Python front: it checks the arguments, turns ``size`` or
``scale_factor`` into an output size and calls one of the ``upsample_*`` composites
(``native_functions.yaml``, section ``nn: upsampling``), which take aten's signatures:
an output size plus optional per-dim scales.

Every mode is separable, so each composite resamples one spatial dim at a time, with
source indices and weights computed on the host by PyTorch's rules and applied on the
device with ``index_select``; autograd (to any order) and the tracer see through it.
An integer upsampling (output r times the input, taps that repeat with period r) is
applied without a gather: nearest as a broadcast copy, linear and cubic as r phases, each
a weighted sum of shifted copies of the input, interleaved:

* nearest: ``src = min(floor(dst * s), n - 1)``; nearest-exact: ``min(floor((dst + 0.5)
  * s), n - 1)``. ``s`` is ``1 / scale`` when a positive scale is given, else ``n_in /
  n_out``, computed in float32 as PyTorch does so ties round the same way.
* linear (bilinear, trilinear): with align_corners, ``src = dst * (n_in - 1) / (n_out -
  1)``; without, ``src = max(s (dst + 0.5) - 0.5, 0)``; the output mixes cells
  ``floor(src)`` and the next one (clamped at the edge) with weights ``1 - t``, ``t``.
* bicubic: the same ``src`` without the clamp at 0, four cells ``floor(src) - 1 .. + 2``
  (clamped to the input) with Keys' cubic convolution weights, a = -0.75.
* area: adaptive average pooling to the output size.

Accuracy (float32, N(0, 1) input (4, 8, 64, 64), x2, against the float64 op): within 3.1
ulp of max|x| for bilinear and 5.2 for bicubic, as the index path (the same products,
summed in another order).

Reference: torch.nn.functional.interpolate and aten/src/ATen/native/UpSample.h.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ember.ops import namespace as E
from ember.errors import ShapeError
from ember.ops.composite import composite

from .upsampling_aa import interpolate_aa

__all__ = ["interpolate"]

_A = -0.75  # Keys' cubic convolution parameter, PyTorch's choice


# --- source indices and weights, one spatial dim ---------------------------------------------

def _inv_scale(scale, n_in: int, n_out: int, dtype) -> float:
    """The source-per-destination step: ``1 / scale`` if a positive scale is given."""
    if scale is not None and scale > 0:
        return dtype(1.0 / scale)
    return dtype(n_in) / dtype(n_out)


def _nearest_index(n_in: int, n_out: int, scale, exact: bool) -> np.ndarray:
    s = _inv_scale(scale, n_in, n_out, np.float32)
    dst = np.arange(n_out, dtype=np.float32) + np.float32(0.5 if exact else 0.0)
    return np.minimum(np.floor(dst * s).astype(np.int64), n_in - 1)


def _source(n_in: int, n_out: int, align_corners: bool, scale, cubic: bool) -> np.ndarray:
    """PyTorch's area_pixel_compute_source_index for every destination cell (float64)."""
    dst = np.arange(n_out, dtype=np.float64)
    if align_corners:
        return dst * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    src = _inv_scale(scale, n_in, n_out, float) * (dst + 0.5) - 0.5
    return src if cubic else np.maximum(src, 0.0)


def _floor_and_frac(src: np.ndarray, n_in: int):
    """PyTorch's guard_index_and_lambda: the cell left of ``src`` (at most n_in - 1) and
    the fraction past it, clamped to [0, 1]."""
    i = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    return i, np.clip(src - i, 0.0, 1.0)


def _cubic_weights(t: np.ndarray) -> list:
    def near(x):  # |x| <= 1
        return ((_A + 2) * x - (_A + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


# --- resampling one dim on the device ----------------------------------------------------------

def _take(x, dim: int, index: np.ndarray):
    return x.index_select(dim, E.tensor(index, dtype=E.int64, device=x.device))


def _weighted(x, dim: int, taps: list):
    """sum_k w_k * x[index_k] along ``dim`` for taps [(index_k, w_k)], w broadcast on dim."""
    shape = [1] * x.ndim
    shape[dim] = -1
    out = None
    for index, w in taps:
        term = _take(x, dim, index) * E.tensor(w, dtype=x.dtype, device=x.device).reshape(shape)
        out = term if out is None else out + term
    return out


def _edge_padded(x, dim: int, before: int, after: int):
    """x with its first cell repeated ``before`` times and its last ``after`` times along
    ``dim``, so that x[clamp(i + o, 0, n - 1)] is the view at i + o + before."""
    n, parts = x.shape[dim], [x]
    size = lambda k: [(k if d == dim else -1) for d in range(x.ndim)]  # noqa: E731
    if before:
        parts.insert(0, x.narrow(dim, 0, 1).expand(*size(before)))
    if after:
        parts.append(x.narrow(dim, n - 1, 1).expand(*size(after)))
    return E.cat(parts, dim) if len(parts) > 1 else x


def _phases(taps: list, n_in: int, r: int):
    """The taps [(index, weight)] of an integer upsampling by r as r phases: output cell
    r i + j reads x[clamp(i + o, 0, n_in - 1)] with weight w for each (o, w) of phase j;
    None when the interior cells do not follow one period (inexact scales)."""
    if n_in < 6:     # too few interior cells (a cubic tap reaches 2 away) to check
        return None
    rows = np.arange(n_in)[:, None]
    offsets, weights = [], []
    for index, w in taps:
        o = index.reshape(n_in, r) - rows
        w = np.asarray(w, dtype=np.float64).reshape(n_in, r)
        # rows 2 .. n_in - 3 are never clamped: they must all equal row 2
        if np.any(o[2:-2] != o[2]) or np.abs(w[2:-2] - w[2]).max() > 1e-12:
            return None
        offsets.append(o[2])
        weights.append(w[2])
    return [[(int(o[j]), float(w[j])) for o, w in zip(offsets, weights)] for j in range(r)]


def _periodic(x, dim: int, phases: list):
    """Integer upsampling from its phases (see ``_phases``): each phase a weighted sum of
    shifted copies of x, the phases interleaved. Only slices, products and sums, so its
    backward has no scatter (index_select's backward is an index_add)."""
    n = x.shape[dim]
    used = [o for phase in phases for o, w in phase if w != 0.0] or [0]
    before, after = max(0, -min(used)), max(0, max(used))
    padded = _edge_padded(x, dim, before, after)     # one copy serves every shift
    outs = []
    for phase in phases:
        out = None
        for o, w in phase:
            if w == 0.0:
                continue
            shifted = padded.narrow(dim, o + before, n)
            term = shifted if w == 1.0 else shifted * w
            out = term if out is None else out + term
        outs.append(out if out is not None else x * 0.0)
    return E.stack(outs, dim + 1).flatten(dim, dim + 1)


@functools.lru_cache(maxsize=512)
def _plan(n_in: int, n_out: int, mode: str, align_corners, scale):
    """How one dim is resampled, from PyTorch's rules, computed on the host once per
    geometry: ("same",), ("repeat", r), ("take", index), ("phases", phases) or ("taps",
    [(index, weight)])."""
    r = n_out // n_in if n_out % n_in == 0 else 0
    if mode in ("nearest", "nearest-exact"):
        if n_out == n_in:
            return ("same",)
        index = _nearest_index(n_in, n_out, scale, mode == "nearest-exact")
        if r and np.array_equal(index, np.arange(n_out) // r):
            return ("repeat", r)
        return ("take", index)
    if mode == "linear":
        i, t = _floor_and_frac(_source(n_in, n_out, align_corners, scale, False), n_in)
        taps = [(i, 1.0 - t), (np.minimum(i + 1, n_in - 1), t)]
    else:
        i, t = _floor_and_frac(_source(n_in, n_out, align_corners, scale, True), n_in)
        taps = [(np.clip(i - 1 + k, 0, n_in - 1), w) for k, w in enumerate(_cubic_weights(t))]
    # NOTE: only half-pixel sources (no align_corners) repeat with period r
    phases = _phases(taps, n_in, r) if r > 1 and not align_corners else None
    # NOTE: the phases read edge cells through repeated copies instead of linear's source
    # clamp at 0: the same value up to one rounding of (1 - t) x + t x
    return ("taps", taps) if phases is None else ("phases", phases)


def _resample_dim(x, dim: int, n_out: int, mode: str, align_corners, scale):
    plan = _plan(int(x.shape[dim]), int(n_out), mode, align_corners, scale)
    if plan[0] == "same":
        return x
    if plan[0] == "repeat":
        # each cell repeated r times: a broadcast copy, whose backward is a sum
        shape = [-1] * (x.ndim + 1)
        shape[dim + 1] = plan[1]
        return x.unsqueeze(dim + 1).expand(*shape).flatten(dim, dim + 1)
    if plan[0] == "take":
        return _take(x, dim, plan[1])
    if plan[0] == "phases":
        return _periodic(x, dim, plan[1])
    return _weighted(x, dim, plan[1])


def _upsample(op: str, x, output_size, scales, mode: str, align_corners=None):
    k = len(output_size)
    if x.ndim != k + 2:
        raise ShapeError(f"{op}(): expected a {k + 2}-D input (N, C, {k} spatial dims), got "
                         f"shape {list(x.shape)}")
    spatial = tuple(x.shape[2:])
    if any(n <= 0 for n in spatial) or any(n <= 0 for n in output_size):
        raise ShapeError(f"{op}(): input and output sizes should be greater than 0, but got "
                         f"input {list(spatial)} and output {list(output_size)}")
    if any(n == 0 for n in x.shape[1:2]):
        raise ShapeError(f"{op}(): expected a non-empty input (C > 0), got shape "
                         f"{list(x.shape)}")
    if mode not in ("nearest", "nearest-exact") and not x.is_floating_point():
        raise NotImplementedError(f"{op}(): expected a floating input (float16, bfloat16, "
                                  f"float32, float64), got {x.dtype}; convert it first, "
                                  f"e.g. x.float()")
    out = x
    for i in range(k):
        out = _resample_dim(out, 2 + i, output_size[i], mode, align_corners, scales[i])
    return out if out is not x else x.clone()


@composite("upsample_nearest1d")
def _upsample_nearest1d(self, output_size, scales):
    return _upsample("upsample_nearest1d", self, output_size, (scales,), "nearest")


@composite("upsample_nearest2d")
def _upsample_nearest2d(self, output_size, scales_h, scales_w):
    return _upsample("upsample_nearest2d", self, output_size, (scales_h, scales_w), "nearest")


@composite("upsample_nearest3d")
def _upsample_nearest3d(self, output_size, scales_d, scales_h, scales_w):
    return _upsample("upsample_nearest3d", self, output_size, (scales_d, scales_h, scales_w),
                     "nearest")


@composite("_upsample_nearest_exact1d")
def _upsample_nearest_exact1d(self, output_size, scales):
    return _upsample("_upsample_nearest_exact1d", self, output_size, (scales,),
                     "nearest-exact")


@composite("_upsample_nearest_exact2d")
def _upsample_nearest_exact2d(self, output_size, scales_h, scales_w):
    return _upsample("_upsample_nearest_exact2d", self, output_size, (scales_h, scales_w),
                     "nearest-exact")


@composite("_upsample_nearest_exact3d")
def _upsample_nearest_exact3d(self, output_size, scales_d, scales_h, scales_w):
    return _upsample("_upsample_nearest_exact3d", self, output_size,
                     (scales_d, scales_h, scales_w), "nearest-exact")


@composite("upsample_linear1d")
def _upsample_linear1d(self, output_size, align_corners, scales):
    return _upsample("upsample_linear1d", self, output_size, (scales,), "linear",
                     align_corners)


@composite("upsample_bilinear2d")
def _upsample_bilinear2d(self, output_size, align_corners, scales_h, scales_w):
    return _upsample("upsample_bilinear2d", self, output_size, (scales_h, scales_w), "linear",
                     align_corners)


@composite("upsample_trilinear3d")
def _upsample_trilinear3d(self, output_size, align_corners, scales_d, scales_h, scales_w):
    return _upsample("upsample_trilinear3d", self, output_size, (scales_d, scales_h, scales_w),
                     "linear", align_corners)


@composite("upsample_bicubic2d")
def _upsample_bicubic2d(self, output_size, align_corners, scales_h, scales_w):
    return _upsample("upsample_bicubic2d", self, output_size, (scales_h, scales_w), "cubic",
                     align_corners)


# --- the functional front ----------------------------------------------------------------------

_MODES = "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact"
_NEEDS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
_NEAREST = {3: E.upsample_nearest1d, 4: E.upsample_nearest2d, 5: E.upsample_nearest3d}
_EXACT = {3: E._upsample_nearest_exact1d, 4: E._upsample_nearest_exact2d,
          5: E._upsample_nearest_exact3d}
_LINEAR = {"linear": E.upsample_linear1d, "bilinear": E.upsample_bilinear2d,
           "trilinear": E.upsample_trilinear3d, "bicubic": E.upsample_bicubic2d}


def _sizes(input, dim: int, size, scale_factor):
    """(output_size, scale_factors) from exactly one of size / scale_factor."""
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    f"Input and output must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {spatial} and output size of "
                    f"{size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    f"and output size in (o1, o2, ...,oK) format.")
            return list(size), None
        return [size] * dim, None
    if scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    f"Input and scale_factor must have the same number of spatial dimensions,"
                    f" but got input with spatial dimensions of {spatial} and scale_factor of "
                    f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, "
                    f"...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            return None, [float(s) for s in scale_factor]
        return None, [float(scale_factor)] * dim
    raise ValueError("either size or scale_factor should be defined")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resample ``input`` (N, C, L), (N, C, H, W) or (N, C, D, H, W) to a new spatial size.

    Args:
        input: a batched 3-D, 4-D or 5-D tensor; floating dtypes (any dtype for the
            nearest modes).
        size: the output spatial size, an int (every dim) or one int per spatial dim.
        scale_factor: a multiplier per spatial dim (a float or a tuple); the output size is
            floor(in * scale_factor). Exactly one of size and scale_factor is given.
        mode: 'nearest' (PyTorch's legacy rule, src = floor(dst * in / out)),
            'nearest-exact' (pixel centres, src = floor((dst + 0.5) * in / out)),
            'linear' (3-D), 'bilinear' / 'bicubic' (4-D), 'trilinear' (5-D), 'area'
            (adaptive average pooling).
        align_corners: for the interpolating modes only (default False): map the corner
            cells' centres onto each other instead of the corners' edges.
        recompute_scale_factor: with scale_factor, compute the sampling step from the
            output size (in / out) instead of using 1 / scale_factor.
        antialias: low-pass the input when downscaling, as PIL and PyTorch (bilinear and
            bicubic on 4-D input; ``upsampling_aa.py``).
    Returns:
        (N, C, *size) of ``input``'s dtype; always a new tensor.
    Raises:
        ValueError: both or neither of size and scale_factor, a size or scale_factor of the
            wrong length, align_corners with a non-interpolating mode,
            recompute_scale_factor with size, antialias outside bilinear/bicubic on 4-D.
        NotImplementedError: a mode that does not fit the input's rank, an unknown mode or
            rank, a non-floating input for an interpolating mode.
        ShapeError: an input or output size below 1.
    Differentiable to any order (index_select and weighted sums).
    Reference: torch.nn.functional.interpolate.
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    output_size, scales = _sizes(input, dim, size, scale_factor)
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if scales is not None:
        if recompute_scale_factor:
            output_size = [math.floor(n * s) for n, s in zip(input.shape[2:], scales)]
            scales = None
        else:  # aten's compute_output_size truncates toward zero
            # math.trunc, not int(): a traced size stays symbolic (jit/frontend/symbolic_sizes.py)
            output_size = [math.trunc(n * s) for n, s in zip(input.shape[2:], scales)]
    scales = scales or [None] * max(dim, 0)
    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and "
                         "requires a 4-D tensor as input")
    if antialias:
        return interpolate_aa(input, output_size, mode, align_corners, scales)
    if input.ndim in (3, 4, 5) and mode in ("nearest", "nearest-exact"):
        table = _NEAREST if mode == "nearest" else _EXACT
        return table[input.ndim](input, output_size, *scales)
    if input.ndim in (3, 4, 5) and mode == "area":
        return _area(input, output_size)
    if input.ndim in (3, 4, 5) and mode in _NEEDS:
        if input.ndim != _NEEDS[mode]:
            raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                      f"{_NEEDS[mode]}D input")
        return _LINEAR[mode](input, output_size, align_corners, *scales)
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                              f"{input.ndim}D) for the modes: {_MODES} (got {mode})")


def _area(input, output_size):
    """'area' mode: adaptive average pooling. A box mean is separable, so 3-D input pools a
    height-1 view and 5-D input pools (H, W) and then D, each with the 2-D op."""
    if any(n <= 0 for n in output_size):
        raise ShapeError(f"interpolate(): output sizes should be greater than 0 for mode "
                         f"'area', got {list(output_size)}")
    if input.ndim == 3:
        return E.adaptive_avg_pool2d(input.unsqueeze(-2), (1, output_size[0])).squeeze(-2)
    if input.ndim == 4:
        return E.adaptive_avg_pool2d(input, tuple(output_size))
    n, c, d, h, w = input.shape
    od, oh, ow = output_size
    x = E.adaptive_avg_pool2d(input.reshape(n, c * d, h, w), (oh, ow))
    x = E.adaptive_avg_pool2d(x.reshape(n, c, d, oh * ow), (od, oh * ow))
    return x.reshape(n, c, od, oh, ow)
