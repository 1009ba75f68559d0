"""``ember.jit.trace``: turn a function or Module into a graph run by a GraphExecutor.

    def f(x, y):
        return (x * y + 1).sin()

    tf = ember.jit.trace(f, (x, y))
    tf(x2, y2)          # runs the optimized plan for (x2, y2)'s ArgumentSpec
    print(tf.graph)     # the traced graph
    print(tf.code)      # the Python the plan for the example inputs runs

Inputs and outputs may be Tensors or nested tuples/lists of Tensors; the structure is fixed
at trace time. A Module's parameters and buffers become graph inputs after the user's
inputs (``%fc1.weight``), read from the module at every call, so training updates them
in place and the traced module sees the new values. The graph bakes in everything else:
Python control flow, non-tensor arguments, the module's training flag.

``check_trace=True`` (the default) traces a second time and runs the traced function on
the example inputs: a different graph or a different result gives a TracerWarning (a
sign of data-dependent control flow or randomness).

Reference: ``torch.jit.trace`` / ``torch.jit.TracedModule``.
"""
from __future__ import annotations

import warnings
from typing import Any, Optional

import numpy as np

from ..tensor import Tensor
from .executor import GraphExecutor
from .ir import Graph
from .ir_types import TensorType
from .passes.dead_code_elimination import eliminate_dead_code
from .tracer import TracerWarning, TracingState, open_trace

__all__ = ["trace", "TracedFunction", "TracedModule", "TracingCheckError"]


class TracingCheckError(ValueError):
    """The inputs of a traced function do not have the structure it was traced with."""


def _flatten(obj, what: str) -> tuple[list, Any]:
    """Tensors of a nested tuple/list, and the structure to rebuild it (Tensor -> None)."""
    if isinstance(obj, Tensor):
        return [obj], None
    if isinstance(obj, (tuple, list)):
        flat, spec = [], []
        for item in obj:
            f, s = _flatten(item, what)
            flat += f
            spec.append(s)
        return flat, (type(obj), tuple(spec))
    raise TypeError(f"trace: {what} must be Tensors or (nested) tuples/lists of Tensors, got "
                    f"{type(obj).__name__}; pass other values through a closure or "
                    f"functools.partial")


def _unflatten(flat, spec, pos: int = 0):
    if spec is None:
        return flat[pos], pos + 1
    cls, items = spec
    out = []
    for s in items:
        v, pos = _unflatten(flat, s, pos)
        out.append(v)
    return (tuple(out) if cls is tuple else out), pos


def _module_state(module) -> list:
    """(qualified name, owning module, attribute, kind) of every parameter and buffer."""
    out, seen = [], set()
    for prefix, m in module.named_modules():
        for kind, table in (("param", m._parameters), ("buffer", m._buffers)):
            for name, t in table.items():
                if t is None or id(t) in seen:
                    continue
                seen.add(id(t))
                out.append((f"{prefix}.{name}" if prefix else name, m, name, kind))
    return out


def _run_trace(fn, args: tuple, module=None, state_refs=()) -> tuple:
    """Trace ``fn(*args)``; returns (graph, input spec, output spec)."""
    flat, in_spec = _flatten(args, "example inputs")
    state = TracingState()
    g = state.graph
    for i, t in enumerate(flat):
        v = g.add_input(f"x{i}" if len(flat) > 1 else "x")
        v.type = TensorType.from_tensor(t)
        state.set_value(t, v)
    for qual, m, name, kind in state_refs:
        t = getattr(m, name)
        v = g.add_input(qual)
        v.type = TensorType.from_tensor(t)
        state.set_value(t, v)
    handles = _scope_hooks(module, state) if module is not None else []
    try:
        with open_trace(state):
            result = fn(*args)
    finally:
        for h in handles:
            h.remove()
    outs, out_spec = _flatten(result, "outputs")
    for t in outs:
        g.register_output(state.value_of(t))
    eliminate_dead_code(g)
    g.lint()
    return g, in_spec, out_spec


def _scope_hooks(module, state) -> list:
    """Hooks that keep ``state.scope`` at the path of the module running (node.scope)."""
    def enter(mod, inp, name):
        state.scope.append(name)

    def leave(mod, inp, out):
        if state.scope:
            state.scope.pop()  # a hook's non-None return would replace the output

    handles = []
    for name, m in module.named_modules():
        if name:
            handles.append(m.register_forward_pre_hook(
                lambda mod, inp, _n=name: enter(mod, inp, _n)))
            handles.append(m.register_forward_hook(leave))
    return handles


class TracedFunction:
    """A traced function: call it like the original; ``graph``, ``code``, ``graph_for``,
    ``get_debug_state`` for inspection. Built by :func:`trace`."""

    def __init__(self, fn, graph: Graph, in_spec, out_spec, optimize: bool = True,
                 state_refs=()):
        self.__wrapped__ = fn
        self.graph = graph
        self._in_spec = in_spec
        self._out_spec = out_spec
        self._state_refs = list(state_refs)
        self._n_user = len(graph.inputs) - len(self._state_refs)
        self.executor = GraphExecutor(graph, optimize=optimize)
        self._flat_in = in_spec is not None and all(s is None for s in in_spec[1])
        self.code: Optional[str] = None

    def _state(self) -> list:
        return [getattr(m, name) for _q, m, name, _k in self._state_refs]

    def _flat_inputs(self, args) -> list:
        if self._flat_in and len(args) == self._n_user and all(
                a.__class__ is Tensor for a in args):
            return list(args)
        flat, spec = _flatten(tuple(args), "inputs")
        if spec != self._in_spec:
            raise TracingCheckError(f"this function was traced with inputs structured as "
                                    f"{_describe(self._in_spec)}, got {_describe(spec)}; "
                                    f"trace it again for the new structure")
        return flat

    def __call__(self, *args):
        flat = self._flat_inputs(args)
        if self._state_refs:
            flat += self._state()
        outs = self.executor(*flat)
        result, _ = _unflatten(list(outs), self._out_spec)
        return result

    def graph_for(self, *args):
        """The optimized graph that a call with ``args`` runs."""
        flat = self._flat_inputs(args) + self._state()
        return self.executor.graph_for(*flat)

    def get_debug_state(self) -> dict:
        """The executor's debug state (see ``GraphExecutor.get_debug_state``)."""
        return self.executor.get_debug_state()

    def _compile_code(self, args) -> None:
        flat = self._flat_inputs(args) + self._state()
        self.code = self.executor._plan_for(flat).code


class TracedModule(TracedFunction):
    """A traced Module. Calls run the graph with the module's current parameters and
    buffers; every other attribute (``parameters()``, ``state_dict()``, ``train()``) is the
    original module's, so optimizers and checkpoints work on it unchanged."""

    def __init__(self, module, *args, **kwargs):
        super().__init__(module, *args, **kwargs)
        self.module = module

    def __getattr__(self, name):
        if name == "module":
            raise AttributeError(name)
        return getattr(self.module, name)

    def __repr__(self) -> str:
        return f"TracedModule({self.module!r})"


def _describe(spec) -> str:
    if spec is None:
        return "Tensor"
    cls, items = spec
    inner = ", ".join(_describe(s) for s in items)
    return f"({inner}{',' if cls is tuple and len(items) == 1 else ''})" if cls is tuple \
        else f"[{inner}]"


def trace(fn_or_module, example_inputs, check_trace: bool = True, optimize: bool = True,
          check_tolerance: float = 1e-5):
    """Trace ``fn_or_module`` on ``example_inputs``; returns a TracedFunction (or a
    TracedModule for an ``ember.nn.Module``).

    Args:
        fn_or_module: a Python function or an ``ember.nn.Module``.
        example_inputs: a Tensor, or a tuple of arguments (Tensors, or nested tuples/lists
            of Tensors).
        check_trace: re-trace and re-run to catch traces that will not generalize
            (TracerWarning).
        optimize: False runs every call through the unoptimized fallback plan.
        check_tolerance: relative/absolute tolerance of the check's comparison.
    Raises TypeError for inputs or outputs that are not Tensors (or nests of them).
    Reference: ``torch.jit.trace``.
    """
    from ..nn.modules.module import Module
    args = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    is_module = isinstance(fn_or_module, Module)
    refs = _module_state(fn_or_module) if is_module else []
    module = fn_or_module if is_module else None
    graph, in_spec, out_spec = _run_trace(fn_or_module, args, module, refs)
    cls = TracedModule if is_module else TracedFunction
    traced = cls(fn_or_module, graph, in_spec, out_spec, optimize=optimize, state_refs=refs)
    if check_trace:
        _check(traced, fn_or_module, args, module, refs, check_tolerance)
    traced._compile_code(args)
    return traced


def _check(traced, fn, args, module, refs, tol: float) -> None:
    from ..autograd.grad_mode import no_grad
    from .passes.canonicalize import canonicalize
    again, _, _ = _run_trace(fn, args, module, refs)
    a, b = str(canonicalize(traced.graph)), str(canonicalize(again))
    if a != b:
        diff = next((f"  first trace:  {x.strip()}\n  second trace: {y.strip()}"
                     for x, y in zip(a.splitlines(), b.splitlines()) if x != y), "")
        warnings.warn(f"trace check: tracing the function twice gave different graphs (does it "
                      f"depend on randomness or global state?)\n{diff}", TracerWarning,
                      stacklevel=3)
        return
    with no_grad():
        expected, _ = _flatten(fn(*args), "outputs")
        got, _ = _flatten(traced(*args), "outputs")
    for i, (e, g) in enumerate(zip(expected, got)):
        ea, ga = e.detach().numpy(force=True), g.detach().numpy(force=True)
        if ea.shape != ga.shape or not np.allclose(ga, ea, rtol=tol, atol=tol, equal_nan=True):
            warnings.warn(f"trace check: output {i} of the traced function does not match the "
                          f"Python function (max abs difference "
                          f"{np.max(np.abs(ga - ea)) if ea.shape == ga.shape else 'shape'}); the "
                          f"trace may depend on data or randomness", TracerWarning, stacklevel=3)
            return
