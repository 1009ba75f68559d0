"""``Fold`` and ``Unfold``: col2im and im2col as layers (``torch.nn.Fold``/``Unfold``).

Thin modules over ``F.fold`` / ``F.unfold``, which are each other's adjoint.
Reference: torch.nn.modules.fold.
"""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Unfold(Module):
    """Extract sliding local blocks: ``(N, C, H, W)`` -> ``(N, C * kh * kw, L)`` (im2col),
    or unbatched ``(C, H, W)`` -> ``(C * kh * kw, L)``.

    Args:
        kernel_size, dilation (default 1), padding (zeros, default 0), stride (default 1):
            an int or an (h, w) pair each.
    Shapes: L = L_h * L_w, L_h = (H + 2 padding - dilation (kh - 1) - 1) // stride + 1.
    Floating dtypes. Raises what ``F.unfold`` raises. Reference: torch.nn.Unfold.
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding="
                f"{self.padding}, stride={self.stride}")


class Fold(Module):
    """Sum sliding local blocks into a tensor (col2im): ``(N, C * kh * kw, L)`` -> ``(N, C,
    *output_size)``, or unbatched ``(C * kh * kw, L)`` -> ``(C, *output_size)``; the
    adjoint of :class:`Unfold` (overlapping blocks add up).

    Args:
        output_size: the spatial size (H, W) of the result, an int or a pair.
        kernel_size, dilation, padding, stride: as in :class:`Unfold`.
    Floating dtypes. Raises what ``F.fold`` raises. Reference: torch.nn.Fold.
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation="
                f"{self.dilation}, padding={self.padding}, stride={self.stride}")
