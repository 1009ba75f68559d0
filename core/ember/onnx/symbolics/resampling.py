"""Symbolics of resampling: ``upsample_nearest2d`` and ``upsample_bilinear2d`` (what
``F.interpolate`` traces for 4-D input in modes 'nearest' and 'bilinear'),
``pixel_shuffle`` and ``pixel_unshuffle``.

Mapping (ONNX operators, https://onnx.ai/onnx/operators/):

* ``upsample_nearest2d`` -> ``Resize`` (mode nearest, ``asymmetric`` coordinates,
  ``nearest_mode=floor``): ember's ``src = min(floor(dst * s), n - 1)``. ember steps by
  ``float32(1 / scale)`` where ONNX divides by the scale, so the symbolic computes both
  index rules and, where one source index differs (or for a dtype onnxruntime's Resize
  lacks), gathers ember's own indices with ``Gather`` per dim instead.
* ``upsample_bilinear2d`` -> ``Resize`` (mode linear) with ``coordinate_transformation_mode``
  ``align_corners`` for align_corners=True and ``half_pixel`` for False (aten's
  ``max(s (dst + 0.5) - 0.5, 0)``; ``pytorch_half_pixel`` would differ for an output size 1).
* The given scales go in as Resize's ``scales`` (so the sizes follow dynamic spatial axes);
  without scales, ``sizes``.
* ``pixel_shuffle`` -> ``DepthToSpace`` (mode CRD) on 4-D float input; ``pixel_unshuffle``
  and the other cases -> ember's Reshape, Transpose, Reshape (ONNX's ``SpaceToDepth``
  orders the output channels (i r + j) C + c, not pixel_unshuffle's c r^2 + i r + j).

Departures: bilinear weights are computed in float32 by onnxruntime (ember: float64, then
rounded), an error near 1e-7.

Reference: PyTorch's ``torch/onnx/symbolic_opset11.py`` / ``symbolic_helper.py``
(``_interpolate_helper``; the mapping; own code), aten's ``UpSample.h``.
"""
from __future__ import annotations

import numpy as np

from ... import types as _t
from ...nn.functional.upsampling import _nearest_index   # ember's own rule, shared
from ..context import OnnxValue, takes_size_values, traced_value
from ..registry import builtin
from ._shapes import _Dim, _flags, _ntuple, _perm, _reshape, _shape, _spatial

_RESIZE_TYPES = (_t.float32, _t.int32, _t.int8, _t.uint8)   # onnxruntime's CPU Resize


def _ember_nearest(n: int, n_out: int, scale) -> np.ndarray:
    if n_out == n:          # ember returns the input as is
        return np.arange(n)
    return _nearest_index(n, n_out, scale, False)


def _onnx_nearest(n: int, n_out: int, scale: np.float32) -> np.ndarray:
    """Resize's asymmetric floor rule: floor(dst / scale), clamped to the input."""
    dst = np.arange(n_out, dtype=np.float32)
    return np.minimum(np.floor(dst / scale).astype(np.int64), n - 1)


def _resize(g, x, out, scales, mode: str, **attrs):   # out: ints or run-time sizes
    """Resize by ``scales`` (given ones) or to ``sizes`` ``out`` (N and C kept)."""
    if scales is not None:
        scale_in = g.constant(np.array([1, 1] + list(scales), dtype=np.float32))
        return g.op("Resize", x, None, scale_in, mode=mode, dtype=x.dtype, **attrs)
    sizes = _shape(g, x, [_Dim(0), _Dim(1)] + list(out))
    return g.op("Resize", x, None, None, sizes, mode=mode, dtype=x.dtype, **attrs)


def _output_size(g, output_size):
    """(the traced output sizes, the items to write: ints or run-time sizes)."""
    items = list(output_size) if isinstance(output_size, (list, tuple)) else [output_size]
    return _ntuple(traced_value(items), 2), (items * 2 if len(items) == 1 else items)


def _given_scales(g, x, out, scales, items):
    """The scales to pass to Resize (float32), or None to pass the sizes: the given
    scales when both are positive and give ember's sizes; a dynamic output size needs them
    or sizes computed in the graph."""
    computed = any(isinstance(it, OnnxValue) for it in items)
    dyn = _flags(g.dynamic(1), 2) if not computed else (False, False)
    sizes, _ = _spatial(x, 2)
    ok = all(s is not None and s > 0 for s in scales)
    if ok:
        f32 = [np.float32(s) for s in scales]
        ok = all(int(np.floor(n * float(s))) == o for n, s, o in zip(sizes, f32, out))
    if any(dyn) and not ok:
        g.fail(f"the output size {out} follows a dynamic axis, but its scales {list(scales)} "
               f"do not give it as ONNX Resize computes sizes; pass scale_factor (without "
               f"recompute_scale_factor), or export with static spatial sizes")
    return [np.float32(s) for s in scales] if ok else None


@builtin("ember::upsample_nearest2d")
@takes_size_values
def upsample_nearest2d(g, x, output_size, scales_h=None, scales_w=None):
    """Resize (nearest, asymmetric, floor) where its source indices are ember's, else
    Gather of ember's indices per spatial dim."""
    out, items = _output_size(g, output_size)
    scales = _given_scales(g, x, out, (scales_h, scales_w), items)
    sizes, dynamic = _spatial(x, 2)
    if dynamic:
        # ember's and Resize's rules over any size up to 2^16 cells
        same = scales is not None and all(
            np.array_equal(_ember_nearest(1 << 30, 1 << 16, given),
                           _onnx_nearest(1 << 30, 1 << 16, s))
            for given, s in zip((scales_h, scales_w), scales))
    else:
        used = scales or [np.float32(o) / np.float32(n) for n, o in zip(sizes, out)]
        same = all(np.array_equal(_ember_nearest(n, o, sc), _onnx_nearest(n, o, u))
                   for n, o, sc, u in zip(sizes, out, (scales_h, scales_w), used))
    if same and x.dtype in _RESIZE_TYPES:
        return _resize(g, x, items, scales, "nearest", coordinate_transformation_mode="asymmetric",
                       nearest_mode="floor")
    if dynamic:
        g.fail(f"upsample_nearest2d over a dynamic spatial axis with scales {scales_h}, "
               f"{scales_w} in {x.dtype.name}: ONNX Resize's source cells are ember's only "
               f"for given scales checked here (and float32, int32, int8, uint8 input); pass "
               f"scale_factor, or export with static spatial sizes")
    y = x
    for i, (n, o, sc) in enumerate(zip(sizes, out, (scales_h, scales_w))):
        if o != n:
            y = g.op("Gather", y, g.ints(_ember_nearest(n, o, sc)), axis=x.rank - 2 + i,
                     dtype=x.dtype)
    return y


@builtin("ember::upsample_bilinear2d")
@takes_size_values
def upsample_bilinear2d(g, x, output_size, align_corners, scales_h=None, scales_w=None):
    """Resize (linear) with align_corners or half_pixel coordinates."""
    out, items = _output_size(g, output_size)
    scales = _given_scales(g, x, out, (scales_h, scales_w), items)
    mode = "align_corners" if align_corners else "half_pixel"
    work = _t.float32 if x.dtype in (_t.float16, _t.bfloat16) else x.dtype
    y = _resize(g, g.cast(x, work), items, scales, "linear",
                coordinate_transformation_mode=mode)
    return g.cast(y, x.dtype)


def _shuffle(g, x, r: int, inverse: bool):
    """ember's composition: (*, c r^2, h, w) <-> (*, c, h r, w r) by Reshape, Transpose,
    Reshape (the leading dims may follow dynamic axes; C, H and W may not)."""
    k = x.rank - 3
    if any(x.is_dynamic(d) for d in range(k, k + 3)):
        g.fail(f"pixel_{'un' if inverse else ''}shuffle over a dynamic channel or spatial "
               f"axis on a {x.rank}-D input: export with static C, H and W (or a 4-D "
               f"float input for pixel_shuffle)")
    lead = [_Dim(j) for j in range(k)]
    c, h, w = x.sizes[k:]
    if inverse:
        y = _reshape(g, x, lead + [c, h // r, r, w // r, r])
        y = _perm(g, y, list(range(k)) + [k, k + 2, k + 4, k + 1, k + 3])
        return _reshape_lead(g, y, x, k, [c * r * r, h // r, w // r])
    y = _reshape(g, x, lead + [c // (r * r), r, r, h, w])
    y = _perm(g, y, list(range(k)) + [k, k + 3, k + 1, k + 4, k + 2])
    return _reshape_lead(g, y, x, k, [c // (r * r), h * r, w * r])


def _reshape_lead(g, y, x, k: int, tail: list):
    """Reshape ``y`` to x's k leading dims and ``tail``."""
    if not any(x.is_dynamic(d) for d in range(k)):
        return g.op("Reshape", y, g.ints(list(x.sizes[:k]) + tail), dtype=y.dtype)
    shape = g.op("Concat", g.shape_of(x, 0, k), g.ints(tail), axis=0, dtype=_t.int64)
    return g.op("Reshape", y, shape, dtype=y.dtype)


@builtin("ember::pixel_shuffle")
def pixel_shuffle(g, x, upscale_factor):
    """DepthToSpace (CRD) on 4-D float32/float64 input, else composed."""
    r = int(upscale_factor)
    if x.rank == 4 and x.dtype in (_t.float32, _t.float64):
        return g.op("DepthToSpace", x, blocksize=r, mode="CRD", dtype=x.dtype)
    return _shuffle(g, x, r, False)


@builtin("ember::pixel_unshuffle")
def pixel_unshuffle(g, x, downscale_factor):
    """Reshape, Transpose, Reshape (see the module docstring for SpaceToDepth)."""
    return _shuffle(g, x, int(downscale_factor), True)
