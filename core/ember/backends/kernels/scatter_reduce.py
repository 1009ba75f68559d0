"""scatter_reduce: reduce ``src`` into ``self`` at ``index`` along ``dim`` with sum, prod,
mean, amax or amin (torch.Tensor.scatter_reduce, ``reduce=`` and ``include_self=``).

For dim 0, ``out[index[i][j]][j]`` combines ``self[index[i][j]][j]`` (when include_self) and
every ``src[i][j]`` sent there; positions no index names keep self's value. Index, shape
and dtype rules are scatter's (``indexing.check_scatter_shapes``). Repeated indices are
reduced with ``ufunc.at`` (add, maximum, minimum) and, for prod, in rounds over the sorted
targets, one occurrence of each target per round (CuPy has no ``multiply.at``). Bool
computes in int64 (sum and amax are ``or``, prod and amin ``and``); an integer mean rounds
down, as PyTorch. NOTE: ``xp.<ufunc>.at`` must be numpy's for every dtype: CuPy's refuse
the 8- and 16-bit types and its float maximum/minimum skip NaN
(``_scatter_op_single`` in ``cupy/_core/_routines_indexing.pyx``; ``atomics.cuh``), so the
cuda plugin's namespace widens or keys them (``ember_cuda/kernels.py``).
"""
from __future__ import annotations

import numpy as np  # dtype facts only; arrays go through xp

from ...errors import DtypeError
from .indexing import check_index_dtype, check_scatter_shapes, flat_along
from .reduction import is_float

REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _identity(reduce: str, dtype):
    """The value that leaves a reduction unchanged, in ``dtype``."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if is_float(dtype):
        return -np.inf if reduce == "amax" else np.inf
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def kernels(xp) -> dict:
    def coords(index, dim):
        out = []
        for d, n in enumerate(index.shape):
            shape = [1] * index.ndim
            shape[d] = n
            out.append(index if d == dim else xp.arange(n).reshape(shape))
        return tuple(out)

    def multiply_at(out, where, values):
        targets = xp.ravel_multi_index(tuple(xp.broadcast_to(w, values.shape) for w in where),
                                       out.shape).reshape(-1)
        values = values.reshape(-1)
        order = xp.argsort(targets)
        targets, values = targets[order], values[order]
        flat = out.reshape(-1)  # out is a fresh C-contiguous array: a view
        while targets.size:
            first = xp.ones(targets.shape, dtype=bool)
            first[1:] = targets[1:] != targets[:-1]
            flat[targets[first]] *= values[first]  # no repeats within a round
            targets, values = targets[~first], values[~first]

    def scatter_reduce(a, dim, index, src, reduce, include_self):
        op = "scatter_reduce"
        if reduce not in REDUCTIONS:
            raise ValueError(f"{op}(): reduce must be one of {', '.join(REDUCTIONS)}, got "
                             f"{reduce!r}")
        check_index_dtype(op, index)
        if src.dtype != a.dtype:
            raise DtypeError(f"{op}(): expected self.dtype to be equal to src.dtype, got "
                             f"{a.dtype} and {src.dtype}; convert src with .to(self.dtype)")
        if a.dtype.kind == "b" and reduce == "mean":
            raise NotImplementedError(f"{op}(): reduce='mean' is not implemented for bool "
                                      f"(as PyTorch); convert with .float() first")
        a1, i1 = a.reshape(a.shape or (1,)), index.reshape(index.shape or (1,))
        s1 = src.reshape(src.shape or (1,))
        check_scatter_shapes(op, a1, dim, i1, s1)
        values = s1[tuple(slice(0, n) for n in i1.shape)]
        boolean = a.dtype.kind == "b"
        acc = xp.int64 if boolean else a.dtype
        out = a1.astype(acc, copy=True)  # C-contiguous: reshape(-1) is a view
        values = values.astype(acc, copy=False)
        if xp is np and reduce != "prod":
            # one flat index: ufunc.at's 1-d fast path is ~4x faster than its multi-array loop
            where = flat_along(out.shape, dim, i1).reshape(-1)
            target, values, shape = out.reshape(-1), values.reshape(-1), (out.size,)
        else:
            where, target, shape = coords(i1, dim), out, out.shape
        if not include_self:
            target[where] = _identity(reduce, out.dtype)
        if reduce in ("sum", "mean"):
            xp.add.at(target, where, values)
        elif reduce == "amax":
            xp.maximum.at(target, where, values)
        elif reduce == "amin":
            xp.minimum.at(target, where, values)
        else:
            multiply_at(out, where, values)
        if reduce == "mean":
            count = xp.full(shape, 1 if include_self else 0, dtype=acc)
            xp.add.at(count, where, xp.ones(values.shape, dtype=acc))
            count = xp.maximum(count, 1).reshape(out.shape)  # untouched, include_self=False
            out = out / count if is_float(out.dtype) else out // count
        if not include_self:  # positions no index names keep self's value
            touched = xp.zeros(shape, dtype=bool)
            touched[where] = True
            out = xp.where(touched.reshape(out.shape), out, a1.astype(acc, copy=False))
        out = (out != 0) if boolean else out.astype(a.dtype, copy=False)
        return out.reshape(a.shape)

    return {"scatter_reduce.two": scatter_reduce}
