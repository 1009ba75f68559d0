"""Shape and view kernels: view, reshape, permute, transpose, expand, squeeze, narrow,
select, split, ...

Each op here is declared ``-> Tensor(a)`` (or ``Tensor(a)[]``), so ember marks its result
as a view of ``self``: the kernel must return a real view of its input (numpy/CuPy basic
views), never a copy. View-or-copy ops (``reshape``, ``flatten``, ``contiguous``) return a
*fresh* array when they must copy (``arr.base is None``), which ``dispatch.wrap_view``
leaves unmarked, as PyTorch does.

``dim`` arguments arrive wrapped to non-negative values; a 0-d tensor accepts dim 0 / -1.
Gotcha: numpy returns a scalar, not a 0-d view, when every dim is indexed by an int
(``a[1]`` of a 1-d array), so integer indexing here always appends ``...``.
"""
from __future__ import annotations

import math

import numpy as np

from ...errors import ShapeError
from . import strided


def infer_size(shape, numel: int, op: str) -> tuple:
    """``shape`` with its one ``-1`` filled in so that it holds ``numel`` elements.

    Raises RuntimeError (PyTorch's messages) for two -1s, a negative size, or a shape whose
    size is not ``numel``.
    """
    infer, known = None, 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError(f"{op}(): only one dimension can be inferred, got shape "
                                   f"{list(shape)}")
            infer = i
        elif s < 0:
            raise RuntimeError(f"{op}(): invalid shape dimension {s} at index {i} of shape "
                               f"{list(shape)}")
        else:
            known *= s
    out = list(shape)
    if infer is not None and known != 0 and numel % known == 0:
        out[infer] = numel // known
    elif infer is not None or known != numel:
        ambiguous = " (-1 is ambiguous with a 0-sized dimension)" if infer is not None and \
            known == 0 else ""
        raise RuntimeError(f"{op}(): shape '{list(shape)}' is invalid for input of size "
                           f"{numel}{ambiguous}")
    return tuple(out)


def viewable(old_shape, old_strides, new_shape) -> bool:
    """Whether ``new_shape`` can view memory laid out as (old_shape, old_strides).

    PyTorch's ``computeStride``: the old dims split into chunks that are contiguous with
    each other; each chunk must map onto a run of new dims of the same size.
    """
    if math.prod(old_shape) == 0 or not old_shape:
        return True
    view_d = len(new_shape) - 1
    chunk_stride = old_strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[d]
        if d == 0 or (old_shape[d - 1] != 1 and
                      old_strides[d - 1] != tensor_numel * chunk_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return False
            if d > 0:
                chunk_stride = old_strides[d - 1]
                tensor_numel = view_numel = 1
    return view_d == -1


def kernels(xp) -> dict:
    def fresh_reshape(a, shape):
        # A copy whose .base is None, so that wrap_view does not mark it as a view.
        out = xp.empty(shape, dtype=a.dtype)
        out.reshape(a.shape)[...] = a  # out is contiguous: this reshape is a view
        return out

    def view_or_copy(a, shape):
        if viewable(a.shape, a.strides, shape):
            return a.reshape(shape)
        return fresh_reshape(a, shape)

    def contiguous_reshape(a, size):
        """``a.reshape(size)`` when that is right for view and reshape, else None.

        NOTE: numpy's reshape accepts and refuses exactly the sizes ``infer_size`` does
        once none is below -1 (numpy reads any negative size as -1; checked on numpy
        only), and reshapes a C-contiguous array to a view: this skips infer_size's Python
        loop (~0.3us).
        """
        if xp is np and a.flags.c_contiguous and (not size or min(size) >= -1):
            try:
                return a.reshape(size)
            except ValueError:
                pass  # infer_size raises PyTorch's error
        return None

    def view(a, size):
        r = contiguous_reshape(a, size)
        if r is not None:
            return r
        shape = infer_size(size, a.size, "view")
        if not a.flags.c_contiguous and not viewable(a.shape, a.strides, shape):
            raise RuntimeError(
                f"view(): view size is not compatible with input tensor's size and stride (at "
                f"least one dimension spans across two contiguous subspaces): shape "
                f"{list(a.shape)} -> {list(shape)}. Use .reshape(...) instead.")
        return a.reshape(shape)

    def reshape(a, shape):
        r = contiguous_reshape(a, shape)
        if r is not None:
            return r
        return view_or_copy(a, infer_size(shape, a.size, "reshape"))

    def permute(a, dims):
        if len(dims) != a.ndim:
            raise RuntimeError(f"permute(): number of dims don't match: the tensor has "
                               f"{a.ndim} dims but dims has {len(dims)} ({list(dims)}); pass "
                               f"a permutation of range({a.ndim})")
        return a.transpose(dims)

    def transpose(a, dim0, dim1):
        return xp.swapaxes(a, dim0, dim1) if a.ndim else a.view()

    def t(a):
        if a.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                               f"{a.ndim}D; use transpose(dim0, dim1) or mT")
        return a.T

    def expand(a, size):
        shape = expand_shape(a.shape, size)
        if xp is np:
            r = _numpy_expand(a, shape)
            if r is not None:
                return r
        return xp.broadcast_to(a, shape)

    def squeeze(a, dim):
        if dim is None:
            axes = tuple(i for i, n in enumerate(a.shape) if n == 1)
        else:
            dims = (dim,) if dim.__class__ is int else dim
            axes = tuple(d for d in dims if d < a.ndim and a.shape[d] == 1)
        return xp.squeeze(a, axis=axes)

    def unsqueeze(a, dim):
        return xp.expand_dims(a, dim)

    def flatten(a, start_dim, end_dim):
        if a.ndim == 0:
            return a.reshape(1)
        if start_dim > end_dim:
            raise RuntimeError(f"flatten() has invalid args: start_dim ({start_dim}) cannot "
                               f"come after end_dim ({end_dim})")
        s = a.shape
        return view_or_copy(a, s[:start_dim] + (math.prod(s[start_dim:end_dim + 1]),) +
                            s[end_dim + 1:])

    def unflatten(a, dim, sizes):
        if a.ndim == 0:
            raise RuntimeError("unflatten() cannot be applied to a 0-dim tensor")
        if not sizes:
            raise RuntimeError("unflatten(): sizes must be non-empty")
        n = a.shape[dim]
        try:
            sizes = infer_size(sizes, n, "unflatten")
        except RuntimeError as e:
            raise RuntimeError(f"unflatten(): provided sizes {list(sizes)} don't multiply up "
                               f"to the size of dim {dim} ({n}) in the input tensor "
                               f"{list(a.shape)} ({e})") from None
        return a.reshape(a.shape[:dim] + sizes + a.shape[dim + 1:])

    def narrow(a, dim, start, length):
        if a.ndim == 0:
            raise RuntimeError("narrow() cannot be applied to a 0-dim tensor")
        n = a.shape[dim]
        if not -n <= start <= n:
            raise IndexError(f"narrow(): start out of range (expected to be in range of "
                             f"[{-n}, {n}], but got {start})")
        start = start + n if start < 0 else start
        if length < 0:
            raise RuntimeError(f"narrow(): length must be non-negative, got {length}")
        if start + length > n:
            raise RuntimeError(f"narrow(): start ({start}) + length ({length}) exceeds "
                               f"dimension size ({n}) of dim {dim}")
        return a[(slice(None),) * dim + (slice(start, start + length),)]

    def select(a, dim, index):
        if a.ndim == 0:
            raise IndexError("select() cannot be applied to a 0-dim tensor")
        n = a.shape[dim]
        if not -n <= index < n:
            raise IndexError(f"select(): index {index} out of range for tensor of size "
                             f"{list(a.shape)} at dimension {dim}")
        return a[(slice(None),) * dim + (index, Ellipsis)]

    def pieces(a, dim, sizes):
        out, start = [], 0
        for s in sizes:
            out.append(a[(slice(None),) * dim + (slice(start, start + s),)])
            start += s
        return out

    def split(a, split_size, dim):
        if a.ndim == 0:
            raise RuntimeError("split() expects at least a 1-dimensional tensor")
        n = a.shape[dim]
        if split_size < 0 or (split_size == 0 and n != 0):
            raise RuntimeError(f"split(): split_size must be positive (0 only for an empty "
                               f"dimension), got {split_size} for dimension {dim} of size {n}")
        if n == 0:
            return [a[(slice(None),) * dim + (slice(0, 0),)]]
        return pieces(a, dim, [min(split_size, n - s) for s in range(0, n, split_size)])

    def split_sizes(a, split_sizes, dim):
        if a.ndim == 0:
            raise RuntimeError("split() expects at least a 1-dimensional tensor")
        n = a.shape[dim]
        if any(s < 0 for s in split_sizes) or sum(split_sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to be non-negative and "
                               f"sum exactly to {n} (input tensor's size at dimension {dim}), "
                               f"but got split_sizes={list(split_sizes)}")
        return pieces(a, dim, split_sizes)

    def chunk(a, chunks, dim):
        if a.ndim == 0:
            raise RuntimeError("chunk() expects at least a 1-dimensional tensor")
        if chunks <= 0:
            raise RuntimeError(f"chunk() expects `chunks` to be greater than 0, got: {chunks}")
        n = a.shape[dim]
        if n == 0:
            return pieces(a, dim, [0] * chunks)
        return split(a, -(-n // chunks), dim)

    def unbind(a, dim):
        if a.ndim == 0:
            raise IndexError("unbind(): dimension specified as 0 but tensor has no dimensions")
        return [a[(slice(None),) * dim + (i, Ellipsis)] for i in range(a.shape[dim])]

    def contiguous(a):
        return a if a.flags.c_contiguous else a.copy()

    return {"view": view, "reshape": reshape, "permute": permute, "transpose": transpose,
            "t": t, "expand": expand, "squeeze": squeeze, "unsqueeze": unsqueeze,
            "flatten": flatten, "unflatten": unflatten, "narrow": narrow, "select": select,
            "split": split, "split.sizes": split_sizes, "chunk": chunk, "unbind": unbind,
            "contiguous": contiguous, **strided.kernels(xp)}  # unfold, _as_strided


def _numpy_expand(a, shape):
    """``np.broadcast_to(a, shape)`` (same shape, strides, data and read-only flag) built
    directly on ``a``'s buffer, or None where ``a`` exports none (strided views).

    NOTE: broadcast_to costs ~2us in Python (an nditer); ``x.sum().backward()`` expands
    in every call. Like broadcast_to, every size-1 dim gets stride 0.
    """
    if a.ndim:
        lead = len(shape) - a.ndim
        strides = (0,) * lead + tuple(0 if n == 1 else s for n, s in zip(a.shape, a.strides))
    else:
        strides = (0,) * len(shape)
    try:
        r = np.ndarray(shape, a.dtype, a, 0, strides)
    except (ValueError, TypeError, BufferError):
        return None
    r.flags.writeable = False
    return r


def expand_shape(shape, size) -> tuple:
    """The shape ``expand(size)`` gives a tensor of ``shape``: -1 keeps a dim, new leading
    dims may be added, only size-1 dims may grow. Raises RuntimeError naming the dim."""
    size = tuple(size)
    lead = len(size) - len(shape)
    if lead < 0:
        raise RuntimeError(f"expand(): the number of sizes provided ({len(size)}) must be "
                           f"greater or equal to the number of dimensions in the tensor "
                           f"({len(shape)}); got size {list(size)} for shape {list(shape)}")
    out = []
    for i, target in enumerate(size):
        if i < lead:
            if target < 0:
                raise RuntimeError(f"expand(): the expanded size of the tensor ({target}) "
                                   f"isn't allowed in a leading, non-existing dimension {i}")
            out.append(target)
            continue
        cur = shape[i - lead]
        if target == -1:
            target = cur
        elif target != cur and (cur != 1 or target < 0):
            raise RuntimeError(f"expand(): the expanded size of the tensor ({target}) must "
                               f"match the existing size ({cur}) at non-singleton dimension "
                               f"{i}.  Target sizes: {list(size)}.  Tensor sizes: "
                               f"{list(shape)}")
        out.append(target)
    return tuple(out)


def broadcastable_to(src, dst) -> bool:
    """Whether shape ``src`` expands to ``dst`` without growing ``dst`` (extra leading
    size-1 dims of ``src`` are allowed, as in PyTorch's copy_ and index_put_)."""
    src = tuple(src)
    while len(src) > len(dst) and src[0] == 1:
        src = src[1:]
    if len(src) > len(dst):
        return False
    return all(s == d or s == 1 for s, d in zip(reversed(src), reversed(dst)))


def check_broadcast_to(op: str, src, dst, what: str = "src") -> None:
    """Raise ShapeError unless ``src`` expands to ``dst`` (see ``broadcastable_to``)."""
    if not broadcastable_to(src, dst):
        # NOTE: no word "broadcast" here: codegen rewrites such ValueErrors generically
        raise ShapeError(f"{op}(): {what} of shape {list(src)} cannot be expanded to the "
                         f"destination shape {list(dst)}; each dimension, aligned from the "
                         f"right, must equal the destination's or be 1")
