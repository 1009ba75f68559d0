"""Argument checks shared by the ``ember.linalg`` composites, and their named results."""
from __future__ import annotations

from collections import namedtuple

from ..errors import DtypeError, ShapeError
from ..types import to_scalar_type


def need_matrix(op: str, A, square: bool = False, name: str = "A") -> None:
    if A.ndim < 2:
        raise ShapeError(f"{op}: The input tensor {name} must have at least 2 dimensions, got "
                         f"shape {list(A.shape)}; expected (*, m, n)")
    if square and A.shape[-1] != A.shape[-2]:
        raise ShapeError(f"{op}: {name} must be batches of square matrices, but they are "
                         f"{A.shape[-2]} by {A.shape[-1]} matrices")


def need_float(op: str, A, dtype=None):
    """``A`` cast to ``dtype`` (which may only widen, as in norm), checked floating."""
    if not A.is_floating_point():
        raise DtypeError(f"{op}: Expected a floating point tensor as input. Got "
                         f"{A.dtype.name}; convert with .double() or .float()")
    if dtype is None:
        return A
    dt = to_scalar_type(dtype)
    if dt is not A.dtype:
        if not dt.is_floating_point or dt.itemsize < A.dtype.itemsize:
            raise DtypeError(f"{op}: the input dtype {A.dtype.name} should be convertible "
                             f"without narrowing to the specified dtype {dt.name}")
        A = A.to(dt)
    return A


def need_same_dtype(op: str, a, b, names=("A", "B")) -> None:
    if a.dtype is not b.dtype:
        raise DtypeError(f"{op}: Expected {names[0]} and {names[1]} to have the same dtype, but "
                         f"found {names[0]} of type {a.dtype.name} and {names[1]} of type "
                         f"{b.dtype.name} instead; cast one with .to()")


_RESULTS: dict = {}


def named(op: str, fields: str, *values):
    """``values`` as the named tuple ``ember.return_types.<op>`` (what a generated op with
    several returns gives; composites build theirs here)."""
    cls = _RESULTS.get(op)
    if cls is None:
        cls = _RESULTS[op] = namedtuple(op, fields, module="ember.return_types")
    return cls(*values)
