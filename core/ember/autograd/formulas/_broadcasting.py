"""Broadcasting helpers of the backward formulas: whether a shape broadcasts to another
(``is_expandable_to``), a gradient summed down to an input's shape (``sum_to``, which the
engine and the JIT's differentiable graphs call too), ``maybe_multiply``, and the dim
helpers that undo a reduction's squeeze (``_dims``, ``restore_reduced_dims``).
"""
from __future__ import annotations

from ...ops import namespace as E

from ..fast_formulas import sum_to_kernels as _sum_to_kernels


def is_expandable_to(shape, desired) -> bool:
    """Whether ``shape`` broadcasts to ``desired`` (so a gradient of ``desired`` sums to it)."""
    n = len(shape)
    if n > len(desired):
        return False
    return shape == desired[len(desired) - n:] or \
        all(s == d or s == 1 for s, d in zip(shape, desired[len(desired) - n:]))


def sum_to(g, shape):
    """Sum ``g`` down to ``shape`` over the dims broadcasting added or stretched."""
    shape = tuple(shape)
    have = g._data.shape
    if have == shape:
        return g
    lead = len(have) - len(shape)
    inner = tuple([i for i, s in enumerate(shape) if s == 1 and have[lead + i] != 1]) \
        if 1 in shape else ()
    fast = _sum_to_kernels(g, lead, inner)  # nothing records: the kernels directly
    if fast is not None:
        return fast
    if lead:
        g = g.sum(tuple(range(lead)))  # the dims broadcasting prepended
    if inner:
        g = g.sum(inner, keepdim=True)  # the size-1 dims it stretched
    return g


def maybe_multiply(g, s):
    """``g * s``, skipping the multiplication for ``s == 1``."""
    return g if (not isinstance(s, E.Tensor) and s == 1) else g * s


def _dims(dim, ndim: int) -> tuple:
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    return (dim,) if isinstance(dim, int) else tuple(dim)


def restore_reduced_dims(g, dim, keepdim: bool, ndim: int):
    """Undo a reduction's squeeze: unsqueeze the reduced dims of ``g`` (size 1), so that
    ``g`` broadcasts against the reduction's input."""
    if keepdim or ndim == 0:
        return g
    dims = sorted(_dims(dim, ndim))
    if dims == list(range(len(dims))):
        return g  # leading (or all) dims: right-aligned broadcasting restores them
    for d in dims:
        g = g.unsqueeze(d)
    return g
