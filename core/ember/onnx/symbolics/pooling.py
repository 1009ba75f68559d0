"""Symbolics of the pooling ops: ``max_pool1d/2d/3d``, ``max_pool2d_with_indices``,
``avg_pool1d/2d/3d``, ``adaptive_avg_pool1d/2d/3d`` and ``adaptive_max_pool1d/2d/3d``.
(LPPool1d/2d/3d trace as ``pow``, ``avg_pool`` and elementwise ops, max_unpool and
fractional max pooling as scatter / gather, each exported by its own symbolic.)

Mapping (ONNX operators, https://onnx.ai/onnx/operators/):

* ``max_pool1d/2d`` -> ``MaxPool``; ``max_pool2d_with_indices`` -> ``MaxPool`` with its
  Indices output, which counts over the whole (N, C, H, W) tensor, taken ``Mod H*W`` to
  get ember's per-plane ``h * W + w``. ``avg_pool1d/2d`` -> ``AveragePool``;
  ``adaptive_avg_pool2d`` -> ``GlobalAveragePool`` (output 1x1), ``AveragePool`` (sizes
  that divide), else ``MatMul`` with the averaging matrices ember itself uses.
  ``adaptive_max_pool1d/2d`` -> ``GlobalMaxPool`` (output 1, indices unused), else
  ``MaxPool`` with a derived kernel and stride when ember's windows all have one length
  and one spacing (the input size divides the output size, and a few more), its indices
  as max_pool2d_with_indices's; other sizes are an UnsupportedOperatorError (ONNX pooling
  has no windows of varying length), as in PyTorch's exporter.

Departures and choices:

* ceil_mode pooling: ONNX drops a last window that would start in the right padding, as
  ember does, but ONNX shape inference does not; with static sizes the symbolic asks for
  ceil_mode only when it changes the output size, and lengthens the end padding where
  one dim needs ceil and another does not (through a Pad of -inf when onnxruntime's
  pads-below-the-kernel rule would reject it, for dilated max pooling). avg_pool's
  divisor_override, and count_include_pad with lengthened padding, divide zero-padded
  window sums by ember's divisors.
* MaxPool ignores NaN after the first element of a window (ember's gives NaN), as in
  PyTorch's exporter. Integer max pooling goes through float64 (exact for int16/int32);
  int64 is declined.

Reference: PyTorch's ``torch/onnx/symbolic_opset9.py``, ``symbolic_opset11.py``,
``symbolic_opset13.py`` and ``symbolic_opset17.py`` (the mapping; own code).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ... import types as _t
from ...nn.functional.pooling import _window_counts  # ember's own divisors, shared
from ..errors import UnsupportedOperatorError
from ..registry import builtin
from ._shapes import _batched, _ntuple, _spatial, _squeeze, _typed, _unbatched, _unsqueeze


def _pool_geometry(g, x, nd, kernel, stride, padding, dilation, ceil_mode) -> dict:
    """ONNX pads and ceil_mode giving ember's output sizes, and whether the end padding
    had to be lengthened (``extended``).

    ember (like PyTorch and the ONNX spec) drops a ceil_mode window that would start in
    the right padding; ONNX shape inference does not, so with static sizes ceil_mode is
    asked for only when it gives ember's size in every dim, else the end padding is
    lengthened to reach it in floor mode."""
    k, p, d = _ntuple(kernel, nd), _ntuple(padding, nd), _ntuple(dilation, nd)
    default = stride is None or (isinstance(stride, (list, tuple)) and not stride)
    s = list(k) if default else _ntuple(stride, nd)
    geo = dict(kernel_shape=k, strides=s, pads=p + p, ceil_mode=0, extended=False)
    if not ceil_mode:
        return geo
    sizes, dynamic = _spatial(x, nd)
    if dynamic:
        geo["ceil_mode"] = 1    # the sizes are not known here; ONNX's rule is ember's
        return geo
    out = tuple(g.out(0).sizes[-nd:])
    span = [di * (ki - 1) + 1 for ki, di in zip(k, d)]
    floor = tuple((n + 2 * pi - sp) // si + 1 for n, pi, sp, si in zip(sizes, p, span, s))
    ceil = tuple(-(-(n + 2 * pi - sp) // si) + 1 for n, pi, sp, si in zip(sizes, p, span, s))
    if out == ceil and out != floor:
        geo["ceil_mode"] = 1
    elif out != floor:
        ends = [max(pi, (o - 1) * si + sp - n - pi)
                for n, pi, sp, si, o in zip(sizes, p, span, s, out)]
        geo.update(pads=p + ends, extended=True)
    return geo


def _lowest(dtype):
    """The value max pooling's padding stands for: -inf, or the integer minimum."""
    return -np.inf if dtype.is_floating_point else np.iinfo(dtype.numpy).min


def _max_pool(g, x, nd, kernel, stride, padding, dilation, ceil_mode, indices=False):
    geo = _pool_geometry(g, x, nd, kernel, stride, padding, dilation, ceil_mode)
    geo.pop("extended")
    dtype = x.dtype
    if dtype is _t.int64:
        g.fail("max pooling of int64 has no ONNX kernel (MaxPool takes floating, int8 and "
               "uint8) and float64 would round values above 2**53; convert the input to a "
               "floating dtype in the model (x.double())")
    work = _t.float64 if dtype in (_t.int16, _t.int32) else dtype
    xb, added = _batched(g, g.cast(x, work), nd)
    begins, ends = geo["pads"][:nd], geo["pads"][nd:]
    extra = [0] * nd
    if any(e >= k for e, k in zip(ends, geo["kernel_shape"])):
        # onnxruntime takes pads below the kernel only: the lengthened end padding of a
        # dilated ceil_mode pool goes into a Pad of the lowest value instead
        extra = [e - b for b, e in zip(begins, ends)]
        xb = g.op("Pad", xb, g.ints([0] * (2 + nd) + [0, 0] + extra),
                  g.scalar(_lowest(work), dtype=work), mode="constant", dtype=work)
        geo["pads"] = begins + begins
    dil = _ntuple(dilation, nd)
    if not indices:
        y = g.op("MaxPool", xb, dilations=dil, dtype=work, **geo)
        return g.cast(_unbatched(g, y, added), dtype)
    y, idx = g.op("MaxPool", xb, outputs=2, dilations=dil, dtype=work, **geo)
    idx.dtype = _t.int64
    return (g.cast(_unbatched(g, y, added), dtype),
            _unbatched(g, _plane_indices(g, x, xb, idx, extra), added))


def _plane_indices(g, x, xb, idx, extra):
    """MaxPool's indices count over the whole tensor, ((n * C + c) * H + h) * W + w (of
    the Pad's output when ``extra`` end padding was added); ember's h * W + w per plane."""
    if _spatial(x, 2)[1]:
        plane = g.op("ReduceProd", g.shape_of(xb, 2), keepdims=1, dtype=_t.int64)
        return g.op("Mod", idx, plane, dtype=_t.int64)
    (h, w), (eh, ew) = x.sizes[-2:], extra
    idx = g.op("Mod", idx, g.ints([(h + eh) * (w + ew)]), dtype=_t.int64)
    if ew:
        row = g.op("Div", idx, g.ints([w + ew]), dtype=_t.int64)
        col = g.op("Mod", idx, g.ints([w + ew]), dtype=_t.int64)
        idx = g.op("Add", g.op("Mul", row, g.ints([w]), dtype=_t.int64), col,
                   dtype=_t.int64)
    return idx


@builtin("ember::max_pool2d")
def max_pool2d(g, x, kernel_size, stride, padding, dilation, ceil_mode):
    return _max_pool(g, x, 2, kernel_size, stride, padding, dilation, ceil_mode)


@builtin("ember::max_pool1d")
def max_pool1d(g, x, kernel_size, stride, padding, dilation, ceil_mode):
    return _max_pool(g, x, 1, kernel_size, stride, padding, dilation, ceil_mode)


@builtin("ember::max_pool2d_with_indices")
def max_pool2d_with_indices(g, x, kernel_size, stride, padding, dilation, ceil_mode):
    """MaxPool's Indices taken modulo H*W: ember's indices are per (n, c) plane."""
    return _max_pool(g, x, 2, kernel_size, stride, padding, dilation, ceil_mode, True)


def _avg_pool(g, x, nd, kernel, stride, padding, ceil_mode, count_include_pad,
              divisor_override=None):
    geo = _pool_geometry(g, x, nd, kernel, stride, padding, 1, ceil_mode)
    extended = geo.pop("extended")
    if divisor_override is None and not (extended and count_include_pad):
        xb, added = _batched(g, x, nd)
        y = g.op("AveragePool", xb, count_include_pad=int(bool(count_include_pad)),
                 dtype=x.dtype, **geo)
        return _unbatched(g, y, added)
    return _window_sum_pool(g, x, nd, geo, count_include_pad, divisor_override)


def _window_sum_pool(g, x, nd, geo, count_include_pad, divisor_override):
    """Window sums divided as ember divides them: zero Pad, AveragePool over whole
    windows times the window size, then the divisor (divisor_override, or ember's
    per-position counts when padding was lengthened)."""
    k, s, pads = geo["kernel_shape"], geo["strides"], geo["pads"]
    sizes, dynamic = _spatial(x, nd)
    if geo["ceil_mode"]:
        if dynamic:
            g.fail("avg_pool with divisor_override and ceil_mode over a dynamic spatial axis: "
                   "the windows past the edge depend on the size; export with static "
                   "spatial sizes or ceil_mode=False")
        out = g.out(0).sizes[-nd:]
        pads = pads[:nd] + [max(pe, (o - 1) * si + ki - n - pb) for n, pb, pe, ki, si, o
                            in zip(sizes, pads[:nd], pads[nd:], k, s, out)]
    lead = x.rank - nd
    padded = g.op("Pad", x, g.ints([0] * lead + pads[:nd] + [0] * lead + pads[nd:]),
                  mode="constant", dtype=x.dtype) if any(pads) else x
    xb, added = _batched(g, padded, nd)
    mean = g.op("AveragePool", xb, kernel_shape=k, strides=s, dtype=x.dtype)
    total = g.op("Mul", _unbatched(g, mean, added), g.scalar(math.prod(k), like=x),
                 dtype=x.dtype)
    if divisor_override is not None:
        divisor = g.scalar(divisor_override, like=x)
    else:
        out = g.out(0).sizes[-nd:]
        per_dim = [_window_counts(n, ki, si, pi, o, count_include_pad)
                   for n, ki, si, pi, o in zip(sizes, k, s, geo["pads"][:nd], out)]
        divisor = g.constant(functools.reduce(np.multiply.outer, map(np.array, per_dim)),
                             dtype=x.dtype)
    return g.op("Div", total, divisor, dtype=x.dtype)


@builtin("ember::avg_pool2d")
def avg_pool2d(g, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
               divisor_override):
    """AveragePool; divisor_override divides zero-padded window sums instead."""
    return _avg_pool(g, x, 2, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


@builtin("ember::avg_pool1d")
def avg_pool1d(g, x, kernel_size, stride, padding, ceil_mode, count_include_pad):
    return _avg_pool(g, x, 1, kernel_size, stride, padding, ceil_mode, count_include_pad)


def _averaging_matrix(n: int, n_out: int) -> np.ndarray:
    """ember's (n_out, n) adaptive averaging matrix: row i averages floor(i n / n_out) ..
    ceil((i + 1) n / n_out)."""
    a = np.zeros((n_out, n))
    for i in range(n_out):
        start, end = i * n // n_out, -(-(i + 1) * n // n_out)
        a[i, start:end] = 1.0 / (end - start)
    return a


@builtin("ember::adaptive_avg_pool2d")
def adaptive_avg_pool2d(g, x, output_size):
    """GlobalAveragePool for 1x1, AveragePool when the sizes divide, else MatMul with
    ember's averaging matrices (A_h @ x @ A_w^T)."""
    oh, ow = _ntuple(output_size, 2)
    if (oh, ow) == (1, 1):
        xb, added = _batched(g, x, 2)
        return _unbatched(g, g.op("GlobalAveragePool", xb, dtype=x.dtype), added)
    (h, w), dynamic = _spatial(x, 2)
    if dynamic:
        g.fail(f"adaptive_avg_pool2d to {[oh, ow]} over a dynamic spatial axis: its windows "
               f"depend on the input size, which ONNX pooling cannot follow; export with "
               f"static spatial sizes, or pool to 1x1")
    if oh == 0 or ow == 0:
        g.fail(f"adaptive_avg_pool2d to an empty output {[oh, ow]} is not exported")
    if h % oh == 0 and w % ow == 0:
        xb, added = _batched(g, x, 2)
        k = [h // oh, w // ow]
        y = g.op("AveragePool", xb, kernel_shape=k, strides=k, dtype=x.dtype)
        return _unbatched(g, y, added)
    y = x
    if oh != h:
        y = g.op("MatMul", g.constant(_averaging_matrix(h, oh), dtype=x.dtype), y,
                 dtype=x.dtype)
    if ow != w:
        y = g.op("MatMul", y, g.constant(_averaging_matrix(w, ow).T, dtype=x.dtype),
                 dtype=x.dtype)
    return y


def _adaptive_window(n: int, n_out: int):
    """(kernel, stride) of a MaxPool whose windows are ember's adaptive windows over a dim
    of size n (cells floor(i n / out) .. ceil((i + 1) n / out) - 1), or None when those
    differ in length or spacing."""
    bounds = [(i * n // n_out, -(-(i + 1) * n // n_out)) for i in range(n_out)]
    k = bounds[0][1] - bounds[0][0]
    s = bounds[1][0] if n_out > 1 else 1
    if s < 1 or any(e - b != k or b != i * s for i, (b, e) in enumerate(bounds)):
        return None
    return k, s


def _adaptive_max_pool(g, x, nd: int, output_size):
    name = f"adaptive_max_pool{nd}d"
    out = _ntuple(output_size, nd)
    # NOTE: the node always has the indices output; build them only when they are read
    indices = g.node is None or g.node.outputs[1].has_uses
    sizes, dynamic = _spatial(x, nd)
    if all(o == 1 for o in out) and not indices:
        xb, added = _batched(g, x, nd)
        return _unbatched(g, g.op("GlobalMaxPool", xb, dtype=x.dtype), added), None
    if dynamic:
        g.fail(f"{name} to {out} over a dynamic spatial axis: its windows depend on the input "
               f"size, which ONNX pooling cannot follow; export with static spatial sizes, or "
               f"pool to size 1 without indices")
    if 0 in out:
        g.fail(f"{name} to an empty output {out} is not exported")
    geo = [_adaptive_window(n, o) for n, o in zip(sizes, out)]
    if None in geo:
        raise UnsupportedOperatorError(
            g.node.kind if g.node is not None else f"ember::{name}",
            f"ONNX export of {name}: input size {list(sizes)} to output size {out} gives "
            f"windows of different lengths or spacings, which ONNX MaxPool cannot express "
            f"(it exports when each output size divides its input size, or is 1); resize the "
            f"input to a multiple of the output size (F.interpolate or padding), or register "
            f"a symbolic with ember.onnx.register_symbolic", g.node)
    kernel, stride = [k for k, _ in geo], [s for _, s in geo]
    if not indices:
        return _max_pool(g, x, nd, kernel, stride, 0, 1, False), None
    if nd == 2:
        return _max_pool(g, x, 2, kernel, stride, 0, 1, False, True)
    # 1-D indices: pool (.., 1, L) as a plane of height 1, whose indices are positions in L
    x2 = _typed(_unsqueeze(g, x, [-2]), x.sizes[:-1] + (1,) + x.sizes[-1:],
                x.dynamic[:-1] + (False,) + x.dynamic[-1:] if x.dynamic else None)
    y, idx = _max_pool(g, x2, 2, [1] + kernel, [1] + stride, 0, 1, False, True)
    return _squeeze(g, y, [-2]), _squeeze(g, idx, [-2])


@builtin("ember::adaptive_max_pool2d")
def adaptive_max_pool2d(g, x, output_size):
    """GlobalMaxPool for 1x1 without indices, else MaxPool with the derived kernel and
    stride (UnsupportedOperatorError when ember's windows vary)."""
    return _adaptive_max_pool(g, x, 2, output_size)


@builtin("ember::adaptive_max_pool1d")
def adaptive_max_pool1d(g, x, output_size):
    """As adaptive_max_pool2d, along L; indices through a height-1 MaxPool."""
    return _adaptive_max_pool(g, x, 1, output_size)


# ---- 3-D pooling and adaptive_avg_pool1d (the 2-D symbolics over another rank) -------------

@builtin("ember::max_pool3d")
def max_pool3d(g, x, kernel_size, stride, padding, dilation, ceil_mode):
    return _max_pool(g, x, 3, kernel_size, stride, padding, dilation, ceil_mode)


@builtin("ember::avg_pool3d")
def avg_pool3d(g, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
               divisor_override):
    return _avg_pool(g, x, 3, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


@builtin("ember::adaptive_avg_pool1d")
def adaptive_avg_pool1d(g, x, output_size):
    """adaptive_avg_pool2d's export over a height-1 (.., 1, L) view."""
    x2 = _typed(_unsqueeze(g, x, [-2]), x.sizes[:-1] + (1,) + x.sizes[-1:],
                x.dynamic[:-1] + (False,) + x.dynamic[-1:] if x.dynamic else None)
    return _squeeze(g, adaptive_avg_pool2d(g, x2, [1] + _ntuple(output_size, 1)), [-2])


@builtin("ember::adaptive_avg_pool3d")
def adaptive_avg_pool3d(g, x, output_size):
    """GlobalAveragePool for 1x1x1, AveragePool when each size divides; other sizes have
    windows of varying length, which ONNX pooling cannot express."""
    out = _ntuple(output_size, 3)
    xb, added = _batched(g, x, 3)
    if out == [1, 1, 1]:
        return _unbatched(g, g.op("GlobalAveragePool", xb, dtype=x.dtype), added)
    sizes, dynamic = _spatial(x, 3)
    if dynamic or 0 in out or any(n % o for n, o in zip(sizes, out)):
        g.fail(f"adaptive_avg_pool3d from {list(sizes)} to {out}: exported only to 1x1x1 or "
               f"to sizes that divide static input sizes (ONNX AveragePool); resize the input "
               f"to a multiple of the output size")
    k = [n // o for n, o in zip(sizes, out)]
    y = g.op("AveragePool", xb, kernel_shape=k, strides=k, dtype=x.dtype)
    return _unbatched(g, y, added)


@builtin("ember::adaptive_max_pool3d")
def adaptive_max_pool3d(g, x, output_size):
    """As adaptive_max_pool2d, without indices (MaxPool's 3-D indices are not mapped)."""
    if g.node is None or g.node.outputs[1].has_uses:
        g.fail("adaptive_max_pool3d with return_indices is not exported; export the values "
               "only (return_indices=False)")
    return _adaptive_max_pool(g, x, 3, output_size)
