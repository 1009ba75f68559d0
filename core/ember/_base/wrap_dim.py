"""Dim wrapping: a possibly negative dim -> an index in ``[0, ndim)``, as PyTorch does.

Read by the generated op wrappers (``_wrap_dim`` / ``_wrap_dims``), ``Tensor.size(dim)``,
the composite ops and ``linalg``. Imports nothing from ember (see ``ember/_base``).

Reference: PyTorch's ``c10::maybe_wrap_dim`` (``c10/core/WrapDimMinimal.h``).
"""
from __future__ import annotations


def wrap_dim(dim: int, ndim: int, op: str) -> int:
    """Normalize a possibly negative ``dim`` for a tensor of ``ndim`` dimensions.

    A zero-dim tensor accepts dims -1 and 0, as in PyTorch. Raises IndexError with the
    valid range.
    """
    n = ndim if ndim > 0 else 1
    if -n <= dim < n:
        return dim + n if dim < 0 else dim
    raise IndexError(f"{op}(): dimension out of range (expected to be in range of "
                     f"[{-n}, {n - 1}], but got {dim})")


def wrap_dims(dims, ndim: int, op: str):
    """``wrap_dim`` over an int, a tuple of ints, or None; repeated dims raise ValueError."""
    if dims is None:
        return None
    if dims.__class__ is int:
        return wrap_dim(dims, ndim, op)
    out = tuple(wrap_dim(d, ndim, op) for d in dims)
    if len(set(out)) != len(out):
        raise ValueError(f"{op}(): dim {dims} appears multiple times in the list of dims")
    return out
