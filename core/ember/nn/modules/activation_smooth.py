"""Smooth activation and gating layers: thin modules over ``ember.nn.functional``'s
softplus, mish, logsigmoid, softsign, tanhshrink, glu and softmin.

Each takes floating input of any shape and returns the same shape (GLU halves ``dim``).
Reference: torch.nn.modules.activation.
"""
from __future__ import annotations

from .. import functional as F
from .activation import _inplace_str
from .module import Module

__all__ = ["Softplus", "Mish", "LogSigmoid", "Softsign", "Tanhshrink", "GLU", "Softmin"]


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, the identity where ``beta * x > threshold``.
    Reference: torch.nn.Softplus."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Mish(Module):
    """``x * tanh(softplus(x))``. Reference: torch.nn.Mish (Misra, 2019)."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace)


class LogSigmoid(Module):
    """``log(sigmoid(x))``, computed without overflow or underflow.
    Reference: torch.nn.LogSigmoid."""

    def forward(self, input):
        return F.logsigmoid(input)


class Softsign(Module):
    """``x / (1 + |x|)``. Reference: torch.nn.Softsign."""

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)``. Reference: torch.nn.Tanhshrink."""

    def forward(self, input):
        return F.tanhshrink(input)


class GLU(Module):
    """``a * sigmoid(b)``, a and b the halves of the input along ``dim``: ``(*, 2n, *)`` ->
    ``(*, n, *)``; an odd size raises ShapeError at forward.
    Reference: torch.nn.GLU (Dauphin et al., 2017)."""

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(Module):
    """``softmax(-x)`` along ``dim``; as F.softmin, ``dim=None`` raises TypeError at
    forward. Reference: torch.nn.Softmin."""

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
