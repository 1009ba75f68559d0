"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict`` (``torch.nn`` containers).

Their children are registered under the names ``"0"``, ``"1"``, ... (or the dict keys), so
state-dict keys read ``"0.weight"``. Deleting from a Sequential or ModuleList renumbers the
rest, as PyTorch does; a slice returns a new container holding the same modules.
"""
from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from .module import Module, _addindent

__all__ = ["Sequential", "ModuleList", "ModuleDict"]


def _abs_index(idx, n: int, cls: str) -> int:
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range for {cls} of length {n}")
    return idx % n


class _ListLike(Module):
    """Shared by Sequential and ModuleList: integer-keyed children kept in order."""

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self._from_items(list(self._modules.items())[idx])
        return list(self._modules.values())[_abs_index(idx, len(self), self._get_name())]

    def __setitem__(self, idx, module: Module) -> None:
        setattr(self, list(self._modules)[_abs_index(idx, len(self), self._get_name())], module)

    def __delitem__(self, idx) -> None:
        keys = list(self._modules)
        for k in (keys[idx] if isinstance(idx, slice)
                  else [keys[_abs_index(idx, len(self), self._get_name())]]):
            del self._modules[k]
        # NOTE: renumber so that names stay 0..n-1 (PyTorch does the same).
        self._modules = OrderedDict((str(i), m) for i, m in enumerate(self._modules.values()))

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, module: Module):
        """Add ``module`` at the end; returns ``self``."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]):
        """Append each module of ``modules``; returns ``self``."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before position ``index``."""
        if not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        mods = list(self._modules.values())
        mods.insert(index, module)  # list.insert clamps like PyTorch's ModuleList.insert
        self._modules = OrderedDict((str(i), m) for i, m in enumerate(mods))

    def pop(self, idx: int = -1) -> Module:
        """Remove and return the module at ``idx``."""
        m = self[idx]
        del self[idx]
        return m


class Sequential(_ListLike):
    """Chain modules: ``forward(x)`` feeds ``x`` through each in order.

    ``Sequential(m0, m1, ...)`` names children ``"0"``, ``"1"``, ...;
    ``Sequential(OrderedDict([("conv", m0), ...]))`` uses the given names. Supports
    ``len``, iteration, indexing (an int gives the module, a slice a new Sequential),
    item assignment and deletion, ``append``/``extend``/``insert``/``pop`` and ``+``.
    Raises TypeError for a non-Module, IndexError for an index out of range.
    Reference: torch.nn.Sequential.
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    @classmethod
    def _from_items(cls, items):
        return cls(OrderedDict(items))  # a slice keeps the children's names

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but "
                             f"{type(other).__name__} is given.")
        return Sequential(*self, *other)

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(_ListLike):
    """Hold submodules in a list, registered so their parameters are found; it has no
    ``forward``.

    Supports ``len``, iteration, indexing and slicing (a new ModuleList), item assignment
    and deletion, ``append``/``extend``/``insert``/``pop``, ``+`` and ``+=``.
    Its repr folds runs of identical children: ``(0-2): 3 x Linear(...)``.
    Raises TypeError for a non-Module, IndexError for an index out of range.
    Reference: torch.nn.ModuleList.
    """

    def __init__(self, modules: Iterable[Module] | None = None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    @classmethod
    def _from_items(cls, items):
        return cls(m for _, m in items)

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return ModuleList([*self, *other])

    def __repr__(self) -> str:
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        runs: list[list] = []  # [start, end, text]
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = [_addindent(f"({s}): {r}" if s == e else f"({s}-{e}): {e - s + 1} x {r}", 2)
                 for s, e, r in runs]
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """Hold submodules in an ordered dict, registered under their keys; no ``forward``.

    Supports ``d[key]``, assignment, ``del``, ``in``, ``len``, iteration over keys,
    ``keys``/``values``/``items``/``update``/``pop``/``clear``.
    Raises KeyError for a missing key or an invalid name (empty, containing ".").
    Reference: torch.nn.ModuleDict.
    """

    def __init__(self, modules: Mapping[str, Module] | None = None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key) -> bool:
        return key in self._modules

    def keys(self):
        """The keys, in insertion order."""
        return self._modules.keys()

    def values(self):
        """The modules, in insertion order."""
        return self._modules.values()

    def items(self):
        """``(key, module)`` pairs, in insertion order."""
        return self._modules.items()

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove and return the module under ``key`` (KeyError if absent)."""
        return self._modules.pop(key)

    def update(self, modules) -> None:
        """Add or replace entries from a mapping or an iterable of ``(key, module)``."""
        if isinstance(modules, Mapping):
            modules = modules.items()
        for j, item in enumerate(modules):
            if len(item) != 2:
                raise ValueError(f"ModuleDict update sequence element #{j} has length "
                                 f"{len(item)}; 2 is required")
            self[item[0]] = item[1]
