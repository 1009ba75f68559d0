"""Functions of shapes and small factories that PyTorch keeps at top level:
``broadcast_shapes`` (shape arithmetic, no tensor), ``tril_indices`` / ``triu_indices``
(the coordinates of a matrix triangle) and ``scalar_tensor`` (a 0-d tensor).
"""
from __future__ import annotations

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


def _triangle(op: str, row, col, offset, dtype, device, lower: bool):
    from . import factories as F
    for name, v in (("row", row), ("col", col)):
        if _d.check_int(v, op, name, 1) < 0:
            raise RuntimeError(f"{op}(): {name} must be non-negative, got {v}")
    st = _t.int64 if dtype is None else _t.to_scalar_type(dtype)
    if st.is_floating_point or st is _t.bool_:
        raise TypeError(f"{op}(): expected an integral dtype, got {st}")
    # Row i of the triangle holds columns [lo_i, hi_i): computed per row and expanded with
    # np.repeat (O(N) for N indices, not a row x col mask: ~10x faster at 1e6). NOTE: on
    # the host, as pdist's pairs: the result depends on the four ints alone
    r = np.arange(row, dtype=np.int64)
    if lower:
        lo, hi = np.zeros_like(r), np.clip(r + (offset + 1), 0, col)
    else:
        lo, hi = np.clip(r + offset, 0, col), np.full_like(r, col)
    counts = hi - lo
    starts = np.cumsum(counts) - counts
    keep = counts > 0
    out = np.zeros((2, int(counts.sum())), dtype=np.int64)
    # each row's first entry gets the step from the previous kept row; a cumsum spreads
    # it (faster than np.repeat with per-row counts)
    for k, first in enumerate((r[keep], (lo - starts)[keep])):
        out[k, starts[keep]] = np.diff(first, prepend=0)
    np.cumsum(out, axis=1, out=out)
    out[1] += np.arange(out.shape[1])
    return F.tensor(out, dtype=st, device=device)


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
