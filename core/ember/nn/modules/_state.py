"""``state_dict`` / ``load_state_dict`` for ``Module`` (kept apart from module.py by concept).

A state dict is an ``OrderedDict`` from dotted names (``"features.conv1.bias"``) to tensors:
every parameter and persistent buffer, in ``named_parameters`` order per module, detached
from autograd and sharing memory with the model (``keep_vars=True`` keeps the Parameter
objects). Loading copies values in place under ``no_grad`` (so optimizers keep their
references), collects missing / unexpected keys and shape mismatches, and with
``strict=True`` raises one RuntimeError listing them all, worded as PyTorch's.

A module that overrides ``get_extra_state`` / ``set_extra_state`` saves and restores one
more entry, ``<prefix>_extra_state`` (any picklable object), as PyTorch's do.

Subclasses customise one module's part through PyTorch's protected hooks
``_save_to_state_dict(destination, prefix, keep_vars)`` and
``_load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
unexpected_keys, error_msgs)``.
Reference: torch.nn.Module.state_dict / load_state_dict.
"""
from __future__ import annotations

from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ...tensor import Tensor

__all__ = ["StateDictMixin"]

_EXTRA_STATE_KEY = "_extra_state"  # PyTorch's key for get_extra_state()'s value


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class StateDictMixin:
    """The state-dict half of ``Module``; see the module docstring."""

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not StateDictMixin.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY] = self.get_extra_state()

    def get_extra_state(self):
        """Extra state (any picklable object) for ``state_dict`` to save under the key
        ``"_extra_state"``: override it together with ``set_extra_state``; modules that do
        not override it save none. Raises RuntimeError when called without an override.
        Reference: torch.nn.Module.get_extra_state."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never "
                           "be called: override get_extra_state() and set_extra_state() "
                           "together to save extra state")

    def set_extra_state(self, state) -> None:
        """Restore what ``get_extra_state`` returned; ``load_state_dict`` calls it with the
        ``"_extra_state"`` entry (missing under ``strict=True``: a missing key). Raises
        RuntimeError when called without an override.
        Reference: torch.nn.Module.set_extra_state."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never "
                           "be called: override get_extra_state() and set_extra_state() "
                           "together to load extra state")

    def state_dict(self, *, destination=None, prefix: str = "", keep_vars: bool = False):
        """An ``OrderedDict`` of every parameter and persistent buffer by dotted name,
        detached (sharing memory) unless ``keep_vars``. Non-persistent buffers and None
        entries are left out. Reference: torch.nn.Module.state_dict."""
        if destination is None:
            destination = OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        from ...autograd import no_grad
        from ..parameter import Parameter
        local_state = {k: v for k, v in self._parameters.items() if v is not None}
        local_state.update((k, v) for k, v in self._buffers.items()
                           if v is not None and k not in self._non_persistent_buffers_set)
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  f"ember.Tensor from checkpoint but received {type(value)}")
                continue
            if param.ndim == 0 and value.ndim == 1 and value.shape[0] == 1:
                value = value[0]  # old checkpoints stored scalars as shape (1,)
            if value.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model "
                                  f"is {param.shape}.")
                continue
            try:
                with no_grad():
                    if not assign:
                        param.copy_(value)
                    elif isinstance(param, Parameter):
                        setattr(self, name, Parameter(value, param.requires_grad))
                    else:
                        setattr(self, name, value)
            except Exception as ex:  # reported with the others, as PyTorch does
                error_msgs.append(f'While copying the parameter named "{key}", whose '
                                  f"dimensions in the model are {param.shape} and whose "
                                  f"dimensions in the checkpoint are {value.shape}, an "
                                  f"exception occurred : {ex.args}.")
        extra_key = prefix + _EXTRA_STATE_KEY
        if type(self).set_extra_state is not StateDictMixin.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if not key.startswith(prefix) or key == extra_key:
                    continue
                head = key[len(prefix):].split(".", 1)
                if (len(head) > 1 and head[0] not in self._modules) or \
                        (len(head) == 1 and head[0] not in local_state):
                    unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping, strict: bool = True, assign: bool = False):
        """Copy parameters and persistent buffers from ``state_dict`` (as made by
        ``state_dict()``) into this module and its descendants, in place without grad.

        Args:
            state_dict: a mapping from dotted names to tensors.
            strict: require the keys to match exactly.
            assign: put the given tensors in the module instead of copying (parameters
                keep their ``requires_grad``).
        Returns: a named tuple ``(missing_keys, unexpected_keys)``.
        Raises:
            TypeError: ``state_dict`` is not a mapping.
            RuntimeError: "Error(s) in loading state_dict for <Class>:" followed by
                'Missing key(s) in state_dict: "a", "b". ', 'Unexpected key(s) in
                state_dict: ... ' (both only when ``strict``) and one "size mismatch for
                <key>: ..." line per shape mismatch (always).
        Reference: torch.nn.Module.load_state_dict.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list[str] = []
        unexpected_keys: list[str] = []
        error_msgs: list[str] = []
        metadata = {"assign_to_params_buffers": True} if assign else {}
        state_dict = OrderedDict(state_dict)

        def load(module, local_state_dict, prefix=""):
            module._load_from_state_dict(local_state_dict, prefix, dict(metadata), True,
                                         missing_keys, unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state_dict.items()
                                 if k.startswith(child_prefix)}, child_prefix)

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)
