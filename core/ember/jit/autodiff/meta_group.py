"""The runtime of ``prim::MetaGroup``: the metas a forward graph keeps for its backward,
computed once per input shapes.

A forward graph made by autodiff computes, on every call, metadata its backward may read:
``prim::TensorMeta`` (a value's shape, dtype and device), ``prim::ReduceMeta`` (whether a
gradient must be reduced: None when two shapes and Types are equal),
``prim::BroadcastMeta`` (the shape of a value a FusionGroup did not store) and lists of
them. The traced LSTM cell computes 25 of them per call. They read nothing but the
shapes, Types and devices of their tensor inputs, so
:func:`~ember.jit.passes.group_metas.group_metas` gathers them into one
``prim::MetaGroup`` node whose ``Subgraph`` holds them, and :class:`MetaGroupOp` runs that
subgraph once per distinct key ``(shape, Type[, device index])`` of its inputs: a loop of
steady shapes builds one key per call instead of running 25 nodes.

The cached values are TensorMetas, None and lists of them: they hold no tensor, so the
cache keeps no memory alive. Cached lists are shared by the calls that hit them; nothing
mutates them (formulas read their attributes).

Reference: PyTorch computes these sizes per call in C++ (``aten::size``,
``prim::BroadcastSizes`` and ``_size_if_not_equal`` in ``graph_fuser.cpp`` and
``symbolic_script.cpp``); ember's Python interpreter pays per node, so it caches them.
"""
from __future__ import annotations

import ember.jit.autodiff.autodiff_prims  # noqa: F401 - registers how the metas themselves run
from ember.jit.runtime.interpreter import register_prim_factory, run_graph
from ember.jit.ir.kinds import prim
from ember.tensor import Tensor

__all__ = ["MetaGroupOp", "meta_key"]


class MetaGroupOp:
    """Runs one ``prim::MetaGroup`` node: ``op(*inputs) -> tuple of outputs``, from a cache
    keyed by :func:`meta_key` of the inputs (at most ``max_entries`` keys; the cache starts
    over when full). Inputs it cannot key (anything but tensors, None, and lists or tuples
    of them) run the subgraph uncached.

    Attributes: ``subgraph`` (the metas, as a Graph), ``misses`` (subgraph runs).
    Raises ValueError when ``node`` is not a ``prim::MetaGroup``.
    """

    max_entries = 64

    def __init__(self, node):
        if node.kind != prim.MetaGroup:
            raise ValueError(f"MetaGroupOp needs a {prim.MetaGroup} node, got {node.kind}")
        self.subgraph = node.g("Subgraph")
        self.misses = 0
        self._seen: dict = {}

    def __call__(self, *args) -> tuple:
        key = meta_key(args)
        if key is not None:
            out = self._seen.get(key)
            if out is not None:
                return out
        self.misses += 1
        out = tuple(run_graph(self.subgraph, list(args)))
        if key is not None:
            if len(self._seen) >= self.max_entries:
                self._seen.clear()
            self._seen[key] = out
        return out


def meta_key(values) -> tuple | None:
    """What the metas of ``values`` depend on: per tensor its shape and Type, and its device
    index on a backend of several devices; lists and tuples item by item; None as None.
    Returns None when some value is anything else."""
    parts = []
    for v in values:
        if isinstance(v, Tensor):
            typ = v._type
            b = typ.backend
            parts.append((v._data.shape, typ) if b.device_count == 1 else
                         (v._data.shape, typ, b.device_of(v._data)))
        elif v is None:
            parts.append(None)
        elif isinstance(v, (list, tuple)):
            inner = meta_key(v)
            if inner is None:
                return None
            parts.append(inner)
        else:
            return None
    return tuple(parts)


@register_prim_factory(prim.MetaGroup)
def _meta_group(node):
    return MetaGroupOp(node)
