"""Distance functions with PyTorch's signatures (``torch.nn.functional``): normalize,
cosine_similarity, pairwise_distance, pdist; and ``torch.cdist``.

Each is a composite op (``native_functions.yaml``, section ``nn: distances``) built from
``norm`` and pointwise ops, so autograd differentiates it to any order. cdist (p = 1, 2)
and pdist (p = 2) run as fused kernel pairs (``backends/kernels/distance_fused.py``,
through ``_fused.run``) whose op-by-op form here is the reference for higher orders.

``cosine_similarity`` follows ATen: each input is divided by its own norm first (so the
result stays in [-1, 1]), each norm clamped to >= eps *without* cutting its gradient
(ATen clamps under no_grad), so a zero vector gets the gradient x2 / (eps |x2|), as in
PyTorch. ``normalize`` clamps with an ordinary, differentiable clamp, as PyTorch's does.
"""
from __future__ import annotations

import math

import numpy as np

from ember.ops import namespace as E
from ember.backends.kernels.distance_fused import (cdist_backward, cdist_forward,
                                                   pdist_backward, pdist_forward)
from ember.backends.kernels.vector_fused import cosine_backward, cosine_forward
from ember.dispatch import wrap_dim
from ember.errors import DtypeError, ShapeError
from ember.ops.composite import composite

from ember.autograd import kernel_pair as _fused

_MM_ROWS = 25  # cdist's default switch to the GEMM form
CDIST_MODES = (None, "use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
               "donot_use_mm_for_euclid_dist")

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
    x1, x2 = (x if tuple(x.shape) == shape else x.expand(shape) for x in
              (x1.to(dtype), x2.to(dtype)))
    return _fused.run(op, _cosine_reference, cosine_forward, cosine_backward, (x1, x2),
                      (dim, eps))


def _cosine_reference(x1, x2, dim, eps):
    """cosine_similarity op by op on broadcast inputs (the fused kernels' reference)."""
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
    if p == 2 and self.shape[0] > 1:
        return _fused.run("pdist", _pdist2_reference, pdist_forward, pdist_backward, (self,),
                          (self.shape[0] > _MM_ROWS,))
    return _pdist_reference(self, p)


def _pdist2_reference(self, use_mm):
    return _pdist_reference(self, 2.0)


def _pdist_reference(self, p):
    """pdist op by op (the fused kernels' reference)."""
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
    return _p_norm_of((rows[0] - rows[1]).abs(), p)


def pdist(input, p=2):
    """The p-norm distance between every pair of rows of input (N, M), i < j in row-major
    order: (N (N - 1) / 2,) in input's dtype (floating). p >= 0 (0 counts differing
    coordinates, inf takes the largest); coincident rows get a zero gradient.
    Raises ShapeError for input not 2-D, DtypeError for integral input, ValueError for a
    negative p. Reference: torch.nn.functional.pdist.
    """
    return E.pdist(input, float(p))


@composite("cdist")
def cdist(x1, x2, p=2.0, compute_mode=None):
    for name, x in (("x1", x1), ("x2", x2)):
        if x.ndim < 2:
            raise ShapeError(f"cdist(): expected {name} of shape (*, P, M) with at least 2 "
                             f"dims, got {list(x.shape)}")
        if not x.is_floating_point():
            raise DtypeError(f"cdist(): expected floating point inputs, got {name} of dtype "
                             f"{x.dtype}; convert with .float()")
    if x1.shape[-1] != x2.shape[-1]:
        raise ShapeError(f"cdist(): x1 and x2 must have the same number of columns M, got "
                         f"{list(x1.shape)} and {list(x2.shape)}")
    if p < 0 or math.isnan(p):
        raise ValueError(f"cdist(): expected a non-negative p, got {p}")
    if compute_mode not in CDIST_MODES:
        raise ValueError(f"cdist(): expected compute_mode in {CDIST_MODES}, got "
                         f"{compute_mode!r}")
    use_mm = p == 2 and _use_mm(compute_mode, x1.shape[-2], x2.shape[-2])
    if p in (1, 2) and x1.shape[:-2] == x2.shape[:-2] and x1.dtype is x2.dtype:
        return _fused.run("cdist", _cdist_reference, cdist_forward, cdist_backward, (x1, x2),
                          (p, use_mm))
    return _cdist_reference(x1, x2, p, use_mm)


def _cdist_reference(x1, x2, p, use_mm):
    """cdist op by op: the fused kernels' first derivative and their higher orders."""
    if use_mm:
        return _euclidean_mm(x1, x2)
    return _p_norm_of((x1.unsqueeze(-2) - x2.unsqueeze(-3)).abs(), p)  # of (*, P, R, M)


def _p_norm_of(diff, p):
    """The p-norm over the last dim of absolute differences ``diff``, op by op (p = 0
    counts the non-zero ones, inf takes the largest)."""
    if p == 0:
        return (diff != 0).to(diff.dtype).sum(-1)
    if math.isinf(p):
        return diff.amax(-1) if diff.shape[-1] else diff.sum(-1)
    if p == 1:
        return diff.sum(-1)
    s = (diff ** p).sum(-1)
    # NOTE: the root's derivative is infinite at 0; like PyTorch, a zero distance gets a
    # zero gradient (the where keeps the infinity out of the backward pass)
    pos = s > 0
    return E.where(pos, E.where(pos, s, 1.0) ** (1.0 / p), 0.0)


def _use_mm(compute_mode, p_rows: int, r_rows: int) -> bool:
    """PyTorch's rule: the GEMM form when asked, or by default past 25 rows on a side."""
    if compute_mode == "use_mm_for_euclid_dist":
        return True
    if compute_mode == "donot_use_mm_for_euclid_dist":
        return False
    return p_rows > 25 or r_rows > 25


def _euclidean_mm(x1, x2):
    """sqrt(max(||x||^2 + ||y||^2 - 2 x y^T, 0)): one GEMM, no (P, R, M) difference
    tensor (PyTorch's _euclidean_dist). NOTE: the expansion cancels for close points,
    so small distances lose relative precision, as they do in PyTorch."""
    x1n = (x1 * x1).sum(-1, keepdim=True)                     # (*, P, 1)
    x2n = (x2 * x2).sum(-1, keepdim=True).transpose(-1, -2)   # (*, 1, R)
    s = (x1n + x2n - 2 * E.matmul(x1, x2.transpose(-1, -2))).clamp_min(0)
    pos = s > 0
    return E.where(pos, E.where(pos, s, 1.0).sqrt(), 0.0)
