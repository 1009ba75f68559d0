"""The checked conversion of Python and numpy values into an integer dtype, as PyTorch's
factories do it (``c10::checked_convert``): a value that would wrap, a NaN or an infinity
raises instead of becoming a wrong number.

``check_fits(values, dtype, op)`` checks a numpy array of values before it is cast to the
integer dtype ``dtype``: floats must lie in [min, max] (so 127.9 does not fit int8 and
NaN/inf never fit), integers in [min, max], and, as PyTorch allows, unsigned types also
take -max..-1 from integers (``tensor([-1], dtype=uint8)`` is 255, two's complement).
Float dtypes and bool are never checked (a float overflows to inf as in PyTorch; any value
is a bool). Used by the factories (``tensor``, ``as_tensor``, ``full``, ``arange``,
``linspace``) on host data; casts between tensors (``.to(int8)``) wrap, as PyTorch's do.
"""
from __future__ import annotations

import numpy as np

from .copying import overflow_error


def check_fits(values, dtype, op: str) -> None:
    """Raise RuntimeError unless every value of ``values`` (a numpy array or scalar of a
    bool, integer or float dtype) converts to the numpy integer ``dtype`` without
    overflow; nothing for other target dtypes or when every value of the source dtype
    fits (``np.can_cast(..., "safe")``).

    Raises:
        RuntimeError: "value V cannot be converted to type T without overflow", naming the
            first offending value, the valid range and the way out (PyTorch's message).
    """
    dtype = np.dtype(dtype)
    a = np.asarray(values)
    if dtype.kind not in "iu" or a.size == 0 or np.can_cast(a.dtype, dtype, "safe"):
        return
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    if a.dtype.kind == "f":
        # the largest float <= hi: float(2**63 - 1) rounds up to 2**63, which wraps
        top = float(hi) if float(hi) <= hi else float(np.nextafter(float(hi), 0.0))
        mn, mx = a.min(), a.max()  # NaN propagates and fails both comparisons
        if lo <= mn and mx <= top:
            return
        bad = ~((a >= lo) & (a <= top))
    elif a.dtype.kind in "iu":
        low = -hi if dtype.kind == "u" else lo
        if low <= a.min() and a.max() <= hi:
            return
        bad = (a < low) | (a > hi)
    else:
        return
    raise overflow_error(op, repr(a[bad].reshape(-1)[0].item()), dtype.name, f"[{lo}, {hi}]",
                         "pass values inside that range or a wider dtype")
