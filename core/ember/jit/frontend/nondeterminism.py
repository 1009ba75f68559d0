"""Which nodes of a traced graph draw random numbers, named for the trace check's warning.

A trace of a model left in train mode records ``ember::dropout(x, p, True)``: the traced
function then differs from the Python function at every call, and ``check_trace`` cannot
compare their outputs. ``trace`` warns once, naming each such node with its module and
source line, as ``torch.jit.trace`` does ("Trace had nondeterministic nodes. Did you forget
call .eval() on your model? Nodes: ...").

A node is nondeterministic when its op takes a ``Generator`` argument (``randn``,
``bernoulli``, ``normal_``, ``multinomial``, ...) or is a train-mode-only random op
(``dropout`` and its variants, ``rrelu``) whose ``train`` input is not the constant False.

Reference: PyTorch's ``Node::isNondeterministic`` (``torch/csrc/jit/ir/ir.cpp``) and the
warning of ``torch.jit._trace._check_trace``.
"""
from __future__ import annotations

from typing import Optional

from ember.jit.runtime.op_registry import is_op_kind, op_info

__all__ = ["is_nondeterministic", "nondeterministic_nodes", "describe_node"]

# random only in training: their "train"/"training" input says whether they draw
_TRAIN_RANDOM = frozenset({"dropout", "feature_dropout", "alpha_dropout",
                           "feature_alpha_dropout", "rrelu"})


def is_nondeterministic(node) -> bool:
    """Whether ``node`` (an :class:`~ember.jit.ir.Node`) may give different results on two
    runs with the same inputs: it draws from a random generator."""
    if not is_op_kind(node.kind):
        return False
    schema = op_info(node.kind).schema
    if schema is None:
        return False
    names = [a.name for a in schema.arguments]
    if node.kind.partition("::")[2].rstrip("_") in _TRAIN_RANDOM:
        for flag in ("train", "training"):
            if flag in names and names.index(flag) < len(node.inputs):
                v = node.inputs[names.index(flag)]
                return not (v.is_constant and not v.to_ivalue())  # constant False: no draw
        return True
    return any(a.type.base == "Generator" for a in schema.arguments)


def nondeterministic_nodes(graph) -> list:
    """The nondeterministic nodes of ``graph``, nested blocks included, in order."""
    return [n for n in graph.all_nodes() if is_nondeterministic(n)]


def describe_node(node, module=None) -> str:
    """``ember::dropout at 2 (Dropout) -> %20, traced at model.py:7``: the node's kind,
    the module path (scope) that produced it and that module's class when ``module`` (the
    traced root Module) is given, its first output and its source location."""
    out = node.kind
    if node.scope is not None:
        cls = _class_name(module, node.scope)
        out += f" at {node.scope or '<root>'}" + (f" ({cls})" if cls else "")
    if node.outputs:
        out += f" -> %{node.outputs[0].debug_name}"
    if node.source_location:
        out += f", traced at {node.source_location}"
    return out


def _class_name(module, scope: str) -> Optional[str]:
    if module is None:
        return None
    try:
        return type(module.get_submodule(scope) if scope else module).__name__
    except (AttributeError, KeyError, ValueError, TypeError):
        return None
