"""Which input sizes a trace holds for: guards, pinned dims, and the check of a new size.

A trace keeps its sizes symbolic where it can (``symbolic_sizes.py``), so one graph serves
many sizes. What it could not keep symbolic it must not use silently at another size:

- **Guards**: a comparison on a size (``if x.size(0) > 1``) recorded as an expression over
  ``S``, the call's input shapes (``(S[0][0] > 1)`` was True). Every call checks them.
- **Pinned dims**: input dims the trace is known to depend on in a way it cannot express;
  a call must match the traced size there.
- **Unexpressible guards**: a comparison on a size read from an intermediate tensor
  (``pinned_at``) has no expression over ``S``; such a trace proves no dim once and for
  all, but checks every distinct input-shape tuple by a second trace (``verified``).
- **Unproven dims**: an input dim the trace has run at only one size. Python gives no hook
  when a size leaves the trace as a plain int (``range(x.size(0))``, ``len(x)``, a size into
  numpy), so the first call at a new size of an unproven dim is served by tracing the
  function again (an eager run, so its result is right by construction) and comparing the
  two graphs' :func:`fingerprint`. Equal: the dims that changed are proven symbolic, and
  later calls run the plan. Different: the trace depends on them, and both traces pin
  them at their own sizes (the traced function keeps one :class:`Variant` per trace).

Reference: dynamo's guards and "automatic dynamic shapes" (a dim is made dynamic once it
is seen to change), ``torch/_dynamo/guards.py``.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

__all__ = ["Variant", "fingerprint", "input_shapes"]


def input_shapes(flat) -> tuple:
    """``S``: each flat input's shape (a tuple), or None for a non-tensor input."""
    try:  # NOTE: on every call of a traced function: the all-tensor case first
        return tuple([x._data.shape for x in flat])
    except AttributeError:
        return tuple(getattr(getattr(x, "_data", None), "shape", None) for x in flat)


def _const_key(v):
    """A comparable key of a constant, precise where ``repr`` is not (tensors, slices)."""
    from ...tensor import Tensor
    if isinstance(v, Tensor):
        a = v.numpy(force=True)
        return ("T", a.shape, str(a.dtype), a.tobytes())
    if isinstance(v, np.ndarray):
        return ("A", v.shape, str(v.dtype), v.tobytes())
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, tuple(_const_key(i) for i in v))
    if isinstance(v, slice):
        return ("slice", _const_key(v.start), _const_key(v.stop), _const_key(v.step))
    if isinstance(v, float) and math.isnan(v):
        return ("nan",)
    return (type(v).__name__, repr(v))


def fingerprint(graph) -> tuple:
    """The structure of ``graph`` without its tensor sizes: per node its kind, attributes
    (constants compared by value) and which earlier values it reads. Two traces of one
    function at different sizes have equal fingerprints exactly when nothing the trace
    baked in depends on the sizes that changed."""
    ids: dict = {v: ("in", i) for i, v in enumerate(graph.inputs)}
    out = []
    for k, n in enumerate(graph.all_nodes()):
        for j, o in enumerate(n.outputs):
            ids[o] = (k, j)
        attrs = tuple((a, _const_key(n.attr(a))) for a in n.attr_names
                      if a != "Subgraph")
        out.append((n.kind, attrs, tuple(ids.get(v, "?") for v in n.inputs),
                    len(n.outputs)))
    out.append(("return", tuple(ids.get(v, "?") for v in graph.outputs)))
    return tuple(out)


_GUARD_NS = {"_floor": math.floor, "_ceil": math.ceil, "int": int, "__builtins__": {}}


class Variant:
    """One trace of the function and the sizes it holds for.

    Attributes:
        graph, executor: the trace and its GraphExecutor.
        shapes: ``S`` of the inputs it was traced with.
        guards: its ``symbolic_sizes.Guard`` s; ``pinned_at``: the user line of a guard on
            an intermediate's size (every new input-shape tuple is then checked), or None.
        pins: ``{(input, dim)}`` that must equal ``shapes``; ``proven``: dims seen to change
            with an equal graph (never re-checked); ``verified``: input-shape tuples checked
            (with ``pinned_at``).
        fingerprint: :func:`fingerprint` of ``graph``.
    """

    def __init__(self, graph, executor, shapes: tuple, guards, pinned_at: Optional[str]):
        self.graph, self.executor, self.shapes = graph, executor, shapes
        self.guards = list(guards)
        self.pinned_at = pinned_at
        self.pins: set = set()
        self.proven: set = set()
        self.verified: set = set()  # with pinned_at: input shapes checked one by one
        self.fingerprint = fingerprint(graph)
        src = " and ".join(f"({g.expr}) == {g.expected!r}" for g in self.guards) or "True"
        self._check = eval(f"lambda S: {src}", dict(_GUARD_NS))  # noqa: S307 - our own text

    def guards_hold(self, S: tuple) -> bool:
        """Whether every guard holds for input shapes ``S`` (False on a rank change)."""
        try:
            return bool(self._check(S))
        except (IndexError, TypeError, ZeroDivisionError):
            return False

    def changed_dims(self, S: tuple) -> Optional[list]:
        """The (input, dim) whose size differs from the trace's; None when a rank or a
        tensor/non-tensor input differs (no comparison by dims is possible)."""
        out = []
        for i, (a, b) in enumerate(zip(S, self.shapes)):
            if a == b:
                continue
            if a is None or b is None or len(a) != len(b):
                return None
            out += [(i, d) for d, (p, q) in enumerate(zip(a, b)) if p != q]
        return out

    def first_failed_guard(self, S: tuple):
        """The first guard that fails for ``S`` (or None)."""
        for g in self.guards:
            try:
                ok = eval(f"({g.expr}) == {g.expected!r}", dict(_GUARD_NS), {"S": S})  # noqa: S307
            except (IndexError, TypeError, ZeroDivisionError):
                ok = False
            if not ok:
                return g
        return None
