"""``weight_norm`` / ``remove_weight_norm``: the hook-based weight normalization
(``torch.nn.utils.weight_norm``), kept for code written against it; new code should use
``ember.nn.utils.parametrizations.weight_norm``, as PyTorch recommends.

The weight ``w`` is replaced by parameters ``<name>_g`` (magnitude, size 1 except at
``dim``) and ``<name>_v`` (direction, w's shape); a forward pre-hook sets
``module.<name> = g * v / ||v||`` before each call.
"""
from __future__ import annotations

import warnings

from ..modules.module import Module
from ..parameter import Parameter
from .parametrizations import norm_except_dim

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]


class WeightNorm:
    """The forward pre-hook of ``weight_norm``: recomputes ``module.<name>`` from g, v."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def compute_weight(self, module: Module):
        g, v = getattr(module, self.name + "_g"), getattr(module, self.name + "_v")
        return v * (g / norm_except_dim(v, 2, self.dim))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def _find_hook(module: Module, kind: type, name: str):
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            return key, hook
    return None, None


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Split parameter ``name`` into ``<name>_g`` and ``<name>_v`` (Salimans & Kingma
    2016); ``dim=None`` normalizes over the whole tensor. Warns FutureWarning, as PyTorch
    does, pointing to the parametrization. Returns ``module``.

    Raises RuntimeError for a second weight norm on the same parameter, ValueError when
    ``name`` is not a parameter of ``module``.
    Reference: torch.nn.utils.weight_norm.
    """
    warnings.warn("ember.nn.utils.weight_norm is deprecated in favor of "
                  "ember.nn.utils.parametrizations.weight_norm.", FutureWarning, stacklevel=2)
    if _find_hook(module, WeightNorm, name)[1] is not None:
        raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
    weight = module._parameters.get(name)
    if weight is None:
        raise ValueError(f"Module '{type(module).__name__}' has no parameter named '{name}'")
    hook = WeightNorm(name, -1 if dim is None else dim)
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, hook.dim)
                                                     .detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    setattr(module, name, hook.compute_weight(module))
    module.register_forward_pre_hook(hook)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Fold ``<name>_g`` and ``<name>_v`` back into a parameter ``name``; return ``module``.

    Raises ValueError when ``module`` has no weight norm on ``name``.
    Reference: torch.nn.utils.remove_weight_norm.
    """
    key, hook = _find_hook(module, WeightNorm, name)
    if hook is None:
        raise ValueError(f"weight_norm of '{name}' not found in {type(module).__name__}")
    weight = hook.compute_weight(module).detach()
    del module._forward_pre_hooks[key]
    delattr(module, name)
    del module._parameters[name + "_g"], module._parameters[name + "_v"]
    module.register_parameter(name, Parameter(weight))
    return module
