"""The kernel pair of ``grid_sampler`` for 'bilinear' (trilinear) and 'nearest' sampling
with 'zeros' padding, written once against ``xp`` (numpy or CuPy).

The composite in ``vision.py`` records ~30 ember ops per call; here the same arithmetic
runs on arrays (``autograd/kernel_pair.py``), and the composite stays the reference for
double backward and tracing. Values match the composite's: coordinates are computed in the
input's dtype by the same operations (float16/bfloat16 in float32, rounded once at the
end), the input is held channels-first as (C, N S) (a transpose that moves whole planes) and
each tap is one ``take`` along its last axis: C contiguous gathers of N P points (numpy's
``take`` is ~8x faster than fancy indexing; a channels-last layout costs two transposes of
short rows, slower than the gathers themselves).

* forward: for each of the 2^d taps (1 for 'nearest') its flat position and weight
  (the product of the fractional parts, 0 outside the input), then
  ``out = sum_t rows[pos_t] * w_t``;
* backward, input: each tap's ``grad * w_t`` summed into the columns at ``pos_t``
  (``_scatter_columns``: a scatter-add; overlapping taps add up);
* backward, grid ('bilinear' only; 'nearest' gives 0, as PyTorch): d out / d coord_j =
  sum_t rows[pos_t] * (+-1) * prod_{i != j} w_{t, i}, times d coord / d grid = scale_j.

Reference: torch.nn.functional.grid_sample (ATen's GridSamplerKernel.cpp).
"""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np  # host-side dtype facts only; arrays go through xp


def _compute_dtype(xp, dtype):
    """float16/bfloat16 compute in float32 (opmath), float32/float64 in their own."""
    return xp.float32 if np.dtype(dtype).itemsize == 2 else dtype


_CORNERS = {d: np.array([bits[::-1] for bits in itertools.product((0, 1), repeat=d)])
            for d in (2, 3)}  # (T, d) of 0/1, x varying fastest (the composite's order)


@functools.lru_cache(maxsize=64)
def _constants(xp, xyz: tuple, align_corners: bool, nearest: bool, dtype: str, m: int,
               points: int):
    """What ``_taps`` needs that depends only on shapes and arguments, cached: the
    coordinate scale (d,), each coordinate's corner bits [(T,)] and the batch offsets of
    the taps' columns (M, T)."""
    d = len(xyz)
    scale = xp.asarray([(s - 1) / 2 if align_corners else s / 2 for s in xyz], dtype)
    bits = None if nearest else [xp.asarray(_CORNERS[d][:, j], dtype) for j in range(d)]
    batch = (xp.arange(m, dtype=xp.int64) // points) * math.prod(xyz)
    pos0 = xp.repeat(batch[:, None], 1 if nearest else 2 ** d, axis=1)
    return scale, bits, pos0


def _taps(xp, grid, sizes, nearest: bool, align_corners: bool, points: int):
    """(pos, w, wd, corners, inside) for grid (M, d) in the compute dtype, M = N P points,
    and the input's spatial sizes (D, H, W order; the grid's last dim is x, y[, z]): the
    T taps' column in the (C, N S) input, (M, T) int64; their weights (M, T), 0 outside
    the input; the per-coordinate weights [(M, T)] * d and the corners (T, d) of 0/1
    (None for 'nearest'); whether each tap is inside (M, T). One loop over the d
    coordinates: reductions over a last axis of 2 or 3 are slow in numpy."""
    xyz = sizes[::-1]
    d = len(xyz)
    scale, bits, pos0 = _constants(xp, xyz, align_corners, nearest, grid.dtype.str,
                                   grid.shape[0], points)
    coords = grid + 1
    coords *= scale
    if not align_corners:
        coords -= grid.dtype.type(0.5)
    pos = pos0.copy()
    inside = xp.ones(pos.shape, dtype=bool)
    corners = None if nearest else _CORNERS[d]
    wd = []
    for j in range(d):
        cj = coords[:, j]
        if nearest:
            c = xp.rint(cj)[:, None]
        else:
            base = xp.floor(cj)
            frac = (cj - base)[:, None]
            bit = bits[j]
            c = base[:, None] + bit
            wd.append(frac * bit + (1 - frac) * (1 - bit))
        inside &= (c >= 0) & (c <= xyz[j] - 1)
        pos += xp.clip(c, 0, xyz[j] - 1).astype(xp.int64) * math.prod(xyz[:j])
    if nearest:
        return pos, inside.astype(grid.dtype), None, None, inside
    w = wd[0] * inside
    for v in wd[1:]:
        w *= v
    return pos, w, wd, corners, inside


def _columns(xp, a, dtype):
    """(N, C, *S) as (C, N S) in the compute dtype (whole planes move)."""
    n, c = a.shape[:2]
    return xp.ascontiguousarray(a.reshape(n, c, -1).transpose(1, 0, 2)).astype(
        dtype, copy=False).reshape(c, -1)


def _scatter_columns(xp, pos, contrib, ncols: int):
    """zeros (C, ncols) with each column of ``contrib`` (C, M) added at column ``pos``
    (M,): a scatter-add, as one ``bincount`` per channel (a contiguous row of weights;
    float64 accumulation). NOTE: measured ~6x faster than one bincount over the M C flat
    positions, than sorting the columns by position (the gathers of M C elements in that
    order dominate), or ``add.at``."""
    out = xp.empty((contrib.shape[0], ncols), dtype=contrib.dtype)
    for k in range(contrib.shape[0]):
        out[k] = xp.bincount(pos, weights=contrib[k], minlength=ncols)
    return out


def _setup(xp, a, grid, mode, align_corners, taps=None):
    """(N, C, sizes, compute dtype, grid (M, d), taps): the taps from ``_taps`` unless
    the forward's are given."""
    n, c = a.shape[:2]
    sizes = tuple(a.shape[2:])
    ct = _compute_dtype(xp, a.dtype)
    g = grid.reshape(-1, len(sizes)).astype(ct, copy=False)
    points = g.shape[0] // n if n else 1
    if taps is None:
        taps = _taps(xp, g, sizes, mode == 1, align_corners, points)
    return n, c, sizes, ct, g, taps


def forward(xp, arrays, args):
    """(out (N, C, *out_spatial), taps) of grid_sampler for mode 0 (bilinear) or 1
    (nearest) with zeros padding; args = (interpolation_mode, align_corners). The taps
    are the backward's state (kept only while a graph holds the call)."""
    a, grid = arrays
    n, c, sizes, ct, g, taps = _setup(xp, a, grid, *args)
    pos, w = taps[:2]
    x = _columns(xp, a, ct)
    out = None
    for t in range(pos.shape[1]):
        v = xp.take(x, pos[:, t], axis=1)                                  # (C, M)
        v *= w[:, t]
        out = v if out is None else xp.add(out, v, out=out)
    out = xp.ascontiguousarray(out.reshape(c, n, -1).transpose(1, 0, 2))
    return out.astype(a.dtype, copy=False).reshape((n, c) + tuple(grid.shape[1:-1])), taps


def backward(xp, grad, arrays, state, args, needs):
    """(grad_input, grad_grid) of ``forward``, each None where ``needs`` says no."""
    a, grid = arrays
    mode, align_corners = args
    n, c, sizes, ct, g, (pos, w, wd, corners, inside) = _setup(xp, a, grid, *args, state)
    gout = _columns(xp, grad, ct)                                          # (C, M)
    grad_input = grad_grid = None
    if needs[0]:
        taps = pos.shape[1]
        contrib = (gout[:, :, None] * w).reshape(c, -1) if taps > 1 else gout * w[:, 0]
        gx = _scatter_columns(xp, pos.reshape(-1), contrib, n * math.prod(sizes))
        grad_input = xp.ascontiguousarray(gx.reshape(c, n, -1).transpose(1, 0, 2)).astype(
            a.dtype, copy=False).reshape(a.shape)
    if needs[1]:
        gg = xp.zeros(g.shape, dtype=ct)
        if mode != 1:
            x = _columns(xp, a, ct)
            d = len(sizes)
            xyz = sizes[::-1]
            sign = (2 * corners - 1).tolist()                              # (T, d)
            for t in range(pos.shape[1]):
                v = xp.take(x, pos[:, t], axis=1)
                v *= gout
                gv = v.sum(0) * inside[:, t]     # sum over channels of grad * tap: (M,)
                for j in range(d):
                    dw = gv * sign[t][j]
                    for i in range(d):
                        if i != j:
                            dw = dw * wd[i][:, t]
                    gg[:, j] += dw
            gg *= xp.asarray([(s - 1) / 2 if align_corners else s / 2 for s in xyz], ct)
        grad_grid = gg.astype(grid.dtype, copy=False).reshape(grid.shape)
    return grad_input, grad_grid
