"""Factory kernels: make new arrays from sizes, values and random generators.

``dtype`` arguments are numpy dtypes; ``rng`` is the backend generator object that
``ember.random`` hands out (``numpy.random.Generator`` on cpu). ``allocation_error`` turns
what an allocation raises (numpy's "array is too big", MemoryError) into an error naming
the op, the size and the bytes.
"""
from __future__ import annotations

import math

import numpy as np  # dtype facts only; arrays go through xp

from ...errors import ShapeError

MAX_BYTES = int(np.iinfo(np.intp).max)  # the largest array numpy (and PyTorch) can index

_EXACT_F32 = 1 << 24  # float32 holds every integer up to here
_EXACT = {4: _EXACT_F32, 8: 1 << 53}  # by itemsize: floats that hold every integer to here


def _compute_dtype(dtype):
    """float32 for float32/float16/bfloat16 (narrow floats compute in float32 and round
    once), else None (float64 and integer dtypes keep the float64 path)."""
    dt = np.dtype(dtype)
    if dt == np.float32 or dt == np.float16 or dt.name == "bfloat16":
        return np.dtype(np.float32)
    return None


def _human(nbytes: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if nbytes < 1024 or unit == "PiB":
            return f"{nbytes:.2f} {unit}" if unit != "bytes" else f"{nbytes} bytes"
        nbytes /= 1024
    return ""


def size_overflow(op: str, size, dtype) -> ShapeError | None:
    """The ShapeError for a ``size``-shaped array of ``dtype`` whose bytes overflow the
    address space (PyTorch: "Storage size calculation overflowed"), or None if they fit.
    Factories whose kernels would not fail on such a size check it first (numpy's
    ``permutation(2 ** 63)`` returns an empty array)."""
    dt = np.dtype(dtype)
    size = [int(s) for s in size]
    numel = math.prod(size)
    if numel * dt.itemsize <= MAX_BYTES and all(s <= MAX_BYTES for s in size):
        return None
    return ShapeError(f"{op}(): size {size} of {dt.name} is too large: {numel} elements of "
                      f"{dt.itemsize} bytes overflow the largest tensor ({MAX_BYTES} bytes) "
                      f"(storage size calculation overflowed); pass a smaller size")


def allocation_error(op: str, size, dtype, err: BaseException) -> BaseException:
    """The error to raise for ``err``, a ValueError or MemoryError that allocating a
    ``size``-shaped array of ``dtype`` raised inside factory ``op``'s kernel.

    A size whose bytes overflow the address space (numpy: "array is too big", "Maximum
    allowed dimension exceeded"; PyTorch: "Storage size calculation overflowed") gives a
    ShapeError (a RuntimeError and ValueError), one that does not fit in memory a
    MemoryError (PyTorch: "can't allocate memory: you tried to allocate N bytes"), each
    naming ``op``, the size, the element count and the bytes. Any other ``err`` (a
    ValueError about values) is returned unchanged.
    """
    dt = np.dtype(dtype)
    size = [int(s) for s in size]
    nbytes = math.prod(size) * dt.itemsize
    what = f"size {size} of {dt.name}"
    if any(s < 0 for s in size):
        return ShapeError(f"{op}(): negative dimension in {what}; sizes must be >= 0")
    overflow = size_overflow(op, size, dt)
    if overflow is not None:
        return overflow
    if isinstance(err, MemoryError):
        return MemoryError(f"{op}(): can't allocate memory: you tried to allocate {nbytes} "
                           f"bytes ({_human(nbytes)}) for {what}; pass a smaller size, a "
                           f"narrower dtype, or free memory")
    return err


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
