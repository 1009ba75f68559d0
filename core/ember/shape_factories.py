"""Functions of shapes and small factories that PyTorch keeps at top level:
``broadcast_shapes`` (shape arithmetic, no tensor), ``tril_indices`` / ``triu_indices``
(the coordinates of a matrix triangle) and ``scalar_tensor`` (a 0-d tensor).
"""
from __future__ import annotations

import functools

import numpy as np

from . import dispatch as _d
from . import types as _t
from .errors import ShapeError
from .tensor import Size

__all__ = ["broadcast_shapes", "tril_indices", "triu_indices", "scalar_tensor"]


def broadcast_shapes(*shapes) -> Size:
    """The shape that tensors of ``shapes`` broadcast to: (2, 1) and (3,) give
    ember.Size([2, 3]); an int counts as a 1-d shape; no shapes give Size([]).

    Raises ShapeError (a RuntimeError) naming the first shape that does not fit.
    Reference: torch.broadcast_shapes.
    """
    out: list = []
    for k, shape in enumerate(shapes):
        dims = (shape,) if isinstance(shape, int) else tuple(shape)
        for s in dims:
            if not isinstance(s, int) or s < 0:
                raise ShapeError(f"broadcast_shapes(): expected non-negative int sizes, got "
                                 f"{s!r} in shape {k} {dims}")
        if len(dims) > len(out):
            out = [1] * (len(dims) - len(out)) + out
        for i, s in enumerate(dims, len(out) - len(dims)):
            if out[i] == 1:
                out[i] = s
            elif s != 1 and s != out[i]:
                raise ShapeError(f"broadcast_shapes(): shape {k} {dims} does not broadcast "
                                 f"with {tuple(out)}: size {s} against {out[i]} at dim "
                                 f"{i - len(out)}")
    return Size(out)


# NOTE: triangles up to this many entries are kept (read-only, host) by ``_triangle_host``:
# the result depends on four ints alone, and a fresh computation is ~12 numpy calls,
# ~5x torch's whole call at 1e3 entries
_CACHED_ENTRIES = 1 << 16


def _triangle(op: str, row, col, offset, dtype, device, lower: bool):
    from . import factories as F
    for name, v in (("row", row), ("col", col)):
        if _d.check_int(v, op, name, 1) < 0:
            raise RuntimeError(f"{op}(): {name} must be non-negative, got {v}")
    offset = _d.check_int(offset, op, "offset", 3)
    st = _t.int64 if dtype is None else _t.to_scalar_type(dtype)
    if st.is_floating_point or st is _t.bool_:
        raise TypeError(f"{op}(): expected an integral dtype, got {st}")
    if row * col <= _CACHED_ENTRIES:
        # astype copies: the cached array is never shared with a tensor
        host = _triangle_cached(row, col, offset, lower).astype(st.numpy)
    else:
        host = _triangle_host(row, col, offset, lower, st.numpy)
    b, index = F._target(device)
    return F._finish(b.from_numpy(host, index), b, False)


@functools.lru_cache(maxsize=64)
def _triangle_cached(row: int, col: int, offset: int, lower: bool):
    out = _triangle_host(row, col, offset, lower, np.int64)
    out.flags.writeable = False
    return out


def _triangle_host(row: int, col: int, offset: int, lower: bool, dtype):
    """(2, N) numpy array of ``dtype`` of the triangle's (row, col) coordinates, row-major.

    Row i holds columns [lo_i, hi_i): the row indices are ``repeat(i, hi_i - lo_i)`` and
    the column indices ``arange(N) - repeat(start_i - lo_i)`` (start_i: where row i begins
    in the output), O(N) with no row x col mask. Computed in int32 when the matrix fits
    (half the memory traffic, ~4x faster at 1e6 entries), widened once. NOTE: on the host,
    as pdist's pairs: the result depends on the four ints alone.
    """
    it = np.int32 if row * col < 2 ** 31 and row + col + abs(offset) < 2 ** 31 else np.int64
    r = np.arange(row, dtype=it)
    if lower:
        lo = None
        counts = np.clip(r + (offset + 1), 0, col).astype(it, copy=False)
    else:
        lo = np.clip(r + offset, 0, col).astype(it, copy=False)
        counts = col - lo
    shift = np.cumsum(counts, dtype=it)
    shift -= counts
    if lo is not None:
        shift -= lo
    out = np.empty((2, int(counts.sum())), dtype=dtype)
    out[0] = np.repeat(r, counts)
    c = np.repeat(shift, counts)
    np.subtract(np.arange(c.size, dtype=it), c, out=c)
    out[1] = c
    return out


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None):
    """The coordinates of the lower triangle of a (row, col) matrix (on and below diagonal
    ``offset``: 0 the main one, > 0 above, < 0 below), as a (2, N) tensor of row indices
    then column indices in row-major order; dtype int64 unless given (integral).

    Raises RuntimeError for a negative row or col, TypeError for a floating dtype.
    Reference: torch.tril_indices.
    """
    return _triangle("tril_indices", row, col, offset, dtype, device, lower=True)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None):
    """The coordinates of the upper triangle (on and above diagonal ``offset``) of a (row,
    col) matrix, (2, N), as tril_indices. Reference: torch.triu_indices."""
    return _triangle("triu_indices", row, col, offset, dtype, device, lower=False)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False):
    """A 0-d tensor holding the number ``s``, of the default float dtype unless ``dtype``
    is given (``scalar_tensor(3)`` is float32 3.0, as PyTorch). Raises what ember.full
    raises for a value the dtype cannot hold. Reference: torch.scalar_tensor.
    """
    from . import factories as F
    st = _t.get_default_dtype() if dtype is None else dtype
    return F.full((), s, dtype=st, device=device, requires_grad=requires_grad)


def install(namespace: dict) -> None:
    """Put the functions in ``ember`` (once, at import)."""
    for name in __all__:
        namespace[name] = globals()[name]
