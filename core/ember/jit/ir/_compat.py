"""Old spellings of the IR API, kept working for one release with a DeprecationWarning.

The IR API uses properties for plain attributes and zero-argument yes/no queries
(``v.is_constant``, ``v.node``, ``n.attr_names``) and methods for everything that takes
arguments, iterates, converts or acts (``n.input(i)``, ``g.nodes()``, ``v.to_ivalue()``,
``n.destroy()``). Some queries used to be methods, so ``if v.is_constant:`` was silently
always true. The properties now return values that also accept the old call:

- a yes/no query returns a :class:`Flag`, an ``int`` subclass worth 0 or 1 that prints as
  ``False``/``True``: it is right in ``if``, ``not``, ``and``, ``==``, ``sum`` and as a
  dict key; only identity (``is True``) tells it from a bool. Calling it (the old
  ``v.is_constant()``) warns and returns the plain bool.
- ``Node.attr_names`` returns a :class:`CallableList` (a ``list``); calling it warns and
  returns a copy.
- ``Value.node`` returns the Node; ``Node.__call__`` (the old ``v.node()``) warns and
  returns the node itself.

Every warning starts with ``ember.jit IR:`` so that a test run can turn exactly these into
errors (``-W "error:ember.jit IR:DeprecationWarning"``).
"""
from __future__ import annotations

import warnings

__all__ = ["Flag", "CallableList", "warn_call", "flags"]

PREFIX = "ember.jit IR:"


def warn_call(owner: str, name: str, stacklevel: int = 3) -> None:
    """Warn that ``owner.name()`` is the old spelling of the property ``owner.name``."""
    warnings.warn(f"{PREFIX} {owner}.{name} is a property; write `.{name}`, not "
                  f"`.{name}()` (the call form is deprecated and will be removed)",
                  DeprecationWarning, stacklevel=stacklevel)


class Flag(int):
    """The answer of a yes/no IR query: 0 or 1, printed ``False``/``True``; calling it (the
    deprecated method form) warns and returns the plain bool."""

    def __new__(cls, value: bool, where: tuple):
        self = super().__new__(cls, bool(value))
        self._where = where
        return self

    def __call__(self) -> bool:
        warn_call(*self._where)
        return bool(self)

    def __reduce__(self):  # copies and pickles are plain bools
        return bool, (bool(self),)

    def __repr__(self) -> str:
        return repr(bool(self))

    __str__ = __repr__


def flags(owner: str, name: str) -> tuple:
    """The two answers ``(no, yes)`` of query ``owner.name``, made once so that a property
    returns ``flags[cond]`` without allocating."""
    return Flag(False, (owner, name)), Flag(True, (owner, name))


class CallableList(list):
    """A list property's value; calling it (the deprecated method form) warns and returns a
    plain copy."""

    def __init__(self, items, owner: str, name: str):
        super().__init__(items)
        self._where = (owner, name)

    def __call__(self) -> list:
        warn_call(*self._where)
        return list(self)
