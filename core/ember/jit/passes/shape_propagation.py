"""Shape propagation: give every tensor value the dtype, device, sizes and requires_grad it
has at run time, found by running the graph once on example inputs.

Before::

    graph(%x : Tensor, %w : Tensor):
      %one : int = prim::Constant[value=1]()
      %f : bool = prim::Constant[value=False]()
      %m : Tensor = ember::matmul(%x, %w)
      %v : Tensor, %i : Tensor = ember::max.dim(%m, %one, %f)
      return (%v, %i)

After ``propagate_shapes(g, [ember.ones(2, 3), ember.ones(3, 4)])``::

    graph(%x : Float(2, 3, requires_grad=0, device=cpu),
          %w : Float(3, 4, requires_grad=0, device=cpu)):
      %one : int = prim::Constant[value=1]()
      %f : bool = prim::Constant[value=False]()
      %m : Float(2, 4, requires_grad=0, device=cpu) = ember::matmul(%x, %w)
      %v : Float(2, requires_grad=0, device=cpu),
      %i : Long(2, requires_grad=0, device=cpu) = ember::max.dim(%m, %one, %f)
      return (%v, %i)

With ``keep_sizes=False`` the sizes are dropped and the rank kept (``Float(*, *,
requires_grad=0, device=cpu)``): the GraphExecutor specializes a plan on ranks, not sizes,
so a plan's graph must not claim sizes that the next call may not have.

How: the graph runs through :func:`ember.jit.runtime.interpreter.run_graph`, which reports every
value it computes. Values inside a ``prim::If`` branch that did not run keep their types;
a value computed several times (in a ``prim::Loop`` body) gets what all its runs share
(:func:`~ember.jit.ir.ir_types.unify_types`). A list of tensors gets ``T[]`` with ``T`` what
its elements share; a tuple gets one type per element. Values holding no tensor keep their
types, and so do the values of subgraph attributes (``prim::FusionGroup``).

Without ``inputs``, zeros are made from the graph input types when every input is a tensor
of complete type (:meth:`TensorType.is_complete`); otherwise the graph is left unchanged,
as it is when running those zeros fails (say, an integer division by zero).

NOTE: running has the graph's side effects once (``prim::Print`` prints, a
``prim::PythonOp`` is called). Random ops do not disturb the caller's random stream (the
default generators are restored), and tensor inputs are copied first when the graph has
in-place ops, so the caller's tensors are never written.

Reference: PyTorch's ``PropagateInputShapes`` (``torch/csrc/jit/passes/shape_analysis.cpp``),
which reasons about each op symbolically; ember runs the ops instead, which is exact for
the inputs given and needs no per-op shape formula.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from ember.ops import namespace as E
from ember.random import default_generator
from ember.jit.runtime.interpreter import JitRuntimeError, run_graph
from ember.jit.ir.graph import Graph, JitType, ListType, TensorType, TupleType, prim, unify_types

__all__ = ["propagate_shapes"]

_CONFLICT = object()  # runs of one value disagreed beyond what unify_types can express
_NON_WRITING_KINDS = frozenset({prim.Print, prim.RaiseException})


def propagate_shapes(graph: Graph, inputs: Optional[Sequence] = None,
                     keep_sizes: bool = True) -> None:
    """Set, in place, the type of every tensor-holding value of ``graph`` that runs on
    ``inputs`` (see the module docstring).

    Args:
        graph: the graph; its value types are replaced by what the run observed.
        inputs: one runtime value per graph input (Tensors, ints, lists, ...), or None to
            run on zeros shaped like the graph's complete input types.
        keep_sizes: False to record only the rank of each tensor (sizes ``*``).
    Raises ValueError for a wrong number of ``inputs``, and JitRuntimeError when the graph
    fails on the ``inputs`` given (never for the zeros made without them).
    """
    given = inputs is not None
    if given:
        inputs = list(inputs)
    else:
        inputs = _example_inputs(graph)
        if inputs is None:
            return
    if any(n.has_side_effects and not n.blocks and n.kind not in _NON_WRITING_KINDS
           for n in graph.all_nodes()):
        inputs = [_private_copy(x) for x in inputs]

    observed: dict = {}

    def on_value(value, obj):
        t = _observed_type(value.type, obj, keep_sizes)
        if t is None:
            return
        old = observed.get(value)
        if old is None:
            observed[value] = t
        elif old is not _CONFLICT:
            observed[value] = unify_types(old, t) or _CONFLICT

    states = _rng_states(inputs)
    try:
        run_graph(graph, inputs, on_value)
    except JitRuntimeError:
        if given:
            raise
        return
    finally:
        for gen, state in states:
            gen.set_state(state)
    for value, t in observed.items():
        if t is not _CONFLICT:
            value.type = t


def _observed_type(old: JitType, obj: Any, keep_sizes: bool) -> Optional[JitType]:
    """The type to give a value that held ``obj`` (None: keep its type ``old``)."""
    if isinstance(obj, E.Tensor):
        if keep_sizes:
            return TensorType.from_tensor(obj)
        return TensorType(obj.dtype, obj.device, obj.ndim, None, bool(obj.requires_grad))
    if not isinstance(obj, (list, tuple)):
        return None
    if isinstance(old, TupleType) and len(old.elems) == len(obj):
        elems = [_observed_type(e, o, keep_sizes) or e for e, o in zip(old.elems, obj)]
        return TupleType(tuple(elems))
    if isinstance(old, ListType) and obj and all(isinstance(o, E.Tensor) for o in obj):
        elem = None
        for o in obj:
            t = _observed_type(old.elem, o, keep_sizes)
            elem = t if elem is None else unify_types(elem, t)
        return ListType(elem)
    return None


def _example_inputs(graph: Graph) -> Optional[list]:
    """Zeros shaped like the graph inputs, or None unless all are complete tensor types."""
    out = []
    for v in graph.inputs:
        t = v.type
        if not isinstance(t, TensorType) or not t.is_complete:
            return None
        x = E.zeros(t.concrete_sizes(), dtype=t.dtype, device=t.device)
        if t.requires_grad:
            if not t.dtype.is_floating_point:
                return None  # no such tensor can exist
            x.requires_grad_()
        out.append(x)
    return out


def _private_copy(x: Any) -> Any:
    if isinstance(x, E.Tensor):
        return x.clone()  # keeps requires_grad (as a non-leaf when x requires grad)
    if isinstance(x, (list, tuple)):
        return type(x)(_private_copy(e) for e in x)
    return x


def _rng_states(inputs) -> list:
    """Snapshots of the default generators the run may draw from."""
    device_types = {"cpu"} | {x.device.type for x in inputs if isinstance(x, E.Tensor)}
    states = []
    for dt in sorted(device_types):
        try:
            gen = default_generator(dt)
            states.append((gen, gen.get_state()))
        except Exception:  # noqa: BLE001 - a device without a random generator draws none
            continue
    return states
