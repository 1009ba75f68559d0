"""Bucketing and counting kernels: searchsorted, bucketize, bincount, histc.

Results are indices or counts (no gradients). searchsorted follows numpy's ordering, which
PyTorch shares: NaN sorts after every number, so a NaN value goes past the numbers.
"""
from __future__ import annotations

from .pointwise import FLOATING, INTEGRAL, PY_NUMBERS

# PyTorch: "histogram_cpu" not implemented for 'Long'; bincount wants integral input
UNSUPPORTED = {"histc": INTEGRAL, "bincount": FLOATING}


def _side(op: str, right: bool, side):
    if side is None:
        return "right" if right else "left"
    if side not in ("left", "right"):
        raise ValueError(f"{op}(): expected side 'left' or 'right', got {side!r}")
    if right and side == "left":
        raise ValueError(f"{op}(): side and right can't be set to opposites, got side "
                         f"'left' while right is True; pass one of them")
    return side


def kernels(xp) -> dict:
    def searchsorted(seq, values, out_int32, right, side, sorter):
        side = _side("searchsorted", right, side)
        scalar = values.__class__ in PY_NUMBERS
        v = xp.asarray(values, dtype=seq.dtype) if scalar else values
        if sorter is not None:
            if sorter.shape != seq.shape:
                raise ValueError(f"searchsorted(): expected sorter of the boundaries' shape "
                                 f"{list(seq.shape)}, got {list(sorter.shape)}")
            if sorter.dtype.kind not in "iu":
                raise TypeError(f"searchsorted(): expected an int64 sorter, got {sorter.dtype}")
            n = seq.shape[-1] if seq.ndim else 0
            if sorter.size and (int(sorter.min()) < 0 or int(sorter.max()) >= n):
                raise IndexError(f"searchsorted(): sorter indices must lie in [0, {n})")
            seq = xp.take_along_axis(seq, sorter.astype(xp.int64), axis=-1)
        dt = xp.int32 if out_int32 else xp.int64
        if seq.ndim == 0:
            raise ValueError("searchsorted(): expected boundaries with at least 1 dim, got a "
                             "0-d tensor; reshape it with .reshape(1)")
        if seq.ndim == 1:
            return xp.asarray(xp.searchsorted(seq, v, side=side)).astype(dt)
        if scalar or v.ndim != seq.ndim or v.shape[:-1] != seq.shape[:-1]:
            raise ValueError(
                f"searchsorted(): boundaries should be 1-D or share their first N-1 dims with "
                f"the values, got boundaries of shape {list(seq.shape)} and values of shape "
                f"{list(v.shape)}")
        rows_s = seq.reshape(-1, seq.shape[-1])
        rows_v = v.reshape(-1, v.shape[-1])
        out = xp.empty(rows_v.shape, dtype=dt)
        for i in range(rows_s.shape[0]):
            out[i] = xp.searchsorted(rows_s[i], rows_v[i], side=side)
        return out.reshape(v.shape)

    def bucketize(values, boundaries, out_int32, right):
        if boundaries.ndim != 1:
            raise ValueError(f"bucketize(): expected 1-D boundaries, got shape "
                             f"{list(boundaries.shape)}; use searchsorted for N-D boundaries")
        return searchsorted(boundaries, values, out_int32, right, None, None)

    def bincount(a, weights, minlength):
        if a.ndim != 1:
            raise ValueError(f"bincount(): expected a 1-D tensor, got shape {list(a.shape)}")
        if minlength < 0:
            raise ValueError(f"bincount(): expected a non-negative minlength, got {minlength}")
        if a.size and int(a.min()) < 0:
            raise ValueError(f"bincount(): expected non-negative values, got {int(a.min())}")
        if weights is not None and weights.shape != a.shape:
            raise ValueError(f"bincount(): expected weights of the input's shape "
                             f"{list(a.shape)}, got {list(weights.shape)}")
        n = max(int(a.max()) + 1 if a.size else 0, minlength)
        idx = a.astype(xp.int64)
        if weights is None:
            return xp.bincount(idx, minlength=n).astype(xp.int64)
        dt = xp.float32 if weights.dtype == xp.float32 else xp.float64
        out = xp.bincount(idx, weights=weights.astype(xp.float64), minlength=n)
        return out.astype(dt)

    def histc(a, bins, lo, hi):
        if bins <= 0:
            raise ValueError(f"histc(): expected bins > 0, got {bins}")
        if lo > hi:
            raise ValueError(f"histc(): expected min <= max, got min={lo}, max={hi}")
        if lo == hi and a.size:
            lo, hi = float(a.min()), float(a.max())
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        if not (abs(lo) < float("inf") and abs(hi) < float("inf")):
            raise ValueError(f"histc(): range of [{lo}, {hi}] is not finite; pass finite "
                             f"min and max (NaN or infinite input needs them)")
        x = a.reshape(-1).astype(xp.float64)
        keep = (x >= lo) & (x <= hi)
        x = x[keep]
        idx = xp.floor((x - lo) * bins / (hi - lo)).astype(xp.int64)
        idx = xp.minimum(idx, bins - 1)
        return xp.bincount(idx, minlength=bins)[:bins].astype(a.dtype)

    return {"searchsorted": searchsorted, "bucketize": bucketize, "bincount": bincount,
            "histc": histc}

