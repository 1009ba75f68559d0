"""Matrix-structure kernels: triangles (tril, triu) and diagonals (diagonal, its backward).

All of them act on two dims of a batch: the last two for ``tril``/``triu`` (``(*, M, N)``),
``dim1``/``dim2`` for ``diagonal``. ``diagonal`` is a view op (``-> Tensor(a)``): it must
return a real, writable view of its input, as ``x.diagonal().fill_(1)`` writes ``x`` in
PyTorch. ``np.diagonal`` returns a read-only view, so the view is built with
``as_strided`` on the sub-matrix that starts at the diagonal's first entry. Diagonal
offsets follow PyTorch: ``offset > 0`` is above the main diagonal, ``< 0`` below.
"""
from __future__ import annotations

from ...dispatch import wrap_dim
from ...errors import ShapeError


def diagonal_view(xp, a, offset: int, dim1: int, dim2: int):
    """The writable view of ``a``'s diagonal ``offset`` over dims ``dim1``, ``dim2``
    (already non-negative and distinct): shape ``a.shape`` without them plus ``(L,)``."""
    m = xp.moveaxis(a, (dim1, dim2), (-2, -1))
    m = m[..., max(-offset, 0):, max(offset, 0):]
    n = max(0, min(m.shape[-2], m.shape[-1]))
    return xp.lib.stride_tricks.as_strided(m, m.shape[:-2] + (n,),
                                           m.strides[:-2] + (m.strides[-2] + m.strides[-1],))


def _check_dims(op: str, dim1: int, dim2: int, given) -> None:
    if dim1 == dim2:
        raise RuntimeError(f"{op}(): diagonal dimensions cannot be identical {given[0]}, "
                           f"{given[1]}; pass two different dims")


def kernels(xp) -> dict:
    def triangle(op: str, fn):
        def kernel(a, diagonal):
            if a.ndim < 2:
                raise RuntimeError(f"{op}(): input tensor must have at least 2 dimensions, "
                                   f"got shape {list(a.shape)}; unsqueeze a vector first")
            return fn(a, diagonal)
        return kernel

    def diagonal(a, offset, dim1, dim2):
        d1, d2 = (wrap_dim(d, a.ndim, "diagonal") for d in (dim1, dim2))
        _check_dims("diagonal", d1, d2, (dim1, dim2))
        return diagonal_view(xp, a, offset, d1, d2)

    def diagonal_backward(grad, input_sizes, offset, dim1, dim2):
        n = len(input_sizes)
        d1, d2 = (wrap_dim(d, n, "diagonal_backward") for d in (dim1, dim2))
        _check_dims("diagonal_backward", d1, d2, (dim1, dim2))
        out = xp.zeros(tuple(input_sizes), dtype=grad.dtype)
        view = diagonal_view(xp, out, offset, d1, d2)
        if view.shape != grad.shape:
            raise ShapeError(f"diagonal_backward(): expected grad_output of shape "
                             f"{list(view.shape)} (the diagonal {offset} of dims ({d1}, {d2}) "
                             f"of {list(input_sizes)}), got {list(grad.shape)}")
        view[...] = grad
        return out

    return {"tril": triangle("tril", xp.tril), "triu": triangle("triu", xp.triu),
            "diagonal": diagonal, "diagonal_backward": diagonal_backward}
