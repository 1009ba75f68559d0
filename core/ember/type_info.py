"""``ember.finfo`` / ``ember.iinfo``: the numerical limits of a ScalarType.

The values come from numpy's ``finfo``/``iinfo`` (ml_dtypes' for bfloat16), so they are
the IEEE-754 / two's-complement limits of the storage type. Reference: torch.finfo,
torch.iinfo.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from . import types as _t

__all__ = ["finfo", "iinfo"]


def _scalar_type(what: str, dtype) -> _t.ScalarType:
    if not isinstance(dtype, _t.ScalarType):
        raise TypeError(f"{what}(): argument 'type' (position 1) must be ember.dtype, not "
                        f"{type(dtype).__name__}")
    return dtype


class finfo:  # noqa: N801 - PyTorch's name
    """Limits of a floating ScalarType (default: ``get_default_dtype()``).

    Attributes (Python floats unless noted): ``bits`` (int), ``eps`` (the gap between 1
    and the next value), ``max``, ``min`` (= -max), ``tiny`` and ``smallest_normal`` (the
    smallest positive normal number), ``resolution`` (10 ** -precision decimal digits),
    ``dtype`` (the name, a str: ``"float32"``).

    Raises TypeError for an integral or bool dtype (use ``iinfo``) and for a non-dtype.
    Reference: torch.finfo.
    """

    def __init__(self, type=None):  # noqa: A002 - PyTorch's argument name
        st = _t.get_default_dtype() if type is None else _scalar_type("finfo", type)
        if not st.is_floating_point:
            raise TypeError("ember.finfo() requires a floating point input type. Use "
                            "ember.iinfo to handle 'ember.finfo'")
        info = ml_dtypes.finfo(st.numpy) if st.numpy == ml_dtypes.bfloat16 else \
            np.finfo(st.numpy)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # ml_dtypes' is a rounded bfloat16
        self.dtype = st.name

    def __eq__(self, other) -> bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:  # noqa: N801 - PyTorch's name
    """Limits of an integral ScalarType: ``bits``, ``min``, ``max`` (Python ints) and
    ``dtype`` (the name, a str: ``"int64"``).

    Raises TypeError for a floating dtype (use ``finfo``), for bool, and for a non-dtype.
    Reference: torch.iinfo.
    """

    def __init__(self, type):  # noqa: A002 - PyTorch's argument name
        st = _scalar_type("iinfo", type)
        if st is _t.bool_:
            raise TypeError("ember.bool is not supported by ember.iinfo")
        if st.is_floating_point:
            raise TypeError("ember.iinfo() requires an integer input type. Use ember.finfo "
                            "to handle 'ember.iinfo'")
        info = np.iinfo(st.numpy)
        self.bits, self.min, self.max = int(info.bits), int(info.min), int(info.max)
        self.dtype = st.name

    def __eq__(self, other) -> bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
