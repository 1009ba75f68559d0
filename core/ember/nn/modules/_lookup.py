"""Dotted-path lookup of parameters and buffers for ``Module`` (``get_parameter``,
``get_buffer``; ``get_submodule`` is in module.py), kept apart from module.py to keep it
short. Errors are PyTorch's AttributeErrors, word for word.
Reference: torch.nn.Module.get_parameter / get_buffer.
"""
from __future__ import annotations

__all__ = ["LookupMixin"]


class LookupMixin:
    """The path-lookup half of ``Module``; see the module docstring."""

    def _get_attribute_at(self, target: str) -> tuple:
        """(owning module, attribute name, value) for dotted path ``target``."""
        if not isinstance(target, str):
            raise TypeError(f"expected a dotted path string such as 'layer1.0.weight', got "
                            f"{type(target).__name__}")
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        return mod, name, getattr(mod, name)

    def get_parameter(self, target: str):
        """The Parameter at dotted path ``target`` (``"features.0.weight"``).

        Raises AttributeError naming the first missing step of the path, or saying that
        the attribute is not an nn.Parameter; TypeError for a non-string ``target``.
        Reference: torch.nn.Module.get_parameter."""
        from ..parameter import Parameter
        _, name, value = self._get_attribute_at(target)
        if not isinstance(value, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return value

    def get_buffer(self, target: str):
        """The buffer (a Tensor registered with ``register_buffer``, persistent or not) at
        dotted path ``target`` (``"bn1.running_mean"``).

        Raises AttributeError naming the first missing step of the path, or saying that
        the attribute is not a buffer; TypeError for a non-string ``target``.
        Reference: torch.nn.Module.get_buffer."""
        mod, name, value = self._get_attribute_at(target)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return value
