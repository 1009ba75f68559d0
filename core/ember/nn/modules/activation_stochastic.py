"""``RReLU``: the randomized leaky ReLU layer (``torch.nn.RReLU``), random in training
and the mean slope in evaluation."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["RReLU"]


class RReLU(Module):
    """``x if x > 0 else a * x`` with a ~ U(lower, upper) per element in training mode and
    a = (lower + upper) / 2 in evaluation mode. Any shape, floating dtypes;
    ``inplace=True`` overwrites the input. Raises ValueError for lower > upper at
    forward. Reference: torch.nn.RReLU (Xu et al., 2015).
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace
                                                           else "")
