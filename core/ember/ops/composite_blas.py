"""BLAS-style products (``dispatch: composite``): mv, addmv, addr, ger, baddbmm, addbmm,
vdot, chain_matmul; and the vector geometry built on them: dist, renorm, cross.

Each is a few ember ops (matmul, mm, bmm, outer, linalg.vector_norm, linalg.cross), so
autograd and tracing see through them. The ``add*`` ops share one rule, PyTorch's:
``beta * self + alpha * product`` where self broadcasts to the product's shape (never
beyond it), ``beta = 0`` ignores self (its NaNs included) and integral or bool results
refuse float ``beta``/``alpha``. Operand dtypes promote as ember's ``mm`` does (PyTorch
raises for mixed dtypes instead). Registered on import by ``ops/composite.py``.
"""
from __future__ import annotations

import warnings

import numpy as np

from . import namespace as E
from ..dispatch import wrap_dim
from ..errors import DtypeError, ShapeError
from .composite import composite


def _ranks(op: str, **tensors) -> None:
    """Raise ShapeError unless each named tensor has its required rank: name=(t, ndim)."""
    for name, (t, nd) in tensors.items():
        if t.ndim != nd:
            raise ShapeError(f"{op}(): expected {name} to be {nd}-D, got shape "
                             f"{list(t.shape)}")


def _scale_add(op: str, self, prod, beta, alpha):
    """beta * self + alpha * prod, with self broadcasting to prod's shape."""
    shape = prod.shape
    if self.shape != shape:  # (np.broadcast_shapes costs ~10 us: only when they differ)
        try:
            ok = tuple(np.broadcast_shapes(tuple(self.shape), tuple(shape))) == tuple(shape)
        except ValueError:
            ok = False
        if not ok:
            raise ShapeError(f"{op}(): expected self to broadcast to the product's shape "
                             f"{list(shape)}, got {list(self.shape)}")
    dtype = prod.dtype if self.dtype is prod.dtype else \
        E.promote_types(self.dtype, prod.dtype)
    if not dtype.is_floating_point:
        for name, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, float):
                raise DtypeError(f"{op}(): for integral or bool inputs, {name} must not be a "
                                 f"floating point number, got {v}; pass an int or convert "
                                 f"the inputs with .float()")
    if beta == 0:  # self is not read at all: NaN/inf in it do not leak (as PyTorch)
        return (prod if alpha == 1 else prod * alpha).to(dtype)
    if alpha == 1:
        return E.add(self if beta == 1 else self * beta, prod)
    return E.add(self if beta == 1 else self * beta, prod * alpha)


@composite("mv")
def mv(self, vec):
    _ranks("mv", self=(self, 2), vec=(vec, 1))
    if self.shape[1] != vec.shape[0]:
        raise ShapeError(f"mv(): size mismatch, got matrix of shape {list(self.shape)} and "
                         f"vector of shape {list(vec.shape)}")
    return E.matmul(self, vec)


@composite("addmv")
def addmv(self, mat, vec, beta=1, alpha=1):
    _ranks("addmv", mat=(mat, 2), vec=(vec, 1))
    if mat.shape[1] != vec.shape[0]:
        raise ShapeError(f"addmv(): size mismatch, got mat of shape {list(mat.shape)} and "
                         f"vec of shape {list(vec.shape)}")
    return _scale_add("addmv", self, E.matmul(mat, vec), beta, alpha)


@composite("addr")
def addr(self, vec1, vec2, beta=1, alpha=1):
    _ranks("addr", vec1=(vec1, 1), vec2=(vec2, 1))
    return _scale_add("addr", self, E.outer(vec1, vec2), beta, alpha)


@composite("ger")
def ger(self, vec2):
    return E.outer(self, vec2)


def _check_batches(op: str, batch1, batch2) -> None:
    _ranks(op, batch1=(batch1, 3), batch2=(batch2, 3))
    if batch1.shape[0] != batch2.shape[0]:
        raise ShapeError(f"{op}(): batch1 and batch2 must have the same number of batches, "
                         f"got {batch1.shape[0]} and {batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise ShapeError(f"{op}(): batch1 and batch2 shapes cannot be multiplied "
                         f"({list(batch1.shape)} and {list(batch2.shape)}): expected "
                         f"batch2.size(1) == batch1.size(2) = {batch1.shape[2]}")


@composite("baddbmm")
def baddbmm(self, batch1, batch2, beta=1, alpha=1):
    _check_batches("baddbmm", batch1, batch2)
    return _scale_add("baddbmm", self, E.bmm(batch1, batch2), beta, alpha)


@composite("addbmm")
def addbmm(self, batch1, batch2, beta=1, alpha=1):
    _check_batches("addbmm", batch1, batch2)
    b, n, k = batch1.shape
    # the sum over batches of batch1[i] @ batch2[i] is one (n, b*k) x (b*k, m) product
    a = batch1.permute(1, 0, 2).reshape(n, b * k)
    prod = E.mm(a, batch2.reshape(b * k, batch2.shape[2]))
    return _scale_add("addbmm", self, prod, beta, alpha)


@composite("vdot")
def vdot(self, other):
    # NOTE: ember has no complex dtypes, so conj(self) . other is dot
    return E.dot(self, other)


@composite("chain_matmul")
def chain_matmul(matrices):
    warnings.warn("chain_matmul is deprecated and will be removed in a future PyTorch "
                  "release; use ember.linalg.multi_dot, which takes a list of two or more "
                  "tensors", UserWarning, stacklevel=3)
    if not matrices:
        raise ValueError("chain_matmul(): expected one or more matrices, got none")
    for i, m in enumerate(matrices):
        if m.ndim != 2:
            raise ShapeError(f"chain_matmul(): expected 2-D matrices, got tensor {i} of shape "
                             f"{list(m.shape)}")
    if len(matrices) == 1:
        return matrices[0].clone()
    return E.linalg_multi_dot(list(matrices))


@composite("dist")
def dist(self, other, p=2):
    return E.linalg_vector_norm(E.sub(self, other), p)


@composite("renorm")
def renorm(self, p, dim, maxnorm):
    if self.ndim < 2:
        raise ShapeError(f"renorm(): input needs at least 2 dimensions, got shape "
                         f"{list(self.shape)}")
    if not p > 0:
        raise ValueError(f"renorm(): expected a positive norm order p, got {p}")
    if maxnorm < 0:
        raise ValueError(f"renorm(): expected maxnorm >= 0, got {maxnorm}")
    dim = wrap_dim(dim, self.ndim, "renorm")
    norm = E.linalg_vector_norm(self, p, [d for d in range(self.ndim) if d != dim], True)
    # PyTorch's factor, 1e-7 included: slices under maxnorm keep their values exactly
    return self * E.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)


@composite("cross")
def cross(self, other, dim=None):
    if dim is None:
        warnings.warn("Using cross without specifying the dim arg is deprecated; pass dim "
                      "explicitly or use ember.linalg.cross (whose default is dim=-1)",
                      UserWarning, stacklevel=3)
        dim = next((i for i, s in enumerate(self.shape) if s == 3), None)
        if dim is None:
            raise ShapeError(f"cross(): no dimension of size 3 in input of shape "
                             f"{list(self.shape)}; pass dim")
    return E.linalg_cross(self, other, dim=dim)
