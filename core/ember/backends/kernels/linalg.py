"""Linear algebra kernels: matmul, mm, bmm, addmm, dot, outer, einsum.

Operands arrive promoted to one dtype (``promote: common``). float32/float64 and integers
go straight to ``xp.matmul`` without copies; float16/bfloat16 multiply in float32 and round
once (numpy has no half-precision BLAS, and PyTorch's CPU kernels accumulate in float32
too). Bool products are refused (UNSUPPORTED) as in PyTorch, except ``outer``.
"""
from __future__ import annotations

import math

import numpy as np

from ...errors import ShapeError
from ...types import bool_
from .reduction import LOW_FLOATS


def _x(shape) -> str:
    """A shape as PyTorch prints it in matmul errors: ``2x3``."""
    return "x".join(str(n) for n in shape)


def _not_a_tensor(op: str, names, *operands) -> TypeError:
    """Promoted operands may arrive as Python numbers; products need tensors."""
    for name, x in zip(names, operands):
        if not hasattr(x, "ndim"):
            return TypeError(f"{op}(): argument '{name}' must be Tensor, not "
                             f"{type(x).__name__}")
    return TypeError(f"{op}(): expected Tensor arguments")


def _need_ndim(op: str, name: str, a, ndim: int, what: str) -> None:
    if not hasattr(a, "ndim"):
        raise _not_a_tensor(op, (name,), a)
    if a.ndim != ndim:
        raise ShapeError(f"{op}(): expected '{name}' to be a {ndim}-D tensor ({what}), got "
                         f"{a.ndim}-D with shape {list(a.shape)}")


def check_inner(op: str, a, b) -> None:
    """The inner-dimension check of a matrix product, for kernels of every backend.

    ``a`` is (..., n, k) or (k,), ``b`` is (..., k, m) or (k,) (any dtype; only ``.shape``
    and ``.ndim`` are read): ``a.shape[-1]`` must equal ``b.shape[-2]`` (``b.shape[0]``
    for a vector), as in ``torch.matmul``. Batch dims are not checked here (broadcasting
    is the caller's). Raises ShapeError with PyTorch's "mat1 and mat2 shapes cannot be
    multiplied (2x3 and 4x5)" text, naming both sizes.
    """
    k = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if a.shape[-1] != k:
        which = "second-to-last" if b.ndim > 1 else "only"
        raise ShapeError(f"{op}(): mat1 and mat2 shapes cannot be multiplied ({_x(a.shape)} "
                         f"and {_x(b.shape)}); the last dim of the first ({a.shape[-1]}) must "
                         f"equal the {which} dim of the second ({k})")


def _einsum_check(equation: str, arrays) -> None:
    """Operand count, subscript count and label sizes, with PyTorch's messages."""
    lhs = equation.split("->")[0].replace(" ", "")
    terms = lhs.split(",")
    if len(terms) != len(arrays):
        raise ValueError(f"einsum(): the equation {equation!r} names {len(terms)} operand(s) "
                         f"but {len(arrays)} tensor(s) were given")
    sizes: dict = {}
    for i, (term, a) in enumerate(zip(terms, arrays)):
        if "..." in term:
            head, tail = term.split("...", 1)
            if len(head) + len(tail) > a.ndim:
                raise ShapeError(f"einsum(): operand {i} has {a.ndim} dims, fewer than the "
                                 f"{len(head) + len(tail)} subscripts in {term!r}")
            labels, dims = head + tail, a.shape[:len(head)] + a.shape[a.ndim - len(tail):]
        else:
            if len(term) != a.ndim:
                raise ShapeError(f"einsum(): the number of subscripts in the equation "
                                 f"({len(term)}) does not match the number of dimensions "
                                 f"({a.ndim}) for operand {i} and no ellipsis was given")
            labels, dims = term, a.shape
        for label, n in zip(labels, dims):
            seen = sizes.setdefault(label, n)
            if seen != n and 1 not in (seen, n):
                raise ShapeError(f"einsum(): subscript {label} has size {n} for operand {i} "
                                 f"which does not broadcast with previously seen size {seen}")
            sizes[label] = max(seen, n)


def kernels(xp) -> dict:
    arr, matmul_ = xp.ndarray, xp.matmul
    fast = xp is np

    def product(a, b):
        """``a @ b``; half precision in float32, rounded once."""
        if a.dtype in LOW_FLOATS:
            return matmul_(a.astype(xp.float32), b.astype(xp.float32)).astype(a.dtype)
        return matmul_(a, b)

    # NOTE: on numpy the hot paths call matmul first and check only when it raises its
    # ValueError: numpy refuses exactly the shapes check_inner and the ndim checks refuse
    # (those run after it to raise PyTorch's messages). Half precision goes to product.
    def blasable(x):
        """``x``, copied if it has a zero stride (an expanded gradient such as sum's):
        numpy's matmul hands only positive-stride operands to BLAS, else loops in C at
        ~1/30 of the speed."""
        return x.copy() if 0 in x.strides and x.size > 1 else x

    def matmul(a, b):
        if fast and a.__class__ is arr and b.__class__ is arr and a.dtype not in LOW_FLOATS:
            if 0 in a.strides or 0 in b.strides:  # (inline: this is the 10-element path too)
                a, b = blasable(a), blasable(b)
            if a.ndim > 2 and b.ndim == 2 and a.flags.c_contiguous and \
                    a.shape[-1] == b.shape[0]:
                # (..., n, k) @ (k, m) as one (N, k) @ (k, m) GEMM: numpy would run one
                # small GEMM per matrix of the batch (torch folds the same way)
                rows = math.prod(a.shape[:-1])  # (not -1: ambiguous for k = 0)
                return matmul_(a.reshape(rows, a.shape[-1]), b).reshape(
                    a.shape[:-1] + b.shape[1:])
            if a.ndim > 1 and b.ndim > 1 and a.shape[-1] == 1 == b.shape[-2]:
                return a * b  # an outer product: ~3x faster than a GEMM with k = 1, exact
            try:
                return matmul_(a, b)
            except ValueError:
                pass
        try:
            zero_d = a.ndim == 0 or b.ndim == 0
        except AttributeError:
            raise _not_a_tensor("matmul", ("self", "other"), a, b) from None
        if zero_d:
            raise ShapeError(f"matmul(): both arguments need at least 1 dimension, but they "
                             f"are {a.ndim}-D and {b.ndim}-D; use mul() for scalars")
        check_inner("matmul", a, b)
        return product(a, b)  # batch dims that do not broadcast: ShapeError from dispatch

    def mm(a, b, op="mm"):
        if fast and a.__class__ is arr and b.__class__ is arr and a.ndim == 2 and \
                b.ndim == 2 and a.dtype not in LOW_FLOATS:
            if 0 in a.strides or 0 in b.strides:
                a, b = blasable(a), blasable(b)
            if a.shape[1] == 1 == b.shape[0]:
                return a * b  # an outer product (see matmul)
            try:
                return matmul_(a, b)
            except ValueError:
                pass
        _need_ndim(op, "self", a, 2, "a matrix")
        _need_ndim(op, "mat2", b, 2, "a matrix")
        check_inner(op, a, b)
        return product(a, b)

    def bmm(a, b):
        _need_ndim("bmm", "self", a, 3, "a batch of matrices")
        _need_ndim("bmm", "mat2", b, 3, "a batch of matrices")
        if a.shape[0] != b.shape[0]:
            raise ShapeError(f"bmm(): batch1 and batch2 must have the same batch size, got "
                             f"{a.shape[0]} and {b.shape[0]} (shapes {list(a.shape)} and "
                             f"{list(b.shape)})")
        check_inner("bmm", a, b)
        return product(a, b)

    def addmm(c, a, b, beta, alpha):
        if not hasattr(c, "ndim"):
            raise _not_a_tensor("addmm", ("self",), c)
        dt = c.dtype
        if dt in LOW_FLOATS:
            c, a, b = (x.astype(xp.float32) for x in (c, a, b))
        elif dt.kind in "iu":  # PyTorch truncates the scalars to ints, wrapping like C
            beta, alpha = (xp.asarray(int(v)).astype(dt) for v in (beta, alpha))
        p = mm(a, b, "addmm")
        if alpha != 1:
            p *= alpha
        # 'self' must broadcast to (n, m), not beyond (broadcast_to costs ~10 us: only
        # when the shapes differ)
        cb = c if c.shape == p.shape else xp.broadcast_to(c, p.shape)
        if beta != 0:  # beta == 0 ignores self entirely, nan and inf included
            p += cb if beta == 1 else cb * beta
        return p.astype(dt, copy=False)

    def dot(a, b):
        if not (hasattr(a, "ndim") and hasattr(b, "ndim")):
            raise _not_a_tensor("dot", ("self", "tensor"), a, b)
        if a.ndim != 1 or b.ndim != 1:
            raise ShapeError(f"dot(): 1-D tensors expected, but got {a.ndim}-D and {b.ndim}-D "
                             f"tensors; use matmul() for other ranks")
        if a.shape[0] != b.shape[0]:
            raise ShapeError(f"dot(): expected both vectors to have the same number of "
                             f"elements, got {a.shape[0]} and {b.shape[0]}")
        return product(a, b)

    def outer(a, b):
        _need_ndim("outer", "self", a, 1, "a vector")
        _need_ndim("outer", "vec2", b, 1, "a vector")
        return xp.multiply(a[:, None], b[None, :])

    def einsum(equation, arrays):
        if not all(hasattr(x, "ndim") for x in arrays):
            raise _not_a_tensor("einsum", [f"tensors[{i}]" for i in range(len(arrays))],
                                *arrays)
        _einsum_check(equation, arrays)
        dt = arrays[0].dtype
        ops = [x.astype(xp.float32) for x in arrays] if dt in LOW_FLOATS else arrays
        # The contraction-path search costs ~50us: worth it only to reach BLAS on big inputs.
        big = len(ops) > 2 or sum(x.size for x in ops) > 4096
        try:
            r = xp.einsum(equation, *ops, optimize=big)
        except ValueError as e:  # what _einsum_check leaves to numpy: bad output labels...
            kind = ShapeError if "broadcast" in str(e) else ValueError
            raise kind(f"einsum(): {e} (equation {equation!r}, operand shapes "
                       f"{[list(x.shape) for x in arrays]})") from None
        r = xp.asarray(r)
        # NOTE: numpy returns a view for pure permutations ('ij->ji'); ember's einsum is
        # not a view op, so the result must not alias an input.
        if any(xp.may_share_memory(r, x) for x in arrays):
            r = r.copy()
        return r.astype(dt, copy=False)

    return {"matmul": matmul, "mm": mm, "bmm": bmm, "addmm": addmm, "dot": dot,
            "outer": outer, "einsum": einsum}


UNSUPPORTED = {op: frozenset({bool_}) for op in ("matmul", "mm", "bmm", "addmm", "dot",
                                                    "einsum")}
