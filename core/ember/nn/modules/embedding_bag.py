"""``EmbeddingBag``: sums, means or maxima of bags of embeddings
(``torch.nn.EmbeddingBag``), without the per-index embeddings as a user tensor."""
from __future__ import annotations

from .. import functional as F
from .module import Module
from .sparse import padding_index, pretrained_shape, reset_table, set_table

__all__ = ["EmbeddingBag"]


class EmbeddingBag(Module):
    """Reduce bags of rows of ``weight`` ``(num_embeddings, embedding_dim)``, initialised
    N(0, 1) (row ``padding_idx``, if any, zeros).

    Args:
        num_embeddings, embedding_dim: table size.
        max_norm, norm_type, scale_grad_by_freq, sparse: as ``Embedding``.
        mode: 'sum', 'mean' (default) or 'max' over each bag.
        include_last_offset: offsets carry one more entry, the input's length.
        padding_idx: a row left out of every bag, with no gradient (negative counts from
            the end).
        device, dtype: where and how the table is created.
    Shapes: ``forward(input, offsets=None, per_sample_weights=None)`` takes ``(B, N)``
    indices, or ``(M,)`` with ``(B,)`` offsets, and returns ``(B, embedding_dim)``.
    Raises ValueError for a bad mode, a padding_idx outside the table, or a ``_weight``
    of another shape. Reference: torch.nn.EmbeddingBag.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight=None, include_last_offset: bool = False,
                 padding_idx: int | None = None, device=None, dtype=None):
        super().__init__()
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"EmbeddingBag: mode has to be one of 'sum', 'mean' or 'max', "
                             f"got {mode!r}")
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset
        self.padding_idx = padding_index(padding_idx, num_embeddings, "EmbeddingBag")
        set_table(self, _weight, True, device, dtype)

    def reset_parameters(self) -> None:
        """Re-draw the table from N(0, 1) and zero the padding row."""
        reset_table(self)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        mode: str = "mean", sparse: bool = False,
                        include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An EmbeddingBag whose table is ``embeddings`` (2-D, shared, not copied), frozen
        (``requires_grad=False``) unless ``freeze=False``.

        Raises ValueError if ``embeddings`` is not 2-D."""
        rows, cols = pretrained_shape(embeddings)
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                  _weight=embeddings, include_last_offset=include_last_offset,
                  padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
