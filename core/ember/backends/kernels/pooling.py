"""Max-pooling kernels: max_pool2d/3d_with_indices and their backwards, one N-d code path.

The forward walks the kernel offsets, not the output positions: for each offset (i, j, ..)
it takes the strided view of the input that offset sees (clipped to the cells inside the
input, so padding is never materialized) and folds it into the running maximum, K
elementwise passes for a kernel of K cells. Windows that tile the input (stride == kernel,
no padding or dilation: the common case) take a faster path: a copy puts the K offsets
first (for 2-D on numpy, two copies with long inner loops) and one reduction takes the
maximum. A second pass over the offsets, last to first, writes the flat position of the
first maximum in scan order. This gives PyTorch's CPU conventions exactly: indices are flat
positions ``h * W + w`` (``(t * H + h) * W + w`` in 3-D) in each input plane, ties go to the
first position in row-major window order, a window holding NaN reports NaN and the position
of its LAST NaN, and a window of -inf values points at its first real element (never at
padding). float16/bfloat16 compare in float32. Values are exact (a selection).

The backward scatters grad_output into the input planes at ``indices``: a plain indexed
assignment when windows cannot overlap (each input element is in at most one window, the
common stride == kernel case), ``bincount`` with weights (a scatter-add) when they can.
Both work for numpy and CuPy.

``pool_geometry`` (argument normalization, PyTorch's output-size rule and its checks) is
shared with the composite pooling ops in ``ember.nn.functional.pooling``.
"""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from ...errors import ShapeError
from ...types import bool_
from .reduction import LOW_FLOATS, is_float

_COUNT = {1: "one int", 2: "two ints", 3: "three ints"}
_DIMS = {1: ("L", "C and L"), 2: ("H, W", "C, H and W"), 3: ("D, H, W", "C, D, H and W")}


def ntuple(op: str, name: str, value, n: int, default=None) -> tuple:
    """An int or a 1- or n-element sequence as n ints; an empty sequence is ``default``."""
    v = (value,) if isinstance(value, int) else tuple(value)
    if not v and default is not None:
        return default
    if len(v) == 1:
        return v * n
    if len(v) == n:
        return v
    raise ShapeError(f"{op}(): {name} must either be a single int, or a tuple of "
                     f"{_COUNT[n]}, got {list(v)}")


def pair(op: str, name: str, value, default=None) -> tuple:
    """An int or a 1- or 2-element sequence as (h, w); an empty sequence is ``default``."""
    return ntuple(op, name, value, 2, default)


def output_size(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's ``pooling_output_shape``: windows start inside the input or its left
    padding; ``ceil_mode`` keeps a last, partial window."""
    o = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (o - 1) * s >= n + p:
        o -= 1
    return o


def check_input(op: str, shape, nd: int) -> None:
    """A (N, C, *spatial) or (C, *spatial) shape with non-zero C and spatial sizes."""
    if len(shape) not in (nd + 1, nd + 2) or any(n == 0 for n in shape[-nd - 1:]):
        dims, nonzero = _DIMS[nd]
        raise ShapeError(f"{op}(): expected a {nd + 1}-D (C, {dims}) or {nd + 2}-D (N, C, "
                         f"{dims}) input with non-zero {nonzero} (N may be 0), got shape "
                         f"{list(shape)}")


def pool_geometry(op: str, shape, nd: int, kernel_size, stride, padding, dilation,
                  ceil_mode):
    """Check a (N, C, *spatial) or (C, *spatial) pooling call over ``nd`` spatial dims and
    return ``(k, s, p, d, out)``, each an nd-tuple, ``out`` the output's spatial size.
    Raises ShapeError."""
    check_input(op, shape, nd)
    k = ntuple(op, "kernel_size", kernel_size, nd)
    s = ntuple(op, "stride", stride, nd, default=k)
    p = ntuple(op, "padding", padding, nd)
    d = ntuple(op, "dilation", dilation, nd)
    for name, v, low in (("kernel_size", k, 1), ("stride", s, 1), ("dilation", d, 1),
                         ("padding", p, 0)):
        if min(v) < low:
            raise ShapeError(f"{op}(): {name} must be {'positive' if low else 'non-negative'}, "
                             f"got {list(v)}")
    if any(pi > ki // 2 for pi, ki in zip(p, k)):
        raise ShapeError(f"{op}(): pad should be at most half of kernel size, but got "
                         f"padding={list(p)} and kernel_size={list(k)}; lower the padding")
    sizes = tuple(shape[-nd:])
    out = tuple(output_size(*a, ceil_mode) for a in zip(sizes, k, s, p, d))
    if min(out) < 1:
        given = "x".join(map(str, (shape[-nd - 1],) + sizes))
        got = "x".join(map(str, (shape[-nd - 1],) + out))
        raise ShapeError(f"{op}(): Given input size: ({given}). Calculated output size: "
                         f"({got}). Output size is too small; use a smaller kernel_size, "
                         f"dilation or stride, or more padding")
    return k, s, p, d, out


def pool2d_geometry(op: str, shape, kernel_size, stride, padding, dilation, ceil_mode):
    """``pool_geometry`` over (H, W)."""
    return pool_geometry(op, shape, 2, kernel_size, stride, padding, dilation, ceil_mode)


def _span(n_in: int, n_out: int, s: int, p: int, offset: int):
    """Output range [o0, o1) whose input position ``o * s - p + offset`` lies in [0, n_in),
    and the first such input position."""
    o0 = max(0, -((offset - p) // s))  # ceil((p - offset) / s)
    o1 = min(n_out, (n_in - 1 + p - offset) // s + 1)
    return o0, o1, o0 * s - p + offset


def _plane_strides(sizes) -> tuple:
    """Flat strides of a row-major plane of ``sizes`` (W, then H * W, ..)."""
    return tuple(math.prod(sizes[i + 1:]) for i in range(len(sizes)))


@functools.lru_cache(maxsize=512)
def window_slices(sizes: tuple, k, s, p, d, out) -> tuple:
    """Per kernel offset in scan order: (output index, input index, flat offset
    sum(i_n d_n stride_n)) for planes (P, *sizes), and whether the first two offsets
    cover the whole output. Cached: it depends on shapes and arguments only."""
    strides = _plane_strides(sizes)
    per_dim = []
    for n in range(len(sizes)):
        cells = []
        for i in range(k[n]):
            o0, o1, start = _span(sizes[n], out[n], s[n], p[n], i * d[n])
            if o1 > o0:
                cells.append((slice(o0, o1), slice(start, start + (o1 - o0 - 1) * s[n] + 1,
                                                   s[n]), i * d[n] * strides[n]))
        per_dim.append(cells)
    wins = tuple(((slice(None),) + tuple(c[0] for c in combo),
                  (slice(None),) + tuple(c[1] for c in combo), sum(c[2] for c in combo))
                 for combo in itertools.product(*per_dim))
    covers = [all(sl.start == 0 and sl.stop == o for sl, o in zip(w[0][1:], out))
              for w in wins[:2]]
    return wins, len(wins) > 1 and all(covers)


def windows(x, k, s, p, d, out) -> list:
    """Per kernel offset in scan order: (output slice, the input view that offset sees,
    its flat offset sum(i_n d_n stride_n)) for planes x (P, *spatial)."""
    wins = window_slices(tuple(x.shape[1:]), tuple(k), tuple(s), tuple(p), tuple(d),
                         tuple(out))[0]
    return [(o, x[i], c) for o, i, c in wins]


def max_pool_values(xp, x, k, s, p, d, out):
    """The values of max pooling alone (no argmax): planes x (P, *spatial), any dtype but
    bool (float16/bfloat16: compare them in float32 first, as the kernels do), geometry
    from ``pool_geometry`` -> (P, *out) in x's dtype. A running ``maximum`` over the
    kernel offsets' strided views (K passes, nothing materialized); NaN propagates, so a
    window holding NaN gives NaN, as the kernels. Values are exact (a selection)."""
    wins, first_two = window_slices(tuple(x.shape[1:]), k, s, p, d, out)
    if first_two:  # tiled windows and most others
        vals = xp.maximum(x[wins[0][1]], x[wins[1][1]])
        rest = wins[2:]
    else:
        lowest = -math.inf if is_float(x.dtype) else xp.iinfo(x.dtype).min
        vals = xp.full((x.shape[0],) + tuple(out), lowest, dtype=x.dtype)
        rest = wins
    for o, i, _ in rest:
        xp.maximum(vals[o], x[i], out=vals[o])
    return vals


_TABLES: dict = {}


def table(xp) -> dict:
    """``kernels(xp)``, built once per array namespace (for composites that call the
    pooling kernels through ``autograd/kernel_pair.py``)."""
    t = _TABLES.get(xp)
    if t is None:
        t = _TABLES[xp] = kernels(xp)
    return t


def kernels(xp) -> dict:
    def offsets_first(x, k, out):
        """Planes x (P, *spatial) as (K, P, *out): the windows' offsets first."""
        p, nd = x.shape[0], len(k)
        if xp is np and nd == 2 and (out[0] * k[0], out[1] * k[1]) == x.shape[1:]:
            # NOTE: one transposing copy has an inner loop ow long (2-4 elements here);
            # two copies with long inner loops are 2-3x faster: the window columns apart
            # (stride kw), then the window rows, ow elements moved as one void item
            (kh, kw), (oh, ow) = k, out
            cols = np.ascontiguousarray(x.reshape(-1, kw).T)      # (kw, P, oh, kh, ow)
            rows = cols.reshape(kw, p * oh, kh, ow).view(np.dtype((np.void, ow * x.itemsize)))
            t = np.ascontiguousarray(rows[..., 0].transpose(2, 0, 1)).view(x.dtype)
            return t.reshape(kh * kw, p, oh, ow)
        t = x[(slice(None),) + tuple(slice(0, o * kn) for o, kn in zip(out, k))]
        t = t.reshape((p,) + tuple(v for o, kn in zip(out, k) for v in (o, kn)))
        order = tuple(2 + 2 * n for n in range(nd)) + (0,) + tuple(1 + 2 * n for n in range(nd))
        return t.transpose(order).reshape((math.prod(k), p) + tuple(out))

    def tiles(x, k, out, offsets, base):
        """The fast path for windows that tile the input (stride == kernel, no padding):
        ``offsets_first`` puts the K window offsets first, so the maximum is one reduction
        and each offset's plane is contiguous. Returns (values, flat offsets of the first
        maximum plus ``base``: the flat positions, and a callable giving the windows as
        ``windows`` does)."""
        t = offsets_first(x, k, out)
        vals = t.max(axis=0)
        # NOTE: the first maximum's position n is the number of leading planes that miss
        # the maximum: counted branch-free (xp.where is slow on unpredictable masks)
        miss = t[0] != vals
        n = miss.view(xp.uint8).copy()
        for i in range(1, t.shape[0] - 1):
            miss &= t[i] != vals
            n += miss.view(xp.uint8)
        wins = lambda: [(None, t[i], offsets[i]) for i in range(len(t))]  # noqa: E731
        if math.prod(k[:-1]) == 1:   # windows along the last dim only: offset n is n
            return vals, xp.add(n, base, dtype=xp.int64), wins
        # NOTE: fancy indexing of the small table, not take(): numpy's take converts the
        # uint8 index to intp first and is ~10x slower
        off = offsets[n]
        off += base
        return vals, off, wins

    @functools.lru_cache(maxsize=256)
    def plan(op, shape, nd, kernel_size, stride, padding, dilation, ceil_mode):
        """Everything of one call that depends only on shapes and arguments, cached: the
        geometry, the tiling flag, the tiles' offset table and the windows' base positions
        ``sum((o_n s_n - p_n) stride_n)`` (int64, of the output's spatial shape)."""
        k, s, p, d, out = pool_geometry(op, shape, nd, kernel_size, stride, padding,
                                        dilation, ceil_mode)
        sizes = tuple(shape[-nd:])
        strides = _plane_strides(sizes)
        tiled = s == k and not any(p) and all(v == 1 for v in d) and \
            all(o * kn <= n for o, kn, n in zip(out, k, sizes))
        offsets = xp.asarray([sum(i * st for i, st in zip(cell, strides))
                              for cell in itertools.product(*map(range, k))], dtype=xp.int64)
        base = 0
        for n, st in enumerate(strides):
            pos = np.arange(-p[n], out[n] * s[n] - p[n], s[n], dtype=np.int64) * st
            base = base + pos.reshape((-1,) + (1,) * (nd - 1 - n))
        return k, s, p, d, out, tiled, offsets, xp.asarray(base)

    def _key(v):
        return tuple(v) if isinstance(v, list) else v

    def max_pool_with_indices(op, nd, a, kernel_size, stride, padding, dilation, ceil_mode):
        k, s, p, d, out, tiled, offsets, base = plan(
            op, tuple(a.shape), nd, _key(kernel_size), _key(stride), _key(padding),
            _key(dilation), bool(ceil_mode))
        x = a.reshape((-1,) + a.shape[-nd:])
        if a.dtype in LOW_FLOATS:
            x = x.astype(xp.float32)
        floating = is_float(x.dtype)
        shape = (x.shape[0],) + out
        # NOTE: an input position is base + offset: base = sum((o_n s_n - p_n) stride_n)
        # for output o, offset = sum(i_n d_n stride_n) for kernel cell i; find the offsets.
        if tiled:
            vals, off, wins = tiles(x, k, out, offsets, base)
        else:
            lowest = -math.inf if floating else xp.iinfo(x.dtype).min
            vals = xp.full(shape, lowest, dtype=x.dtype)
            views = windows(x, k, s, p, d, out)
            for o, view, _ in views:
                xp.maximum(vals[o], view, out=vals[o])
            off = xp.zeros(shape, dtype=xp.int64)
            for o, view, c in reversed(views):  # the last write is the first maximum
                xp.copyto(off[o], c, where=view == vals[o])
            wins = lambda: views  # noqa: E731
            off += base
        # NOTE: max propagates NaN, so one reduction tells whether any window holds one
        if floating and vals.size and bool(xp.isnan(vals.max())):
            for o, view, c in wins():  # NaN != NaN: point at the last NaN, as PyTorch does
                if o is None:
                    xp.copyto(off, base + c, where=xp.isnan(view))
                else:
                    xp.copyto(off[o], base[o[1:]] + c, where=xp.isnan(view))
        lead = a.shape[:-nd]
        return vals.astype(a.dtype, copy=False).reshape(lead + out), off.reshape(lead + out)

    def max_pool_backward(op, nd, grad_output, a, kernel_size, stride, padding, dilation,
                          ceil_mode, indices):
        k, s, p, d, out = plan(op, tuple(a.shape), nd, _key(kernel_size), _key(stride),
                               _key(padding), _key(dilation), bool(ceil_mode))[:5]
        want = tuple(a.shape[:-nd]) + out
        for name, t in (("grad_output", grad_output), ("indices", indices)):
            if tuple(t.shape) != want:
                raise ShapeError(f"{op}(): expected {name} of the output's shape "
                                 f"{list(want)}, got {list(t.shape)}")
        planes, size = math.prod(a.shape[:-nd]), math.prod(a.shape[-nd:])
        pos = (indices.reshape(planes, math.prod(out))
               + xp.arange(0, planes * size, size, dtype=xp.int64)[:, None]).reshape(-1)
        g = grad_output.reshape(-1)
        overlapping = any(s[n] < d[n] * (k[n] - 1) + 1 for n in range(nd))
        if overlapping:
            grad = xp.bincount(pos, weights=g, minlength=planes * size)
            grad = grad.astype(grad_output.dtype, copy=False)
        else:  # every input element is in at most one window: no collisions
            grad = xp.zeros(planes * size, dtype=grad_output.dtype)
            grad[pos] = g
        return grad.reshape(a.shape)

    def max_pool2d_with_indices(a, kernel_size, stride, padding, dilation, ceil_mode):
        return max_pool_with_indices("max_pool2d", 2, a, kernel_size, stride, padding,
                                     dilation, ceil_mode)

    def max_pool3d_with_indices(a, kernel_size, stride, padding, dilation, ceil_mode):
        return max_pool_with_indices("max_pool3d", 3, a, kernel_size, stride, padding,
                                     dilation, ceil_mode)

    def max_pool2d_with_indices_backward(grad_output, a, kernel_size, stride, padding,
                                         dilation, ceil_mode, indices):
        return max_pool_backward("max_pool2d_with_indices_backward", 2, grad_output, a,
                                 kernel_size, stride, padding, dilation, ceil_mode, indices)

    def max_pool3d_with_indices_backward(grad_output, a, kernel_size, stride, padding,
                                         dilation, ceil_mode, indices):
        return max_pool_backward("max_pool3d_with_indices_backward", 3, grad_output, a,
                                 kernel_size, stride, padding, dilation, ceil_mode, indices)

    return {"max_pool2d_with_indices": max_pool2d_with_indices,
            "max_pool2d_with_indices_backward": max_pool2d_with_indices_backward,
            "max_pool3d_with_indices": max_pool3d_with_indices,
            "max_pool3d_with_indices_backward": max_pool3d_with_indices_backward}


UNSUPPORTED = {name: frozenset({bool_}) for name in (
    "max_pool2d_with_indices", "max_pool2d_with_indices_backward",
    "max_pool3d_with_indices", "max_pool3d_with_indices_backward")}
