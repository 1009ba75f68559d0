"""Fractional max pooling (Graham, "Fractional Max-Pooling", 2014, arXiv:1412.6071):
``fractional_max_pool2d/3d``, windows of a fixed size placed at pseudo-random steps so
the output has any size between in - k + 1 and 1.

PyTorch's interval rule, per (N, C) plane and dim, with u the plane's sample in [0, 1):
window i < out - 1 starts at int((i + u) a) - int(u a), a = (in - k) / (out - 1), and the
last at in - k, computed in the input's dtype (as PyTorch's kernel does, so the same
samples pick the same windows). The samples sit in ``_random_samples`` (N, C, nd): u[0]
for W and u[1] for H in 2-D, u[0] for D, u[1] for H, u[2] for W in 3-D (PyTorch's order);
fresh ``E.rand`` ones when not given. Plain functions over ember ops (PyTorch has no
top-level op to mirror): the window starts are tensor ops on the samples, every window
cell is gathered and one max taken, so the gradient goes to the maximum.
Reference: torch.nn.functional.fractional_max_pool2d/3d.
"""
from __future__ import annotations

import math

from ember.ops import namespace as E
from ember.backends.kernels.pooling import check_input, ntuple
from ember.errors import DtypeError, ShapeError

from ._common import check_floating, plane_strides

__all__ = ["fractional_max_pool2d", "fractional_max_pool3d",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]

_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}
_SAMPLE_DIM = {2: (1, 0), 3: (0, 1, 2)}   # which sample each spatial dim uses


def _starts(u, n_in: int, n_out: int, k: int):
    """(P, n_out) int64 window starts along one dim from samples u (P,), PyTorch's
    ``generate_intervals`` in u's dtype."""
    # NOTE: built from u (not from sizes), so a traced batch size stays dynamic in exports
    last = u.new_zeros((), dtype=E.int64).expand_as(u.unsqueeze(-1)) + (n_in - k)
    if n_out == 1:
        return last
    alpha = E.full((), n_in - k, dtype=u.dtype, device=u.device) / (n_out - 1)
    i = E.arange(n_out - 1, device=u.device).to(u.dtype)
    # the products are non-negative, so the int64 cast truncates as static_cast<int> does
    starts = ((i + u.unsqueeze(-1)) * alpha).to(E.int64) - (u * alpha).to(E.int64).unsqueeze(-1)
    return E.cat([starts, last], -1)


def _fractional(op: str, nd: int, x, kernel_size, output_size, samples):
    check_input(op, x.shape, nd)
    check_floating(op, x)
    k = ntuple(op, "kernel_size", kernel_size, nd)
    out = ntuple(op, "output_size", output_size, nd)
    sizes, lead = tuple(x.shape[-nd:]), tuple(x.shape[:-nd])
    if min(k) < 1 or min(out) < 0:
        raise ShapeError(f"{op}(): kernel_size must be positive and output_size "
                         f"non-negative, got kernel_size={list(k)}, output_size={list(out)}")
    for name, n, kn, o in zip(_NAMES[nd], sizes, k, out):
        # NOTE: PyTorch's 3-D kernel asks out + k - 1 < in, its 2-D one <= in: mirrored
        if o + kn - 1 > n - (nd == 3):
            raise ShapeError(f"{op}(): pool {name} {kn} too large relative to input {name} "
                             f"{n} for output {name} {o}; lower kernel_size or output_size")
    batch, channels = (x.shape[0] if x.ndim == nd + 2 else 1), x.shape[-nd - 1]
    if samples.ndim != 3 or samples.shape[0] < batch or samples.shape[1] != channels or \
            samples.shape[2] != nd:
        raise ShapeError(f"{op}(): expected _random_samples of shape (N >= {batch}, C = "
                         f"{channels}, {nd}), got {list(samples.shape)}")
    if samples.dtype is not x.dtype:
        raise DtypeError(f"{op}(): expected _random_samples of the input's dtype {x.dtype}, "
                         f"got {samples.dtype}; convert them with .to(input.dtype)")
    if 0 in out:
        return (E.empty(lead + out, dtype=x.dtype, device=x.device),
                E.empty(lead + out, dtype=E.int64, device=x.device))
    u = (samples if samples.shape[0] == batch else samples[:batch]).reshape(-1, nd)
    # flat positions of every window cell: (P, o_0, .., o_nd-1, k_0, .., k_nd-1)
    flat = None
    for n, st in enumerate(plane_strides(sizes)):
        cells = _starts(u[:, _SAMPLE_DIM[nd][n]], sizes[n], out[n], k[n]).unsqueeze(-1) \
            + E.arange(k[n], device=x.device)
        shape = [-1] + [1] * (2 * nd)
        shape[1 + n], shape[1 + nd + n] = out[n], k[n]
        term = (cells * st).reshape(shape)
        flat = term if flat is None else flat + term
    flat = flat.expand((-1,) + out + k).reshape(-1, math.prod(out) * math.prod(k))
    cells = E.gather(x.reshape(-1, math.prod(sizes)), -1, flat)
    values, t = cells.reshape(-1, math.prod(out), math.prod(k)).max(-1)
    indices = E.gather(flat.reshape(-1, math.prod(out), math.prod(k)), -1, t.unsqueeze(-1))
    return values.reshape((-1,) + lead[1:] + out), indices.reshape((-1,) + lead[1:] + out)


def _call(op: str, nd: int, input, kernel_size, output_size, output_ratio, samples):
    if output_size is None and output_ratio is None:
        raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
    check_input(op, input.shape, nd)
    check_floating(op, input)
    if output_size is None:
        ratio = output_ratio if isinstance(output_ratio, (tuple, list)) else (output_ratio,)
        if len(ratio) == 1:
            ratio = tuple(ratio) * nd
        if len(ratio) != nd:
            raise ShapeError(f"{op}(): output_ratio must be a number or a tuple of {nd}, got "
                             f"{output_ratio!r}")
        output_size = tuple(int(input.shape[n - nd] * r) for n, r in enumerate(ratio))
    if samples is None:
        batch = input.shape[0] if input.ndim == nd + 2 else 1
        samples = E.rand(batch, input.shape[-nd - 1], nd, dtype=input.dtype,
                         device=input.device)
    return _fractional(op, nd, input, kernel_size, output_size, samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """2-D fractional max pooling: (N, C, H, W) or (C, H, W) -> (N, C, *output_size), the
    max over kh x kw windows placed by the interval rule of this module's docstring.

    ``output_size`` is an int or (h, w); else ``output_ratio`` (a number or a pair) gives
    int(H * ratio). ``_random_samples`` (N, C, 2) of the input's dtype fixes the windows
    (unbatched input: (1, C, 2)); None draws them with E.rand. With ``return_indices``
    also returns the int64 flat positions h * W + w of the maxima (first on ties), as
    max_unpool2d expects. Floating dtypes. Raises ValueError without output_size or
    output_ratio; ShapeError for a bad rank, a kernel that does not fit (out + k - 1 > in)
    or samples of the wrong shape; DtypeError for samples of another dtype. Departures:
    kernel_size 0 is refused (PyTorch returns -inf), a scalar output_ratio is accepted.
    Reference: torch.nn.functional.fractional_max_pool2d.
    """
    out = _call("fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio,
                _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """3-D fractional max pooling: (N, C, D, H, W) or (C, D, H, W) -> (N, C, *output_size),
    as fractional_max_pool2d over three dims; ``_random_samples`` is (N, C, 3) with the
    samples for D, H, W in that order, indices are (t * H + h) * W + w. As PyTorch, a
    kernel must leave room: out + k - 1 < in (strict in 3-D). Raises what
    fractional_max_pool2d raises. Reference: torch.nn.functional.fractional_max_pool3d.
    """
    out = _call("fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio,
                _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None,
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """fractional_max_pool2d returning (output, indices). Reference:
    torch.nn.functional.fractional_max_pool2d_with_indices."""
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None,
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """fractional_max_pool3d returning (output, indices). Reference:
    torch.nn.functional.fractional_max_pool3d_with_indices."""
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)
