"""Memory planning of an array-mode ExecutionPlan: intermediates written into reused buffers.

In array mode (``plan_array_mode.py``) a float32/float64 op that is one numpy ufunc is
called directly, and each call allocates its result. A liveness pass over the graph gives
each intermediate that only ufunc lines read a buffer *slot*; a slot is freed when its
value's last use has run and taken by a later value of the same dtype and shape class, so
a warm plan at fixed sizes allocates nothing for them. For ``(x * y + 1).sin()`` (the
plan.py example), before::

    v2 = _np_multiply_1(x_a, y_a)  # ember::mul
    v4 = _np_add_2(v2, 1)  # ember::add
    v5 = _np_sin_3(v4)  # ember::sin

after (``v2`` and ``v4`` share slot 0; ``v5``, the output, is never planned)::

    _slots = _arena_take() if x._data.size >= 4096 or y._data.size >= 4096 else None
    x_a = x._data
    y_a = y._data
    if _slots is None:
        v2 = _np_multiply_1(x_a, y_a)  # ember::mul
    elif (_buf := _slots[0]) is not None and (_buf.shape == x_a.shape == y_a.shape or
                                              _buf.shape == _broadcast_shape(x_a.shape,
                                                                             y_a.shape)):
        v2 = _np_multiply_1(x_a, y_a, out=_buf)  # into slot 0
    else:
        v2 = _slots[0] = _arena_miss(_np_multiply_1(x_a, y_a))
    if _slots is None:
        v4 = _np_add_2(v2, 1)  # ember::add
    elif (_buf := _slots[0]) is not None and _buf.shape == v2.shape:
        v4 = _np_add_2(v2, 1, out=_buf)  # into slot 0
    else:
        v4 = _slots[0] = _arena_miss(_np_add_2(v2, 1))
    v5 = _np_sin_3(v4)  # ember::sin
    v5_t = _wrap(v5, B_cpu)
    if _slots is not None:
        _arena_give(_slots)
    return (v5_t,)

Design:

- *Who is planned.* Only values of the graph's top-level block, made by a ufunc line,
  that are not graph outputs and whose every use is a ufunc line (at any depth; a use in a
  nested block of a ``prim::If``/``prim::Loop`` counts at the owning node). A value read by
  anything else (a view op, a ``ListConstruct``, an ``If``/``Loop`` input or block output,
  a tensor-mode node, which gets it wrapped as a Tensor and may keep it or write into it)
  is never planned. So a slot's buffer is only ever referenced by the arena and by
  values that ufunc lines read, which return fresh arrays: no view, output, in-place op or
  kept Tensor can see it, and outputs are never arena buffers.
- *Shapes are known at run time only* (one plan serves several batch sizes): a slot keeps
  the last buffer written into it; a planned line writes into it only if its shape is the
  result's (operands of equal shape, or ``broadcast_shape`` of them: a cached
  ``np.broadcast_shapes``), else it allocates and keeps the fresh result for next time
  (a *miss*, counted by the Arena). The dtype needs no check: a ufunc line's operands all
  have the line's dtype (``plan_array_mode``), and slots are shared by one dtype only.
  Values share a slot only within one *shape class* (the set of non-ufunc values whose
  broadcast gives a value's shape: equal sets, equal shapes in every call), so slots do not
  trade buffers of different shapes back and forth. Where an operand has the result's
  class, the check is ``_buf.shape == operand.shape``, with no broadcast to compute.
- *Out equal to an operand.* A slot freed at a node is taken by that node's own output
  (``v4 = add(v2, 1, out=v2's buffer)``). That is exact overlap, which numpy ufuncs handle
  elementwise (numpy >= 1.13 makes overlapping ufunc operands safe), and it happens only
  when the buffer has the result's shape, so that operand has the result's shape too.
- *When it pays.* At 10 elements numpy's small-block cache makes an allocation as cheap as
  passing ``out=`` (about 0.43 us a ufunc call either way), while the slot bookkeeping costs
  about 0.1 us a line; at 8192 float32 elements the traced 10-op chain of
  ``benchmarks/bench_jit.py`` runs about 25 % faster with its slots, at 256 x 256 12 %, at
  1024 x 1024 40 % (large fresh arrays cost page faults). So planning turns on per call,
  not per line: the first line takes a slot list only when a graph input that feeds a
  planned value has at least ``min_elements`` (``DEFAULT_MIN_ELEMENTS``) elements, where
  the two costs meet for float32; below that each planned line pays one ``if _slots is
  None`` test (about 0.15 us a call, 1 %, for that 10-op chain at 10 elements).
  Elementwise intermediates are no larger than the broadcast of their inputs, so the
  inputs' sizes are the right signal; an intermediate much larger than every input (an
  outer-product broadcast) is then not planned at small inputs, which only costs what the
  plan cost before. A graph whose planned values come from no tensor input is not
  planned. Nodes a fuser grouped into a ``prim::FusionGroup`` are not ufunc lines: the
  group manages its own memory.
- *Threads and re-entrancy.* A call takes a slot list from the arena's pool (or a new one)
  and gives it back before returning, so concurrent calls (the executor is shared) and a
  call re-entered from a runtime op never share buffers; a call that raises drops its list.
  The pool holds at most as many lists as calls ever ran at once; ``Arena.clear`` frees them.

Reference: PyTorch static runtime's ``MemoryPlanner``
(``torch/csrc/jit/runtime/static/memory_planner.cpp``: managed tensors, liveness ranges,
storage reuse); TVM's ``StorageRewrite`` pass.
"""
from __future__ import annotations

import threading
from functools import lru_cache
from typing import Callable, NamedTuple, Optional

import numpy as np

from ..ir.ir_types import TensorType

__all__ = ["DEFAULT_MIN_ELEMENTS", "EMPTY", "Lifetime", "MemoryPlan", "Arena", "plan_memory",
           "shape_class", "broadcast_shape", "prologue", "epilogue", "emit_planned_call"]

#: Below this many elements in every gating input, a call does not use its slots.
DEFAULT_MIN_ELEMENTS = 4096

#: ``np.broadcast_shapes`` (about 2.5 us) memoized (about 0.3 us): the result shape of a
#: binary ufunc of the given operand shapes. Raises ValueError when they do not broadcast.
broadcast_shape = lru_cache(maxsize=256)(np.broadcast_shapes)


class Lifetime(NamedTuple):
    """Where a planned value lives: indices in the top-level block of the node that
    defines it and of the last node that reads it (itself or a node holding the reader)."""
    defined: int
    last_use: int


class MemoryPlan(NamedTuple):
    """The result of :func:`plan_memory`.

    Attributes:
        slots: planned Value -> slot index (``0 .. n_slots - 1``).
        lifetimes: planned Value -> :class:`Lifetime`.
        classes: Value made by a ufunc line -> its :func:`shape_class`.
        n_slots: how many buffers one call needs at most.
        gate: the graph inputs whose sizes turn planning on for a call.
        min_elements: the size threshold of ``gate``.
    """
    slots: dict
    lifetimes: dict
    classes: dict
    n_slots: int
    gate: tuple
    min_elements: int


#: The plan of a graph with nothing to plan (and of every tensor-mode plan).
EMPTY = MemoryPlan({}, {}, {}, 0, (), DEFAULT_MIN_ELEMENTS)


def plan_memory(graph, out_dtype: Callable, min_elements: int = DEFAULT_MIN_ELEMENTS
                ) -> MemoryPlan:
    """Assign buffer slots to the intermediates of array-mode ``graph`` (see the module doc).

    Args:
        graph: the graph an array-mode ExecutionPlan writes out.
        out_dtype: ``node -> ScalarType or None``: the result dtype of a node written as one
            ufunc call that accepts ``out=`` (``plan_array_mode.out_capable``), else None.
        min_elements: the gate's size threshold (0: plan at every size).
    Returns a :class:`MemoryPlan` (empty when nothing can be planned). Raises nothing of
    its own; ``out_dtype``'s errors propagate.
    """
    top = list(graph.block.nodes())
    index = {n: i for i, n in enumerate(top)}
    memo: dict = {}

    def dtype_of(n):
        if n not in memo:
            memo[n] = out_dtype(n) if not n.blocks else None
        return memo[n]

    def top_index(n) -> Optional[int]:
        while n.owning_block is not graph.block:
            owner = n.owning_block.owning_node if n.owning_block is not None else None
            if owner is None:
                return None
            n = owner
        return index.get(n)

    outputs = set(graph.outputs)
    lifetimes, classes, dtypes = {}, {}, {}
    for i, n in enumerate(top):
        if len(n.outputs) != 1 or dtype_of(n) is None:
            continue
        v = n.output()
        classes[v] = frozenset().union(*(shape_class(classes, a) for a in n.inputs
                                         if isinstance(a.type, TensorType)))
        if v in outputs:
            continue
        last = i
        for use in v.uses:
            j = top_index(use.user)
            if j is None or dtype_of(use.user) is None:
                break  # read by something that may keep, view or write it
            last = max(last, j)
        else:
            lifetimes[v] = Lifetime(i, last)
            dtypes[v] = dtype_of(n)
    gate = _gate(graph, lifetimes)
    if not gate:  # nothing cheap tells the sizes of a call (see the module doc)
        return EMPTY._replace(min_elements=min_elements)
    slots, free, n_slots = {}, {}, 0
    dying: dict = {}
    for v, life in lifetimes.items():
        dying.setdefault(life.last_use, []).append(v)
    for i, n in enumerate(top):
        # NOTE: free before taking, so a node may write into a dying operand's buffer
        for v in dying.get(i, ()):
            if lifetimes[v].defined < i:
                free.setdefault((dtypes[v], classes[v]), []).append(slots[v])
        v = n.outputs[0] if len(n.outputs) == 1 else None
        if v in lifetimes:
            pool = free.get((dtypes[v], classes[v]))
            if pool:
                slots[v] = pool.pop()
            else:
                slots[v], n_slots = n_slots, n_slots + 1
            if lifetimes[v].last_use == i:  # never read: free at once
                free.setdefault((dtypes[v], classes[v]), []).append(slots[v])
    return MemoryPlan(slots, lifetimes, classes, n_slots, gate, min_elements)


def shape_class(classes: dict, v) -> frozenset:
    """The shape class of ``v``: the values not made by ufunc lines (*leaves*) whose
    broadcast gives its shape. Broadcasting is associative, commutative and idempotent,
    so equal classes mean equal shapes in every call."""
    c = classes.get(v)
    return c if c is not None else frozenset((v,))


def _gate(graph, planned) -> tuple:
    """The tensor graph inputs that planned values are computed from."""
    seen, stack, found = set(), list(planned), set()
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        n = v.node
        if n is graph.block.param_node:
            found.add(v)
            continue
        todo = [n]
        while todo:  # a node with blocks reads what its nested nodes read too
            m = todo.pop()
            stack.extend(m.inputs)
            for b in m.blocks:
                todo.extend(b.nodes())
                stack.extend(b.outputs)
    return tuple(v for v in graph.inputs if v in found and isinstance(v.type, TensorType))


class Arena:
    """The buffers of one plan's slots: a pool of slot lists, one list per running call.

    Args:
        n_slots: the plan's ``MemoryPlan.n_slots``.
    Generated code calls ``take()`` (a list of ``n_slots`` buffers or Nones that this call
    alone owns), ``give(slots)`` before returning, and ``miss(array)`` when a planned line
    allocated (returns ``array``). ``misses`` counts those allocations (exact across threads).
    """

    def __init__(self, n_slots: int):
        self.n_slots = n_slots
        self.misses = 0
        self._pool: list = []
        self._lock = threading.Lock()
        self.give = self._pool.append  # NOTE: list.append/pop are atomic: no lock needed

    def take(self) -> list:
        """A slot list no other call holds (a warm one from the pool when there is one)."""
        try:
            return self._pool.pop()
        except IndexError:
            return [None] * self.n_slots

    def miss(self, array):
        """Count one allocation of a planned value; returns ``array``."""
        with self._lock:
            self.misses += 1
        return array

    def clear(self) -> None:
        """Drop the buffers of the calls not running now (the next calls allocate again)."""
        self._pool.clear()

    def runtime_globals(self) -> dict:
        """The names generated code uses (see the module doc's example)."""
        return {"_arena_take": self.take, "_arena_give": self.give,
                "_arena_miss": self.miss, "_broadcast_shape": broadcast_shape}


def prologue(plan: MemoryPlan, names: dict, indent: str) -> list:
    """The line that takes a slot list, or None below the size threshold (``names``:
    graph input Value -> its parameter name). Empty when nothing is planned."""
    if not plan.slots:
        return []
    if plan.min_elements <= 0:
        return [f"{indent}_slots = _arena_take()"]
    big = " or ".join(f"{names[v]}._data.size >= {plan.min_elements}" for v in plan.gate)
    return [f"{indent}_slots = _arena_take() if {big} else None"]


def epilogue(plan: MemoryPlan, indent: str) -> list:
    """The lines that give the slot list back (before the plan returns)."""
    if not plan.slots:
        return []
    return [f"{indent}if _slots is not None:", f"{indent}    _arena_give(_slots)"]


def emit_planned_call(lines: list, indent: str, plan: MemoryPlan, value, out: str, fn: str,
                      args: list, arrays: list, comment: str) -> list:
    """Append the lines of planned ufunc call ``out = fn(*args)`` (see the module doc) to
    ``lines``; returns the indices of the lines that call it or check its operands.

    ``value``: the planned Value ``out`` names; ``arrays``: ``(name, Value)`` of each array
    operand among ``args`` (the others are numbers: they do not change the result's shape).
    """
    slot, result = plan.slots[value], plan.classes[value]
    same = [name for name, v in arrays if shape_class(plan.classes, v) == result]
    names = list(dict.fromkeys(name for name, _ in arrays))
    if same:  # that operand's shape is the result's
        fits = f"_buf.shape == {same[0]}.shape"
    else:
        fits = (f"(_buf.shape == {' == '.join(a + '.shape' for a in names)} or "
                f"_buf.shape == _broadcast_shape({', '.join(a + '.shape' for a in names)}))")
    call = f"{fn}({', '.join(args)}"
    start = len(lines)
    lines += [f"{indent}if _slots is None:",
              f"{indent}    {out} = {call})  # {comment}",
              f"{indent}elif (_buf := _slots[{slot}]) is not None and {fits}:",
              f"{indent}    {out} = {call}, out=_buf)  # into slot {slot}",
              f"{indent}else:",
              f"{indent}    {out} = _slots[{slot}] = _arena_miss({call}))"]
    return [start + 1, start + 2, start + 3, start + 5]
