"""Blocked reductions and scans over big arrays, for ``reduction.py``: the full product of a
float32 array in lanes, and cumsum/cumprod along the last dim in blocks.

Both replace numpy's serial chains (``multiply.reduce`` over contiguous memory and every
``accumulate`` are one dependent step per element; numpy's SIMD reduce loop serves add
only) by vectorized steps over many independent lanes, and state their error against a
float64 reference below.
"""
from __future__ import annotations

import math

import numpy as np

F64 = np.dtype(np.float64)

# The product of every element of a big float32 array in PROD_LANES lanes, CPU-only
# (numpy: ``initial=``; CuPy's prod is a parallel reduction already). numpy's
# multiply.reduce over contiguous memory is one serial chain (~1-4 ns an element: its SIMD
# reduce loop serves add only); its reduce over axis 0 of a (rows, PROD_LANES) view
# multiplies whole rows into PROD_LANES partial products with SIMD (~8x faster at 1e6).
# Each lane starts at LANE_START = 0.75, not 1: lanes of values near 1 otherwise hover
# around 1, where float32's spacing halves, and their roundings were measured not to
# cancel (1e6 values in [0.9999, 1.0001]: 7e4 ulp off the float64 product, against 3e3-6e3
# for the chain and 2e4-3e4 for PyTorch); started at 0.75 they stay inside [0.5, 1):
# 1e2-1e3 ulp there, and within 1e3 ulp on the other samples tried (lognormal spreads
# 1e-3 and 1e-2, uniform [0.99, 1.01], 3e4 to 1e6 elements; the chain 1e1-7e2). The lanes
# are divided by 0.75 and multiplied in float64, rounded once. NaN, inf, 0 and -0.0 come
# out as the chain's (a product's special values do not depend on its order); a partial
# product that over- or underflows in one order and not in the other differs (0.75 moves
# a lane's underflow up by 4/3, its overflow away by as much).
PROD_LANES, PROD_MIN, LANE_START = 1024, 32768, 0.75


def lanes_product(a):
    """The product of every element of a float32 numpy ``a`` (size >= PROD_LANES) as a
    0-d float32 array."""
    flat = a.reshape(-1)
    k = a.size // PROD_LANES
    lanes = np.multiply.reduce(flat[:k * PROD_LANES].reshape(k, PROD_LANES), 0,
                               initial=LANE_START)
    wide = lanes.astype(F64)
    wide /= LANE_START
    r = float(np.multiply.reduce(wide))
    if a.size > k * PROD_LANES:
        r *= float(np.multiply.reduce(flat[k * PROD_LANES:], dtype=F64))
    return np.asarray(r, dtype=a.dtype)


# cumsum/cumprod along a dim of a big float32/float64 array, blocked (CPU-only: CuPy's
# are parallel scans already). numpy's accumulate is one serial chain, ~4 ns an element
# (each step waits on the store of the one before; PyTorch's loop ~1 ns). Blocked: cut
# the dim into blocks of SCAN_BLOCK; SCAN_BLOCK - 1 vectorized steps, each combining one
# position of every block with the one before it (a fixed count of steps whatever the
# shape: the block's lanes, not the tensor's rows or columns), give the scan inside each
# block; the block totals take the chain (1/SCAN_BLOCK of the elements); their exclusive
# scan is combined into every block. At (1000, 1000) float32 along the last dim ~2.5 ms
# instead of 4.6 (cumsum) and 4.8-8 (cumprod), PyTorch 1.1-1.2; along dim 0 (steps over
# whole row slabs) ~3.4 ms instead of 8-14, PyTorch 8-13. Error: cumsum <= (SCAN_BLOCK +
# n / SCAN_BLOCK + 1) roundings of the running sum|x| against the chain's n (uniform
# [0, 1): 5.0e-7 of the max against 1.3e-6, float64 reference); cumprod the same n - 1
# roundings in another order (58 ulp at most, the chain 58, on [0.999, 1.001]). NaN,
# inf, zeros and their signs come out as the chain's (the sums start from -0.0, the
# products from 1); only a partial result that over- or underflows in one order and not
# in the other differs (PyTorch, which accumulates float32 in float64, differs from the
# chain there).
SCAN_BLOCK, SCAN_MIN = 8, 32768


def blocked_scan(ufunc, identity, a, dim: int):
    """``ufunc.accumulate`` (add or multiply) of a float32/float64 numpy ``a`` along
    ``dim``, whose length is a multiple of SCAN_BLOCK; ``identity`` starts the scan (-0.0
    for add, 1.0 for multiply). A C-ordered copy of ``a`` is the result's buffer."""
    shape, n = a.shape, a.shape[dim]
    inner = math.prod(shape[dim + 1:])
    y = np.array(a, order="C", copy=True)
    if inner == 1:  # the last dim: blocks of contiguous elements
        blocks = y.reshape(-1, SCAN_BLOCK)
        for j in range(1, SCAN_BLOCK):  # NOTE: SCAN_BLOCK - 1 steps, each over every block
            ufunc(blocks[:, j - 1], blocks[:, j], out=blocks[:, j])
        totals = blocks[:, -1].reshape(-1, n // SCAN_BLOCK)
        offsets = np.empty_like(totals)
        offsets[:, 0] = identity
        ufunc.accumulate(totals[:, :-1], 1, out=offsets[:, 1:])
        flat = y.reshape(-1)
        ufunc(flat, np.repeat(offsets.reshape(-1), SCAN_BLOCK), out=flat)
        return y
    # another dim: blocks of SCAN_BLOCK slabs (outer, inner), each step a slab operation
    blocks = y.reshape(math.prod(shape[:dim]), n // SCAN_BLOCK, SCAN_BLOCK, inner)
    for j in range(1, SCAN_BLOCK):  # NOTE: SCAN_BLOCK - 1 steps, each over every block
        ufunc(blocks[:, :, j - 1], blocks[:, :, j], out=blocks[:, :, j])
    offsets = np.empty(blocks[:, :, :1].shape, a.dtype)
    offsets[:, 0] = identity
    ufunc.accumulate(blocks[:, :-1, -1], 1, out=offsets[:, 1:, 0])
    ufunc(blocks, offsets, out=blocks)
    return y
