"""The table of symbolic functions: IR node kind -> how to write it in ONNX.

A symbolic function takes a :class:`~ember.onnx.context.GraphContext` ``g`` and the node's
inputs in schema order, and returns the ONNX value (or a tuple/list of them) standing for
the node's outputs::

    @ember.onnx.register_symbolic("ember::relu")
    def relu(g, x):
        return g.op("Relu", x)

Inputs arrive as :class:`~ember.onnx.context.OnnxValue` for tensors, Python values for
constants (``int``, ``float``, ``list``, ``None``, ...) and Python lists for
``prim::ListConstruct`` of tensors. One op may have several symbolics for different
opsets: the one with the highest ``opset`` not above the export's ``opset_version`` runs
(ONNX changed, for example, ``ReduceMean``'s axes from an attribute to an input in 18).

Three sources fill the table, later ones shadowing earlier ones for the same (op, opset):
ember's own symbolics (``ember/onnx/symbolics/``), plugins through the
``ember_onnx_symbolics`` hook (a list of :class:`Symbolic`), and :func:`register_symbolic`
calls. The first two share the hook's table ``SYMBOLICS``
(``ember._base.registry.table``): the plugin manager registers each plugin's items there
by owner, and the composition root registers ember's (:func:`builtin_symbolics`, collected
by the :func:`builtin` decorator) through the same call with the owner ``"ember"``, as a
deferred batch, so that ``import ember`` does not import ``onnx``. A custom
``ember.autograd.Function`` exports through its own ``symbolic(g, *inputs)`` static
method, as in PyTorch.

Reference: ``torch.onnx.register_custom_op_symbolic`` and the opset-versioned symbolic
registry of ``torch/onnx/_internal/registration.py``.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Callable, Optional

from .._base.registry import BUILTIN, ensure_loaded, table
from ..plugins.validation import MIN_OPSET

__all__ = ["Symbolic", "SymbolicHandle", "register_symbolic", "lookup", "registered_ops",
           "MIN_OPSET"]


@dataclass(frozen=True)
class Symbolic:
    """One table entry: node kind ``op`` (``"ember::relu"``; a bare ``"relu"`` means
    ``ember::relu``), the function, the lowest opset it is valid for, and where it came
    from (``"ember"``, ``"plugin:<module>"``, ``"user"``)."""

    op: str
    fn: Callable
    opset: int = MIN_OPSET
    origin: str = "user"

    def __post_init__(self):
        if not isinstance(self.op, str) or not self.op:
            raise TypeError(f"Symbolic.op must be an op name such as 'ember::relu', got "
                            f"{self.op!r}")
        if not callable(self.fn):
            raise TypeError(f"Symbolic.fn for {self.op!r} must be callable, got "
                            f"{type(self.fn).__name__}")
        if not isinstance(self.opset, int) or isinstance(self.opset, bool) or self.opset < 1:
            raise ValueError(f"Symbolic.opset for {self.op!r} must be a positive int, got "
                             f"{self.opset!r}")
        object.__setattr__(self, "op", qualified(self.op))


class SymbolicHandle:
    """Returned by :func:`register_symbolic`; ``remove()`` takes the entry out again."""

    def __init__(self, entry: Symbolic):
        self.entry = entry

    def remove(self) -> None:
        """Remove the entry (a second call does nothing)."""
        with _lock:
            entries = _user.get(self.entry.op, [])
            if self.entry in entries:
                entries.remove(self.entry)

    def __repr__(self) -> str:
        return f"SymbolicHandle({self.entry.op}, opset>={self.entry.opset})"


_lock = threading.Lock()
SYMBOLICS = table("ember_onnx_symbolics")
_collected: list[Symbolic] = []   # what @builtin saw; the composition root registers it
_builtin: dict[str, list[Symbolic]] = {}   # ember's entries by op (from SYMBOLICS)
_user: dict[str, list[Symbolic]] = {}


def qualified(op: str) -> str:
    """``"relu"`` -> ``"ember::relu"``; qualified names pass through."""
    return op if "::" in op else f"ember::{op}"


def builtin(*ops: str, opset: int = MIN_OPSET):
    """Decorator for ember's own symbolics (``ember/onnx/symbolics/``): lists ``fn`` for
    every name in ``ops`` among :func:`builtin_symbolics`."""
    def register(fn):
        _collected.extend(Symbolic(op, fn, opset, "ember") for op in ops)
        return fn
    return register


def builtin_symbolics() -> list[Symbolic]:
    """ember's own symbolics, every module of ``ember/onnx/symbolics/`` imported (the
    deferred batch ``ember._build`` registers in ``SYMBOLICS`` with the owner
    ``"ember"``)."""
    from . import symbolics  # noqa: F401 - importing lists them (@builtin)
    return list(_collected)


def register_symbolic(op: str, fn: Optional[Callable] = None, *, opset: int = MIN_OPSET):
    """Register ``fn(g, *inputs)`` as the ONNX symbolic of node kind ``op`` from ``opset``
    on; shadows ember's and plugins' symbolics for that op. Usable as a decorator::

        @ember.onnx.register_symbolic("ember::cumprod")
        def cumprod(g, x, dim, dtype):
            ...

    Returns a :class:`SymbolicHandle` (``.remove()``), or, as a decorator, ``fn``.
    Raises TypeError/ValueError for a bad name, function or opset.
    Reference: ``torch.onnx.register_custom_op_symbolic``.
    """
    if fn is None:
        def decorate(f):
            register_symbolic(op, f, opset=opset)
            return f
        return decorate
    entry = Symbolic(op, fn, opset, "user")
    with _lock:
        _user.setdefault(entry.op, []).append(entry)
    return SymbolicHandle(entry)


_plugin_cache: tuple = (-1, {})   # (SYMBOLICS.version, op -> plugin entries)


def _plugin_entries() -> dict[str, list[Symbolic]]:
    """The plugins' entries by op (and ember's, into ``_builtin``), rebuilt only when the
    table changes: ``lookup`` runs once per exported node."""
    global _plugin_cache
    ensure_loaded()
    version, by_op = _plugin_cache
    if version == SYMBOLICS.version:
        return by_op
    by_op = {}
    _builtin.clear()
    for owner, item in SYMBOLICS.entries(load=False):   # lists ember's deferred batch
        if owner == BUILTIN:
            _builtin.setdefault(item.op, []).append(item)
            continue
        entry = as_symbolic(item)
        owner = (getattr(entry.fn, "__module__", None) or "?").split(".")[0]
        by_op.setdefault(entry.op, []).append(replace(entry, origin=f"plugin:{owner}"))
    _plugin_cache = (SYMBOLICS.version, by_op)
    return by_op


def as_symbolic(item, origin: str = "plugin") -> Symbolic:
    """A :class:`Symbolic`, or an ``(op, fn)`` / ``(op, fn, opset)`` tuple, as a Symbolic
    (what the ``ember_onnx_symbolics`` hook may return). Raises TypeError otherwise."""
    if isinstance(item, Symbolic):
        return replace(item, origin=origin)
    if isinstance(item, tuple) and len(item) in (2, 3):
        return Symbolic(*item, origin=origin) if len(item) == 3 else \
            Symbolic(item[0], item[1], MIN_OPSET, origin)
    raise TypeError(f"ember_onnx_symbolics must return ember.onnx.Symbolic objects or "
                    f"(op, fn[, opset]) tuples, got {item!r}")


def _load_builtins() -> None:
    _plugin_entries()   # fills _builtin from the table


def lookup(op: str, opset: int) -> Optional[Symbolic]:
    """The symbolic that exports ``op`` at ``opset``: user entries first, then plugins',
    then ember's; within one source the highest ``opset`` not above the asked one. None if
    there is none."""
    _load_builtins()
    op = qualified(op)
    with _lock:
        user = list(_user.get(op, ()))
    for entries in (user, _plugin_entries().get(op, ()), _builtin.get(op, ())):
        fits = [e for e in entries if e.opset <= opset]
        if fits:
            # the highest opset wins; among equals the latest registered
            return max(reversed(fits), key=lambda e: e.opset)
    return None


def registered_ops(opset: Optional[int] = None) -> dict[str, str]:
    """Every op with a symbolic (at ``opset``, or any), mapped to the origin of the one
    that would run."""
    _load_builtins()
    names = set(_builtin) | set(_plugin_entries())
    with _lock:
        names |= {k for k, v in _user.items() if v}
    out = {}
    for op in sorted(names):
        entry = lookup(op, opset if opset is not None else 10 ** 6)
        if entry is not None:
            out[op] = entry.origin
    return out
