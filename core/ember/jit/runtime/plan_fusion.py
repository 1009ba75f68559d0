"""How an ExecutionPlan (``plan.py``) writes a ``prim::FusionGroup`` node.

A compiled fused kernel pays off on large tensors only: below its fuser's
``min_elements`` a call costs more than the few ufuncs it replaces (the CPU fuser's
blocked engine: 10-20 us a call, against 0.5 us a ufunc on 10 elements). A traced graph
serves every batch size (its sizes are symbolic), so whether a group is large is known
only at run time. The plan therefore writes both ways and picks one per call::

    x_a = x._data
    y_a = y._data
    if x_a.size < 32768 and y_a.size < 32768:
        v2 = _np_multiply_1(x_a, y_a)  # ember::mul
        v4 = _np_add_2(v2, 1.0)  # ember::add
        v5 = _np_tanh_3(v4)  # ember::tanh
    else:
        v5_t, = _op4(x, y)  # prim::FusionGroup
        v5 = v5_t._data

The first branch is the group's subgraph written as the rest of the plan is (array mode
when no gradient is needed), so small calls run exactly what an unfused plan would. A
group whose fuser declined it, or that has no fuser, is written that way alone, rather than
run through the interpreter. A fuser without ``min_elements`` gets only the kernel call.

Reference: NNC's and nvFuser's fallback to the unfused graph for shapes a kernel does not
serve (``torch/csrc/jit/passes/tensorexpr_fuser.cpp``: ``prim::TypeCheck`` + ``prim::If``).
"""
from __future__ import annotations

from .interpreter import runtime_op
from .plan_array_mode import Form, is_tensor

__all__ = ["emit_fusion_group"]


def emit_fusion_group(em, n, indent: str) -> None:
    """Write FusionGroup node ``n`` into emitter ``em`` (``plan._Emitter``) as the module
    docstring shows."""
    op = runtime_op(n)
    threshold = getattr(op.fuser, "min_elements", None) if op.kernel is not None else 0
    kinds = [em.crossing_form(o) for o in n.outputs]
    outs = [em.name(o) for o in n.outputs]
    if op.kernel is None:  # declined: the subgraph's own lines, always
        _inline(em, n, indent, outs, kinds)
    elif not threshold:
        em.generic(n, indent, op)
        return
    else:
        sizes = [f"{em.as_array(v, indent)}.size < {int(threshold)}" for v in n.inputs
                 if is_tensor(v)]
        em.lines.append(f"{indent}if {' and '.join(sizes) or 'False'}:")
        _inline(em, n, indent + "    ", outs, kinds)
        em.lines.append(f"{indent}else:")
        em.forms.append({})
        inner = indent + "    "
        args = [em.arg(v, inner) for v in n.inputs]
        em.runtime_ops.append((n, op))
        fn = em.const(op, "op")
        tmp = [f"{o}_t" if k is Form.ARRAY else o for o, k in zip(outs, kinds)]
        em.lines.append(f"{inner}{', '.join(tmp)}, = {fn}({', '.join(args)})  # {n.kind}")
        for o, t, k in zip(outs, tmp, kinds):
            if k is Form.ARRAY:
                em.lines.append(f"{inner}{o} = {t}._data")
        em.forms.pop()
    for o, name, k in zip(n.outputs, outs, kinds):
        em.define(o, k, name)


def _inline(em, n, indent: str, outs: list, kinds: list) -> None:
    """The group's subgraph, its inputs bound to ``n``'s, its outputs assigned to
    ``outs`` in the forms ``kinds``."""
    sub = n.g("Subgraph")
    em.forms.append({})
    for inner_v, outer_v in zip(sub.inputs, n.inputs):
        em.forms[-1][inner_v] = dict(em.form(outer_v))
    start = len(em.lines)
    em.block(sub.block, indent)
    for o, v, k in zip(outs, sub.outputs, kinds):
        src = em.in_form(v, k, indent)
        em.lines.append(f"{indent}{o} = {src}")
    if len(em.lines) == start:
        em.lines.append(f"{indent}pass")
    em.forms.pop()
