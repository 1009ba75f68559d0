"""Distance layers: ``CosineSimilarity`` and ``PairwiseDistance`` over
``ember.nn.functional``'s distances. Reference: torch.nn.modules.distance.
"""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    """Cosine similarity of x1 and x2 along ``dim``: ``(*, D, *)`` inputs that broadcast
    -> their broadcast shape without ``dim``; norms clamped to >= ``eps``. Raises as
    F.cosine_similarity at forward. Reference: torch.nn.CosineSimilarity."""

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``||x1 - x2 + eps||_p`` over the last dim: ``(N, D)`` with ``(N, D)`` or ``(D,)`` ->
    ``(N,)`` (``(N, 1)`` with keepdim). ``p`` is stored as ``norm``, as in PyTorch.
    Reference: torch.nn.PairwiseDistance."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
