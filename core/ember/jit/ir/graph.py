"""The JIT's graph IR: Graph -> Blocks -> Nodes (in topological order) -> Values with uses.

A graph prints in one canonical text form, which :func:`ember.jit.ir.parser.parse_ir` reads
back, so passes are tested as before/after text::

    graph(%x : Float(2, 3),
          %w : Float(3, 3)):
      %2 : int = prim::Constant[value=1]()
      %3 : Float(2, 3) = ember::mm(%x, %w)
      %4 : Float(2, 3) = ember::add(%3, %x, %2)
      return (%4)

The same graph built by hand::

    import ember
    from ember.jit.ir import Graph, TensorType

    g = Graph()
    x = g.add_input("x", TensorType(ember.float32, sizes=(2, 3)))
    w = g.add_input("w", TensorType(ember.float32, sizes=(3, 3)))
    alpha = g.insert_constant(1)
    mm = g.insert_node(g.create("ember::mm", [x, w]))
    mm.output().type = x.type
    add = g.insert_node(g.create("ember::add", [mm.output(), x, alpha]))
    add.output().type = x.type
    g.register_output(add.output())
    g.lint()

Nodes are created detached (``Graph.create``) and placed with ``Graph.insert_node`` (at the
insert point, the end of the graph unless moved with ``insert_point_guard``) or with
``Node.insert_before`` / ``insert_after``. Passes rewrite with ``Value.replace_all_uses_with``
and ``Node.destroy``, then ``Graph.lint`` checks the invariants listed on :class:`Node`.

Reference: PyTorch's ``torch/csrc/jit/ir/ir.h`` (Graph, WithInsertPoint, insertConstant,
createClone, insertGraph), and torch.fx's ``Graph`` for the Python flavour.
"""
from __future__ import annotations

import contextlib
import re
from typing import Any, Iterator, Optional, Sequence

from ember.jit.ir.attributes import copy_attr_value
from ember.jit.ir.block import Block
from ember.jit.ir.ir_types import (AnyType, BoolType, DeviceType, FloatType, IntType, JitType,
                                   ListType, NoneType, OptionalType, ScalarTypeType, StringType,
                                   TensorType, TupleType, unify_types)
from ember.jit.ir.lint import JitLintError, lint
from ember.jit.ir.kinds import SIDE_EFFECT_KINDS, prim
from ember.jit.ir.node import Node
from ember.jit.ir.value import Use, Value

__all__ = [
    "Graph", "Block", "Node", "Value", "Use", "prim", "SIDE_EFFECT_KINDS", "JitLintError",
    "constant_type", "JitType", "TensorType", "IntType", "FloatType", "BoolType", "NoneType",
    "StringType", "DeviceType", "ScalarTypeType", "AnyType", "ListType", "TupleType",
    "OptionalType", "unify_types", "constant_type_or_none",
]

_NAME_RE = re.compile(r"^\w[\w.]*$")
_SUFFIX_RE = re.compile(r"^(.*)\.(\d+)$")


class Graph:
    """A function in IR form: a top-level :class:`Block` whose inputs are the graph inputs.

    Attributes:
        block: the top-level block; ``inputs``, ``outputs`` and ``nodes()`` are its.
    """

    def __init__(self):
        self._names: dict[str, Value] = {}
        self._next_unique = 0
        self._suffix: dict[str, int] = {}
        self._all_nodes: set[Node] = set()  # created and not destroyed; lint checks placement
        self.block = Block(self, None)
        self._insert_point: Node = self.block.return_node

    # -- inputs and outputs ----------------------------------------------------------------
    @property
    def inputs(self) -> tuple:
        return self.block.inputs

    @property
    def outputs(self) -> tuple:
        return self.block.outputs

    @property
    def param_node(self) -> Node:
        return self.block.param_node

    @property
    def return_node(self) -> Node:
        return self.block.return_node

    def add_input(self, name: Optional[str] = None,
                  type: Optional[JitType] = None) -> Value:  # noqa: A002
        """Append a graph input (type defaults to ``Tensor``); returns it."""
        return self.block.add_input(name, type)

    def insert_input(self, i: int, name: Optional[str] = None,
                     type: Optional[JitType] = None) -> Value:  # noqa: A002
        """Insert a graph input at index ``i``; returns it."""
        return self.block.insert_input(i, name, type)

    def erase_input(self, i: int) -> None:
        """Remove graph input ``i``. Raises RuntimeError if it still has uses."""
        self.block.erase_input(i)

    def register_output(self, value: Value) -> int:
        """Append ``value`` to the graph outputs; returns its index."""
        return self.block.register_output(value)

    def erase_output(self, i: int) -> None:
        """Remove graph output ``i``."""
        self.block.erase_output(i)

    # -- creating nodes --------------------------------------------------------------------
    def create(self, kind: str, inputs: Sequence[Value] = (), num_outputs: int = 1) -> Node:
        """A new node of ``kind`` reading ``inputs``, with ``num_outputs`` outputs of type
        ``Tensor``; not inserted yet (``insert_node``, ``Node.insert_before``, ...).

        Raises ValueError for a kind that is not ``namespace::name`` or a foreign input.
        """
        n = Node(self, kind)
        for v in inputs:
            n.add_input(v)
        for _ in range(num_outputs):
            n.add_output()
        self._all_nodes.add(n)
        return n

    def create_with_subgraph(self, kind: str) -> Node:
        """A new node (no inputs or outputs) whose attribute ``Subgraph`` is an empty Graph:
        the start of a ``prim::FusionGroup`` or ``prim::DifferentiableGraph``."""
        return self.create(kind, num_outputs=0).set_attr("Subgraph", Graph())

    def create_clone(self, node: Node, value_map, copy_blocks: bool = True) -> Node:
        """A copy of ``node`` (from this or another graph) in this graph, not inserted.

        ``value_map`` (a dict or a callable) maps each input of ``node`` (and each outer value
        read inside its blocks) to a value of this graph. Outputs keep their types and, where
        free in this graph, their names; attributes are copied (subgraphs deeply).
        """
        lookup = value_map if callable(value_map) else value_map.__getitem__
        clone = self.create(node.kind, [lookup(v) for v in node.inputs], 0)
        for o in node.outputs:
            clone.add_output(o.type, o.debug_name)
        for name, value in node._attrs.items():
            clone._attrs[name] = copy_attr_value(value)
        clone.source_location, clone.scope = node.source_location, node.scope
        if copy_blocks:
            for b in node.blocks:
                clone.add_block().clone_from(b, lookup)
        return clone

    # -- the insert point ------------------------------------------------------------------
    @property
    def insert_point(self) -> Node:
        """The node before which ``insert_node`` inserts (initially the graph's return)."""
        return self._insert_point

    def set_insert_point(self, where) -> None:
        """Insert before node ``where``, or at the end of block ``where``."""
        if isinstance(where, Block):
            where = where.return_node
        if not isinstance(where, Node):
            raise TypeError(f"insert point must be a Node or a Block, got {where!r}")
        if where.graph is not self or where.owning_block is None:
            raise ValueError(f"insert point {where.kind} is not in a block of this graph")
        self._insert_point = where

    @contextlib.contextmanager
    def insert_point_guard(self, where):
        """``with g.insert_point_guard(node_or_block):`` inserts go before ``node`` (or at
        the end of ``block``) inside, and back to the previous point after (PyTorch's
        ``WithInsertPoint``)."""
        prev = self._insert_point
        self.set_insert_point(where)
        try:
            yield
        finally:
            self._insert_point = prev

    def insert_node(self, node: Node) -> Node:
        """Insert ``node`` at the insert point; returns it."""
        if self._insert_point.owning_block is None:
            raise RuntimeError("the insert point node was removed from its block; set a new "
                               "one with set_insert_point or insert_point_guard")
        return node.insert_before(self._insert_point)

    def insert_constant(self, value: Any, type: Optional[JitType] = None) -> Value:  # noqa: A002
        """Insert ``prim::Constant[value=...]`` at the insert point; returns its output.

        ``value``: None, bool, int, float, str, an ember dtype or Device, a Tensor that does
        not require grad, or a list/tuple of those. The type is inferred
        (:func:`constant_type`) unless given, which an empty list needs.
        Raises TypeError for other values, ValueError for tensors requiring grad.
        """
        t = constant_type(value) if type is None else type
        n = self.create(prim.Constant).set_attr("value", value)
        n.output().type = t
        return self.insert_node(n).output()

    def insert_graph(self, callee: Graph, inputs: Sequence[Value],
                     value_map: Optional[dict] = None) -> list:
        """Inline a copy of ``callee``'s nodes at the insert point, its inputs bound to
        ``inputs``; returns the values of its outputs in this graph. ``value_map``, when
        given, is filled with callee value -> value in this graph.

        Raises ValueError when ``len(inputs)`` differs from the callee's input count.
        """
        if len(inputs) != len(callee.inputs):
            raise ValueError(f"insert_graph: the callee takes {len(callee.inputs)} inputs, "
                             f"got {len(inputs)}")
        if callee is self:  # would see its own clones while iterating
            callee = callee.copy()
        env = {} if value_map is None else value_map
        env.update(zip(callee.inputs, inputs))
        for n in callee.nodes():
            clone = self.insert_node(self.create_clone(n, env.__getitem__))
            env.update(zip(n.outputs, clone.outputs))
        return [env[v] for v in callee.outputs]

    # -- traversal, copy, checks -----------------------------------------------------------
    def nodes(self, reverse: bool = False) -> Iterator[Node]:
        """The top-level nodes in order (see ``Block.nodes`` for what may change meanwhile)."""
        return self.block.nodes(reverse)

    def all_nodes(self) -> Iterator[Node]:
        """Every node, nested blocks included, in pre-order (subgraph attributes excluded)."""
        def walk(block):
            for n in block.nodes():
                yield n
                for b in n.blocks:
                    yield from walk(b)
        return walk(self.block)

    def copy(self) -> Graph:
        """A deep, independent clone that prints the same (names, types, attributes)."""
        g = Graph()

        def undefined(v):
            raise JitLintError(f"copy: %{v.debug_name} is used but not defined in the graph")
        g.block.clone_from(self.block, undefined)
        return g

    def lint(self) -> None:
        """Check the IR invariants (see :class:`Node`); raises :class:`JitLintError` naming
        the node and the broken invariant."""
        lint(self)

    def __str__(self) -> str:
        from ember.jit.ir.printer import print_graph
        return print_graph(self)

    def __repr__(self) -> str:
        return f"<Graph: {len(self.inputs)} inputs, {len(self._all_nodes)} nodes>"

    # -- names (called by Value and Node) --------------------------------------------------
    def _set_name(self, value: Value, name: Optional[str]) -> None:
        if name is not None and not (isinstance(name, str) and _NAME_RE.match(name)):
            raise ValueError(f"invalid value name {name!r}: use letters, digits, '_' and '.', "
                             f"e.g. 'x', 'x.1', 'features.0.weight'")
        taken = bool(name) and self._names.get(name, value) is not value
        if taken and not name.isdigit():
            m = _SUFFIX_RE.match(name)
            base = m.group(1) if m else name
            k = self._suffix.get(base, 0)
            while f"{base}.{k + 1}" in self._names:
                k += 1
            self._suffix[base] = k + 1
            name = f"{base}.{k + 1}"
        elif not name or taken:
            while str(self._next_unique) in self._names:
                self._next_unique += 1
            name = str(self._next_unique)
        if not value._name or name.isdigit():
            # NOTE: as in PyTorch, every new value uses up a number, named or not, so the
            # unnamed values of a graph with inputs %x, %w start at %2.
            self._next_unique += 1
        self._free_name(value)
        self._names[name] = value
        value._name = name

    def _free_name(self, value: Value) -> None:
        if self._names.get(value._name) is value:
            del self._names[value._name]


def constant_type_or_none(value: Any, arg=None) -> JitType:
    """The JitType of a traced argument: ``constant_type`` where it applies, else from the
    schema argument ``arg`` (an empty ``int[]`` list), else ``AnyType`` (slices, ...)."""
    try:
        return constant_type(value)
    except (TypeError, ValueError):
        pass
    if arg is not None and isinstance(value, (list, tuple)) and not value and arg.type.is_list:
        elem = {"int": IntType(), "SymInt": IntType(), "float": FloatType(),
                "bool": BoolType(), "Tensor": TensorType()}.get(arg.type.base, AnyType())
        return ListType(elem)
    return AnyType()


def constant_type(value: Any) -> JitType:
    """The JitType of a Python constant (see ``Graph.insert_constant``).

    Raises TypeError for unsupported values or lists mixing element types, ValueError for
    an empty list (its element type is unknown) or a tensor that requires grad.
    """
    from ember.tensor import Tensor
    from ember.types import Device, ScalarType
    simple = {bool: BoolType, int: IntType, float: FloatType, str: StringType,
              type(None): NoneType, ScalarType: ScalarTypeType, Device: DeviceType}
    if type(value) in simple:
        return simple[type(value)]()
    if isinstance(value, Tensor):
        if value.requires_grad:
            raise ValueError("a constant tensor must not require grad; pass t.detach(), or "
                             "make the tensor a graph input")
        return TensorType.from_tensor(value)
    if isinstance(value, tuple):
        return TupleType(tuple(constant_type(v) for v in value))
    if isinstance(value, list):
        if not value:
            raise ValueError("the element type of an empty list constant is unknown; pass "
                             "type=ListType(IntType()) (or the right element type)")
        elem = constant_type(value[0])
        for v in value[1:]:
            u = unify_types(elem, constant_type(v))
            if u is None or isinstance(u, (OptionalType, AnyType)):
                raise TypeError(f"list constant mixes element types {elem} and "
                                f"{constant_type(v)}: {value!r}")
            elem = u
        return ListType(elem)
    raise TypeError(f"cannot make a constant of {type(value).__name__} ({value!r}); allowed: "
                    f"None, bool, int, float, str, dtype, Device, Tensor, lists and tuples")
