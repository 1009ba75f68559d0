"""Reduction kernels: sum, mean, prod, max/min, var/std, norm, logsumexp, cumsum, ...

``dim`` arrives wrapped (non-negative int or tuple, or None for all dims).
"""
from __future__ import annotations


def kernels(xp) -> dict:
    def sum_(a, dim, keepdim, dtype):
        if dtype is None and a.dtype.kind in "biu":
            dtype = xp.int64  # PyTorch sums integers (and bools) in int64
        return xp.sum(a, axis=dim, keepdims=keepdim, dtype=dtype)

    return {"sum": sum_}
