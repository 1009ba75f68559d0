"""Matrix-structure kernels: triangles (tril, triu), diagonals (diagonal, its backward) and
the kernel pair of ``trace``.

All of them act on two dims of a batch: the last two for ``tril``/``triu`` (``(*, M, N)``),
``dim1``/``dim2`` for ``diagonal``. ``diagonal`` is a view op (``-> Tensor(a)``): it must
return a real, writable view of its input, as ``x.diagonal().fill_(1)`` writes ``x`` in
PyTorch. ``a.diagonal(offset, dim1, dim2)`` is that view on both namespaces (its offsets
follow PyTorch's: ``offset > 0`` is above the main diagonal, ``< 0`` below); numpy marks it
read-only only to warn about a future change (numpy >= 1.9), so the numpy path sets it
writable again when its base is (~0.5 us; ``as_strided`` over ``moveaxis`` took ~12 us).
"""
from __future__ import annotations

import numpy as np

from ..._base.wrap_dim import wrap_dim
from ...errors import ShapeError
from .reduction import ARRAY_OUT, F32, INT64, LOW_FLOATS

F64 = np.dtype(np.float64)


def diagonal_view(xp, a, offset: int, dim1: int, dim2: int):
    """The writable view of ``a``'s diagonal ``offset`` over dims ``dim1``, ``dim2``
    (already non-negative and distinct): shape ``a.shape`` without them plus ``(L,)``.
    A read-only ``a`` (a numpy array over a read-only buffer) gives a read-only view."""
    v = a.diagonal(offset, dim1, dim2)
    if xp is np and a.flags.writeable:
        v.setflags(write=True)
    return v


def trace_forward(xp, arrays, args):
    """``trace`` of a (M, N) array (checked by the composite): the sum of its main
    diagonal as a 0-d array, int64 for integral inputs, float16/bfloat16 summed in float32
    and rounded once (torch.trace). Kernel-pair forward (``autograd/kernel_pair.py``)."""
    a = arrays[0]
    d, dt = a.diagonal(), a.dtype
    if dt is F32 or dt is F64:
        if xp is np:
            return np.add.reduce(d, None, None, out=ARRAY_OUT), None
        return xp.asarray(d.sum()), None
    if dt.kind in "biu":
        return _sum(xp, d, INT64), None
    if dt in LOW_FLOATS:
        return _sum(xp, d, F32).astype(dt), None
    return _sum(xp, d, None), None


def _sum(xp, d, dtype):
    """The 0-d sum of a vector; numpy's ufunc reduce skips ``d.sum``'s Python layers."""
    if xp is np:
        return np.add.reduce(d, None, dtype, out=ARRAY_OUT)
    return xp.asarray(d.sum(dtype=dtype))


def trace_backward(xp, grad, arrays, saved, args, needs):
    """``trace``'s gradient: zeros of the input's (M, N) shape with the 0-d ``grad`` on the
    main diagonal (torch's trace_backward), written through a strided flat view."""
    a = arrays[0]
    m, n = a.shape
    out = xp.zeros((m, n), dtype=grad.dtype)
    out.reshape(-1)[:min(m, n) * (n + 1):n + 1] = grad  # positions i * (n + 1), i < min(m, n)
    return (out,)


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
        # NOTE: the generated wrapper has wrapped dim1 already
        d2 = dim2 if 0 <= dim2 < a.ndim else wrap_dim(dim2, a.ndim, "diagonal")
        if dim1 == d2:
            _check_dims("diagonal", dim1, d2, (dim1, dim2))
        return diagonal_view(xp, a, offset, dim1, d2)

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
