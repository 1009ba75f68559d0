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
sign of data-dependent control flow or randomness). A graph with random nodes (dropout
in train mode) gives one TracerWarning naming each of them instead of the comparison.

Reference: ``torch.jit.trace`` / ``torch.jit.TracedModule``.
"""
from __future__ import annotations

import threading
import warnings
from typing import Any, Optional

import numpy as np

from ...tensor import Tensor
from ..runtime.executor import GraphExecutor
from ..ir.graph import Graph
from ..ir.ir_types import TensorType
from .nondeterminism import describe_node, nondeterministic_nodes
from ..passes.dead_code_elimination import eliminate_dead_code
from .shape_guards import Variant, fingerprint, input_shapes
from .tracer import TracerWarning, TracingState, open_trace

__all__ = ["trace", "TracedFunction", "TracedModule", "TracingCheckError", "MAX_VARIANTS"]

#: traces kept per traced function for different input sizes; past it calls run eagerly
#: (torch._dynamo's cache_size_limit is 8 as well)
MAX_VARIANTS = 8


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
        state.set_input(t, v, i)
    for k, (qual, m, name, kind) in enumerate(state_refs):
        t = getattr(m, name)
        v = g.add_input(qual)
        v.type = TensorType.from_tensor(t)
        state.set_input(t, v, len(flat) + k)
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
    _LAST.trace = (state, result)
    return g, in_spec, out_spec


# this thread's latest trace: (TracingState, result), read right after ``_run_trace`` by
# the caller that needs its guards or its eager result
_LAST = threading.local()


def _clone(t):
    """A detached copy of ``t`` with its requires_grad (for a trace without side effects)."""
    from ...autograd.grad_mode import no_grad
    with no_grad():
        c = t.detach().clone()
    return c.requires_grad_(True) if t.requires_grad else c


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
        self._optimize = optimize
        self._variants: list = []
        self._eager_warned = False
        self._lock = threading.RLock()  # a traced fn may call itself

    def _add_variant(self, graph, executor, flat, state) -> Variant:
        v = Variant(graph, executor, input_shapes(flat), state.guards, state.pinned)
        self._variants.append(v)
        return v

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
        variants = self._variants
        S = input_shapes(flat)
        if len(variants) == 1 and S == variants[0].shapes:  # the traced sizes: no checks
            executor = variants[0].executor
        else:
            executor = self._select(S, args, flat)
            if executor is None:  # past MAX_VARIANTS: the Python function, eagerly
                return self.__wrapped__(*args)
        outs = executor(*flat)
        result, _ = _unflatten(list(outs), self._out_spec)
        return result

    # -- sizes: which trace serves a call (shape_guards.py) --------------------------------
    def _select(self, S: tuple, args, flat):
        """The executor of the trace that holds for input shapes ``S``; traces again (a
        dry run, see ``_dry_trace``) to check an unproven size or to make a new trace."""
        with self._lock:
            check = rank_check = None
            for v in self._variants:
                changed = v.changed_dims(S)
                if changed is None:  # another rank: the same graph may serve it (checked)
                    if rank_check is None and len(S) == len(v.shapes):
                        rank_check = (v, None)
                    continue
                if any(c in v.pins for c in changed) or not v.guards_hold(S):
                    continue
                if v.pinned_at is not None:  # checked per distinct input sizes
                    if not changed or S in v.verified:
                        return v.executor
                    if check is None:
                        check = (v, changed)
                    continue
                unproven = [c for c in changed if c not in v.proven]
                if not unproven:
                    return v.executor
                if check is None:
                    check = (v, unproven)
            return self._retrace(S, args, flat, check or rank_check)

    def _dry_trace(self, args):
        """Trace again on ``args`` without side effects: on clones of the inputs and of
        the module's parameters and buffers (a BatchNorm's running statistics are not
        updated twice), with the random generators forked and TracerWarnings off.
        Returns (graph, output spec, TracingState). State a Python function mutates
        outside its inputs and module (globals) is not isolated."""
        from ...random import fork_rng
        flat, spec = _flatten(args, "inputs")
        clones, _ = _unflatten([_clone(t) for t in flat], spec)
        clones = tuple(clones)
        saved = []
        for _q, m, name, kind in self._state_refs:
            table = m._parameters if kind == "param" else m._buffers
            saved.append((table, name, table[name]))
        module = self.__wrapped__ if isinstance(self, TracedModule) else None
        try:
            for table, name, t in saved:
                table[name] = _clone(t)
            with fork_rng(), warnings.catch_warnings():
                warnings.simplefilter("ignore", TracerWarning)
                graph, _in, out_spec = _run_trace(self.__wrapped__, clones, module,
                                                  self._state_refs)
        finally:
            for table, name, t in saved:
                table[name] = t
        state, _result = _LAST.trace
        _LAST.trace = None
        return graph, out_spec, state

    def _retrace(self, S, args, flat, check):
        if len(self._variants) >= MAX_VARIANTS:
            if not self._eager_warned:
                self._eager_warned = True
                warnings.warn(f"traced function: {MAX_VARIANTS} traces for different input "
                              f"sizes already; calls at further sizes run the Python "
                              f"function eagerly (see recompile_reasons())", TracerWarning,
                              stacklevel=4)
            return None
        graph, out_spec, state = self._dry_trace(args)
        same = out_spec == self._out_spec
        if check is not None and check[1] is None:  # another rank
            v = check[0]
            if same and fingerprint(graph) == v.fingerprint:
                # the same graph: a trace entry for the new ranks sharing v's executor
                # (whose ArgumentSpec keys plans by rank)
                return self._add_variant(v.graph, v.executor, flat, state).executor
            check = None
        if check is not None:
            v, unproven = check
            if same and fingerprint(graph) == v.fingerprint:
                if v.pinned_at is not None:
                    v.verified.add(S)
                else:
                    v.proven.update(unproven)
                return v.executor
            v.pins.update(unproven)
            reasons = tuple(f"input {i}: dim {d} traced at {v.shapes[i][d]}, got {S[i][d]}, "
                            f"and the trace depends on it (a size used as a plain Python "
                            f"value)" for i, d in unproven)
        else:
            reasons = self._why_no_variant(S)
        if not same:
            raise TracingCheckError(f"traced again for new input sizes, the function returned "
                                    f"{_describe(out_spec)} instead of "
                                    f"{_describe(self._out_spec)}; a traced function must "
                                    f"return the same structure at every size")
        new = self._add_variant(graph, GraphExecutor(graph, optimize=self._optimize), flat,
                                state)
        if check is not None:
            new.pins.update(unproven)
        self._variants[0].executor.record_recompile(
            tuple(f"new trace {len(self._variants) - 1}: {r}" for r in reasons))
        return new.executor

    def _why_no_variant(self, S) -> tuple:
        out = []
        for k, v in enumerate(self._variants):
            changed = v.changed_dims(S)
            if changed is None:
                out.append(f"trace {k}: input ranks or kinds differ")
                continue
            g = v.first_failed_guard(S)
            if g is not None:
                out.append(f"trace {k}: guard {g.expr} was {g.expected!r} at "
                           f"{g.where or 'the trace'}, not for the new sizes")
                continue
            for i, d in changed:
                if (i, d) in v.pins:
                    out.append(f"trace {k}: input {i}: dim {d} guarded at {v.shapes[i][d]}, "
                               f"got {S[i][d]}")
                    break
        return tuple(out) or ("no trace holds for the new sizes",)

    def recompile_reasons(self) -> list:
        """Why each trace or plan after the first was made: new traces for input sizes the
        earlier ones do not hold for (``input 1: dim 0 guarded at 4, got 8``) and plan
        cache misses of each trace's executor (``input 0: dtype float32 -> float64``)."""
        out = []
        for v in self._variants:
            out += v.executor.recompile_reasons()
        return out

    def graph_for(self, *args):
        """The optimized graph that a call with ``args`` runs."""
        flat = self._flat_inputs(args) + self._state()
        return self.executor.graph_for(*flat)

    def get_debug_state(self) -> dict:
        """The executor's debug state (see ``GraphExecutor.get_debug_state``), with
        ``traces``: per trace its guards, pinned and proven dims."""
        state = self.executor.get_debug_state()
        state["traces"] = [{"shapes": v.shapes, "guards": [f"({g.expr}) == {g.expected!r}"
                                                           for g in v.guards],
                            "pinned_at": v.pinned_at, "pins": sorted(v.pins),
                            "proven": sorted(v.proven)} for v in self._variants]
        state["recompile_reasons"] = [str(r) for r in self.recompile_reasons()]
        return state

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
    from ...nn.modules.module import Module
    args = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    is_module = isinstance(fn_or_module, Module)
    refs = _module_state(fn_or_module) if is_module else []
    module = fn_or_module if is_module else None
    graph, in_spec, out_spec = _run_trace(fn_or_module, args, module, refs)
    state, _ = _LAST.trace
    _LAST.trace = None
    cls = TracedModule if is_module else TracedFunction
    traced = cls(fn_or_module, graph, in_spec, out_spec, optimize=optimize, state_refs=refs)
    flat, _ = _flatten(args, "example inputs")
    traced._add_variant(graph, traced.executor, flat + traced._state(), state)
    if check_trace:
        _check(traced, fn_or_module, args, module, refs, check_tolerance)
    traced._compile_code(args)
    return traced


def _check(traced, fn, args, module, refs, tol: float) -> None:
    from ...autograd.grad_mode import no_grad
    from ..passes.canonicalize import canonicalize
    again, _, _ = _run_trace(fn, args, module, refs)
    a, b = str(canonicalize(traced.graph)), str(canonicalize(again))
    if a != b:
        diff = next((f"  first trace:  {x.strip()}\n  second trace: {y.strip()}"
                     for x, y in zip(a.splitlines(), b.splitlines()) if x != y), "")
        warnings.warn(f"trace check: tracing the function twice gave different graphs (does it "
                      f"depend on randomness or global state?)\n{diff}", TracerWarning,
                      stacklevel=3)
        return
    random_nodes = nondeterministic_nodes(traced.graph)
    if random_nodes:  # the outputs differ at every call: comparing them says nothing
        nodes = "\n".join("\t" + describe_node(n, module) for n in random_nodes)
        warnings.warn(f"Trace had nondeterministic nodes. Did you forget to call .eval() on "
                      f"your model? Nodes:\n{nodes}\nThe trace check did not compare the "
                      f"outputs; pass check_trace=False to ember.jit.trace to skip the check",
                      TracerWarning, stacklevel=3)
        return
    with no_grad():
        expected, _ = _flatten(fn(*args), "outputs")
    # NOTE: in the caller's grad mode, so the check compiles the very plan (ArgumentSpec)
    # that the first call with such inputs runs; under no_grad it compiled one more plan
    # and every pass ran twice per trace.
    got, _ = _flatten(traced(*args), "outputs")
    for i, (e, g) in enumerate(zip(expected, got)):
        ea, ga = e.detach().numpy(force=True), g.detach().numpy(force=True)
        if ea.shape != ga.shape or not np.allclose(ga, ea, rtol=tol, atol=tol, equal_nan=True):
            warnings.warn(f"trace check: output {i} of the traced function does not match the "
                          f"Python function (max abs difference "
                          f"{np.max(np.abs(ga - ea)) if ea.shape == ga.shape else 'shape'}); the "
                          f"trace may depend on data or randomness", TracerWarning, stacklevel=3)
            return
