"""Adaptive pooling: ``adaptive_avg_pool1d/2d/3d`` and ``adaptive_max_pool1d/2d/3d``,
composite ops that pool each dim of size n to ``out`` cells, cell i covering input cells
floor(i n / out) to ceil((i + 1) n / out) (PyTorch's rule: windows differ in size or
overlap when out does not divide n).

* average: one mean over all dims for out = 1; one reshape and mean over the dims that
  out divides; each other dim on its own (the last first), one 2-D matmul with an
  (n, out) averaging matrix whose column i holds 1 / len on its window.
* max: plain max pooling (the max_pool kernels) when out divides n in every dim; else
  every window gathered (index_select per dim, each window padded to the longest by
  repeating its last cell) and one max over the window axis, without grad; the flat
  indices come from a host-built table of window positions, and the values that carry the
  gradient are one gather of the input at them.

Accuracy (float32, N(0, 1) input (4, 8, 64, 64) against the float64 op): max is exact;
average within 0.5 ulp of max|x| (0.03 ulp for out = 1, 0.16 for uniform bins, 0.46 for
the matmul); float16/bfloat16 round once from their float32-accumulated sums.

1-D runs the 2-D op on a (.., 1, L) view. ``None`` in ``output_size`` keeps that dim's
input size. Reference: torch.nn.functional.adaptive_avg_pool1d/2d/3d,
adaptive_max_pool1d/2d/3d.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ember.ops import namespace as E
from ember._base.grad_mode import is_grad_enabled, no_grad
from ember.backends.kernels.pooling import check_input, ntuple
from ember.errors import ShapeError
from ember.ops.composite import composite

from ._common import (RESULT, adaptive_bounds, adaptive_size, adaptive_windows, as_2d,
                      check_floating, one, plane_strides)

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices"]


def _check(op: str, x, nd: int, output_size) -> tuple:
    check_input(op, x.shape, nd)
    out = ntuple(op, "output_size", output_size, nd)
    if min(out) < 0:
        raise ShapeError(f"{op}(): output_size must be non-negative, got {list(out)}")
    check_floating(op, x)
    return out


# --- average -------------------------------------------------------------------------------

@functools.lru_cache(maxsize=256)
def _averaging_matrix(n: int, n_out: int) -> np.ndarray:
    """(n_out, n): row i holds 1 / len on output cell i's window, 0 elsewhere (cached:
    read only)."""
    rows = np.zeros((n_out, n))
    for i, (start, end) in enumerate(adaptive_bounds(n, n_out)):
        rows[i, start:end] = 1.0 / (end - start)
    return rows


# NOTE: below this many elements the fewest ops win (a batch of small matmuls)
_ONE_GEMM_MIN = 32768


def _adaptive_dim(x, dim: int, n_out: int):
    """Adaptive average over ``dim`` (negative) down (or up) to n_out cells, windows of
    unequal size: a product with the (n_out, n) averaging matrix."""
    n = x.shape[dim]
    rows = _averaging_matrix(int(n), int(n_out))
    if x.numel() < _ONE_GEMM_MIN:
        avg = E.tensor(rows, dtype=x.dtype, device=x.device)
        if dim == -1:
            return x.matmul(avg.t())
        lead, tail = tuple(x.shape[:dim]), tuple(x.shape[dim:][1:])
        y = avg.matmul(x.reshape(lead + (n, math.prod(tail))))
        return y.reshape(lead + (n_out,) + tail)
    # NOTE: rows as one (R, n) @ (n, n_out) product, not a batch of small ones: numpy's
    # batched matmul (and its backward) is ~10x slower for R tiny products
    avg = E.tensor(rows.T, dtype=x.dtype, device=x.device)
    if dim != -1:
        x = x.movedim(dim, -1)
    lead = tuple(x.shape[:-1])
    y = x.reshape(-1, n).matmul(avg).reshape(lead + (n_out,))
    return y if dim == -1 else y.movedim(-1, dim)


def _adaptive_avg(op: str, nd: int, x, output_size):
    out = _check(op, x, nd, output_size)
    sizes, lead = tuple(x.shape[-nd:]), tuple(x.shape[:-nd])
    if all(o == 1 for o in out):     # global average pooling
        return x.mean(tuple(range(-nd, 0)), keepdim=True)
    uniform = tuple(n for n in range(nd) if out[n] and sizes[n] % out[n] == 0
                    and out[n] != sizes[n])
    if uniform:
        # windows that tile a dim: one reshape and one mean over every such dim
        shape = lead + tuple(v for n in range(nd) for v in (
            (out[n], sizes[n] // out[n]) if n in uniform else (sizes[n],)))
        axes, at = [], len(lead)
        for n in range(nd):
            at += 2 if n in uniform else 1
            if n in uniform:
                axes.append(at - 1 - len(shape))
        x = x.reshape(shape).mean(tuple(axes))
    for n in reversed(range(nd)):    # the last dim first: the matmul needs no transpose
        if n not in uniform and out[n] != sizes[n]:
            x = _adaptive_dim(x, n - nd, out[n])
    return x


@composite("adaptive_avg_pool2d")
def _adaptive_avg_pool2d(self, output_size):
    return _adaptive_avg("adaptive_avg_pool2d", 2, self, output_size)


@composite("adaptive_avg_pool3d")
def _adaptive_avg_pool3d(self, output_size):
    return _adaptive_avg("adaptive_avg_pool3d", 3, self, output_size)


@composite("adaptive_avg_pool1d")
def _adaptive_avg_pool1d(self, output_size):
    x = as_2d("adaptive_avg_pool1d", self)
    size = one("adaptive_avg_pool1d", "output_size", output_size)
    return E.adaptive_avg_pool2d(x, (1, size)).squeeze(-2)


def adaptive_avg_pool1d(input, output_size):
    """Adaptive 1-D average pooling: (N, C, L) or (C, L) -> (N, C, output_size).

    ``output_size`` is an int or a one-int tuple. Floating dtypes. Raises ShapeError for
    another rank, zero C/L or a negative size; NotImplementedError for integral input.
    Reference: torch.nn.functional.adaptive_avg_pool1d.
    """
    return E.adaptive_avg_pool1d(input, (one("adaptive_avg_pool1d", "output_size",
                                             output_size),))


def adaptive_avg_pool2d(input, output_size):
    """Adaptive 2-D average pooling: (N, C, H, W) or (C, H, W) -> (N, C, *output_size).

    ``output_size`` is an int or an (h, w) pair; None in it keeps that input size. Output
    cell i of a dim of size n averages input cells floor(i n / out) to ceil((i + 1) n /
    out), so windows differ in size or overlap when out does not divide n. Floating
    dtypes. Raises ShapeError for a bad rank, zero C/H/W or a negative size.
    Reference: torch.nn.functional.adaptive_avg_pool2d.
    """
    if isinstance(output_size, (tuple, list)) and len(output_size) != 2:
        raise ShapeError(f"adaptive_avg_pool2d(): output_size must be an int or a pair, "
                         f"got {output_size!r}")
    return E.adaptive_avg_pool2d(input, adaptive_size("adaptive_avg_pool2d", input,
                                                      output_size, 2))


def adaptive_avg_pool3d(input, output_size):
    """Adaptive 3-D average pooling: (N, C, D, H, W) or (C, D, H, W) -> (N, C,
    *output_size), adaptive_avg_pool2d's windows along each of the three dims.

    ``output_size`` is an int or a (d, h, w) triple; None in it keeps that input size.
    Floating dtypes. Raises ShapeError for a bad rank, zero C/D/H/W, a negative size or a
    sequence of another length; NotImplementedError for integral input.
    Reference: torch.nn.functional.adaptive_avg_pool3d.
    """
    return E.adaptive_avg_pool3d(input, adaptive_size("adaptive_avg_pool3d", input,
                                                      output_size, 3))


# --- max -----------------------------------------------------------------------------------

_MAX_POOL = {2: "max_pool2d_with_indices", 3: "max_pool3d_with_indices"}


def _adaptive_max(op: str, nd: int, x, output_size):
    out = _check(op, x, nd, output_size)
    lead, sizes = tuple(x.shape[:-nd]), tuple(x.shape[-nd:])
    if 0 in out:
        return RESULT[op](E.empty(lead + out, dtype=x.dtype, device=x.device),
                          E.empty(lead + out, dtype=E.int64, device=x.device))
    if all(n % o == 0 for n, o in zip(sizes, out)):
        # windows that tile the input: plain max pooling (the same first-maximum indices)
        k = [n // o for n, o in zip(sizes, out)]
        return RESULT[op](*getattr(E, _MAX_POOL[nd])(x, k, k, 0, 1, False))
    # NOTE: the windows' argmax is found on detached data; the values that carry the
    # gradient are then one gather at those positions, whose backward is one scatter
    # (the index_select + max route's backward scatter-adds every window cell)
    grad = x.requires_grad and is_grad_enabled()
    with no_grad():
        values, indices = _adaptive_max_windows(nd, x.detach(), out, lead, sizes)
    if grad:
        plane = x.reshape(lead + (-1,))
        values = plane.gather(-1, indices.reshape(lead + (-1,))).reshape(lead + out)
    return RESULT[op](values, indices)


def _adaptive_max_windows(nd: int, x, out: tuple, lead: tuple, sizes: tuple):
    """(values, flat plane indices) of adaptive max pooling with windows of unequal size:
    every window gathered (padded to the longest by repeating its last cell) and one max."""
    wins = [adaptive_windows(n, o) for n, o in zip(sizes, out)]
    ks = tuple(w.shape[1] for w in wins)
    for n, w in enumerate(wins):
        x = x.index_select(n - nd, E.tensor(w.ravel(), device=x.device))
    # lead + (o_0, k_0, o_1, k_1, ..) -> lead + out + (K,): the window cells last
    x = x.reshape(lead + tuple(v for o, k in zip(out, ks) for v in (o, k)))
    m = len(lead)
    x = x.permute(tuple(range(m)) + tuple(m + 2 * n for n in range(nd))
                  + tuple(m + 2 * n + 1 for n in range(nd)))
    values, t = x.reshape(lead + out + (math.prod(ks),)).max(-1)
    # the flat plane position of every window cell, picked at the window's argmax
    flat = np.zeros(out + ks, dtype=np.int64)
    for n, (w, st) in enumerate(zip(wins, plane_strides(sizes))):
        shape = [1] * (2 * nd)
        shape[n], shape[nd + n] = w.shape
        flat = flat + (w * st).reshape(shape)
    flat = E.tensor(flat.reshape(out + (-1,)), device=x.device).expand(tuple(values.shape) + (-1,))
    return values, E.gather(flat, -1, t.unsqueeze(-1)).squeeze(-1)


@composite("adaptive_max_pool2d")
def _adaptive_max_pool2d(self, output_size):
    return _adaptive_max("adaptive_max_pool2d", 2, self, output_size)


@composite("adaptive_max_pool3d")
def _adaptive_max_pool3d(self, output_size):
    return _adaptive_max("adaptive_max_pool3d", 3, self, output_size)


@composite("adaptive_max_pool1d")
def _adaptive_max_pool1d(self, output_size):
    x = as_2d("adaptive_max_pool1d", self)
    values, indices = E.adaptive_max_pool2d(x, (1, output_size[0]))
    return RESULT["adaptive_max_pool1d"](values.squeeze(-2), indices.squeeze(-2))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Adaptive 2-D max pooling: (N, C, H, W) or (C, H, W) -> (N, C, *output_size).

    ``output_size`` is an int or an (h, w) pair; None in it keeps that input size. Output
    cell i of a dim of size n takes the max of input cells floor(i n / out) to ceil((i +
    1) n / out). With ``return_indices`` also returns int64 indices of the output's shape:
    the flat position h * W + w of each maximum in its plane (first on ties), as
    max_unpool2d expects. Floating dtypes. Raises ShapeError for a bad rank, zero C/H/W or
    a negative size; NotImplementedError for integral input.
    Reference: torch.nn.functional.adaptive_max_pool2d.
    """
    size = adaptive_size("adaptive_max_pool2d", input, output_size, 2)
    values, indices = E.adaptive_max_pool2d(input, size)
    return (values, indices) if return_indices else values


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Adaptive 3-D max pooling: (N, C, D, H, W) or (C, D, H, W) -> (N, C, *output_size),
    adaptive_max_pool2d's windows along each of the three dims.

    ``output_size`` is an int or a (d, h, w) triple, None keeping that input size. With
    ``return_indices`` also returns the int64 flat positions (t * H + h) * W + w of the
    maxima in their volumes (first on ties), as max_unpool3d expects. Raises what
    adaptive_max_pool2d raises, over three dims.
    Reference: torch.nn.functional.adaptive_max_pool3d.
    """
    size = adaptive_size("adaptive_max_pool3d", input, output_size, 3)
    values, indices = E.adaptive_max_pool3d(input, size)
    return (values, indices) if return_indices else values


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Adaptive 1-D max pooling: (N, C, L) or (C, L) -> (N, C, output_size).

    ``output_size`` is an int or a one-int tuple. With ``return_indices`` also returns the
    int64 positions in L of the maxima. Raises ShapeError for another rank and what
    adaptive_max_pool2d raises. Reference: torch.nn.functional.adaptive_max_pool1d.
    """
    size = one("adaptive_max_pool1d", "output_size", output_size)
    values, indices = E.adaptive_max_pool1d(input, (size,))
    return (values, indices) if return_indices else values


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """adaptive_max_pool1d returning (output, indices) whatever ``return_indices`` says.
    Reference: torch.nn.functional.adaptive_max_pool1d_with_indices."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """adaptive_max_pool2d returning (output, indices). Reference:
    torch.nn.functional.adaptive_max_pool2d_with_indices."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """adaptive_max_pool3d returning (output, indices). Reference:
    torch.nn.functional.adaptive_max_pool3d_with_indices."""
    return adaptive_max_pool3d(input, output_size, True)
