"""GraphExecutor: runs one graph, compiling an ExecutionPlan per ArgumentSpec.

    ex = GraphExecutor(graph)
    outs = ex(x, w)            # a tuple, one entry per graph output
    ex.graph_for(x, w)         # the optimized graph that call ran

Each call computes the call's key (grad mode; per input: Type (dtype and device), rank,
requires_grad; the type of a non-tensor) and looks its plan up in a cache. A miss takes
the lock, compiles (``compile_spec``: the stages of ``pipeline.py``, in the seeds' order)
and stores the plan, so concurrent callers compile once and then run without locking.
``optimize=False`` builds one fallback plan (required passes only) used for every call.

Every miss after the first records why (``recompile_reasons()``: the fields of the new
spec that differ from the nearest cached one, see ``recompiles.py``) and logs it when
``EMBER_JIT_LOG`` lists ``recompiles``; ``record_recompile`` adds misses only the tracer
sees (shape guards).

Counters (``counters()``) follow PyTorch's runtime counters: executors constructed,
invocations, plan-cache hits and misses. ``last_executed_optimized_graph()`` is per
thread, like the seeds' thread_local weak pointer.

Reference: PyTorch's ``GraphExecutorImpl`` (the seed file ``graph_executor.cpp``).
"""
from __future__ import annotations

import threading
import warnings
from typing import Optional

from ...autograd import grad_mode as _grad_mode
from ...tensor import Tensor
from ..passes import pass_manager as _pipeline
from . import recompiles as _recompiles
from .argument_spec import ArgumentSpec, TensorArg, TensorListArg, ValueArg
from ..ir.ir_types import ListType, NoneType, TensorType
from ..ir.kinds import prim
from .plan import ExecutionPlan
from ..frontend.tracing_state import STATE as _tracing
from . import autograd_prims as _autograd_prims  # noqa: F401 - registers how they run
from . import fuser as _fuser
# re-exported: the autodiff stage's knob and thresholds live with the pipeline table
from ..passes.pass_manager import (AUTODIFF_SUBGRAPH_INLINE_THRESHOLD,
                                   AUTODIFF_SUBGRAPH_NODE_THRESHOLD, autodiff_subgraph_inlining,
                                   debug_set_autodiff_subgraph_inlining)

__all__ = ["GraphExecutor", "counters", "reset_counters", "last_executed_optimized_graph",
           "debug_set_autodiff_subgraph_inlining", "autodiff_subgraph_inlining",
           "AUTODIFF_SUBGRAPH_NODE_THRESHOLD", "AUTODIFF_SUBGRAPH_INLINE_THRESHOLD"]

_counter_lock = threading.Lock()
_COUNTERS = {"executors_constructed": 0, "invocations": 0, "plan_cache_hits": 0,
             "plan_cache_misses": 0, "pass_failures": 0}
_local = threading.local()


def counters() -> dict:
    """A snapshot of the runtime counters: ``executors_constructed``, ``invocations``,
    ``plan_cache_hits``, ``plan_cache_misses``, ``pass_failures``."""
    with _counter_lock:
        return dict(_COUNTERS)


def reset_counters() -> None:
    """Set every counter to 0."""
    with _counter_lock:
        for k in _COUNTERS:
            _COUNTERS[k] = 0


def _count(name: str) -> None:
    with _counter_lock:
        _COUNTERS[name] += 1


def last_executed_optimized_graph():
    """The optimized graph of the plan this thread ran last, or None."""
    return getattr(_local, "last", None)


def _key_of(inputs) -> tuple:
    key = [_grad_mode.STATE.enabled]
    for x in inputs:
        if x.__class__ is Tensor:
            key.append((x._type, x._data.ndim,
                        x._requires_grad or (x._base is not None and x._base._requires_grad)))
        elif x.__class__ is list or x.__class__ is tuple:  # a Tensor[] input
            key.append(_key_of(x))
        else:
            key.append(type(x))
    return tuple(key)


class GraphExecutor:
    """Runs ``graph`` on flat inputs, one plan per ArgumentSpec (see the module doc).

    Args:
        graph: the Graph to run (copied per plan, never changed).
        optimize: False runs every call through one unoptimized fallback plan.
    Call it as ``ex(*inputs)`` with one value per graph input; returns a tuple with one
    value per graph output. Raises ValueError for a wrong number of inputs; errors of the
    ops themselves propagate.
    """

    def __init__(self, graph, optimize: bool = True):
        self.graph = graph
        self.optimize = optimize
        self.num_inputs = len(graph.inputs)
        self._plans: dict = {}     # the hot path's key (_key_of) -> plan
        self._by_spec: dict = {}   # ArgumentSpec -> plan, in compile order
        self._reasons: list = []   # RecompileReason per miss after the first
        self._dropped = False      # a pipeline change dropped plans: the next miss says so
        self._failures: dict = {}
        self._compiling: tuple = ("", set())   # (failure key, passes warned) of a compile
        self._fallback: Optional[ExecutionPlan] = None
        self._fallback_generation = -1
        # NOTE: reentrant so that record_recompile works from code a compile runs
        self._lock = threading.RLock()
        self._generation = _pipeline.generation()
        _count("executors_constructed")

    # -- running ---------------------------------------------------------------------------
    def __call__(self, *inputs) -> tuple:
        if len(inputs) != self.num_inputs:
            raise ValueError(f"this graph takes {self.num_inputs} inputs, got {len(inputs)}")
        if _tracing.active and _tracing.current() is not None:
            _count("invocations")
            return self._run_traced(inputs)
        if self.optimize:  # the hot path: a cached plan, one lock for both counters
            plan = self._plans.get(_key_of(inputs))
            if plan is not None and self._generation == _pipeline.generation():
                with _counter_lock:
                    _COUNTERS["invocations"] += 1
                    _COUNTERS["plan_cache_hits"] += 1
                _local.last = plan.graph
                return plan.fn(*inputs)
        _count("invocations")
        plan = self._plan_for(inputs)
        _local.last = plan.graph
        return plan.fn(*inputs)

    def _plan_for(self, inputs) -> ExecutionPlan:
        if not self.optimize:
            return self._fallback_plan()
        key = _key_of(inputs)
        plan = self._plans.get(key)
        if plan is not None and self._generation == _pipeline.generation():
            _count("plan_cache_hits")
            return plan
        with self._lock:
            gen = _pipeline.generation()
            if gen != self._generation:  # a pass was (un)registered: plans are stale
                self._dropped = self._dropped or bool(self._by_spec)
                self._plans.clear()
                self._by_spec.clear()
                self._generation = gen
            plan = self._plans.get(key)
            if plan is not None:
                _count("plan_cache_hits")
                return plan
            spec = ArgumentSpec.of(inputs, _grad_mode.STATE.enabled)
            plan = self._by_spec.get(spec)
            if plan is not None:
                # NOTE: the key tells requires_grad apart even under grad mode off, where
                # the spec, so the plan, is the same: share it instead of recompiling
                self._plans[key] = plan
                _count("plan_cache_hits")
                return plan
            if self._by_spec or self._dropped:
                self._note(_recompiles.explain(spec, self._by_spec, len(self._by_spec)))
                self._dropped = False
            plan = self.compile_spec(spec, inputs)
            self._plans[key] = plan
            self._by_spec[spec] = plan
            _count("plan_cache_misses")
            return plan

    def _fallback_plan(self) -> ExecutionPlan:
        with self._lock:
            gen = _pipeline.generation()
            if self._fallback is None or self._fallback_generation != gen:
                g = self.graph.copy()
                self._compiling = ("fallback", set())   # for _skip_pass
                try:
                    for p in _pipeline.stage_passes("required"):
                        g = self._run(p, g)
                except _PassFailed as e:
                    _count("pass_failures")
                    self._failures["fallback"] = str(e)
                    warnings.warn(f"ember.jit: {e}; running the graph as traced",
                                  _pipeline.JitPassWarning, stacklevel=4)
                    g = self.graph.copy()
                self._fallback = ExecutionPlan(g, array_mode=False)
                self._fallback_generation = gen
            return self._fallback

    def _run_traced(self, inputs) -> tuple:
        """Called while tracing: run unoptimized with tracing paused, then inline this graph
        into every active trace (the seeds' ``runTraced``)."""
        from ..frontend import tracer
        with tracer.pause():
            outs = self._fallback_plan().fn(*inputs)
        tracer.inline_call(self.graph, inputs, outs)
        return outs

    # -- compiling -------------------------------------------------------------------------
    def compile_spec(self, spec: ArgumentSpec, inputs) -> ExecutionPlan:
        """Copy the graph, specialize its input types to ``spec`` and run the pipeline;
        returns the plan. A built-in pass that raises is reported (JitPassWarning) and the
        plan is built from the graph after the required passes; a custom or plugin pass that
        raises or breaks the graph is reported once and skipped (``pipeline.run_pass``)."""
        g = self.graph.copy()
        _specialize_types(g, spec)
        required = None
        self._compiling = (str(spec), set())   # for _skip_pass
        try:
            for p in _pipeline.stage_passes("required"):
                g = self._run(p, g)
            required = g.copy()
            for p in _pipeline.stage_passes("specialization"):
                g = self._run(p, g, inputs)
            for p in _pipeline.stage_passes("optimization"):
                g = self._run(p, g)
            needs_grad = spec.requires_grad or (spec.grad_enabled and _may_introduce_grad(g))
            # with a gradient, the autodiff stage runs optimization and nondiff on each
            # differentiable graph's f (self._optimize_subgraph); else nondiff runs here
            for p in _pipeline.stage_passes("autodiff" if needs_grad else "nondiff"):
                g = self._run(p, g)
            for p in _pipeline.stage_passes("final"):
                g = self._run(p, g)
            g.lint()
            return ExecutionPlan(g, array_mode=not needs_grad)
        except _PassFailed as e:
            _count("pass_failures")
            self._failures[str(spec)] = str(e)
            warnings.warn(f"ember.jit: {e}; running the graph unoptimized",
                          _pipeline.JitPassWarning, stacklevel=4)
            g = required if required is not None else self.graph.copy()
            return ExecutionPlan(g, array_mode=False)

    def _run(self, entry, g, inputs=None):
        try:
            return _pipeline.run_pass(entry, g, inputs, self._optimize_subgraph)
        except (_pipeline.UserGraphError, _PassFailed):
            # the graph itself is wrong (an in-place write autograd forbids), or a pass
            # on a subgraph (a Gradient's f) failed and is named already
            raise
        except _pipeline.CustomPassFailed as e:
            self._skip_pass(e)
            return e.fallback   # the graph from before the pass; the later passes still run
        except Exception as e:  # noqa: BLE001 - any pass fault falls back, named
            raise _PassFailed(f"pass '{entry.name}' ({entry.origin}, stage {entry.stage}) "
                              f"raised {type(e).__name__}: {e}") from e

    def _skip_pass(self, e) -> None:
        """Report a custom pass that failed (counted, in the debug state, warned once per
        pass and compile) and go on without it."""
        key, warned = self._compiling
        if e.entry in warned:
            return
        warned.add(e.entry)
        _count("pass_failures")
        old = self._failures.get(key)
        self._failures[key] = f"{old}; {e}" if old else str(e)
        way_out = ("EMBER_DISABLE_PLUGINS" if e.entry.origin.startswith("plugin:") else
                   "the PassHandle register_pass returned: handle.remove()")
        warnings.warn(f"ember.jit: {e}; skipped it: the later passes run on the graph from "
                      f"before it. Fix the pass or unregister it ({way_out})",
                      _pipeline.JitPassWarning, stacklevel=6)

    def _optimize_subgraph(self, f):
        """The optimization and nondiff stages on a graph a pass made (a Gradient's ``f``),
        failures handled as for the plan's own graph; returns the optimized graph."""
        for p in _pipeline.stage_passes("optimization") + _pipeline.stage_passes("nondiff"):
            f = self._run(p, f)
        return f

    # -- recompiles -------------------------------------------------------------------------
    def recompile_reasons(self) -> list:
        """A RecompileReason per plan-cache miss after the first, oldest first (the
        executor's own and those given to :meth:`record_recompile`)."""
        with self._lock:
            return list(self._reasons)

    def record_recompile(self, differences, spec: Optional[ArgumentSpec] = None,
                         plan_index: Optional[int] = None) -> "_recompiles.RecompileReason":
        """Record (and log, as for the executor's own misses) a recompile the executor
        cannot see, such as a failed shape guard of the tracer.

        Args:
            differences: a non-empty tuple of lines, e.g. ``("input 1: dim 0 guarded at 4,
                got 8",)``.
            spec: the call's ArgumentSpec, if there is one.
            plan_index: the new plan's place; default, the number of cached plans.
        Returns the RecompileReason. Raises TypeError for differences that are not a
        non-empty tuple of strings or a ``plan_index`` that is not an int, ValueError for
        a negative one.
        """
        diffs = _recompiles.check_differences(differences)
        if plan_index is not None and (not isinstance(plan_index, int) or plan_index < 0):
            error = ValueError if isinstance(plan_index, int) else TypeError
            raise error(f"record_recompile: expected plan_index None or an int >= 0, got "
                        f"{plan_index!r}; leave it out to use the plan count")
        with self._lock:
            index = len(self._by_spec) if plan_index is None else plan_index
            reason = _recompiles.RecompileReason(index, spec, diffs)
            self._note(reason)
            return reason

    def _note(self, reason) -> None:
        # NOTE: called under self._lock, so reasons keep the order of the misses
        self._reasons.append(reason)
        _recompiles.log_recompile(reason)

    # -- debugging -------------------------------------------------------------------------
    def graph_for(self, *inputs):
        """The optimized graph the plan for ``inputs`` runs (compiling it if needed)."""
        return self._plan_for(inputs).graph

    def get_debug_state(self) -> dict:
        """``{"graph", "optimize", "execution_plans": {str(spec): plan state},
        "fallback": plan state or None, "pass_failures": {str(spec): message},
        "fusion_fallbacks": fusion groups that ran unfused, with why,
        "recompile_reasons": one line per miss after the first}``; a plan
        state holds its ``graph``, ``code``, ``array_mode`` and, for each
        DifferentiableGraph, the debug state of its backward executor."""
        with self._lock:
            plans = {str(spec): _plan_state(p) for spec, p in self._by_spec.items()}
            fb = None if self._fallback is None else _plan_state(self._fallback)
            return {"graph": self.graph, "optimize": self.optimize, "execution_plans": plans,
                    "fallback": fb, "pass_failures": dict(self._failures),
                    "fusion_fallbacks": _fuser.fusion_fallbacks(),
                    "recompile_reasons": [str(r) for r in self._reasons]}


class _PassFailed(Exception):
    pass


def _plan_state(plan: ExecutionPlan) -> dict:
    state = plan.debug_state()
    state["backward_executors"] = [
        op.grad_executor.get_debug_state() for n, op in plan.runtime_ops
        if n.kind == prim.DifferentiableGraph and getattr(op, "grad_executor", None)]
    return state


def _specialize_types(g, spec: ArgumentSpec) -> None:
    """Set each graph input's type from the spec (dtype, device, rank, requires_grad;
    None -> NoneType, an undefined input such as a missing gradient)."""
    for v, e in zip(g.inputs, spec.inputs):
        if e.__class__ is TensorArg:
            v.type = TensorType(dtype=e.dtype, device=e.device, rank=e.rank,
                                requires_grad=e.requires_grad)
        elif e.__class__ is TensorListArg:
            types = {i for i in e.items if i.__class__ is TensorArg}
            if len(types) == 1:
                dt, dev, rank, rg = types.pop()
                elem = TensorType(dtype=dt, device=dev, rank=rank, requires_grad=rg)
            else:
                elem = TensorType()
            v.type = ListType(elem)
        elif e == ValueArg("NoneType"):
            v.type = NoneType()
    # the trace's sizes (and dtypes) held for its example inputs only: keep what a plan for
    # any sizes may assume until shape propagation fills the types in again
    for n in g.all_nodes():
        for o in n.outputs:
            t = o.type
            if isinstance(t, TensorType) and t.sizes is not None:
                o.type = TensorType(dtype=t.dtype, device=t.device, rank=t.rank)


def _may_introduce_grad(g) -> bool:
    return any(n.kind == prim.PythonOp for n in g.all_nodes())
