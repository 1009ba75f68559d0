"""Factory kernels: make new arrays from sizes, values and random generators.

``dtype`` arguments are numpy dtypes; ``rng`` is the backend generator object that
``ember.random`` hands out (``numpy.random.Generator`` on cpu).
"""
from __future__ import annotations


import numpy as np  # dtype facts only; arrays go through xp

_EXACT_F32 = 1 << 24  # float32 holds every integer up to here
_EXACT = {4: _EXACT_F32, 8: 1 << 53}  # by itemsize: floats that hold every integer to here


def _compute_dtype(dtype):
    """float32 for float32/float16/bfloat16 (narrow floats compute in float32 and round
    once), else None (float64 and integer dtypes keep the float64 path)."""
    dt = np.dtype(dtype)
    if dt == np.float32 or dt == np.float16 or dt.name == "bfloat16":
        return np.dtype(np.float32)
    return None


def kernels(xp) -> dict:
    def empty(size, dtype):
        return xp.empty(size, dtype=dtype)

    def full(size, value, dtype):
        if value.__class__ is int and value == 0:
            # NOTE: zeros come from calloc'd (lazily zeroed) pages: no fill pass. Only an
            # int 0, so full(..., -0.0) keeps its sign bit
            return xp.zeros(size, dtype=dtype)
        return xp.full(size, value, dtype=dtype)

    def arange(start, end, step, dtype):
        dt = np.dtype(dtype)
        if start.__class__ is int and end.__class__ is int and step.__class__ is int and (
                dt == np.int64 or (dt.kind == "f" and dt.itemsize >= 4 and
                                    max(abs(start), abs(end)) <= _EXACT[dt.itemsize])):
            # integer positions that the dtype holds exactly: made in it, no int64 pass
            return xp.arange(start, end, step, dtype=dt)
        return xp.arange(start, end, step).astype(dtype, copy=False)

    def linspace(start, end, steps, dtype):
        """PyTorch's formula in the float dtype itself (float16/bfloat16: float32, rounded
        once): ``start + step * i`` for the first half, ``end - step * (steps - 1 - i)`` for
        the second, so both ends are exact. Against the float64 linspace rounded to float32
        the error is <= 2 ulp of max(|start|, |end|) (measured 1 ulp at 1e6 steps on
        [0, 1] and [-3, 7]); float64 and integer dtypes keep xp.linspace."""
        wide = _compute_dtype(dtype)
        if wide is None or steps < 2 or steps > _EXACT_F32 or \
                start.__class__ not in (int, float) or end.__class__ not in (int, float):
            return xp.linspace(start, end, steps).astype(dtype, copy=False)
        step = (end - start) / (steps - 1)
        half = steps // 2
        out = xp.arange(steps, dtype=wide)  # exact: steps <= 2 ** 24
        lo, hi = out[:half], out[half:]
        lo *= wide.type(step)
        lo += wide.type(start)
        xp.subtract(wide.type(steps - 1), hi, out=hi)
        hi *= wide.type(step)
        xp.subtract(wide.type(end), hi, out=hi)
        return out.astype(dtype, copy=False)

    def eye(n, m, dtype):
        return xp.eye(n, m, dtype=dtype)

    def rand(size, dtype, rng):
        return rng.random(size).astype(dtype, copy=False)

    def randn(size, dtype, rng):
        return rng.standard_normal(size).astype(dtype, copy=False)

    def randint(low, high, size, dtype, rng):
        return rng.integers(low, high, size=size).astype(dtype, copy=False)

    def logspace(start, end, steps, base, dtype):
        # float64 exponents and powers, rounded (or truncated, for integers) once at the end
        return xp.power(float(base), xp.linspace(start, end, steps)).astype(dtype, copy=False)

    def randperm(n, dtype, rng):
        return rng.permutation(n).astype(dtype, copy=False)

    return {"empty": empty, "full": full, "arange": arange, "linspace": linspace, "eye": eye,
            "rand": rand, "randn": randn, "randint": randint, "logspace": logspace,
            "randperm": randperm}
