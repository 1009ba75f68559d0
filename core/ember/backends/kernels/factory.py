"""Factory kernels: make new arrays from sizes, values and random generators.

``dtype`` arguments are numpy dtypes; ``rng`` is the backend generator object that
``ember.random`` hands out (``numpy.random.Generator`` on cpu).
"""
from __future__ import annotations


def kernels(xp) -> dict:
    def empty(size, dtype):
        return xp.empty(size, dtype=dtype)

    def full(size, value, dtype):
        return xp.full(size, value, dtype=dtype)

    def arange(start, end, step, dtype):
        return xp.arange(start, end, step).astype(dtype, copy=False)

    def linspace(start, end, steps, dtype):
        return xp.linspace(start, end, steps).astype(dtype, copy=False)

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
