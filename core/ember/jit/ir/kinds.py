"""The built-in node kinds (``prim.If``, ...) and which nodes have side effects.

Kinds are plain strings, ``namespace::name``; :class:`prim` spells the built-in ones so
passes read ``n.kind == prim.If``. Their meaning and shape are documented on
:class:`~ember.jit.ir.node.Node`.

Reference: PyTorch's interned symbols (``aten/src/ATen/core/interned_strings.h``) and
``Node::hasSideEffects`` (``torch/csrc/jit/ir/ir.cpp``).
"""
from __future__ import annotations

__all__ = ["prim", "SIDE_EFFECT_KINDS", "has_side_effects", "is_inplace_kind"]


class prim:  # noqa: N801 - reads like PyTorch's ``prim::`` symbols: ``prim.Constant``
    """The built-in node kinds, as constants (``n.kind == prim.If``)."""

    Param = "prim::Param"
    Return = "prim::Return"
    Constant = "prim::Constant"
    If = "prim::If"
    Loop = "prim::Loop"
    FusionGroup = "prim::FusionGroup"
    DifferentiableGraph = "prim::DifferentiableGraph"
    MetaGroup = "prim::MetaGroup"
    PythonOp = "prim::PythonOp"
    TupleConstruct = "prim::TupleConstruct"
    TupleUnpack = "prim::TupleUnpack"
    ListConstruct = "prim::ListConstruct"
    ListUnpack = "prim::ListUnpack"
    SliceConstruct = "prim::SliceConstruct"
    Print = "prim::Print"
    RaiseException = "prim::RaiseException"
    # symbolic autodiff's kinds (their meaning: ``ember.jit.autodiff``'s module doc; how
    # they run: ``ember.jit.autodiff.autodiff_prims``)
    AutogradFormula = "prim::AutogradFormula"
    AutogradAddList = "prim::AutogradAddList"
    TensorMeta = "prim::TensorMeta"
    ReduceMeta = "prim::ReduceMeta"
    BroadcastMeta = "prim::BroadcastMeta"
    GradSumToSize = "prim::GradSumToSize"


# Kinds DCE must keep even when their outputs are unused (see Node.has_side_effects).
SIDE_EFFECT_KINDS = frozenset({prim.Print, prim.RaiseException, prim.PythonOp,
                               "prim::SetAttr"})


def has_side_effects(node) -> bool:
    """Whether dead-code elimination must keep ``node`` although no output is used.

    True for the kinds in ``SIDE_EFFECT_KINDS`` (``prim::Print``, ``prim::PythonOp``, ...),
    for in-place ops (``ember::add_``: a name ending in one ``_``), and for nodes whose
    blocks contain such a node. A boolean attribute ``has_side_effects`` on the node
    overrides all of this (a tracer may mark a pure PythonOp so).
    """
    attrs = node._attrs
    if "has_side_effects" in attrs:
        return bool(attrs["has_side_effects"])
    if node.kind in SIDE_EFFECT_KINDS:
        return True
    ns, _, name = node.kind.partition("::")
    if ns != "prim" and name.endswith("_") and not name.endswith("__"):
        return True
    return any(has_side_effects(n) for b in node._blocks for n in b.nodes())


def is_inplace_kind(kind: str) -> bool:
    """Whether ``kind`` names an in-place op: ``ember::add_`` (one trailing ``_``)."""
    ns, _, name = kind.partition("::")
    return ns != "prim" and name.endswith("_") and not name.endswith("__")
