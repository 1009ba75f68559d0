"""Values and their uses: the SSA edges of the IR. Import them from :mod:`ember.jit.ir`.

A :class:`Value` is produced by exactly one node and read by any number of nodes; each read
is a :class:`Use` ``(user, offset)``, kept on the value so that "replace all uses" and
dead-code checks are cheap.

Reference: PyTorch's ``torch/csrc/jit/ir/ir.h`` (``Value``, ``Use``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from ember.jit.ir._compat import flags
from ember.jit.ir.ir_types import JitType

if TYPE_CHECKING:
    from ember.jit.ir.node import Node

__all__ = ["Use", "Value"]

_HAS_USES, _IS_CONSTANT = flags("Value", "has_uses"), flags("Value", "is_constant")


class Use(NamedTuple):
    """One use of a value: ``user.inputs[offset] is value``."""

    user: Node
    offset: int


class Value:
    """An SSA value: an output of exactly one node (a block input is an output of the
    block's ``prim::Param`` node).

    Attributes:
        node: the :class:`Node` that produces it (a ``prim::Param`` for block inputs).
        offset: its index in ``node.outputs``.
        type: its :class:`~ember.jit.ir.ir_types.JitType` (assignable).
        debug_name: its name, unique within the graph (``x``, ``x.1``, ``3``); assigning a
            taken name gives ``name.N`` instead.
        uses: the nodes reading it, as a tuple of :class:`Use` (a snapshot).
        graph: the Graph it belongs to.
        has_uses: whether any node (or block return) reads it.
        is_constant: whether it is the output of a ``prim::Constant``.

    ``has_uses`` and ``is_constant`` are yes/no values (``if v.is_constant:``); the old
    method spellings ``v.node()``, ``v.is_constant()``, ``v.has_uses()`` still work and
    raise a DeprecationWarning (see :mod:`ember.jit.ir._compat`).
    """

    __slots__ = ("_node", "offset", "_type", "_name", "_uses")

    def __init__(self, node: Node, offset: int, type: JitType):  # noqa: A002
        self._node, self.offset, self._uses = node, offset, []
        self._name = ""
        self.type = type

    @property
    def node(self) -> Node:
        """The node that produces this value (a ``prim::Param`` for block inputs)."""
        return self._node

    @property
    def type(self) -> JitType:
        return self._type

    @type.setter
    def type(self, t: JitType) -> None:
        if not isinstance(t, JitType):
            raise TypeError(f"a value's type must be a JitType (TensorType(), IntType(), ...), "
                            f"got {t!r}")
        self._type = t

    @property
    def debug_name(self) -> str:
        return self._name

    @debug_name.setter
    def debug_name(self, name: str) -> None:
        self._node._graph._set_name(self, name)

    @property
    def uses(self) -> tuple:
        return tuple(self._uses)

    @property
    def graph(self):
        """The Graph this value belongs to."""
        return self._node._graph

    @property
    def has_uses(self) -> bool:
        """Whether any node (or block return) reads this value."""
        return _HAS_USES[bool(self._uses)]

    @property
    def is_constant(self) -> bool:
        """Whether this value is the output of a ``prim::Constant`` node."""
        return _IS_CONSTANT[self._node.kind == "prim::Constant"]

    def to_ivalue(self) -> Any:
        """The Python value of a constant (``value`` attribute of its ``prim::Constant``).

        A method, not a property: it converts, and raises ValueError when the value is not
        a constant (check ``is_constant`` first).
        """
        if self._node.kind != "prim::Constant":
            raise ValueError(f"%{self._name} is produced by {self._node.kind}, not "
                             f"prim::Constant; check value.is_constant first")
        return self._node.attr("value", None)

    def replace_all_uses_with(self, new: Value) -> None:
        """Make every user of this value read ``new`` instead (block returns included)."""
        self._check_same_graph(new)
        if new is self:
            return
        for use in self._uses:
            use.user._inputs[use.offset] = new
        new._uses.extend(self._uses)
        self._uses = []

    def replace_all_uses_after_node_with(self, node: Node, new: Value) -> None:
        """Replace the uses by nodes strictly after ``node`` (see ``Node.is_after``); nodes
        inside blocks count at the position of their enclosing node in ``node``'s block."""
        self._check_same_graph(new)
        if new is self:
            return
        keep = []
        for use in self._uses:
            if use.user.is_after(node):
                use.user._inputs[use.offset] = new
                new._uses.append(use)
            else:
                keep.append(use)
        self._uses = keep

    def _check_same_graph(self, new: Value) -> None:
        if not isinstance(new, Value):
            raise TypeError(f"expected a Value, got {new!r}")
        if new._node._graph is not self._node._graph:
            raise ValueError(f"cannot replace %{self._name} by %{new._name}: they belong to "
                             f"different graphs; clone it into this graph first")

    def __repr__(self) -> str:
        return f"%{self._name} : {self._type}"


def _users(v: Value) -> str:
    return ", ".join(f"{u.user.kind} (input {u.offset})" for u in v._uses)
