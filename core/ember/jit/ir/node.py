"""Nodes: the operations of a graph. Import them from ``ember.jit.ir``.

Each node sits in the intrusive linked list of one block (see :mod:`ember.jit.ir.block`) and
holds a *topological position* number that increases along the list; a new node gets a
number between its neighbours' and the block is renumbered only when no number is left in
the gap, so inserting is O(1) and ``is_before`` is O(1) amortized.

Reference: PyTorch's ``torch/csrc/jit/ir/ir.h`` / ``ir.cpp`` (Node and its topological
positions), and torch.fx's ``Node`` docstring for the explanations.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Optional

from ember.jit.ir._compat import CallableList, flags, warn_call
from ember.jit.ir.attributes import check_attr_value
from ember.jit.ir.ir_types import JitType, TensorType
from ember.jit.ir.kinds import has_side_effects
from ember.jit.ir.value import Use, Value, _users

if TYPE_CHECKING:
    from ember.jit.ir.block import Block

__all__ = ["Node"]

# Topological positions: sentinels sit at the bounds, appended nodes one interval apart.
_LOWER, _UPPER, _INTERVAL = -(2 ** 62), 2 ** 62, 2 ** 20
_KIND_RE = re.compile(r"^[A-Za-z_]\w*::[A-Za-z_][\w.]*$")
_ATTR_RE = re.compile(r"^[A-Za-z_]\w*$")
_MISSING = object()
_HAS_SIDE_EFFECTS = flags("Node", "has_side_effects")


class Node:
    """One operation of a graph: ``%out : T = kind[attrs](%in, ...)`` plus nested blocks.

    ``kind`` is a qualified symbol, ``namespace::name``. The kinds and what they mean:

    - ``ember::<op>`` (``ember::add``, ``ember::mm``): a call of the ember op of that name;
      ``inputs`` are its arguments in schema order (scalars and lists come from
      ``prim::Constant`` or ``prim::ListConstruct`` nodes), ``outputs`` its results.
    - ``prim::Constant``: no inputs, one output; attribute ``value`` holds the Python value
      (int, float, bool, None, str, dtype, Device, a small Tensor, or a list/tuple of them).
    - ``prim::ListConstruct`` / ``prim::TupleConstruct``: pack the inputs into one list or
      tuple output; ``prim::ListUnpack`` / ``prim::TupleUnpack``: the inverse.
    - ``prim::If``: input 0 is the ``bool`` condition; two blocks (then, else), each with
      no inputs and as many outputs as the node has; the node's outputs are the outputs of
      the block that ran.
    - ``prim::Loop``: inputs ``(max_trip_count : int, start_condition : bool, *carried)``;
      one block with inputs ``(iteration : int, *carried)`` and outputs
      ``(continue_condition : bool, *carried)``; the node outputs the final carried values.
    - ``prim::FusionGroup``: runs the graph in attribute ``Subgraph`` as one fused kernel;
      node inputs/outputs match the subgraph's inputs/outputs.
    - ``prim::DifferentiableGraph``: runs ``Subgraph`` (the forward ``f``) and records a
      backward that runs ``ReverseSubgraph`` (``df``); more attributes hold the capture
      lists of the Gradient.
    - ``prim::PythonOp``: calls a Python object (a custom autograd Function) held in an
      attribute; it is assumed to have side effects unless marked otherwise.
    - ``prim::Param`` / ``prim::Return``: the sentinels of every block (never created by
      hand); their outputs / inputs are the block's inputs / outputs.

    Invariants (``Graph.lint`` checks them): every input is defined before the node, in its
    block or an enclosing one; ``v.uses`` lists exactly the ``(node, i)`` with
    ``node.inputs[i] is v``; nodes live in exactly one block of their own graph; positions
    increase along each block; debug names are unique in a graph.

    Create nodes with ``Graph.create`` (detached), then insert them.

    Attributes:
        kind: the qualified symbol (see above).
        source_location: ``file:line`` of the user code that produced it, or None.
        scope: the module path that produced it (``features.0``), or None.
        inputs, outputs, blocks: tuples (snapshots) of Values / Values / Blocks.
        graph, owning_block, prev, next: where it lives (``owning_block`` None when
            detached); ``prev``/``next`` are its neighbours in the block.
        destroyed, has_side_effects: yes/no values.
        attr_names: the attribute names, sorted.

    Methods take arguments (``input(i)``, ``attr(name)``, ``insert_before(n)``) or act
    (``destroy()``). See ``docs/jit-ir.md`` for the whole API.
    """

    __slots__ = ("kind", "_graph", "_block", "_prev", "_next", "_pos", "_inputs", "_outputs",
                 "_blocks", "_attrs", "source_location", "scope", "_destroyed", "__weakref__")

    def __init__(self, graph, kind: str):
        if not isinstance(kind, str) or not _KIND_RE.match(kind):
            raise ValueError(f"node kind must be a qualified symbol 'namespace::name' such as "
                             f"'ember::add' or 'prim::Constant', got {kind!r}")
        self.kind, self._graph = kind, graph
        self._block: Optional[Block] = None
        self._prev: Optional[Node] = None
        self._next: Optional[Node] = None
        self._pos: Optional[int] = None
        self._inputs: list[Value] = []
        self._outputs: list[Value] = []
        self._blocks: list[Block] = []
        self._attrs: dict[str, Any] = {}
        self.source_location: Optional[str] = None
        self.scope: Optional[str] = None
        self._destroyed = False

    # -- structure -----------------------------------------------------------------------
    @property
    def inputs(self) -> tuple:
        return tuple(self._inputs)

    @property
    def outputs(self) -> tuple:
        return tuple(self._outputs)

    @property
    def blocks(self) -> tuple:
        return tuple(self._blocks)

    @property
    def graph(self):
        return self._graph

    @property
    def destroyed(self) -> bool:
        """Whether ``destroy()`` was called (a pass may still hold the object)."""
        return self._destroyed

    @property
    def owning_block(self) -> Optional[Block]:
        """The block this node is in, or None before it is inserted."""
        return self._block

    @property
    def next(self) -> Optional[Node]:
        """The following node in the block; the block's return node after the last one."""
        return self._next

    @property
    def prev(self) -> Optional[Node]:
        """The preceding node in the block; the block's param node before the first one."""
        return self._prev

    def input(self, i: Optional[int] = None) -> Value:
        """Input ``i``; with no argument, the only input (ValueError if there isn't one)."""
        return self._one(self._inputs, i, "input")

    def output(self, i: Optional[int] = None) -> Value:
        """Output ``i``; with no argument, the only output (ValueError if there isn't one)."""
        return self._one(self._outputs, i, "output")

    def _one(self, items, i, what):
        if i is not None:
            return items[i]
        if len(items) != 1:
            raise ValueError(f"{self.kind} has {len(items)} {what}s; pass the index "
                             f"({what}(i)) when there is not exactly one")
        return items[0]

    # -- inputs and outputs ----------------------------------------------------------------
    def add_input(self, value: Value) -> Value:
        """Append ``value`` to the inputs; returns it."""
        return self.insert_input(len(self._inputs), value)

    def insert_input(self, i: int, value: Value) -> Value:
        """Insert ``value`` as input ``i`` (later inputs shift right); returns it."""
        self._check_value(value)
        i = _index(i, len(self._inputs), self.kind, "input", end_ok=True)
        for j in range(len(self._inputs) - 1, i - 1, -1):
            self._move_use(self._inputs[j], j, j + 1)
        self._inputs.insert(i, value)
        value._uses.append(Use(self, i))
        return value

    def replace_input(self, i: int, value: Value) -> Value:
        """Make input ``i`` read ``value``; returns the old input."""
        self._check_value(value)
        i = _index(i, len(self._inputs), self.kind, "input")
        old = self._inputs[i]
        old._uses.remove(Use(self, i))
        self._inputs[i] = value
        value._uses.append(Use(self, i))
        return old

    def replace_input_with(self, old: Value, new: Value) -> None:
        """Replace every occurrence of ``old`` among the inputs by ``new``."""
        for i, v in enumerate(self._inputs):
            if v is old:
                self.replace_input(i, new)

    def remove_input(self, i: int) -> Value:
        """Drop input ``i`` (later inputs shift left); returns it."""
        i = _index(i, len(self._inputs), self.kind, "input")
        old = self._inputs.pop(i)
        old._uses.remove(Use(self, i))
        for j in range(i, len(self._inputs)):
            self._move_use(self._inputs[j], j + 1, j)
        return old

    def remove_all_inputs(self) -> None:
        """Drop every input."""
        for i, v in enumerate(self._inputs):
            v._uses.remove(Use(self, i))
        self._inputs = []

    def _move_use(self, value: Value, old: int, new: int) -> None:
        uses = value._uses
        uses[uses.index(Use(self, old))] = Use(self, new)

    def _check_value(self, value: Value) -> None:
        if not isinstance(value, Value):
            raise TypeError(f"{self.kind}: an input must be a Value, got {value!r}")
        if value._node._graph is not self._graph:
            raise ValueError(f"{self.kind}: input %{value._name} belongs to another graph; "
                             f"clone it into this graph (Graph.create_clone / insert_graph)")

    def add_output(self, type: Optional[JitType] = None,  # noqa: A002
                   name: Optional[str] = None) -> Value:
        """Append a new output value (type defaults to ``Tensor``); returns it."""
        v = Value(self, len(self._outputs), TensorType() if type is None else type)
        self._outputs.append(v)
        self._graph._set_name(v, name)
        return v

    def insert_output(self, i: int, type: Optional[JitType] = None,  # noqa: A002
                      name: Optional[str] = None) -> Value:
        """Insert a new output value at index ``i``; returns it."""
        v = self.add_output(type, name)
        self._outputs.insert(i, self._outputs.pop())
        self._renumber_outputs()
        return v

    def erase_output(self, i: int) -> None:
        """Remove output ``i``. Raises RuntimeError if it still has uses."""
        v = self._outputs[i]
        if v._uses:
            raise RuntimeError(f"cannot erase output %{v._name} of {self.kind}: it is used by "
                               f"{_users(v)}; replace its uses first")
        self._outputs.pop(i)
        self._graph._free_name(v)
        self._renumber_outputs()

    def _renumber_outputs(self) -> None:
        for j, o in enumerate(self._outputs):
            o.offset = j

    def replace_all_uses_with(self, other: Node) -> None:
        """Output-wise ``replace_all_uses_with``: output i's users read ``other``'s output i."""
        if len(other._outputs) != len(self._outputs):
            raise ValueError(f"{self.kind} has {len(self._outputs)} outputs but {other.kind} "
                             f"has {len(other._outputs)}; they must match")
        for a, b in zip(self._outputs, other._outputs):
            a.replace_all_uses_with(b)

    # -- attributes ------------------------------------------------------------------------
    def attr(self, name: str, default: Any = _MISSING) -> Any:
        """The attribute ``name``; ``default`` if given and absent, else KeyError."""
        try:
            return self._attrs[name]
        except KeyError:
            if default is not _MISSING:
                return default
            raise KeyError(f"{self.kind} has no attribute {name!r}; it has "
                           f"{sorted(self._attrs) or 'none'}") from None

    def set_attr(self, name: str, value: Any) -> Node:
        """Set attribute ``name`` (an identifier) to ``value``; returns the node for chaining.

        Values: None, bool, int, float, str, ember dtype, Device, Tensor, Graph, a callable,
        or a list/tuple of those (see ``ember.jit.ir.attributes``). Raises TypeError for
        anything else.
        """
        if not isinstance(name, str) or not _ATTR_RE.match(name):
            raise ValueError(f"attribute names must be identifiers, got {name!r}")
        check_attr_value(self.kind, name, value)
        self._attrs[name] = value
        return self

    def has_attr(self, name: str) -> bool:
        """Whether attribute ``name`` is set."""
        return name in self._attrs

    def remove_attr(self, name: str) -> None:
        """Remove attribute ``name`` (KeyError if absent)."""
        self.attr(name)
        del self._attrs[name]

    @property
    def attr_names(self) -> list:
        """The attribute names, sorted (the order they print in); a new list each time."""
        return CallableList(sorted(self._attrs), "Node", "attr_names")

    def g(self, name: str = "Subgraph"):
        """The Graph held in attribute ``name`` (``Subgraph`` of FusionGroup and friends)."""
        from ember.jit.ir.graph import Graph
        value = self.attr(name)
        if not isinstance(value, Graph):
            raise TypeError(f"attribute {name!r} of {self.kind} is not a Graph: {value!r}")
        return value

    # -- blocks ----------------------------------------------------------------------------
    def add_block(self) -> Block:
        """Append a new empty block (``prim::If`` has two, ``prim::Loop`` one)."""
        from ember.jit.ir.block import Block  # block.py imports this module
        b = Block(self._graph, self)
        self._blocks.append(b)
        return b

    def erase_block(self, i: int) -> None:
        """Destroy block ``i`` and every node in it."""
        self._blocks.pop(i)._destroy()

    # -- position in the block ---------------------------------------------------------------
    def insert_before(self, n: Node) -> Node:
        """Insert this (not yet inserted) node right before ``n``; returns self."""
        self._check_insertable(n, before=True)
        self._link(n._prev)
        return self

    def insert_after(self, n: Node) -> Node:
        """Insert this (not yet inserted) node right after ``n``; returns self."""
        self._check_insertable(n, before=False)
        self._link(n)
        return self

    def move_before(self, n: Node) -> None:
        """Move this node (already in a block) right before ``n`` (maybe in another block)."""
        if n is not self:
            self._check_target(n, before=True)
            self._unlink()
            self._link(n._prev)

    def move_after(self, n: Node) -> None:
        """Move this node (already in a block) right after ``n`` (maybe in another block)."""
        if n is not self:
            self._check_target(n, before=False)
            self._unlink()
            self._link(n)

    def is_before(self, n: Node) -> bool:
        """Whether this node runs before ``n``. Nodes in different blocks compare by their
        enclosing nodes in the innermost common block; a node is neither before nor after a
        node nested inside it."""
        return self._compare(n) < 0

    def is_after(self, n: Node) -> bool:
        """Whether this node runs after ``n`` (see ``is_before``)."""
        return self._compare(n) > 0

    def _compare(self, n: Node) -> int:
        if self._block is None or n._block is None:
            raise ValueError("is_before/is_after need both nodes inserted in a block")
        lhs = self
        while lhs is not None:
            rhs = n
            while rhs is not None:
                if lhs._block is rhs._block:
                    return (lhs._pos > rhs._pos) - (lhs._pos < rhs._pos)
                rhs = rhs._block._owning_node
            lhs = lhs._block._owning_node
        raise ValueError(f"{self.kind} and {n.kind} are in different graphs")

    def _check_insertable(self, n: Node, before: bool) -> None:
        if self._destroyed or self._block is not None:
            state = "destroyed" if self._destroyed else "already in a block (use move_*)"
            raise RuntimeError(f"cannot insert {self.kind}: it is {state}")
        self._check_target(n, before)

    def _check_target(self, n: Node, before: bool) -> None:
        if n._graph is not self._graph:
            raise ValueError(f"cannot insert {self.kind} next to {n.kind}: another graph")
        if n._block is None:
            raise ValueError(f"cannot insert {self.kind} next to {n.kind}: that node is not "
                             f"in a block")
        if n is (n._block._param if before else n._block._return):
            raise ValueError(f"cannot insert {self.kind} {'before' if before else 'after'} "
                             f"the {n.kind} sentinel of a block")
        owner = n._block._owning_node
        while owner is not None:
            if owner is self:
                raise ValueError(f"cannot move {self.kind} into one of its own blocks")
            owner = owner._block._owning_node if owner._block is not None else None

    def _link(self, prev: Node) -> None:
        nxt = prev._next
        self._prev, self._next, self._block = prev, nxt, prev._block
        prev._next = nxt._prev = self
        block = self._block
        if prev is block._param:
            pos = 0 if nxt is block._return else nxt._pos - _INTERVAL
            if pos <= _LOWER:
                return block._reindex()
        elif nxt is block._return:
            pos = prev._pos + _INTERVAL
            if pos >= _UPPER:
                return block._reindex()
        else:
            if nxt._pos - prev._pos < 2:  # no number left in the gap
                return block._reindex()
            pos = (prev._pos + nxt._pos) // 2
        self._pos = pos

    def _unlink(self) -> None:
        if self._block is None:
            raise RuntimeError(f"{self.kind} is not in a block")
        self._prev._next, self._next._prev = self._next, self._prev
        self._prev = self._next = self._block = self._pos = None

    # -- lifetime ----------------------------------------------------------------------------
    def destroy(self) -> None:
        """Remove this node (and its blocks) from the graph; drops its input uses.

        Raises RuntimeError if an output still has uses: replace them first.
        """
        if self._destroyed:
            raise RuntimeError(f"{self.kind} was already destroyed")
        if self._block is not None and self in (self._block._param, self._block._return):
            raise RuntimeError(f"cannot destroy the {self.kind} sentinel of a block")
        for o in self._outputs:
            if o._uses:
                raise RuntimeError(f"cannot destroy {self!r}: output %{o._name} is still used "
                                   f"by {_users(o)}; replace its uses first "
                                   f"(Value.replace_all_uses_with)")
        for b in reversed(self._blocks):
            b._destroy()
        self._blocks = []
        self.remove_all_inputs()
        if self._block is not None:
            self._unlink()
        for o in self._outputs:
            self._graph._free_name(o)
        self._graph._all_nodes.discard(self)
        self._destroyed = True

    @property
    def has_side_effects(self) -> bool:
        """Whether dead-code elimination must keep this node although no output is used
        (see :func:`ember.jit.ir.kinds.has_side_effects`)."""
        return _HAS_SIDE_EFFECTS[bool(has_side_effects(self))]

    def __call__(self) -> Node:
        # NOTE: only the deprecated ``value.node()`` calls a node (Value.node is a property).
        warn_call("Value", "node")
        return self

    def __repr__(self) -> str:
        from ember.jit.ir.printer import format_node
        return format_node(self)


def _index(i: int, count: int, kind: str, what: str, end_ok: bool = False) -> int:
    """``i`` as an index into ``count`` items (negative ones count from the end; ``end_ok``
    allows ``count`` itself, for inserting at the end)."""
    j = i + count if i < 0 else i
    if not 0 <= j < count + end_ok:
        raise IndexError(f"{kind}: {what} index {i} is out of range ({count} {what}s)")
    return j
