"""Distance functions with PyTorch's signatures (``torch.nn.functional``): normalize,
cosine_similarity, pairwise_distance and pdist.

Each is a composite op (``native_functions.yaml``, section ``nn: distances``) built from
``norm`` and pointwise ops, so autograd differentiates it to any order.

``cosine_similarity`` follows ATen: each input is divided by its own norm first (so the
result stays in [-1, 1]), each norm clamped to >= eps *without* cutting its gradient
(ATen clamps under no_grad), so a zero vector gets the gradient x2 / (eps |x2|), as in
PyTorch. ``normalize`` clamps with an ordinary, differentiable clamp, as PyTorch's does.
"""
from __future__ import annotations

import math

import numpy as np

import ember as E
from ember.dispatch import wrap_dim
from ember.errors import DtypeError, ShapeError
from ember.ops.composite import composite
from ember.ops.composite_products import _euclidean_mm

_MM_ROWS = 25  # cdist's default switch to the GEMM form

__all__ = ["normalize", "cosine_similarity", "pairwise_distance", "pdist"]


def _broadcast_shape(op: str, a, b) -> tuple:
    try:
        return tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    except ValueError:
        raise ShapeError(f"{op}: x1 of shape {tuple(a.shape)} and x2 of shape "
                         f"{tuple(b.shape)} do not broadcast; make their shapes equal") from None


def _clamp_min_keep_grad(t, eps: float):
    """clamp_min(t, eps) in value, the identity in gradient (ATen's no_grad clamp_)."""
    # NOTE: where t >= eps the detached term is exactly 0, so t comes back unchanged.
    return t + (E.clamp_min(t, eps) - t).detach()


def _denominator(self, p, dim, eps):
    return E.norm(self, p, [dim], True).clamp_min(eps)


@composite("normalize")
def _normalize(self, p, dim, eps):
    return self / _denominator(self, p, dim, eps)


@composite("cosine_similarity")
def _cosine_similarity(x1, x2, dim, eps):
    op = "cosine_similarity"
    dtype = E.result_type(x1, x2)
    if not dtype.is_floating_point:
        raise DtypeError(f"{op}: expected x1 ({x1.dtype}) and x2 ({x2.dtype}) to have a "
                         f"floating common dtype, got {dtype}; convert one, e.g. x1.float()")
    shape = _broadcast_shape(op, x1, x2)
    dim = wrap_dim(dim, len(shape), op)
    x1, x2 = x1.to(dtype).expand(shape), x2.to(dtype).expand(shape)
    n1 = _clamp_min_keep_grad(E.norm(x1, 2, [dim], True), eps)
    n2 = _clamp_min_keep_grad(E.norm(x2, 2, [dim], True), eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


@composite("pairwise_distance")
def _pairwise_distance(x1, x2, p, eps, keepdim):
    # ATen: the norm of x1 - x2 + eps over the last dim of the broadcast shape
    last = len(_broadcast_shape("pairwise_distance", x1, x2)) - 1
    return E.norm(x1 - x2 + eps, p, [last], keepdim)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p, eps) along dim: unit p-norm vectors; same shape and
    floating dtype. ``out`` receives the result (as torch.div's out=).

    Raises IndexError for a dim out of range (dim=1 needs input.ndim >= 2, or pass
    dim=0), RuntimeError for integral inputs (as norm).
    Reference: torch.nn.functional.normalize.
    """
    if out is None:
        return E.normalize(input, p, dim, eps)
    return E.div(input, _denominator(input, p, dim, eps), out=out)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps)) along dim.

    x1 and x2 broadcast together (e.g. (N, D) with (D,)); dim indexes the broadcast shape,
    which loses it: (N, D) -> (N,) for dim=1. Integral inputs are fine if the common dtype
    is floating. Raises ShapeError for shapes that do not broadcast, DtypeError for an
    integral common dtype, IndexError for a dim out of range.
    Reference: torch.nn.functional.cosine_similarity.
    """
    return E.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim: (N, D) with (N, D) or (D,) -> (N,), or
    (N, 1) with keepdim. p may be any real, inf or -inf (as norm); integral inputs give
    the default float dtype. Raises ShapeError for shapes that do not broadcast.
    Reference: torch.nn.functional.pairwise_distance.
    """
    return E.pairwise_distance(x1, x2, p, eps, keepdim)


@composite("pdist")
def _pdist(self, p):
    op = "pdist"
    if self.ndim != 2:
        raise ShapeError(f"{op}: expected input of shape (N, M), got {tuple(self.shape)}")
    if not self.is_floating_point():
        raise DtypeError(f"{op}: expected a floating input, got {self.dtype}; convert it "
                         f"first, e.g. input.float()")
    if p < 0:
        raise ValueError(f"{op}: expected a non-negative p, got {p}")
    n = self.shape[0]
    i, j = np.triu_indices(n, 1)
    if p == 2 and n > _MM_ROWS:
        # NOTE: cdist's GEMM form (||x||^2 + ||y||^2 - 2 x y^T) on the N x N square, then
        # the pairs i < j: no (P, M) pair temporaries (80x faster at N=500). PyTorch's
        # pdist subtracts exactly; here close rows lose relative precision, as in cdist.
        flat = E.tensor((i * n + j).astype(np.int64), device=self.device)
        return _euclidean_mm(self, self).reshape(-1).index_select(0, flat)
    # NOTE: only the pairs i < j, not cdist's full square: its zero diagonal would put
    # |0|^p's infinite higher derivatives into double backward
    rows = [E.index_select(self, 0, E.tensor(k.astype(np.int64), device=self.device))
            for k in (i, j)]
    diff = (rows[0] - rows[1]).abs()
    if p == 0:
        return (diff != 0).to(diff.dtype).sum(-1)
    if math.isinf(p):
        return diff.amax(-1) if diff.shape[-1] else diff.sum(-1)
    if p == 1:
        return diff.sum(-1)
    s = (diff ** p).sum(-1)
    # a zero distance gets a zero gradient (the root's derivative is infinite there)
    pos = s > 0
    return E.where(pos, E.where(pos, s, 1.0) ** (1.0 / p), 0.0)


def pdist(input, p=2):
    """The p-norm distance between every pair of rows of input (N, M), i < j in row-major
    order: (N (N - 1) / 2,) in input's dtype (floating). p >= 0 (0 counts differing
    coordinates, inf takes the largest); coincident rows get a zero gradient.
    Raises ShapeError for input not 2-D, DtypeError for integral input, ValueError for a
    negative p. Reference: torch.nn.functional.pdist.
    """
    return E.pdist(input, float(p))
