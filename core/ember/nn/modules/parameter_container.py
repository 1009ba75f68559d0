"""Parameter containers: ``ParameterList`` and ``ParameterDict`` (``torch.nn`` containers).

Each entry is a registered attribute of the container, named ``"0"``, ``"1"``, ... or by
its dict key, so ``parameters()``, ``named_parameters()`` and ``state_dict()`` find them
("params.0", "params.weight"). A plain Tensor is wrapped into a ``Parameter`` on the way
in; other objects are kept as plain attributes, as PyTorch does. Neither container has a
``forward``: calling one raises RuntimeError.
"""
from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from ...tensor import Tensor
from ..parameter import Parameter
from .module import Module

__all__ = ["ParameterList", "ParameterDict"]


def _as_parameter(value):
    return Parameter(value) if isinstance(value, Tensor) and not isinstance(value, Parameter) \
        else value


def _describe(value) -> str:
    """How an entry prints: "Parameter containing: [ember.float32 of size 2x3]"."""
    if not isinstance(value, Tensor):
        return f"Object of type: {type(value).__name__}"
    kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
    size = "x".join(str(n) for n in value.shape)
    device = "" if value.device.type == "cpu" else f" ({value.device})"
    return f"{kind} containing: [{value.dtype} of size {size}{device}]"


class ParameterList(Module):
    """Hold parameters in a list, registered under ``"0"``, ``"1"``, ...

    Args:
        values: an iterable of Tensors (wrapped as Parameters), Parameters or other objects.
    Supports ``len``, iteration, indexing (an int gives the entry, a slice a new
    ParameterList), item assignment, ``append``, ``extend`` and ``+=``.
    Raises IndexError for an index out of range, TypeError for ``extend`` with a
    non-iterable or a Tensor, RuntimeError when called. Reference: torch.nn.ParameterList.
    """

    def __init__(self, values: Iterable | None = None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _abs_index(self, idx) -> int:
        idx = operator.index(idx)
        if not -len(self) <= idx < len(self):
            raise IndexError(f"index {idx} is out of range for ParameterList of length "
                             f"{len(self)}")
        return idx % len(self)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(self[i] for i in range(*idx.indices(len(self))))
        return getattr(self, str(self._abs_index(idx)))

    def __setitem__(self, idx, value) -> None:
        setattr(self, str(self._abs_index(idx)), _as_parameter(value))

    def __len__(self) -> int:
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, values: Iterable) -> ParameterList:
        return self.extend(values)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value) -> ParameterList:
        """Add ``value`` at the end (a Tensor becomes a Parameter); returns ``self``."""
        setattr(self, str(self._size), _as_parameter(value))
        self._size += 1  # after setattr, so a refused value leaves the list as it was
        return self

    def extend(self, values: Iterable) -> ParameterList:
        """Append each entry of ``values``; returns ``self``."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(f"ParameterList.extend should be called with an iterable, but "
                            f"got {type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(f"  ({i}): {_describe(p)}" for i, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """Hold parameters in an ordered dict, registered under their (string) keys.

    Args:
        parameters: a mapping or an iterable of ``(key, value)`` pairs; a plain dict is
            added in sorted key order, an OrderedDict or ParameterDict in its own order
            (PyTorch's rule). Tensors are wrapped as Parameters.
    Supports ``d[key]``, assignment, ``del``, ``in``, ``len``, iteration over keys,
    ``keys``/``values``/``items``/``get``/``setdefault``/``pop``/``popitem``/``clear``/
    ``update``/``copy``/``fromkeys`` and ``|``, ``|=``.
    Raises TypeError for a non-string key, KeyError for a missing key or an invalid name
    (empty, containing ".", or an attribute of the class), RuntimeError when called.
    Reference: torch.nn.ParameterDict.
    """

    def __init__(self, parameters=None):
        super().__init__()
        self._keys: dict = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _check_key(key) -> str:
        if not isinstance(key, str):
            raise TypeError(f"Index given to ParameterDict cannot be used as a key as it is "
                            f"not a string (type is '{type(key).__name__}'); use str keys")
        return key

    def __getitem__(self, key: str):
        if self._check_key(key) not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __setitem__(self, key: str, value) -> None:
        setattr(self, self._check_key(key), _as_parameter(value))
        self._keys[key] = None  # after setattr, so a refused key leaves the dict as it was

    def __delitem__(self, key: str) -> None:
        if self._check_key(key) not in self._keys:
            raise KeyError(key)
        delattr(self, key)
        del self._keys[key]

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(list(self._keys))

    def __contains__(self, key) -> bool:
        return key in self._keys

    def keys(self):
        """The keys, in insertion order."""
        return self._keys.keys()

    def values(self):
        """The entries, in insertion order."""
        return (self[k] for k in self._keys)

    def items(self):
        """``(key, entry)`` pairs, in insertion order."""
        return ((k, self[k]) for k in self._keys)

    def get(self, key: str, default=None):
        """The entry under ``key``, or ``default``."""
        return self[key] if key in self else default

    def setdefault(self, key: str, default=None):
        """The entry under ``key``, first set to ``default`` if absent."""
        if key not in self:
            self[key] = default
        return self[key]

    def pop(self, key: str):
        """Remove and return the entry under ``key`` (KeyError if absent)."""
        value = self[key]
        del self[key]
        return value

    def popitem(self):
        """Remove and return the last ``(key, entry)`` pair (KeyError if empty)."""
        if not self._keys:
            raise KeyError("popitem(): ParameterDict is empty")
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def clear(self) -> None:
        """Remove every entry."""
        for key in list(self._keys):
            del self[key]

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same entries (not copies of them)."""
        return ParameterDict(OrderedDict(self.items()))

    def fromkeys(self, keys: Iterable, default=None) -> ParameterDict:
        """A new ParameterDict with each of ``keys`` set to ``default``."""
        return ParameterDict((k, default) for k in keys)

    def update(self, parameters) -> None:
        """Add or replace entries from a mapping or an iterable of ``(key, value)`` pairs.

        Raises TypeError for a non-iterable or a non-pair element, ValueError for an
        element that is not of length 2."""
        if not isinstance(parameters, Iterable):
            raise TypeError(f"ParameterDict.update should be called with an iterable of "
                            f"key/value pairs, but got {type(parameters).__name__}")
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            pairs = list(parameters.items())
        elif isinstance(parameters, Mapping):
            pairs = sorted(parameters.items())
        else:
            pairs = []
            for j, p in enumerate(parameters):
                if not isinstance(p, Iterable):
                    raise TypeError(f"ParameterDict update sequence element #{j} should be "
                                    f"Iterable; is {type(p).__name__}")
                p = tuple(p)
                if len(p) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{j} has length "
                                     f"{len(p)}; 2 is required")
                pairs.append(p)
        for key, value in pairs:
            self[key] = value

    def __or__(self, other) -> ParameterDict:
        out = self.copy()
        out.update(other)
        return out

    def __ror__(self, other) -> ParameterDict:
        out = ParameterDict(other)
        out.update(self)
        return out

    def __ior__(self, other) -> ParameterDict:
        self.update(other)
        return self

    def extra_repr(self) -> str:
        return "\n".join(f"  ({k}): {_describe(p)}" for k, p in self.items())

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterDict should not be called.")
