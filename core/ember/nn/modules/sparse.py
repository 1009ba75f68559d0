"""``Embedding``: a lookup table of learned vectors (``torch.nn.Embedding``)."""
from __future__ import annotations

from ... import factories as _f
from ...autograd import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding"]


class Embedding(Module):
    """Map integer indices to rows of ``weight``, shape ``(num_embeddings, embedding_dim)``,
    initialised N(0, 1) (row ``padding_idx``, if any, zeros).

    Args:
        num_embeddings, embedding_dim: table size.
        padding_idx: a row that gets no gradient (negative counts from the end).
        max_norm: renormalise looked-up rows (in place) to at most this ``norm_type``-norm.
        norm_type: the p of the norm for ``max_norm`` (default 2).
        scale_grad_by_freq: scale gradients by the inverse frequency of indices in the batch.
        sparse: accepted for compatibility, see ``F.embedding``.
        device, dtype: where and how the table is created.
    Shapes: integer input ``(*)`` -> ``(*, embedding_dim)``.
    Raises ValueError for a ``padding_idx`` outside the table or a ``_weight`` of another
    shape. Reference: torch.nn.Embedding.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False, _weight=None,
                 _freeze: bool = False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_index(padding_idx, num_embeddings, "Embedding")
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        set_table(self, _weight, not _freeze, device, dtype)

    def reset_parameters(self) -> None:
        """Re-draw the table from N(0, 1) and zero the padding row."""
        reset_table(self)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, sparse: bool = False) -> Embedding:
        """An Embedding whose table is ``embeddings`` (2-D, shared, not copied), frozen
        (``requires_grad=False``) unless ``freeze=False``.

        Raises ValueError if ``embeddings`` is not 2-D."""
        rows, cols = pretrained_shape(embeddings)
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)


# --- shared with EmbeddingBag: the lookup table ---------------------------------------------
def padding_index(padding_idx, num_embeddings: int, layer: str):
    """``padding_idx`` in ``[0, num_embeddings)`` (a negative one counts from the end), or
    None. Raises ValueError outside ``[-num_embeddings, num_embeddings)``."""
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise ValueError(f"{layer}: padding_idx must be within num_embeddings "
                         f"[-{num_embeddings}, {num_embeddings}), got {padding_idx}")
    return padding_idx % num_embeddings


def set_table(module, weight, requires_grad: bool, device, dtype) -> None:
    """Give ``module`` its ``weight`` (num_embeddings, embedding_dim): ``weight`` itself
    (shared, not copied) or, when None, a new table drawn by ``reset_parameters``.
    Raises ValueError for a ``weight`` of another shape."""
    shape = (module.num_embeddings, module.embedding_dim)
    if weight is None:
        module.weight = Parameter(_f.empty(*shape, device=device, dtype=dtype),
                                  requires_grad=requires_grad)
        module.reset_parameters()
        return
    if tuple(weight.shape) != shape:
        raise ValueError(f"{type(module).__name__}: shape of _weight {list(weight.shape)} does "
                         f"not match [num_embeddings, embedding_dim] = [{shape[0]}, {shape[1]}]")
    module.weight = Parameter(weight, requires_grad=requires_grad)


def reset_table(module) -> None:
    """Draw ``module.weight`` from N(0, 1) and zero its ``padding_idx`` row."""
    init.normal_(module.weight)
    if module.padding_idx is not None:
        with no_grad():
            module.weight[module.padding_idx].fill_(0)


def pretrained_shape(embeddings) -> tuple[int, int]:
    """``(rows, cols)`` of a pretrained table; ValueError unless it is 2-D."""
    if embeddings.ndim != 2:
        raise ValueError(f"Embeddings parameter is expected to be 2-dimensional, got "
                         f"shape {list(embeddings.shape)}")
    return tuple(embeddings.shape)
