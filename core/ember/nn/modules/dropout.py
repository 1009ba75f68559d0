"""``Dropout``: zero elements at random in training mode (``torch.nn.Dropout``)."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Dropout"]


class Dropout(Module):
    """In training mode, zero each element with probability ``p`` and scale the rest by
    ``1 / (1 - p)``; in eval mode return the input unchanged.

    Args:
        p: drop probability in [0, 1] (default 0.5).
        inplace: overwrite the input instead of allocating the output.
    Shapes: any; output has the input's shape and dtype.
    Raises ValueError for ``p`` outside [0, 1]. Reference: torch.nn.Dropout
    (Srivastava et al., 2014).
    """

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
