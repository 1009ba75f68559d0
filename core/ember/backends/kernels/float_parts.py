"""frexp: a float's mantissa and binary exponent, x = mantissa * 2 ** exponent.

The mantissa keeps x's dtype with 0.5 <= |mantissa| < 1 (0 for 0; inf and NaN pass
through with exponent 0), the exponent is int32, as torch.frexp. bfloat16 has no frexp
of its own in numpy: it goes through float32, which holds every bfloat16 exactly.
"""
from __future__ import annotations

import numpy as np

from ...errors import DtypeError
from .reduction import F32, LOW_FLOATS


def kernels(xp) -> dict:
    def frexp(a):
        if a.dtype.kind not in "f" and a.dtype not in LOW_FLOATS:
            raise DtypeError(f"frexp(): only supports floating point dtypes, got "
                             f"{a.dtype.name}; convert with .float()")
        x = a.astype(F32) if a.dtype in LOW_FLOATS else a
        mantissa, exponent = xp.frexp(x)
        return mantissa.astype(a.dtype, copy=False), exponent.astype(np.int32, copy=False)

    return {"frexp": frexp}
