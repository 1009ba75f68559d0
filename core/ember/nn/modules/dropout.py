"""Dropout layers: ``Dropout``, channel-wise ``Dropout1d/2d/3d``, ``AlphaDropout`` and
``FeatureAlphaDropout``; identities in eval mode. Reference: torch.nn.modules.dropout.
"""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout"]


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


class _ChannelDropout(Dropout):
    _fn = None

    def forward(self, input):
        return getattr(F, self._fn)(input, self.p, self.training, self.inplace)


class Dropout1d(_ChannelDropout):
    """In training mode, zero whole channels of ``(N, C, L)`` or ``(C, L)`` input with
    probability ``p`` and scale the rest by ``1 / (1 - p)`` (Tompson et al. 2015); in eval
    mode return the input.

    Args: p (default 0.5), inplace. Raises ValueError for ``p`` outside [0, 1],
    RuntimeError for another rank. Reference: torch.nn.Dropout1d.
    """

    _fn = "dropout1d"


class Dropout2d(_ChannelDropout):
    """In training mode, zero whole channels of ``(N, C, H, W)`` input with probability
    ``p`` and scale the rest by ``1 / (1 - p)`` (Tompson et al. 2015); in eval mode return
    the input. A 3-D input is read as ``(N, C, L)``, with PyTorch's warning.

    Args: p (default 0.5), inplace. Raises ValueError for ``p`` outside [0, 1].
    Reference: torch.nn.Dropout2d.
    """

    _fn = "dropout2d"


class Dropout3d(_ChannelDropout):
    """In training mode, zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)``
    input with probability ``p`` and scale the rest by ``1 / (1 - p)``; in eval mode return
    the input.

    Args: p (default 0.5), inplace. Raises ValueError for ``p`` outside [0, 1].
    Reference: torch.nn.Dropout3d.
    """

    _fn = "dropout3d"


class AlphaDropout(Dropout):
    """Alpha dropout for self-normalizing networks (SELU): in training mode, dropped
    elements take SELU's saturation value and an affine map keeps zero mean and unit
    variance (Klambauer et al. 2017); in eval mode return the input.

    Args: p (default 0.5), inplace. Shapes: any. Raises ValueError for ``p`` outside
    [0, 1]. Reference: torch.nn.AlphaDropout.
    """

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(Dropout):
    """Alpha dropout of whole channels of ``(N, C, *)`` input in training mode; the
    identity in eval mode.

    Args: p (default 0.5), inplace. Raises ValueError for ``p`` outside [0, 1].
    Reference: torch.nn.FeatureAlphaDropout.
    """

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)
