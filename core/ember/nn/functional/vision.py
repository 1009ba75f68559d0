"""Spatial transformers: ``affine_grid`` and ``grid_sample`` (``torch.nn.functional``),
the sampling half of a spatial transformer network (Jaderberg et al., 2015).

``affine_grid_generator`` and ``grid_sampler`` are composite ops (``native_functions.yaml``,
section ``nn: extra losses, ...``; ATen's names, with ATen's integer modes) built from
matmul, floor, gather and pointwise ops, so autograd differentiates them w.r.t. the input
and the grid, to any order:

* a grid coordinate in [-1, 1] is unnormalized to a pixel coordinate (align_corners: -1
  and 1 are the centers of the corner pixels, else their outer edges), then the padding
  mode maps it ('border' clips it to the image, 'reflection' reflects it off the borders
  and clips; 'zeros' keeps it, and taps outside the image read 0);
* 'bilinear' (trilinear for 5-D) reads the 2^d neighbouring pixels with weights that are
  products of the fractional parts, so the gradient reaches the grid through them;
* 'nearest' reads the pixel at round-half-to-even of the coordinate (the grid gets a
  zero gradient, as PyTorch);
* 'bicubic' (4-D only) reads 4 x 4 pixels with Keys' cubic convolution (A = -0.75),
  applying the padding mode to each tap, as ATen.

The taps are vectorized: per coordinate, T taps (1, 2 or 4) at floor/round + offsets with
their weights, (N, P, d, T); their T^d combinations are the stencil of each output point,
read with ONE ``index_select`` of rows of the channels-last input (N S, C), whose gradient
is one scatter-add, and summed with their weights over contiguous planes. The op count no
longer grows with the stencil (bilinear: ~30 ember ops instead of ~150).
'bilinear' and 'nearest' with 'zeros' padding (the defaults) run as a kernel pair on arrays
(``vision_kernels.py``: one autograd node, no ember op per step), this composite being the
reference for double backward and tracing.
``align_corners=None`` means False, with PyTorch's warning. Accuracy: the coordinates are
computed in the input's dtype, as PyTorch's kernel does: for float32 a coordinate is off
by up to ~size/2 ulp(1), which dominates (bilinear on a 64 x 64 N(0, 1) image: within
146 ulp of max|x| of the float64 op); float64 is exact to a few ulp.
"""
from __future__ import annotations

import math
import warnings

from ember.ops import namespace as E
from ember.autograd import kernel_pair as _fused
from ember.errors import DtypeError, ShapeError
from ember.ops.composite import composite

from . import vision_kernels as _kernels

__all__ = ["affine_grid", "grid_sample"]

_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}
_CUBIC_A = -0.75   # Keys' cubic convolution parameter, as ATen and OpenCV


def _default_align_corners(align_corners):
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if "
                      "the old behavior is desired. See the documentation of grid_sample for "
                      "details.", UserWarning, stacklevel=3)
        return False
    return bool(align_corners)


# ---- affine_grid ------------------------------------------------------------------------

def _base_coords(n: int, align_corners: bool, like):
    """n pixel centers in [-1, 1] (scaled by (n - 1) / n without align_corners)."""
    if n <= 1:
        return E.zeros(n, dtype=like.dtype, device=like.device)
    c = E.linspace(-1.0, 1.0, n, dtype=like.dtype, device=like.device)
    return c if align_corners else c * ((n - 1) / n)


@composite("affine_grid_generator")
def _affine_grid_generator(theta, size, align_corners):
    spatial = list(size[2:])
    d = len(spatial)
    coords = [_base_coords(s, align_corners, theta) for s in reversed(spatial)]  # x, y[, z]
    mesh = E.meshgrid(*coords[::-1], indexing="ij")       # each of the spatial shape
    ones = E.ones(tuple(spatial), dtype=theta.dtype, device=theta.device)
    base = E.stack([*mesh[::-1], ones], -1).reshape(1, -1, d + 1)    # (1, prod, d + 1)
    grid = E.matmul(base, theta.transpose(1, 2))                      # (N, prod, d)
    return grid.reshape(theta.shape[0], *spatial, d)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of a batch of affine maps, for ``grid_sample``.

    Args:
        theta: ``(N, 2, 3)`` (2-D) or ``(N, 3, 4)`` (3-D) floating affine matrices mapping
            output coordinates (x, y[, z], 1) in [-1, 1] to input coordinates.
        size: the output size ``(N, C, H, W)`` or ``(N, C, D, H, W)``.
        align_corners: see ``grid_sample``; None means False, with a warning.
    Returns: ``(N, H, W, 2)`` or ``(N, D, H, W, 3)`` in theta's dtype, last dim (x, y[, z]).
    Raises NotImplementedError for a size of another length, ValueError for a theta of
    another shape or a size entry <= 0, ShapeError for a batch size other than theta's,
    DtypeError for integral theta. Reference: torch.nn.functional.affine_grid.
    """
    align_corners = _default_align_corners(align_corners)
    size = tuple(int(s) for s in size)
    if not theta.is_floating_point():
        raise DtypeError(f"affine_grid: expected floating theta, got {theta.dtype}")
    if len(size) not in (4, 5):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively; got size {size}")
    d = len(size) - 2
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (d, d + 1):
        raise ValueError(f"affine_grid: expected a batch of {d}D affine matrices of shape "
                         f"Nx{d}x{d + 1} for size {size}, got {tuple(theta.shape)}")
    if min(size) <= 0:
        raise ValueError(f"affine_grid: expected a positive output size, got {size}")
    if theta.shape[0] != size[0]:
        raise ShapeError(f"affine_grid: theta holds {theta.shape[0]} matrices but size asks "
                         f"for a batch of {size[0]}; make them equal")
    if align_corners and min(size[2:]) == 1:
        warnings.warn("affine_grid: with align_corners=True a unit-size dim samples only "
                      "coordinate 0, as PyTorch since 1.3.0; this is not an intended use of "
                      "affine_grid", UserWarning, stacklevel=2)
    return E.affine_grid_generator(theta, list(size), align_corners)


# ---- grid_sample ------------------------------------------------------------------------

def _unnormalize(coord, size: int, align_corners: bool):
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low: int, twice_high: int):
    """coord reflected off low and high (ATen's reflect_coordinates), differentiable."""
    if twice_low == twice_high:
        return coord * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    c = (coord - low).abs()
    flips = E.floor(c / span).detach()
    extra = c - flips * span
    return E.where(E.remainder(flips, 2) == 0, extra + low, span - extra + low)


def _pad_coord(coord, size: int, padding: int, align_corners: bool):
    if padding == _PADDINGS["zeros"]:
        return coord
    if padding == _PADDINGS["reflection"]:
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else \
            _reflect(coord, -1, 2 * size - 1)
    return coord.clamp(0, size - 1)


def _cubic_weights(t):
    """Keys' cubic convolution weights of taps -1, 0, 1, 2 at fraction t, stacked last."""
    a = _CUBIC_A

    def near(x):    # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):     # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return E.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], -1)


def _per_dim(t, fn, xyz):
    """fn(t[..., j, ...], size_j) for each coordinate j of dim -1 (x, y[, z]) of t, or of
    dim -2 when t has a tap axis last, stacked back."""
    axis = -1 if t.ndim == 3 else -2
    return E.stack([fn(t.select(axis, j), s) for j, s in enumerate(xyz)], axis)


def _combine(t, op):
    """(N, P, d, T) per-coordinate taps -> (N, P, T^d) taps of the d-dim stencil, op
    joining the coordinates (add for positions, mul for weights, and for masks)."""
    out = t.select(-2, 0)
    for j in range(1, t.shape[-2]):
        out = op(out.unsqueeze(-2), t.select(-2, j).unsqueeze(-1)).flatten(-2)
    return out


@composite("grid_sampler")
def _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    # NOTE: bilinear/nearest with zeros padding (the defaults) run as a kernel pair
    # (vision_kernels.py); the op-by-op form below stays the reference
    if padding_mode == _PADDINGS["zeros"] and interpolation_mode != _MODES["bicubic"]:
        return _fused.run("grid_sampler", _zeros_reference, _kernels.forward,
                          _kernels.backward, (input, grid),
                          (interpolation_mode, bool(align_corners)))
    return _grid_sampler_reference(input, grid, interpolation_mode, padding_mode,
                                   align_corners)


def _zeros_reference(input, grid, interpolation_mode, align_corners):
    return _grid_sampler_reference(input, grid, interpolation_mode, _PADDINGS["zeros"],
                                   align_corners)


def _grid_sampler_reference(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sampler op by op: differentiable to any order."""
    sizes = list(input.shape[2:])
    d = len(sizes)
    n, c = input.shape[:2]
    out_spatial = tuple(grid.shape[1:-1])
    # grid's last dim is (x, y[, z]): x indexes the last spatial dim
    xyz = sizes[::-1]
    g = grid.reshape(n, -1, d)
    like = {"dtype": grid.dtype, "device": grid.device}
    scale = E.tensor([(s - 1) / 2 if align_corners else s / 2 for s in xyz], **like)
    coords = (g + 1) * scale if align_corners else (g + 1) * scale - 0.5   # (N, P, d)
    high = E.tensor([s - 1 for s in xyz], **like)
    pad = lambda t, s: _pad_coord(t, s, padding_mode, align_corners)  # noqa: E731
    # every output point reads T taps per coordinate at base + offsets with weights w,
    # (N, P, d, T) each; the T^d taps of its stencil are one gather of the flat input
    if interpolation_mode == _MODES["bicubic"]:
        base = E.floor(coords).detach()
        w = _cubic_weights(coords - base)
        idx = base.unsqueeze(-1) + E.tensor([-1.0, 0.0, 1.0, 2.0], **like)
        if padding_mode != _PADDINGS["zeros"]:
            idx = _per_dim(idx, pad, xyz)
    else:
        if padding_mode != _PADDINGS["zeros"]:
            coords = _per_dim(coords, pad, xyz)
        if interpolation_mode == _MODES["nearest"]:
            idx, w = E.round(coords).detach().unsqueeze(-1), None
        else:
            base = E.floor(coords).detach()
            frac = (coords - base).unsqueeze(-1)
            w = E.cat([1 - frac, frac], -1)
            idx = base.unsqueeze(-1) + E.tensor([0.0, 1.0], **like)
    high = high.unsqueeze(-1)
    inside = _combine((idx >= 0) & (idx <= high), E.logical_and)
    strides = E.tensor([math.prod(xyz[:j]) for j in range(d)], dtype=E.int64,
                       device=grid.device).unsqueeze(-1)
    pos = _combine(E.minimum(E.clamp(idx, min=0), high).to(E.int64) * strides, E.add)
    weight = inside.to(input.dtype) if w is None else \
        E.where(inside, _combine(w, E.mul), 0.0)                       # (N, P, taps)
    # NOTE: the taps are rows of the channels-last input (N S, C), read with one
    # index_select: C contiguous values per tap, and a tap index C times shorter than an
    # element-wise gather's (3-4x faster on (8, 32, 64, 64)); the taps go before the
    # points so that their weighted sum adds contiguous planes
    size = math.prod(sizes)
    rows = input.reshape(n, c, size).transpose(1, 2).reshape(n * size, c)
    pos = pos.transpose(1, 2) + E.arange(0, n * size, size, device=grid.device).reshape(n, 1, 1)
    taps = pos.shape[1]
    vals = rows.index_select(0, pos.reshape(-1)).reshape(n, taps, -1, c)
    weight = weight.transpose(1, 2).unsqueeze(-1)                       # (N, taps, P, 1)
    out = (vals.squeeze(1) * weight.squeeze(1)) if taps == 1 else (vals * weight).sum(1)
    out = out.transpose(1, 2).contiguous()                              # (N, C, P)
    return out.reshape(n, c, *out_spatial)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` at the locations in ``grid`` (normalized to [-1, 1]).

    Args:
        input: ``(N, C, H_in, W_in)`` or ``(N, C, D_in, H_in, W_in)``, floating.
        grid: ``(N, H_out, W_out, 2)`` or ``(N, D_out, H_out, W_out, 3)`` of input's
            dtype; the last dim is (x, y[, z]): x = -1 is the left of the input, y = -1
            its top.
        mode: 'bilinear' (trilinear for 5-D), 'nearest' or 'bicubic' (4-D only).
        padding_mode: what locations outside the input read: 'zeros', 'border' (the
            nearest edge pixel) or 'reflection' (the input reflected at its borders).
        align_corners: True maps -1 and 1 to the centers of the corner pixels, False to
            their outer edges; None means False, with PyTorch's warning.
    Returns: ``(N, C, H_out, W_out)`` or ``(N, C, D_out, H_out, W_out)``.
    Differentiable w.r.t. input and grid (the grid's gradient is 0 for 'nearest').
    Raises ValueError for an unknown mode or padding_mode, ShapeError for ranks or batch
    sizes that do not fit or a last grid dim other than 2 / 3, NotImplementedError for
    bicubic 5-D, DtypeError for dtypes that differ or are not floating.
    Reference: torch.nn.functional.grid_sample (Jaderberg et al., 2015).
    """
    op = "grid_sample"
    if mode not in _MODES:
        raise ValueError(f"{op}: expected mode to be 'bilinear', 'nearest' or 'bicubic', got "
                         f"{mode!r}")
    if padding_mode not in _PADDINGS:
        raise ValueError(f"{op}: expected padding_mode to be 'zeros', 'border' or "
                         f"'reflection', got {padding_mode!r}")
    align_corners = _default_align_corners(align_corners)
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise ShapeError(f"{op}: expected 4-D or 5-D input and a grid of the same rank, got "
                         f"input {tuple(input.shape)} and grid {tuple(grid.shape)}")
    d = input.ndim - 2
    if grid.shape[-1] != d:
        raise ShapeError(f"{op}: expected a grid with size {d} in its last dim (x, y"
                         f"{', z' if d == 3 else ''}) for {input.ndim}-D input, got "
                         f"{tuple(grid.shape)}")
    if grid.shape[0] != input.shape[0]:
        raise ShapeError(f"{op}: expected grid and input to have the same batch size, got "
                         f"input {tuple(input.shape)} and grid {tuple(grid.shape)}")
    if not input.is_floating_point() or grid.dtype is not input.dtype:
        raise DtypeError(f"{op}: expected a floating input and a grid of its dtype, got "
                         f"{input.dtype} and {grid.dtype}; convert the grid with "
                         f"grid.to(input.dtype)")
    if mode == "bicubic" and d == 3:
        raise NotImplementedError(f"{op}: bicubic interpolation only supports 4-D input; use "
                                  f"'bilinear' or 'nearest' for 5-D")
    return E.grid_sampler(input, grid, _MODES[mode], _PADDINGS[padding_mode], align_corners)
