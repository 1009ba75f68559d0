"""``Flatten`` and ``Unflatten``: reshape between a run of dims and one dim."""
from __future__ import annotations

from ._sizes import as_int
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Merge dims ``start_dim..end_dim`` into one: ``(N, C, H, W) -> (N, C*H*W)`` with the
    defaults (``start_dim=1``, ``end_dim=-1``). Reference: torch.nn.Flatten."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size``: ``Unflatten(1, (C, H, W))`` turns
    ``(N, C*H*W)`` into ``(N, C, H, W)``; one entry may be -1.

    Raises TypeError if ``unflattened_size`` is not a tuple or list of ints (named dims are
    not supported). Reference: torch.nn.Unflatten.
    """

    def __init__(self, dim: int, unflattened_size):
        super().__init__()
        if as_int(dim) is None:
            raise TypeError(f"Unflatten: dim must be an int (named dims are not supported), "
                            f"got {type(dim).__name__}")
        dim = as_int(dim)
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(f"unflattened_size must be tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        for i, s in enumerate(unflattened_size):
            if as_int(s) is None:
                raise TypeError(f"unflattened_size must be tuple of ints, but found element "
                                f"of type {type(s).__name__} at pos {i}")
        unflattened_size = type(unflattened_size)(as_int(s) for s in unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, tuple(self.unflattened_size))

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
