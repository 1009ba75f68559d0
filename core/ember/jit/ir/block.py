"""Blocks: ordered lists of nodes with inputs and outputs. Import from :mod:`ember.jit.ir`.

A graph has one top-level block; ``prim::If`` and ``prim::Loop`` nodes own nested ones. The
nodes of a block form an intrusive doubly linked list between two sentinels, the
``prim::Param`` node (its outputs are the block inputs) and the ``prim::Return`` node (its
inputs are the block outputs), so inserting and removing are O(1).

Reference: PyTorch's ``torch/csrc/jit/ir/ir.h`` (``Block``, ``Block::cloneFrom``).
"""
from __future__ import annotations

from typing import Iterator, Optional

from ember.jit.ir.ir_types import JitType
from ember.jit.ir.kinds import prim
from ember.jit.ir.node import _INTERVAL, _LOWER, _UPPER, Node
from ember.jit.ir.value import Value, _users

__all__ = ["Block"]


class Block:
    """A list of nodes with inputs (params) and outputs (returns): a graph body, or the
    then/else branch of a ``prim::If`` or the body of a ``prim::Loop``.

    ``inputs`` are the outputs of the ``param_node`` sentinel and ``outputs`` the inputs of
    the ``return_node`` sentinel; nodes of the block sit between the two.
    """

    __slots__ = ("_graph", "_owning_node", "_param", "_return")

    def __init__(self, graph, owning_node: Optional[Node]):
        self._graph, self._owning_node = graph, owning_node
        self._param, self._return = Node(graph, prim.Param), Node(graph, prim.Return)
        p, r = self._param, self._return
        p._next = p._prev = r
        r._next = r._prev = p
        p._block = r._block = self
        p._pos, r._pos = _LOWER, _UPPER

    @property
    def inputs(self) -> tuple:
        return tuple(self._param._outputs)

    @property
    def outputs(self) -> tuple:
        return tuple(self._return._inputs)

    @property
    def param_node(self) -> Node:
        return self._param

    @property
    def return_node(self) -> Node:
        return self._return

    @property
    def owning_node(self) -> Optional[Node]:
        """The node this block belongs to (None for a graph's top-level block)."""
        return self._owning_node

    @property
    def graph(self):
        return self._graph

    def nodes(self, reverse: bool = False) -> Iterator[Node]:
        """Iterate over the nodes in order (or reversed).

        It is safe to destroy the node just yielded or move it to another block; moving it
        within this block continues from its new place, and nodes inserted right after it
        (before it, when reversed) are visited too. To change anything else while iterating,
        iterate over a snapshot: ``list(block.nodes())``.
        """
        end = self._param if reverse else self._return
        n = self._return._prev if reverse else self._param._next
        while n is not end:
            saved = n._prev if reverse else n._next
            yield n
            if n._block is self:
                n = n._prev if reverse else n._next
            elif saved._block is not self:
                raise RuntimeError("Block.nodes(): the node after the current one was removed "
                                   "during iteration; iterate over list(block.nodes())")
            else:
                n = saved

    def add_input(self, name: Optional[str] = None,
                  type: Optional[JitType] = None) -> Value:  # noqa: A002
        """Append a block input (type defaults to ``Tensor``); returns it."""
        return self._param.add_output(type, name)

    def insert_input(self, i: int, name: Optional[str] = None,
                     type: Optional[JitType] = None) -> Value:  # noqa: A002
        """Insert a block input at index ``i``; returns it."""
        return self._param.insert_output(i, type, name)

    def erase_input(self, i: int) -> None:
        """Remove input ``i``. Raises RuntimeError if it still has uses."""
        self._param.erase_output(i)

    def register_output(self, value: Value) -> int:
        """Append ``value`` to the outputs; returns its index."""
        self._return.add_input(value)
        return len(self._return._inputs) - 1

    def erase_output(self, i: int) -> None:
        """Remove output ``i``."""
        self._return.remove_input(i)

    def append_node(self, n: Node) -> Node:
        """Insert ``n`` at the end of the block; returns it."""
        return n.insert_before(self._return)

    def prepend_node(self, n: Node) -> Node:
        """Insert ``n`` at the start of the block; returns it."""
        return n.insert_after(self._param)

    def clone_from(self, src: Block, value_map) -> None:
        """Clone ``src``'s inputs, nodes and outputs into this (empty) block.

        ``value_map`` (a dict or a callable) maps values used in ``src`` but defined outside
        it to values of this block's graph.
        """
        lookup = value_map if callable(value_map) else value_map.__getitem__
        env: dict = {}
        for v in src.inputs:
            env[v] = self.add_input(v._name, v.type)

        def mapped(v):
            return env[v] if v in env else lookup(v)
        for n in src.nodes():
            c = self.append_node(self._graph.create_clone(n, mapped))
            env.update(zip(n._outputs, c._outputs))
        for v in src.outputs:
            self.register_output(mapped(v))

    def _reindex(self) -> None:
        for i, n in enumerate(self.nodes()):
            n._pos = i * _INTERVAL

    def _destroy(self) -> None:
        self._return.remove_all_inputs()
        for n in list(self.nodes(reverse=True)):
            n.destroy()
        for v in self._param._outputs:
            if v._uses:
                raise RuntimeError(f"cannot destroy block: its input %{v._name} is used "
                                   f"outside it by {_users(v)}")
            self._graph._free_name(v)
