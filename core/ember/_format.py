"""The PyTorch-style repr of a tensor: ``tensor([1., 2.], dtype=ember.float64)``."""
from __future__ import annotations

import numpy as np

from . import types as _t

_DEFAULT_INT = _t.int64
_THRESHOLD = 1000


def _format_floats(arr: np.ndarray) -> dict:
    finite = arr[np.isfinite(arr)]
    if finite.size and np.all(finite == np.round(finite)) and np.abs(finite).max() < 1e8:
        return {"float_kind": lambda v: f"{v:.0f}." if np.isfinite(v) else str(v)}
    big = np.abs(finite).max() if finite.size else 0
    small = np.abs(finite[finite != 0]).min() if np.any(finite != 0) else 1
    if big >= 1e8 or small < 1e-4:
        return {"float_kind": lambda v: f"{v:.4e}"}
    return {"float_kind": lambda v: f"{v:.4f}"}


def tensor_repr(t) -> str:
    arr = t._type.backend.to_numpy(t._data)
    st = t.dtype
    if st in (_t.float16, _t.bfloat16):
        arr = arr.astype(np.float32)
    opts = _format_floats(arr) if st.is_floating_point else {}
    if st is _t.bool_:  # pad to the widest word present, as PyTorch does
        width = 5 if (arr.size and not arr.all()) else 4
        opts = {"bool": lambda v: str(bool(v)).rjust(width)}
    body = np.array2string(arr, separator=", ", prefix="tensor(", formatter=opts or None,
                           threshold=_THRESHOLD, edgeitems=3)
    extras = []
    if t.device.type != "cpu":
        extras.append(f"device='{t.device}'")
    if arr.size == 0 and arr.ndim != 1:
        extras.append(f"size={tuple(arr.shape)}")
    if st is not _t.get_default_dtype() and st is not _DEFAULT_INT and st is not _t.bool_:
        extras.append(f"dtype={st!r}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + e for e in extras) + ")"
