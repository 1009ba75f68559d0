"""The runtime of ``prim::DifferentiableGraph``: run ``f``, record a backward that runs
``df`` (the seeds' ``DifferentiableGraphOp`` and ``DifferentiableGraphBackward``).

A ``prim::DifferentiableGraph`` node carries a :class:`~ember.jit.autodiff.Gradient` in its
attributes (:func:`pack_gradient`: ``Subgraph`` = f, ``ReverseSubgraph`` = df, and the
int lists). The interpreter and every ExecutionPlan build one
:class:`DifferentiableGraphOp` per node (``register_prim_factory``); each call:

1. if grad mode is off or no input that ``df`` differentiates requires grad, runs ``f``
   and drops its temporary outputs: nothing is recorded;
2. otherwise makes a :class:`DifferentiableGraphBackward` node whose edges are those
   inputs' gradient edges (a tensor list gives one edge per tensor), saves the captured
   inputs (before detaching, so a double backward reaches their history), runs ``f`` on
   detached inputs under ``no_grad``, makes the node the ``grad_fn`` of every floating
   output listed in ``df_input_vjps`` (``output_nr`` counts tensors in that order),
   saves the captured outputs and returns the real outputs.

The backward node runs ``df`` through its own :class:`~ember.jit.runtime.executor.GraphExecutor`
(one per op, shared by its calls). Under ``create_graph=True`` the engine runs in grad
mode: the vjps require grad, captured inputs keep their history and captured outputs
come back with this node as ``grad_fn`` (as saved outputs do in eager mode), so ``df``'s
plan records eager autograd and double backward works.

How the prim kinds of :mod:`ember.jit.autodiff` run (``prim::TensorMeta``,
``prim::AutogradFormula``, ...) is :mod:`ember.jit.autodiff.autodiff_prims` (its metas are
re-exported here). This module sits above the executor and imports it; the executor does
not import this one: a node holding a Gradient is made only by :func:`pack_gradient`, so
the factory below is registered whenever a plan can meet one (a node without a Gradient
runs its ``Subgraph`` inline, through the interpreter's default).

Reference: PyTorch's ``graph_executor.cpp`` (``DifferentiableGraphOp``,
``DifferentiableGraphBackward``, ``CaptureList``, ``UnpackInstructions``,
``packGradient``, ``getGradient``).
"""
from __future__ import annotations

from ember.autograd.function import FREED, InputMetadata, Node, SavedVariable, gradient_edge, \
    input_metadata, unpack
from ember.autograd.grad_mode import STATE, no_grad
from ember.jit.autodiff.differentiation import META_KINDS, Gradient
# re-exported: the metas lived here before autodiff_prims.py
from ember.jit.autodiff.autodiff_prims import (TensorMeta, broadcast_meta, cat_meta, reduce_grad,
                                               reduce_meta, tensor_meta)
from ember.jit.runtime.executor import GraphExecutor
from ember.jit.runtime.interpreter import register_prim_factory, run_graph
from ember.jit.ir.kinds import prim
from ember.tensor import Tensor

__all__ = ["DifferentiableGraphOp", "DifferentiableGraphBackward", "pack_gradient",
           "get_gradient", "TensorMeta", "tensor_meta", "cat_meta", "reduce_grad",
           "reduce_meta", "broadcast_meta"]

_INT_LISTS = ("df_input_vjps", "df_input_captured_inputs", "df_input_captured_outputs",
              "df_output_vjps")


# ---- the Gradient in a node's attributes --------------------------------------------------
def pack_gradient(gradient: Gradient, node) -> None:
    """Store ``gradient`` in ``prim::DifferentiableGraph`` ``node``: ``Subgraph`` (f),
    ``ReverseSubgraph`` (df), ``f_real_outputs`` and the four offset lists.

    Raises ValueError for another node kind, or when the node's outputs do not match
    ``f_real_outputs`` or its inputs ``f``'s inputs.
    """
    if node.kind != prim.DifferentiableGraph:
        raise ValueError(f"pack_gradient: expected a {prim.DifferentiableGraph} node, got "
                         f"{node.kind}")
    if len(node.outputs) != gradient.f_real_outputs or \
            len(node.inputs) != len(gradient.f.inputs):
        raise ValueError(f"pack_gradient: the node has {len(node.inputs)} inputs and "
                         f"{len(node.outputs)} outputs but f takes {len(gradient.f.inputs)} "
                         f"and returns {gradient.f_real_outputs} real outputs")
    node.set_attr("Subgraph", gradient.f).set_attr("ReverseSubgraph", gradient.df)
    node.set_attr("f_real_outputs", int(gradient.f_real_outputs))
    for name in _INT_LISTS:
        node.set_attr(name, [int(i) for i in getattr(gradient, name)])


def get_gradient(node) -> Gradient:
    """The Gradient :func:`pack_gradient` stored in ``node`` (the graphs themselves, not
    copies). Raises ValueError when ``node`` holds none."""
    if node.kind != prim.DifferentiableGraph or not node.has_attr("ReverseSubgraph"):
        raise ValueError(f"get_gradient: {node.kind} node holds no Gradient (no "
                         f"ReverseSubgraph); differentiate its Subgraph and pack_gradient")
    return Gradient(node.g("Subgraph"), node.g("ReverseSubgraph"), node.attr("f_real_outputs"),
                    *[list(node.attr(name)) for name in _INT_LISTS])


# ---- the runtime --------------------------------------------------------------------------
class DifferentiableGraphBackward(Node):
    """The backward of one DifferentiableGraph call: runs ``df`` on the incoming gradients
    and the captured values; one output per tensor among the differentiated inputs (a
    tensor list counts each tensor)."""

    __slots__ = ("executor", "captures", "vjp_layout", "out_layout")

    def __init__(self, executor):
        super().__init__()
        self.executor = executor
        self.captures: list = []
        self.vjp_layout: list = []  # per df vjp input: None (one tensor) or a list length
        self.out_layout: list = []  # per df output: the same

    def apply(self, grads):
        args, i = [], 0
        for n in self.vjp_layout:
            if n is None:
                args.append(grads[i] if i < len(grads) else None)
                i += 1
            else:  # a tensor list: regroup its gradients (all None: undefined)
                part = [grads[j] if j < len(grads) else None for j in range(i, i + n)]
                args.append(part if any(g is not None for g in part) else None)
                i += n
        args += [unpack(c, self) for c in self.captures]
        outs = self.executor(*args)
        result = []
        for v, n in zip(outs, self.out_layout):
            if n is None:
                result.append(v if isinstance(v, Tensor) else None)
            else:
                result.extend([None] * n if v is None else v)
        return result

    def release_variables(self) -> None:
        self.captures = [FREED if c.__class__ is SavedVariable else
                         tuple(FREED for _ in c) if _saved_list(c) else c
                         for c in self.captures]


def _saved_list(c) -> bool:
    return c.__class__ is tuple and bool(c) and c[0].__class__ is SavedVariable


class DifferentiableGraphOp:
    """Runs one ``prim::DifferentiableGraph`` node (see the module docstring). Built once
    per node; ``op(*inputs) -> list`` of the node's outputs.

    Attributes: ``grad`` (the Gradient), ``f_executor`` and ``grad_executor`` (the
    GraphExecutors of ``f`` and ``df``).
    """

    def __init__(self, node):
        self.grad = g = get_gradient(node)
        # NOTE: f was optimized with the graph around it; its own executor still compiles a
        # plan per spec, because a no-grad plan runs its kernels on arrays (array mode)
        self.f_executor = GraphExecutor(g.f)
        self.grad_executor = GraphExecutor(g.df)
        self.real = g.f_real_outputs
        self._constants = {id(n.attr("value")) for n in g.f.nodes()
                           if n.kind == prim.Constant and isinstance(n.attr("value"), Tensor)}
        # captured outputs that are metas (shapes, never tensors) are kept as they are
        self._meta_outputs = [g.f.outputs[i].node.kind in _META_PRODUCERS
                              for i in g.df_input_captured_outputs]

    def __call__(self, *inputs) -> list:
        g = self.grad
        if not (STATE.enabled and any(_requires_grad(inputs[i]) for i in g.df_output_vjps)):
            with no_grad():
                return list(self.f_executor(*inputs)[:self.real])
        node = DifferentiableGraphBackward(self.grad_executor)
        edges = []
        for i in g.df_output_vjps:
            v = inputs[i]
            if isinstance(v, (list, tuple)):
                edges += [gradient_edge(t) if isinstance(t, Tensor) else None for t in v]
                node.out_layout.append(len(v))
            else:
                edges.append(gradient_edge(v) if isinstance(v, Tensor) else None)
                node.out_layout.append(None)
        node.next_functions = tuple(edges)
        captures = [_capture(inputs[i], node) for i in g.df_input_captured_inputs]
        with no_grad():
            outs = list(self.f_executor(*[_detach(v) for v in inputs]))
        meta, seen = [], {id(v) for v in inputs}
        seen |= self._constants  # outputs that are not fresh tensors get a fresh alias
        for i in g.df_input_vjps:
            v = outs[i]
            if isinstance(v, (list, tuple)):
                outs[i] = type(v)(_hook(t, node, meta, seen) for t in v)
                node.vjp_layout.append(len(v))
            else:
                outs[i] = _hook(v, node, meta, seen)
                node.vjp_layout.append(None)
        node._out_meta = tuple(meta)
        node.captures = captures + [outs[i] if meta else _capture(outs[i], node) for i, meta
                                    in zip(g.df_input_captured_outputs, self._meta_outputs)]
        return outs[:self.real]


# what makes the metas a forward captures (a list of metas included)
_META_PRODUCERS = META_KINDS | {prim.MetaGroup}


def _requires_grad(v) -> bool:
    if isinstance(v, Tensor):
        return v.requires_grad
    if isinstance(v, (list, tuple)):
        return any(isinstance(t, Tensor) and t.requires_grad for t in v)
    return False


def _detach(v):
    if isinstance(v, Tensor):
        return v.detach()
    if isinstance(v, (list, tuple)):
        return type(v)(t.detach() if isinstance(t, Tensor) else t for t in v)
    return v


def _hook(t, node, meta: list, seen: set):
    """Make ``node`` the ``grad_fn`` of output ``t`` (input ``len(meta)`` of the node)."""
    if not isinstance(t, Tensor) or not t._type.scalar_type.is_floating_point:
        meta.append(None)  # no gradient for integral outputs, as in eager mode
        return t
    if id(t) in seen:  # an output twice, an input or a constant: hook an alias instead
        t = t.detach()
    seen.add(id(t))
    t.grad_fn, t.output_nr, t._requires_grad = node, len(meta), True
    if t._base is not None:
        t._view_version = t._vc.value
    typ = t._type  # input_metadata, inlined: an index only on multi-device backends
    meta.append(tuple.__new__(InputMetadata, (t._data.shape, typ, None))
                if typ.backend.device_count == 1 else input_metadata(t))
    return t


def _capture(v, node):
    """What the backward keeps of ``v``: a SavedVariable per tensor (an output hooked to
    ``node`` is saved as an output, so it unpacks with ``node`` as its ``grad_fn``)."""
    if isinstance(v, Tensor):
        return SavedVariable(v, "captured", is_output=v.grad_fn is node)
    if isinstance(v, (list, tuple)) and v and all(isinstance(t, Tensor) for t in v):
        return tuple(SavedVariable(t, f"captured[{k}]", is_output=t.grad_fn is node)
                     for k, t in enumerate(v))
    return v


@register_prim_factory(prim.DifferentiableGraph)
def _differentiable_graph(node):
    if not node.has_attr("ReverseSubgraph"):  # not differentiated (yet): run f inline
        sub = node.g("Subgraph")
        return lambda *args: run_graph(sub, list(args))[:len(node.outputs)]
    return DifferentiableGraphOp(node)
