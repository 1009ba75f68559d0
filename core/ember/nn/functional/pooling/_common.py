"""Argument handling shared by the pooling functionals: dtype and rank checks, 1-D calls
as 2-D ones on a (.., 1, L) view, adaptive windows, and the named results of the ops that
return (output, indices)."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ember.errors import ShapeError


def check_floating(op: str, x) -> None:
    if not x.is_floating_point():
        raise NotImplementedError(f"{op}(): expected a floating input (float16, bfloat16, "
                                  f"float32, float64), got {x.dtype}; convert it first, "
                                  f"e.g. x.float()")


def one(op: str, name: str, value) -> int:
    """A 1-d pooling argument (an int or a one-element sequence) as an int."""
    v = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if len(v) != 1:
        raise ShapeError(f"{op}(): {name} must be an int or a tuple of one int, got {value!r}")
    return v[0]


def as_2d(op: str, x):
    """(N, C, L) or (C, L) as (N, C, 1, L) or (C, 1, L)."""
    if x.ndim not in (2, 3):
        raise ShapeError(f"{op}(): expected a 2-D (C, L) or 3-D (N, C, L) input, got shape "
                         f"{list(x.shape)}")
    return x.unsqueeze(-2)


def args_1d(op: str, *named):
    """(neutral, v) pairs for the 2-D op from 1-d arguments (the added H dim has size 1:
    kernel, stride and dilation 1, padding 0); an empty stride stays empty."""
    out = []
    for name, v in named:
        if name == "stride" and isinstance(v, (tuple, list)) and not v:
            out.append(())
        else:
            out.append((0 if name == "padding" else 1, one(op, name, v)))
    return out


def adaptive_size(op: str, input, output_size, k: int) -> tuple:
    """``output_size`` as k ints, None in it keeping that input size."""
    if output_size is None:
        output_size = (None,) * k
    v = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,) * k
    if len(v) != k:
        raise ShapeError(f"{op}(): output_size must be an int or a tuple of {k} ints, got "
                         f"{output_size!r}")
    return tuple(input.shape[-k + i] if s is None else s for i, s in enumerate(v))


def adaptive_bounds(n: int, n_out: int) -> list:
    """[(start, end)] of output cell i's input window along a dim of size n: floor(i n /
    out) to ceil((i + 1) n / out), PyTorch's adaptive pooling rule."""
    return [(i * n // n_out, -(-(i + 1) * n // n_out)) for i in range(n_out)]


def adaptive_windows(n: int, n_out: int) -> np.ndarray:
    """(n_out, k) source cells of the adaptive windows of a dim of size n, each padded to the
    longest window k by repeating its last cell (which changes neither the max nor the
    first position of it)."""
    bounds = adaptive_bounds(n, n_out)
    k = max(e - s for s, e in bounds)
    return np.array([[s + min(t, e - s - 1) for t in range(k)] for s, e in bounds],
                    dtype=np.int64).reshape(n_out, k)


def plane_strides(sizes) -> tuple:
    """Flat strides of a row-major plane of ``sizes``: the index convention of pooling's
    indices (h * W + w, (t * H + h) * W + w)."""
    return tuple(int(np.prod(sizes[i + 1:], dtype=np.int64)) for i in range(len(sizes)))


# NOTE: a namedtuple result (as the generated wrappers of kernels give) lets the tracer
# record a composite as one node with two outputs
RESULT = {n: namedtuple(n, ["output", "indices"], module="ember.return_types")
          for n in ("adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d")}
