"""Max-pooling kernels: max_pool2d_with_indices and its backward.

The forward walks the kernel offsets, not the output positions: for each offset (i, j)
it takes the strided view of the input that offset sees (clipped to the rows and columns
inside the input, so padding is never materialized) and folds it into the running
maximum, K elementwise passes for a kh x kw kernel. Windows that tile the input (stride ==
kernel, no padding or dilation: the common case) take a faster path: a copy puts the K
offsets first (two copies with long inner loops on numpy) and one reduction takes the
maximum. A second pass over the offsets, last to first, writes the flat position of the
first maximum in scan order. This gives PyTorch's CPU conventions exactly: indices are
flat positions ``h * W + w`` in each input plane, ties go to the first position in
row-major window order, a window holding NaN reports NaN and the position of its LAST
NaN, and a window of -inf values points at its first real element (never at padding).
float16/bfloat16 compare in float32.

The backward scatters grad_output into the input planes at ``indices``: a plain indexed
assignment when windows cannot overlap (each input element is in at most one window, the
common stride == kernel case), ``bincount`` with weights (a scatter-add) when they can.
Both work for numpy and CuPy.

``pool2d_geometry`` (argument normalization, PyTorch's output-size rule and its checks) is
shared with the composite pooling ops in ``ember.nn.functional.pooling``.
"""
from __future__ import annotations

import math

import numpy as np

from ...errors import ShapeError
from ...types import bool_
from .reduction import LOW_FLOATS, is_float


def pair(op: str, name: str, value, default=None) -> tuple:
    """An int or a 1- or 2-element sequence as (h, w); an empty sequence is ``default``."""
    v = (value,) if isinstance(value, int) else tuple(value)
    if not v and default is not None:
        return default
    if len(v) == 1:
        return v * 2
    if len(v) == 2:
        return v
    raise ShapeError(f"{op}(): {name} must either be a single int, or a tuple of two ints, "
                     f"got {list(v)}")


def output_size(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's ``pooling_output_shape``: windows start inside the input or its left
    padding; ``ceil_mode`` keeps a last, partial window."""
    o = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (o - 1) * s >= n + p:
        o -= 1
    return o


def pool2d_geometry(op: str, shape, kernel_size, stride, padding, dilation, ceil_mode):
    """Check a (N, C, H, W) or (C, H, W) pooling call and return ``(k, s, p, d, out)``,
    each an (h, w) pair, ``out`` the output's spatial size. Raises ShapeError."""
    if len(shape) not in (3, 4) or any(n == 0 for n in shape[-3:]):
        raise ShapeError(f"{op}(): expected a 3-D (C, H, W) or 4-D (N, C, H, W) input with "
                         f"non-zero C, H and W (N may be 0), got shape {list(shape)}")
    k = pair(op, "kernel_size", kernel_size)
    s = pair(op, "stride", stride, default=k)
    p = pair(op, "padding", padding)
    d = pair(op, "dilation", dilation)
    for name, v, low in (("kernel_size", k, 1), ("stride", s, 1), ("dilation", d, 1),
                         ("padding", p, 0)):
        if min(v) < low:
            raise ShapeError(f"{op}(): {name} must be {'positive' if low else 'non-negative'}, "
                             f"got {list(v)}")
    if p[0] > k[0] // 2 or p[1] > k[1] // 2:
        raise ShapeError(f"{op}(): pad should be at most half of kernel size, but got "
                         f"padding={list(p)} and kernel_size={list(k)}; lower the padding")
    h, w = shape[-2:]
    out = (output_size(h, k[0], s[0], p[0], d[0], ceil_mode),
           output_size(w, k[1], s[1], p[1], d[1], ceil_mode))
    if min(out) < 1:
        raise ShapeError(f"{op}(): Given input size: ({shape[-3]}x{h}x{w}). Calculated output "
                         f"size: ({shape[-3]}x{out[0]}x{out[1]}). Output size is too small; "
                         f"use a smaller kernel_size, dilation or stride, or more padding")
    return k, s, p, d, out


def _span(n_in: int, n_out: int, s: int, p: int, offset: int):
    """Output range [o0, o1) whose input position ``o * s - p + offset`` lies in [0, n_in),
    and the first such input position."""
    o0 = max(0, -((offset - p) // s))  # ceil((p - offset) / s)
    o1 = min(n_out, (n_in - 1 + p - offset) // s + 1)
    return o0, o1, o0 * s - p + offset


def kernels(xp) -> dict:
    def windows(x, k, s, p, d, out):
        """Per kernel offset in scan order: (output slice, the input view that offset
        sees, its flat offset i * dh * W + j * dw) for planes x (P, H, W)."""
        h, w = x.shape[1:]
        res = []
        for i in range(k[0]):
            r0, r1, h0 = _span(h, out[0], s[0], p[0], i * d[0])
            if r1 <= r0:
                continue
            for j in range(k[1]):
                c0, c1, w0 = _span(w, out[1], s[1], p[1], j * d[1])
                if c1 <= c0:
                    continue
                view = x[:, h0:h0 + (r1 - r0 - 1) * s[0] + 1:s[0],
                         w0:w0 + (c1 - c0 - 1) * s[1] + 1:s[1]]
                res.append(((slice(None), slice(r0, r1), slice(c0, c1)), view,
                            i * d[0] * w + j * d[1]))
        return res

    def offsets_first(x, kh, kw, oh, ow):
        """Planes x (P, H, W) as (kh * kw, P, oh, ow): the windows' offsets first."""
        p = x.shape[0]
        if xp is np and (oh * kh, ow * kw) == x.shape[1:]:
            # NOTE: one transposing copy has an inner loop ow long (2-4 elements here);
            # two copies with long inner loops are 2-3x faster: the window columns apart
            # (stride kw), then the window rows, ow elements moved as one void item
            cols = np.ascontiguousarray(x.reshape(-1, kw).T)      # (kw, P, oh, kh, ow)
            rows = cols.reshape(kw, p * oh, kh, ow).view(np.dtype((np.void, ow * x.itemsize)))
            t = np.ascontiguousarray(rows[..., 0].transpose(2, 0, 1)).view(x.dtype)
            return t.reshape(kh * kw, p, oh, ow)
        t = x[:, :oh * kh, :ow * kw].reshape(p, oh, kh, ow, kw)
        return t.transpose(2, 4, 0, 1, 3).reshape(kh * kw, p, oh, ow)

    def tiles(x, k, out):
        """The fast path for windows that tile the input (stride == kernel, no padding):
        ``offsets_first`` puts the kh * kw window offsets first, so the maximum is one reduction and
        each offset's plane is contiguous. Returns (values, flat offsets of the first
        maximum within each window, windows as ``windows``)."""
        (kh, kw), (oh, ow), w = k, out, x.shape[2]
        t = offsets_first(x, kh, kw, oh, ow)
        vals = t.max(axis=0)
        # NOTE: the first maximum's position n is the number of leading planes that miss
        # the maximum: counted branch-free (xp.where is slow on unpredictable masks)
        miss = t[0] != vals
        n = miss.view(xp.uint8).copy()
        for i in range(1, kh * kw - 1):
            miss &= t[i] != vals
            n += miss.view(xp.uint8)
        offsets = xp.asarray([i // kw * w + i % kw for i in range(kh * kw)], dtype=xp.int64)
        wins = [(None, t[i], offsets[i]) for i in range(kh * kw)]
        return vals, offsets.take(n), wins

    def max_pool2d_with_indices(a, kernel_size, stride, padding, dilation, ceil_mode):
        k, s, p, d, out = pool2d_geometry("max_pool2d", a.shape, kernel_size, stride,
                                          padding, dilation, ceil_mode)
        x = a.reshape((-1,) + a.shape[-2:])
        if a.dtype in LOW_FLOATS:
            x = x.astype(xp.float32)
        floating = is_float(x.dtype)
        shape = (x.shape[0],) + out
        # NOTE: an input position is base + offset: base = (r sh - ph) W + q sw - pw for
        # output (r, q), offset = i dh W + j dw for kernel cell (i, j); find the offsets.
        if s == k and p == (0, 0) and d == (1, 1) and out[0] * k[0] <= x.shape[1] and \
                out[1] * k[1] <= x.shape[2]:
            vals, off, wins = tiles(x, k, out)
        else:
            lowest = -math.inf if floating else xp.iinfo(x.dtype).min
            vals = xp.full(shape, lowest, dtype=x.dtype)
            wins = windows(x, k, s, p, d, out)
            for o, view, _ in wins:
                xp.maximum(vals[o], view, out=vals[o])
            off = xp.zeros(shape, dtype=xp.int64)
            for o, view, c in reversed(wins):  # the last write is the first maximum
                xp.copyto(off[o], c, where=view == vals[o])
        if floating and bool(xp.isnan(vals).any()):
            for o, view, c in wins:  # NaN != NaN: point at the last NaN, as PyTorch does
                xp.copyto(off if o is None else off[o], c, where=xp.isnan(view))
        w = x.shape[2]
        base = (xp.arange(-p[0], out[0] * s[0] - p[0], s[0], dtype=xp.int64)[:, None] * w
                + xp.arange(-p[1], out[1] * s[1] - p[1], s[1], dtype=xp.int64))
        lead = a.shape[:-2]
        return (vals.astype(a.dtype, copy=False).reshape(lead + out),
                (off + base).reshape(lead + out))

    def max_pool2d_with_indices_backward(grad_output, a, kernel_size, stride, padding,
                                         dilation, ceil_mode, indices):
        k, s, p, d, out = pool2d_geometry("max_pool2d_with_indices_backward", a.shape,
                                          kernel_size, stride, padding, dilation, ceil_mode)
        want = tuple(a.shape[:-2]) + out
        for name, t in (("grad_output", grad_output), ("indices", indices)):
            if tuple(t.shape) != want:
                raise ShapeError(f"max_pool2d_with_indices_backward(): expected {name} of "
                                 f"the output's shape {list(want)}, got {list(t.shape)}")
        planes, hw = math.prod(a.shape[:-2]), a.shape[-2] * a.shape[-1]
        pos = (indices.reshape(planes, out[0] * out[1])
               + xp.arange(0, planes * hw, hw, dtype=xp.int64)[:, None]).reshape(-1)
        g = grad_output.reshape(-1)
        overlapping = any(s[n] < d[n] * (k[n] - 1) + 1 for n in range(2))
        if overlapping:
            grad = xp.bincount(pos, weights=g, minlength=planes * hw)
            grad = grad.astype(grad_output.dtype, copy=False)
        else:  # every input element is in at most one window: no collisions
            grad = xp.zeros(planes * hw, dtype=grad_output.dtype)
            grad[pos] = g
        return grad.reshape(a.shape)

    return {"max_pool2d_with_indices": max_pool2d_with_indices,
            "max_pool2d_with_indices_backward": max_pool2d_with_indices_backward}


UNSUPPORTED = {"max_pool2d_with_indices": frozenset({bool_}),
               "max_pool2d_with_indices_backward": frozenset({bool_})}
