"""Vector and matrix norms and the condition number (``torch.linalg.vector_norm``,
``matrix_norm``, ``norm``, ``cond``), composites over ember ops."""
from __future__ import annotations

import math

from ..ops import namespace as E
from ..dispatch import wrap_dim
from ..errors import ShapeError
from ..ops.composite import composite
from ._checks import need_float, need_matrix


@composite("linalg_vector_norm")
def _vector_norm(self, ord=2, dim=None, keepdim=False, dtype=None):
    return E.norm(self, ord, dim, keepdim, dtype=dtype)


def _matrix_norm(self, ord, dim, keepdim, dtype):
    op = "linalg.matrix_norm"
    need_matrix(op, self)
    dims = [wrap_dim(d, self.ndim, op) for d in ([dim] if isinstance(dim, int) else dim)]
    if len(dims) != 2 or dims[0] == dims[1]:
        raise ShapeError(f"{op}: dim must be a 2-tuple of different dims, got {dim}")
    A = need_float(op, self, dtype)
    d0, d1 = dims
    if ord == "fro":
        r = E.norm(A, 2, dims, True)
    elif ord == "nuc" or ord in (2, -2):
        s = E.linalg_svdvals(A.movedim((d0, d1), (-2, -1)))
        r = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        r = r.unsqueeze(-1).unsqueeze(-1).movedim((-2, -1), (d0, d1))
    elif ord in (1, -1, math.inf, -math.inf):
        inner, outer = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = A.abs().sum(inner, keepdim=True)
        r = sums.amax(outer, keepdim=True) if ord > 0 else sums.amin(outer, keepdim=True)
    else:
        raise ValueError(f"{op}: Order {ord} not supported; expected 'fro', 'nuc', 1, -1, 2, "
                         f"-2, inf or -inf")
    if not keepdim:
        r = r.squeeze(max(d0, d1)).squeeze(min(d0, d1))
    return r


@composite("linalg_matrix_norm.str_ord")
def _matrix_norm_str(self, ord="fro", dim=(-2, -1), keepdim=False, dtype=None):
    if ord not in ("fro", "nuc"):
        raise ValueError(f"linalg.matrix_norm: Order {ord} not supported; expected 'fro', "
                         f"'nuc' or a number")
    return _matrix_norm(self, ord, dim, keepdim, dtype)


@composite("linalg_matrix_norm")
def _matrix_norm_scalar(self, ord, dim=(-2, -1), keepdim=False, dtype=None):
    return _matrix_norm(self, ord, dim, keepdim, dtype)


def _norm(self, ord, dim, keepdim, dtype):
    op = "linalg.norm"
    if dim is not None:
        dim = [dim] if isinstance(dim, int) else list(dim)
    if dim is None:
        if ord is None:
            return E.norm(self, 2, None, keepdim, dtype=dtype)
        if self.ndim not in (1, 2):
            raise ShapeError(f"{op}: If dim is not specified but ord is, the input must be 1D "
                             f"or 2D. Got {self.ndim}D.")
        dim = list(range(self.ndim))
    if len(dim) == 1 and not isinstance(ord, str):
        return E.norm(self, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if len(dim) == 2:
        return _matrix_norm(self, "fro" if ord is None else ord, dim, keepdim, dtype)
    raise ShapeError(f"{op}: If dim is specified, it must be of length 1 or 2 (2 for ord="
                     f"{ord!r}). Got {dim}")


@composite("linalg_norm.ord_str")
def _norm_str(self, ord, dim=None, keepdim=False, dtype=None):
    return _norm(self, ord, dim, keepdim, dtype)


@composite("linalg_norm")
def _norm_scalar(self, ord=None, dim=None, keepdim=False, dtype=None):
    return _norm(self, ord, dim, keepdim, dtype)


# ==== condition number ==========================================================================

_COND_ORDS = (None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc")


def _cond(A, p):
    op = "linalg.cond"
    if p not in _COND_ORDS:
        raise ValueError(f"{op} got an invalid norm type: {p}; expected None, 'fro', 'nuc', "
                         f"inf, -inf, 1, -1, 2 or -2")
    need_matrix(op, A)
    need_float(op, A)
    if p in (None, 2, -2):
        s = E.linalg_svdvals(A)
        big, small = s.amax(-1), s.amin(-1)
        return small / big if p == -2 else big / small
    need_matrix(f"{op}(ord={p})", A, square=True)
    inverse, info = E.linalg_inv_ex(A)
    r = E.linalg_matrix_norm(A, p) * E.linalg_matrix_norm(inverse, p)
    return E.where(info > 0, math.inf, r)  # singular: inf, as PyTorch


@composite("linalg_cond")
def _cond_scalar(self, p=None):
    return _cond(self, p)


@composite("linalg_cond.p_str")
def _cond_str(self, p):
    return _cond(self, p)
