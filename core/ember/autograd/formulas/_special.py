"""Helpers for torch.special's backward formulas."""
from __future__ import annotations


def not_implemented(name: str):
    """Raise NotImplementedError as PyTorch does for a derivative it does not define
    (``special_zeta`` w.r.t. x, ``igamma``/``igammac`` w.r.t. a); the formula runs only
    when that input requires grad, so the forward and the other inputs' gradients work."""
    raise NotImplementedError(
        f"the derivative for '{name}' is not implemented (as in PyTorch); detach that input "
        f"or compute its derivative another way (e.g. finite differences)")
