"""Pooling with PyTorch's signatures (``torch.nn.functional``).

Max pooling has kernels (``max_pool2d_with_indices`` and its backward, in
``backends/kernels/pooling.py``); max_pool1d goes through them on a (.., 1, L) view.
Average pooling and adaptive average pooling are composite ops (``native_functions.yaml``,
section ``nn: pooling``) built from slicing, sums, reshapes and matmul, so autograd
differentiates them to any order:

* ``avg_pool2d`` zero-pads with ``cat`` only when it must (padding or a ceil_mode window
  past the edge), then sums the window rows (kh strided slices) and columns (kw strided
  slices): kh + kw slices instead of kh * kw. Non-overlapping windows without padding
  take one reshape and sum.
* ``adaptive_avg_pool2d`` pools each spatial dim on its own: a reshape and mean when the
  output size divides the input size, else a product with an (out, in) averaging matrix
  whose row i holds 1 / len on input cells floor(i n / out) .. ceil((i + 1) n / out).
* ``adaptive_max_pool2d`` gathers every window (index_select per dim, each window padded
  to the longest by repeating its last cell) and takes one max over the window axis; the
  flat indices come from a host-built table of window positions.
* ``lp_pool1d/2d`` are PyTorch's Python functions over average pooling.

Argument normalization is PyTorch's: ``stride=None`` means ``kernel_size``, an int means
the same value for each spatial dim, and ``None`` in adaptive ``output_size`` keeps that
dim's input size.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

import ember as E
from ember.backends.kernels.pooling import pair, pool2d_geometry
from ember.errors import ShapeError
from ember.ops.composite import composite

__all__ = ["max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool2d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "lp_pool1d", "lp_pool2d"]


def _check_floating(op: str, x) -> None:
    if not x.is_floating_point():
        raise NotImplementedError(f"{op}(): expected a floating input (float16, bfloat16, "
                                  f"float32, float64), got {x.dtype}; convert it first, "
                                  f"e.g. x.float()")


def _one(op: str, name: str, value) -> int:
    """A 1-d pooling argument (an int or a one-element sequence) as an int."""
    v = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if len(v) != 1:
        raise ShapeError(f"{op}(): {name} must be an int or a tuple of one int, got {value!r}")
    return v[0]


def _as_2d(op: str, x):
    """(N, C, L) or (C, L) as (N, C, 1, L) or (C, 1, L)."""
    if x.ndim not in (2, 3):
        raise ShapeError(f"{op}(): expected a 2-D (C, L) or 3-D (N, C, L) input, got shape "
                         f"{list(x.shape)}")
    return x.unsqueeze(-2)


def _1d_args(op: str, *named):
    """(neutral, v) pairs for the 2-D op from 1-d arguments (the added H dim has size 1:
    kernel, stride and dilation 1, padding 0); an empty stride stays empty."""
    out = []
    for name, v in named:
        if name == "stride" and isinstance(v, (tuple, list)) and not v:
            out.append(())
        else:
            out.append((0 if name == "padding" else 1, _one(op, name, v)))
    return out


# --- max pooling ---------------------------------------------------------------------------

@composite("max_pool2d")
def _max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode):
    return E.max_pool2d_with_indices(self, kernel_size, stride, padding, dilation,
                                     ceil_mode)[0]


@composite("max_pool1d")
def _max_pool1d(self, kernel_size, stride, padding, dilation, ceil_mode):
    k, s, p, d = _1d_args("max_pool1d", ("kernel_size", kernel_size), ("stride", stride),
                          ("padding", padding), ("dilation", dilation))
    x = _as_2d("max_pool1d", self)
    return E.max_pool2d_with_indices(x, k, s, p, d, ceil_mode)[0].squeeze(-2)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-D max pooling: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out), with H_out =
    (H + 2 padding - dilation (kernel_size - 1) - 1) // stride + 1 (rounded up with
    ceil_mode, keeping a last window that starts inside the input or its left padding).

    kernel_size, stride (None: kernel_size), padding and dilation are ints or (h, w)
    pairs. Any dtype but bool. With ``return_indices`` also returns int64 indices of the
    output's shape: the flat position h * W + w of each maximum in its input plane, as
    PyTorch's (for max_unpool2d). Padding counts as -inf; ties go to the first element of
    the window. Raises ShapeError for a bad rank, zero C/H/W, non-positive kernel_size,
    stride or dilation, padding above kernel_size // 2 and an empty output.
    Reference: torch.nn.functional.max_pool2d.
    """
    stride = () if stride is None else stride
    if return_indices:
        return tuple(E.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation,
                                               ceil_mode))
    return E.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-D max pooling: (N, C, L) or (C, L) -> (N, C, L_out), L_out as in max_pool2d.

    kernel_size, stride (None: kernel_size), padding and dilation are ints (or one-int
    tuples). With ``return_indices`` also returns int64 positions in L of each maximum.
    Raises ShapeError for another rank and what max_pool2d raises.
    Reference: torch.nn.functional.max_pool1d.
    """
    stride = () if stride is None else stride
    if not return_indices:
        return E.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)
    k, s, p, d = _1d_args("max_pool1d", ("kernel_size", kernel_size), ("stride", stride),
                          ("padding", padding), ("dilation", dilation))
    out, idx = E.max_pool2d_with_indices(_as_2d("max_pool1d", input), k, s, p, d, ceil_mode)
    return out.squeeze(-2), idx.squeeze(-2)


# --- average pooling -----------------------------------------------------------------------

def _zero_pad(x, dim: int, before: int, after: int):
    """x with ``before`` / ``after`` zeros along ``dim`` (negative dims)."""
    if not before and not after:
        return x
    parts = []
    for n in (before, x, after):
        if isinstance(n, int):
            if n:
                shape = list(x.shape)
                shape[dim] = n
                parts.append(E.zeros(shape, dtype=x.dtype, device=x.device))
        else:
            parts.append(n)
    return E.cat(parts, dim)


def _window_sums(x, dim: int, k: int, s: int, n_out: int):
    """Sum of the k strided slices along ``dim`` (negative) that make n_out windows."""
    index = [slice(None)] * x.ndim
    total = None
    for i in range(k):
        index[dim] = slice(i, i + (n_out - 1) * s + 1, s)
        part = x[tuple(index)]
        total = part if total is None else total + part
    return total


def _window_counts(n: int, k: int, s: int, p: int, n_out: int, include_pad: bool) -> list:
    """Per output position of one dim, how many cells its window averages (PyTorch's rule:
    clipped to the padded input, or to the input itself without count_include_pad)."""
    counts = []
    for o in range(n_out):
        start = o * s - p
        end = min(start + k, n + p)
        if not include_pad:
            start, end = max(start, 0), min(end, n)
        counts.append(end - start)
    return counts


@composite("avg_pool2d")
def _avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
    (kh, kw), (sh, sw), (ph, pw), _, (oh, ow) = pool2d_geometry(
        "avg_pool2d", self.shape, kernel_size, stride, padding, 1, ceil_mode)
    _check_floating("avg_pool2d", self)
    if divisor_override is not None and divisor_override == 0:
        raise ValueError("avg_pool2d(): divisor_override must be non-zero, got 0; pass None "
                         "to divide by the window size")
    h, w = self.shape[-2:]
    lead = tuple(self.shape[:-2])
    if (ph, pw) == (0, 0) and (sh, sw) == (kh, kw) and oh * kh <= h and ow * kw <= w:
        # tiles: every window is whole, so one reshape and sum
        x = self[..., :oh * kh, :ow * kw].reshape(lead + (oh, kh, ow, kw))
        return x.sum((-3, -1)) / (divisor_override or kh * kw)
    x = _zero_pad(self, -2, ph, max(0, (oh - 1) * sh + kh - h - ph))
    x = _zero_pad(x, -1, pw, max(0, (ow - 1) * sw + kw - w - pw))
    total = _window_sums(_window_sums(x, -2, kh, sh, oh), -1, kw, sw, ow)
    if divisor_override is not None:
        return total / divisor_override
    ch = _window_counts(h, kh, sh, ph, oh, count_include_pad)
    cw = _window_counts(w, kw, sw, pw, ow, count_include_pad)
    divisor = E.tensor([[a * b for b in cw] for a in ch], dtype=total.dtype,
                       device=total.device)
    return total / divisor


@composite("avg_pool1d")
def _avg_pool1d(self, kernel_size, stride, padding, ceil_mode, count_include_pad):
    k, s, p = _1d_args("avg_pool1d", ("kernel_size", kernel_size), ("stride", stride),
                       ("padding", padding))
    x = _as_2d("avg_pool1d", self)
    return E.avg_pool2d(x, k, s, p, ceil_mode, count_include_pad, None).squeeze(-2)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-D average pooling: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out), H_out as in
    max_pool2d (without dilation).

    Each window sum (padding is zeros) is divided by ``divisor_override`` if given, else by
    the window's size clipped to the padded input (``count_include_pad=True``) or to the
    input itself. Floating dtypes. Raises ShapeError as max_pool2d, ValueError for
    divisor_override=0, NotImplementedError for integral input.
    Reference: torch.nn.functional.avg_pool2d.
    """
    stride = () if stride is None else stride
    return E.avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """1-D average pooling: (N, C, L) or (C, L) -> (N, C, L_out), as avg_pool2d along L.

    Raises ShapeError for another rank and what avg_pool2d raises.
    Reference: torch.nn.functional.avg_pool1d.
    """
    stride = () if stride is None else stride
    return E.avg_pool1d(input, kernel_size, stride, padding, ceil_mode, count_include_pad)


# --- adaptive average pooling --------------------------------------------------------------

def _adaptive_bounds(n: int, n_out: int) -> list:
    """[(start, end)] of output cell i's input window along a dim of size n: floor(i n /
    out) to ceil((i + 1) n / out), PyTorch's adaptive pooling rule."""
    return [(i * n // n_out, -(-(i + 1) * n // n_out)) for i in range(n_out)]


def _adaptive_dim(x, dim: int, n_out: int):
    """Adaptive average over ``dim`` (-2 or -1) down (or up) to n_out cells."""
    n = x.shape[dim]
    if n_out == n:
        return x
    if n_out and n % n_out == 0:
        k = n // n_out
        shape = tuple(x.shape[:dim]) + (n_out, k) + tuple(x.shape[dim:][1:])
        return x.reshape(shape).mean(dim)  # the k axis lands at dim
    rows = [[1.0 / (end - start) if start <= j < end else 0.0 for j in range(n)]
            for start, end in _adaptive_bounds(n, n_out)]
    avg = E.tensor(rows, dtype=x.dtype, device=x.device).reshape(n_out, n)
    return avg.matmul(x) if dim == -2 else x.matmul(avg.t())


@composite("adaptive_avg_pool2d")
def _adaptive_avg_pool2d(self, output_size):
    if self.ndim not in (3, 4) or any(n == 0 for n in self.shape[-3:]):
        raise ShapeError(f"adaptive_avg_pool2d(): expected a 3-D (C, H, W) or 4-D (N, C, H, "
                         f"W) input with non-zero C, H and W (N may be 0), got shape "
                         f"{list(self.shape)}")
    oh, ow = pair("adaptive_avg_pool2d", "output_size", output_size)
    if oh < 0 or ow < 0:
        raise ShapeError(f"adaptive_avg_pool2d(): output_size must be non-negative, got "
                         f"{[oh, ow]}")
    _check_floating("adaptive_avg_pool2d", self)
    return _adaptive_dim(_adaptive_dim(self, -2, oh), -1, ow)


def adaptive_avg_pool2d(input, output_size):
    """Adaptive 2-D average pooling: (N, C, H, W) or (C, H, W) -> (N, C, *output_size).

    ``output_size`` is an int or an (h, w) pair; None in it keeps that input size. Output
    cell i of a dim of size n averages input cells floor(i n / out) to ceil((i + 1) n /
    out), so windows differ in size or overlap when out does not divide n. Floating
    dtypes. Raises ShapeError for a bad rank, zero C/H/W or a negative size.
    Reference: torch.nn.functional.adaptive_avg_pool2d.
    """
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != 2:
            raise ShapeError(f"adaptive_avg_pool2d(): output_size must be an int or a pair, "
                             f"got {output_size!r}")
        output_size = tuple(input.shape[-2 + i] if v is None else v
                            for i, v in enumerate(output_size))
    elif output_size is None:
        output_size = tuple(input.shape[-2:])
    return E.adaptive_avg_pool2d(input, output_size)


# --- adaptive max pooling ------------------------------------------------------------------

# NOTE: a namedtuple result (as the generated wrappers of kernels give) lets the tracer
# record the composite as one node with two outputs
_RESULT = {n: namedtuple(n, ["output", "indices"], module="ember.return_types")
           for n in ("adaptive_max_pool2d", "adaptive_max_pool1d")}

def _adaptive_windows(n: int, n_out: int) -> np.ndarray:
    """(n_out, k) source cells of the adaptive windows of a dim of size n, each padded to the
    longest window k by repeating its last cell (which changes neither the max nor the
    first position of it)."""
    bounds = _adaptive_bounds(n, n_out)
    k = max(e - s for s, e in bounds)
    return np.array([[s + min(t, e - s - 1) for t in range(k)] for s, e in bounds],
                    dtype=np.int64).reshape(n_out, k)


@composite("adaptive_max_pool2d")
def _adaptive_max_pool2d(self, output_size):
    if self.ndim not in (3, 4) or any(n == 0 for n in self.shape[-3:]):
        raise ShapeError(f"adaptive_max_pool2d(): expected a 3-D (C, H, W) or 4-D (N, C, H, "
                         f"W) input with non-zero C, H and W (N may be 0), got shape "
                         f"{list(self.shape)}")
    oh, ow = output_size
    if oh < 0 or ow < 0:
        raise ShapeError(f"adaptive_max_pool2d(): output_size must be non-negative, got "
                         f"{[oh, ow]}")
    _check_floating("adaptive_max_pool2d", self)
    lead, w = tuple(self.shape[:-2]), self.shape[-1]
    if oh == 0 or ow == 0:
        return _RESULT["adaptive_max_pool2d"](
            E.empty(lead + (oh, ow), dtype=self.dtype, device=self.device),
            E.empty(lead + (oh, ow), dtype=E.int64, device=self.device))
    rows, cols = _adaptive_windows(self.shape[-2], oh), _adaptive_windows(w, ow)
    kh, kw = rows.shape[1], cols.shape[1]
    x = self.index_select(-2, E.tensor(rows.ravel(), device=self.device))
    x = x.index_select(-1, E.tensor(cols.ravel(), device=self.device))
    x = x.reshape(lead + (oh, kh, ow, kw)).transpose(-3, -2).reshape(lead + (oh, ow, kh * kw))
    values, t = x.max(-1)
    # the flat plane position of every window cell, picked at the window's argmax
    flat = (rows[:, None, :, None] * w + cols[None, :, None, :]).reshape(oh, ow, kh * kw)
    flat = E.tensor(flat, device=self.device).expand(lead + (oh, ow, kh * kw))
    indices = E.gather(flat, -1, t.unsqueeze(-1)).squeeze(-1)
    return _RESULT["adaptive_max_pool2d"](values, indices)


@composite("adaptive_max_pool1d")
def _adaptive_max_pool1d(self, output_size):
    x = _as_2d("adaptive_max_pool1d", self)
    values, indices = E.adaptive_max_pool2d(x, (1, output_size[0]))
    return _RESULT["adaptive_max_pool1d"](values.squeeze(-2), indices.squeeze(-2))


def _adaptive_size(op: str, input, output_size, k: int) -> tuple:
    """``output_size`` as k ints, None in it keeping that input size."""
    v = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,) * k
    if len(v) != k:
        raise ShapeError(f"{op}(): output_size must be an int or a tuple of {k} ints, got "
                         f"{output_size!r}")
    return tuple(input.shape[-k + i] if s is None else s for i, s in enumerate(v))


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
    size = _adaptive_size("adaptive_max_pool2d", input, output_size, 2)
    values, indices = E.adaptive_max_pool2d(input, size)
    return (values, indices) if return_indices else values


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Adaptive 1-D max pooling: (N, C, L) or (C, L) -> (N, C, output_size).

    ``output_size`` is an int or a one-int tuple. With ``return_indices`` also returns the
    int64 positions in L of the maxima. Raises ShapeError for another rank and what
    adaptive_max_pool2d raises. Reference: torch.nn.functional.adaptive_max_pool1d.
    """
    size = _one("adaptive_max_pool1d", "output_size", output_size)
    values, indices = E.adaptive_max_pool1d(input, (size,))
    return (values, indices) if return_indices else values


# --- power-average pooling -----------------------------------------------------------------

def _lp_root(out, norm_type, window: int):
    # sign * relu(abs): clamps the small negative averages rounding leaves at 0 (PyTorch's)
    return (E.sign(out) * E.relu(E.abs(out))).mul(window).pow(1.0 / norm_type)


def _lp_inf(pool, input, norm_type, kernel_size, stride, ceil_mode):
    """p = +-inf: the max (min) of |x| over the window, as PyTorch special-cases it."""
    if norm_type == float("inf"):
        return pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    return -pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out) with each
    output (sum over the window of x^p)^(1/p), p = ``norm_type`` (p = 1: sum pooling; p =
    inf: max of |x|, -inf: min of |x|). H_out as in avg_pool2d without padding.

    Computed as PyTorch does, avg_pool2d(x^p) * kh * kw to the 1/p, so with ceil_mode a
    window clipped at the edge is scaled by the full window size. Floating dtypes;
    differentiable where the window sum is positive. Raises what avg_pool2d raises.
    Reference: torch.nn.functional.lp_pool2d.
    """
    kh, kw = pair("lp_pool2d", "kernel_size", kernel_size)
    if norm_type in (float("inf"), -float("inf")):
        return _lp_inf(max_pool2d, input, norm_type, kernel_size, stride, ceil_mode)
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_root(out, norm_type, kh * kw)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over L: (N, C, L) or (C, L) -> (N, C, L_out), each output
    (sum over the window of x^p)^(1/p), p = ``norm_type``; as lp_pool2d along one dim.

    Raises what avg_pool1d raises. Reference: torch.nn.functional.lp_pool1d.
    """
    k = _one("lp_pool1d", "kernel_size", kernel_size)
    if norm_type in (float("inf"), -float("inf")):
        return _lp_inf(max_pool1d, input, norm_type, kernel_size, stride, ceil_mode)
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_root(out, norm_type, k)
