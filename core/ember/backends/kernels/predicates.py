"""Elementwise predicates: isnan, isinf, isfinite, isposinf, isneginf, isclose.

Each returns a bool array. Integral and bool inputs hold no NaN or infinity: they give
all-False (all-True for ``isfinite``) without calling the float ufuncs, as PyTorch does.
``isclose`` follows PyTorch's formula and dtypes step by step (TensorCompare.cpp): equal
elements are close (infinities included); otherwise ``|self - other| <= atol + |rtol *
other|`` must hold with a finite difference, the difference taken in the operands' dtype
(so integers wrap as in PyTorch) and ``rtol * other`` in the floating dtype (the default
dtype for integral and bool operands).
"""
from __future__ import annotations

from ...errors import DtypeError
from ...types import from_numpy_dtype, get_default_dtype


def _integral(a) -> bool:
    return a.dtype.kind in "biu"


def kernels(xp) -> dict:
    def predicate(fn, integral_value: bool):
        def kernel(a):
            if _integral(a):
                return xp.full(a.shape, integral_value, dtype=bool)
            return fn(a)
        return kernel

    def isclose(a, b, rtol, atol, equal_nan):
        if a.dtype != b.dtype:
            raise DtypeError(f"isclose(): expected other to have self's dtype "
                             f"{from_numpy_dtype(a.dtype).name}, got "
                             f"{from_numpy_dtype(b.dtype).name}; convert one with .to()")
        for name, v in (("rtol", rtol), ("atol", atol)):
            if v < 0:
                raise ValueError(f"isclose(): {name} must be greater than or equal to zero, "
                                 f"but got {v}")
        close = a == b
        if equal_nan and not _integral(a):
            close = close | (xp.isnan(a) & xp.isnan(b))
        if rtol == 0 and atol == 0:
            return close
        if a.dtype == bool:
            a = a.astype(get_default_dtype().numpy)
            b = b.astype(a.dtype)
        scaled = b.astype(get_default_dtype().numpy) if _integral(b) else b
        allowed = atol + xp.abs(rtol * scaled)
        actual = xp.abs(a - b)
        # NOTE: allowed keeps the operands' float dtype (numpy's weak Python floats), except
        # bfloat16, which numpy widens to float32; rounding back keeps PyTorch's precision.
        if allowed.dtype != scaled.dtype:
            allowed = allowed.astype(scaled.dtype)
        return close | (xp.isfinite(actual) & (actual <= allowed))

    return {"isnan": predicate(xp.isnan, False), "isinf": predicate(xp.isinf, False),
            "isfinite": predicate(xp.isfinite, True),
            "isposinf": predicate(xp.isposinf, False),
            "isneginf": predicate(xp.isneginf, False), "isclose": isclose}
