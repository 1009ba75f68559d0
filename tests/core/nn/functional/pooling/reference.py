"""Direct numpy float64 loops for the pooling tests: PyTorch's output-size rule, window
placement, divisors, index convention (flat positions in each (N, C) plane) and the
interval rule of fractional max pooling, written out cell by cell."""
from __future__ import annotations

import itertools
import math

import numpy as np

import ember as E


def out_size(n, k, s, p, ceil_mode, d=1):
    size = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    return size - 1 if ceil_mode and (size - 1) * s >= n + p else size


def small(shape, seed=0):
    """A float64 leaf of distinct values (no ties: max pooling is differentiable there)."""
    n = math.prod(shape)
    vals = np.random.default_rng(seed).permutation(n).reshape(shape) * 0.3 - n * 0.15
    return E.tensor(vals, requires_grad=True)


def _flat(cell, sizes):
    return int(np.ravel_multi_index(cell, sizes))


def np_max_pool(x, k, s, p, d, ceil_mode):
    """(values, flat indices) over the last len(k) dims by PyTorch's CPU loop: the first
    real cell, then any larger value or NaN replaces it."""
    nd = len(k)
    lead, sizes = x.shape[:-nd], x.shape[-nd:]
    planes = x.reshape((-1,) + sizes)
    out = tuple(out_size(*a, ceil_mode, di) for a, di in zip(zip(sizes, k, s, p), d))
    vals, idx = np.empty((len(planes),) + out), np.empty((len(planes),) + out, np.int64)
    for c, plane in enumerate(planes):
        for o in itertools.product(*map(range, out)):
            best, where = -math.inf, None
            for i in itertools.product(*map(range, k)):
                cell = tuple(o[n] * s[n] - p[n] + i[n] * d[n] for n in range(nd))
                if not all(0 <= cell[n] < sizes[n] for n in range(nd)):
                    continue
                v = plane[cell]
                if where is None:
                    where = _flat(cell, sizes)
                if v > best or math.isnan(v):
                    best, where = v, _flat(cell, sizes)
            vals[(c,) + o], idx[(c,) + o] = best, where
    return vals.reshape(lead + out), idx.reshape(lead + out)


def np_max_pool1d(x, k, s, p, d, ceil_mode):
    """(values, indices) over the last dim, PyTorch's first-maximum rule."""
    return np_max_pool(x, (k,), (s,), (p,), (d,), ceil_mode)


def np_avg_pool(x, k, s, p, ceil_mode, include_pad, divisor=None):
    """Average pooling over the last len(k) dims: window sums of the zero-padded input over
    the divisor (the window clipped to the padded input, or to the input itself)."""
    nd = len(k)
    lead, sizes = x.shape[:-nd], x.shape[-nd:]
    planes = x.reshape((-1,) + sizes)
    out = tuple(out_size(*a, ceil_mode) for a in zip(sizes, k, s, p))
    res = np.empty((len(planes),) + out)
    for c, plane in enumerate(planes):
        for o in itertools.product(*map(range, out)):
            lo = [o[n] * s[n] - p[n] for n in range(nd)]
            hi = [min(lo[n] + k[n], sizes[n] + p[n]) for n in range(nd)]
            count = math.prod(h - lw for lw, h in zip(lo, hi))
            lo = [max(v, 0) for v in lo]
            hi = [min(h, n) for h, n in zip(hi, sizes)]
            if not include_pad:
                count = math.prod(h - lw for lw, h in zip(lo, hi))
            window = plane[tuple(slice(a, b) for a, b in zip(lo, hi))]
            res[(c,) + o] = window.sum() / (divisor or count)
    return res.reshape(lead + out)


def np_avg_pool2d(x, k, s, p, ceil_mode, include_pad, divisor=None):
    return np_avg_pool(x, k, s, p, ceil_mode, include_pad, divisor)


def _bounds(n, o):
    return [(i * n // o, -(-(i + 1) * n // o)) for i in range(o)]


def np_adaptive(x, size, op):
    """Adaptive pooling of the last len(size) dims: "avg" gives the means, "max" (values,
    flat indices of the first maximum in row-major window order)."""
    nd = len(size)
    lead, sizes = x.shape[:-nd], x.shape[-nd:]
    planes = x.reshape((-1,) + sizes)
    vals, idx = np.empty((len(planes),) + size), np.empty((len(planes),) + size, np.int64)
    bounds = [_bounds(n, o) for n, o in zip(sizes, size)]
    for c, plane in enumerate(planes):
        for o in itertools.product(*map(range, size)):
            win = [bounds[n][o[n]] for n in range(nd)]
            cells = list(itertools.product(*(range(a, b) for a, b in win)))
            values = [plane[cell] for cell in cells]
            if op == "avg":
                vals[(c,) + o] = np.mean(values)
            else:
                t = int(np.argmax(values))
                vals[(c,) + o], idx[(c,) + o] = values[t], _flat(cells[t], sizes)
    if op == "avg":
        return vals.reshape(lead + size)
    return vals.reshape(lead + size), idx.reshape(lead + size)


def np_adaptive_avg_pool2d(x, size):
    return np_adaptive(x, tuple(size), "avg")


def np_adaptive_max_pool2d(x, oh, ow):
    """(values, flat indices) with windows floor(i n / out) .. ceil((i + 1) n / out)."""
    return np_adaptive(x, (oh, ow), "max")


def np_lp_pool2d(x, p, k, s):
    *lead, h, w = x.shape
    oh, ow = (h - k[0]) // s[0] + 1, (w - k[1]) // s[1] + 1
    out = np.empty((*lead, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = x[..., i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]]
            out[..., i, j] = (win ** p).sum((-2, -1)) ** (1 / p)
    return out


def np_pool2d(x, k, s, reduce):
    N, C, H, W = x.shape
    oh, ow = (H - k) // s + 1, (W - k) // s + 1
    out = np.empty((N, C, oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = reduce(x[:, :, i * s:i * s + k, j * s:j * s + k], axis=(2, 3))
    return out


def np_intervals(u, n_in, n_out, k):
    """PyTorch's ``generate_intervals``: window starts along one dim for sample u, in u's
    numpy dtype (float32 arithmetic for float32 input, as the C++ kernel's scalar_t)."""
    dt = type(u)
    seq = [0] * n_out
    if n_out > 1:
        alpha = dt(n_in - k) / dt(n_out - 1)
        for i in range(n_out - 1):
            seq[i] = int((dt(i) + u) * alpha) - int(u * alpha)
    if n_out > 0:
        seq[-1] = n_in - k
    return seq


def np_fractional(x, k, size, samples):
    """Fractional max pooling of the last len(k) dims: (values, flat indices). samples
    (N, C, nd) in x's dtype; 2-D reads u[1] for H and u[0] for W, 3-D u[0], u[1], u[2] for
    D, H, W (PyTorch's order)."""
    nd = len(k)
    order = (1, 0) if nd == 2 else (0, 1, 2)
    lead, sizes = x.shape[:-nd], x.shape[-nd:]
    planes = x.reshape((-1,) + sizes).astype(np.float64)
    u = samples.reshape(-1, nd)
    vals, idx = np.empty((len(planes),) + size), np.empty((len(planes),) + size, np.int64)
    for c, plane in enumerate(planes):
        starts = [np_intervals(u[c, order[n]], sizes[n], size[n], k[n]) for n in range(nd)]
        for o in itertools.product(*map(range, size)):
            best, where = -math.inf, None
            for i in itertools.product(*map(range, k)):
                cell = tuple(starts[n][o[n]] + i[n] for n in range(nd))
                if plane[cell] > best or where is None:
                    best, where = plane[cell], _flat(cell, sizes)
            vals[(c,) + o], idx[(c,) + o] = best, where
    return vals.reshape(lead + size), idx.reshape(lead + size)
