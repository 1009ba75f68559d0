"""Python and numpy data on its way into a tensor: the numpy array ``tensor(data)`` copies,
with PyTorch's dtype rules rather than numpy's.

``infer_numpy(data, dtype)`` takes a number, nested lists/tuples of numbers (numpy scalars
and arrays among them), a numpy array or a Tensor. Python floats alone take the default
dtype, Python ints int64, bools bool; a numpy scalar keeps its dtype; in a list every
number's own type takes part in PyTorch's promotion (``[np.float64(1), 2.0]`` is float64,
``[np.int32(3)]`` int32). Integer values are range-checked on the way
(``checked_cast.check_fits``). Reference: torch.tensor's type inference
(``torch/csrc/utils/tensor_new.cpp``, ``infer_scalar_type``).
"""
from __future__ import annotations

import itertools

import numpy as np

from . import types as _t
from .backends.kernels.checked_cast import check_fits
from .tensor import Tensor

__all__ = ["infer_numpy"]


def infer_numpy(data, dtype=None):
    """numpy array for nested Python data / arrays / tensors, with ember's dtype rules.

    With an explicit ``dtype`` Python floats are read at that precision directly (never
    through the default dtype first).
    """
    if isinstance(data, Tensor):
        return data.numpy(force=True)
    if isinstance(data, np.ndarray):
        return data
    kinds = set(map(type, data)) if isinstance(data, (list, tuple)) else None  # C speed
    if kinds and any(issubclass(k, Tensor) for k in kinds):
        data = [x.numpy(force=True) if isinstance(x, Tensor) else x for x in data]
        kinds = set(map(type, data))
    arr = np.asarray(data)
    if dtype is not None and arr.dtype.kind in "biuf":
        return arr
    if isinstance(data, np.generic) and arr.dtype.kind in "biuf":
        return arr  # a numpy scalar keeps its dtype, as PyTorch's
    if kinds is not None and arr.dtype.kind in "biuf":
        st = _sequence_dtype(data, kinds)  # numpy's promotion is not PyTorch's: use the latter
        if st is not None and st.numpy != arr.dtype:
            if arr.dtype.kind in "iu":
                check_fits(arr, st.numpy, "tensor")  # Python ints >= 2**63 come as uint64
            arr = arr.astype(st.numpy)
        if st is not None:
            return arr
    if arr.dtype == np.float64:  # Python floats take the default dtype
        arr = arr.astype(_t.get_default_dtype().numpy)
    elif arr.dtype.kind in "iu" and not isinstance(data, np.generic):
        check_fits(arr, np.int64, "tensor")  # Python ints >= 2**63 come as uint64
        arr = arr.astype(np.int64)
    elif arr.dtype == object and _all_ints(arr):
        raise RuntimeError(f"tensor(): value {max(arr.flat, key=abs)} cannot be converted "
                           f"to type int64 without overflow (valid: [-2**63, 2**63 - 1]); "
                           f"pass a float for a value this large")
    elif arr.dtype.kind not in "biuf" and arr.dtype != _t.bfloat16.numpy:
        raise TypeError(f"tensor(): could not infer a dtype from {type(data).__name__} "
                        f"(numpy made {arr.dtype}); pass numbers, nested lists of numbers, a "
                        f"numpy array or a Tensor")
    return arr


def _sequence_dtype(data, kinds: set) -> _t.ScalarType | None:
    """The dtype PyTorch gives nested lists ``data`` of numbers: the promotion of each
    number's own type (a Python float: the default dtype; int: int64; bool: bool; a
    numpy scalar or array: its dtype), so ``[np.float64(1)]`` is float64 and
    ``[np.int32(1)]`` int32 where numpy's rules and the default dtype disagree. None for
    anything else (left to numpy). The levels are walked with C iterators: about 20 ns
    an element. ``kinds``: the types of ``data``'s own items."""
    level = data
    while kinds and kinds <= {list, tuple}:
        level = list(itertools.chain.from_iterable(level))
        kinds = set(map(type, level))
    st = None
    for k in kinds:
        if k is float:
            s = _t.get_default_dtype()
        elif k is int:
            s = _t.int64
        elif k is bool:
            s = _t.bool_
        elif k is np.ndarray:  # arrays inside a list: their own dtypes
            s = _t.from_numpy_dtype(np.result_type(*(x for x in level if type(x) is k)))
        elif issubclass(k, np.generic) and np.dtype(k).kind in "biuf":
            s = _t.from_numpy_dtype(np.dtype(k))
        else:
            return None
        st = s if st is None else _t.promote_types(st, s)
    return st


def _all_ints(arr) -> bool:
    return all(isinstance(v, (int, np.integer)) for v in arr.flat)
