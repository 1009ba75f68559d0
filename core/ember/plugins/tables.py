"""The tables the plugin manager registers into, one per hook, and ``registered``, the
view of what plugins put there.

The composition root hands the manager each registry's table (``set_tables``); the
manager's commit calls their ``register(items, owner)`` (``ember/_base/registry.py``).
"""
from __future__ import annotations

from collections.abc import MutableMapping

from .._base.registry import table

HOOKS = ("ember_backends", "ember_convolution_algorithms", "ember_fusers", "ember_jit_passes",
         "ember_onnx_symbolics", "ember_process_group_backends")
_tables: dict = {}  # hook -> its registry's table (set_tables), else _base.registry.table


def set_tables(tables: dict) -> None:
    """Use ``tables`` (hook -> ``Registry``, one per name in ``HOOKS``) as the registries
    the commit registers into; called once by ``ember._build``. Raises ValueError naming
    the hooks missing from ``tables``."""
    missing = [h for h in HOOKS if h not in tables]
    if missing:
        raise ValueError(f"set_tables: expected a table for every hook, missing "
                         f"{', '.join(missing)}")
    _tables.update(tables)


def table_of(hook: str):
    """The table of ``hook``: the one ``set_tables`` gave, else ``_base.registry.table``."""
    return _tables.get(hook) or table(hook)


class _Registered(MutableMapping):
    """``registered[hook]``: what loaded plugins registered, read from each hook's table
    (ember's own items left out), as a fresh list. Assigning one replaces the plugins'
    items of that table (tests), and assigning back a list read here restores them."""

    def __getitem__(self, hook: str) -> list:
        if hook not in HOOKS:
            raise KeyError(hook)
        return table_of(hook).plugin_batches()

    def __setitem__(self, hook: str, items) -> None:
        if hook not in HOOKS:
            raise KeyError(f"no hook {hook!r}; the hooks are {', '.join(HOOKS)}")
        table_of(hook).replace_plugin_items(items)

    def __delitem__(self, hook: str) -> None:
        raise TypeError("registered: a hook's entry cannot be deleted; assign [] instead")

    def __iter__(self):
        return iter(HOOKS)

    def __len__(self) -> int:
        return len(HOOKS)


registered = _Registered()
