"""The pass pipeline a GraphExecutor runs to compile a plan, and custom passes.

The order follows the seeds' ``GraphExecutorImpl::compileSpec`` (DESIGN.md, 4), in named
stages; ``pipeline()`` lists the real order, custom passes included::

    >>> [p.name for p in ember.jit.passes.pipeline() if p.stage == "required"]
    ['specialize_autograd_zero', 'lower_grad_of', 'remove_expands', 'canonicalize_ops',
     'eliminate_dead_code']

Stages (a custom pass registered for a stage runs where ``pipeline()`` shows it):

- ``required``: bring the graph to an executable form (also the ``optimize=False`` plan).
- ``specialization``: constant propagation, shape and requires_grad propagation.
- ``optimization``: the differentiable optimizations (DCE, CSE, constant pooling,
  peephole, constant propagation, loop unrolling, CSE, check in-place).
- ``autodiff``: only when a gradient is needed, in place of ``nondiff``: DecomposeOps,
  CreateAutodiffSubgraphs, ``differentiate`` (each group becomes a Gradient whose ``f``
  gets the optimization and nondiff stages), InlineAutodiffSubgraphs
  (``passes/autodiff_stage.py``). Custom passes at this stage run before it.
- ``nondiff``: custom passes first (PyTorch's slot for backend passes), then DecomposeOps,
  BatchMM, FuseGraph; run on the whole graph when no gradient is needed, else on each
  differentiable graph's ``f``.
- ``final``: dead code elimination.

A pass is ``fn(graph) -> None`` (in place) or ``fn(graph) -> Graph`` (a replacement).
Register one with :func:`register_pass` or from a plugin through the ``ember_jit_passes``
hook (``(stage, fn)`` pairs). ``PASSES`` is that hook's table: the plugin manager
registers each plugin's pairs there by owner, and the composition root registers the
built-in passes (:func:`builtin_passes`, ``PassEntry`` objects) through the same call with
the owner ``"ember"``; :func:`pipeline` places each where its origin runs. After a custom
or plugin pass the graph is linted and its inputs and outputs compared with those before
it; a pass that raises or leaves a broken graph is reported once per compile
(``JitPassWarning``, naming it and what it broke) and skipped: the pipeline goes on from a
copy of the graph taken before it, with the later passes. A built-in pass that raises
makes the plan fall back to the graph after the required passes only: the function still
runs, unoptimized.

``EMBER_JIT_LOG=peephole,fuse_graph`` prints the graph after those passes (``all`` for
every pass) to the ``ember.jit`` logger at INFO, and to stderr when that logger has no
handler; ``recompiles`` in the same list logs why an executor compiled another plan
(``ember.jit.runtime.recompiles``, which uses :func:`log_enabled` and :func:`emit_log`).

:func:`debug_set_autodiff_subgraph_inlining` (``False``: every differentiable node its own
subgraph, none inlined) is a knob of the autodiff stage, kept here with the table it
changes.

Reference: PyTorch's ``torch/csrc/jit/runtime/graph_executor.cpp`` (runRequiredPasses,
runOptimization, runNondiffOptimization, RegisterPass / getCustomPasses) and
``torch/csrc/jit/jit_log.h`` (PYTORCH_JIT_LOG_LEVEL).
"""
from __future__ import annotations

import importlib
import logging
import os
import sys
import threading
import warnings
from dataclasses import dataclass
from typing import Callable, Optional

# generation(): moves whenever a pass is (un)registered here or any plugin table changes;
# executors recompile their plans when it does (one counter: two states never share a number)
from ..._base.registry import BUILTIN, bump_generation as _bump, table
from ..._base.registry import generation  # noqa: F401 - read as pipeline.generation()

__all__ = ["STAGES", "PassEntry", "register_pass", "pipeline", "JitPassWarning",
           "PassHandle", "run_pass", "log_targets", "log_enabled", "emit_log",
           "debug_set_autodiff_subgraph_inlining", "autodiff_subgraph_inlining",
           "AUTODIFF_SUBGRAPH_NODE_THRESHOLD", "AUTODIFF_SUBGRAPH_INLINE_THRESHOLD"]

STAGES = ("required", "specialization", "optimization", "autodiff", "nondiff", "final")

logger = logging.getLogger("ember.jit")


class JitPassWarning(UserWarning):
    """A pass raised while a plan was compiled; the graph runs unoptimized."""


class UserGraphError(RuntimeError):
    """Raised by a pass that found the graph itself wrong (``check_inplace``): it reaches
    the caller instead of the unoptimized fallback, since running would fail too."""


@dataclass(frozen=True)
class PassEntry:
    """One step of the pipeline: its stage, its name, the function, where it came from
    (``builtin``, ``custom`` or ``plugin:<name>``), a note on when it runs, whether it
    is called ``fn(graph, example_inputs)`` (shape propagation runs the graph), and
    whether it is called ``fn(graph, optimizer)``: a pass that makes graphs of its own
    (``differentiate``: each Gradient's ``f``) has the caller optimize them,
    ``optimizer(graph) -> graph`` (:func:`run_pass`)."""

    stage: str
    name: str
    fn: Callable
    origin: str = "builtin"
    note: str = ""
    takes_inputs: bool = False
    takes_optimizer: bool = False

    def __str__(self) -> str:
        extra = f" ({self.note})" if self.note else ""
        return f"{self.stage:<14} {self.name:<34} {self.origin}{extra}"


def _builtin(module: str, fn: str) -> Callable:
    def run(graph, *args, **kwargs):
        return getattr(importlib.import_module(f"ember.jit.passes.{module}"), fn)(
            graph, *args, **kwargs)
    run.__name__ = fn
    return run


# (stage, name, module, function, note)
_BUILTINS = [
    ("required", "specialize_autograd_zero", "specialize_autograd_zero",
     "specialize_autograd_zero", ""),
    ("required", "lower_grad_of", "lower_grad_of", "lower_grad_of", ""),
    ("required", "remove_expands", "remove_expands", "remove_expands", ""),
    ("required", "canonicalize_ops", "canonicalize_ops", "canonicalize_ops", ""),
    ("required", "eliminate_dead_code", "dead_code_elimination", "eliminate_dead_code", ""),
    ("specialization", "constant_propagation", "constant_propagation",
     "constant_propagation", ""),
    ("specialization", "propagate_shapes", "shape_propagation", "propagate_shapes",
     "runs the graph once on the first call's inputs"),
    ("specialization", "propagate_requires_grad", "requires_grad_propagation",
     "propagate_requires_grad", ""),
    ("optimization", "eliminate_dead_code", "dead_code_elimination", "eliminate_dead_code", ""),
    ("optimization", "eliminate_common_subexpression", "common_subexpression_elimination",
     "eliminate_common_subexpression", ""),
    ("optimization", "constant_pooling", "constant_pooling", "constant_pooling", ""),
    ("optimization", "peephole", "peephole", "peephole", ""),
    ("optimization", "constant_propagation", "constant_propagation", "constant_propagation",
     ""),
    ("optimization", "unroll_loops", "loop_unrolling", "unroll_loops", ""),
    ("optimization", "eliminate_common_subexpression", "common_subexpression_elimination",
     "eliminate_common_subexpression", ""),
    ("optimization", "check_inplace", "check_inplace", "check_inplace", ""),
    # NOTE: a departure from the seeds, where DecomposeOps runs only in the nondiff stage:
    # ember's composites (linear, layer_norm) have no formula of their own, so they are
    # decomposed first, making them symbolically differentiable
    ("autodiff", "decompose_ops", "decompose_ops", "decompose_ops",
     "composites without a formula become differentiable ops"),
    ("autodiff", "create_autodiff_subgraphs", "autodiff_stage", "create_subgraphs",
     "threshold 2; 1 without inlining"),
    ("autodiff", "differentiate", "autodiff_stage", "differentiate_subgraphs",
     "each DifferentiableGraph -> Gradient; its f then gets the optimization and nondiff "
     "stages"),
    ("autodiff", "inline_autodiff_subgraphs", "autodiff_stage", "inline_subgraphs",
     "threshold 5; none without inlining"),
    ("nondiff", "decompose_ops", "decompose_ops", "decompose_ops", ""),
    ("nondiff", "batch_mm", "batch_mm", "batch_mm", ""),
    ("nondiff", "fuse_graph", "fuse_graph", "fuse_graph", "groups only for a device with a fuser"),
    ("nondiff", "group_metas", "group_metas", "group_metas",
     "the metas autodiff's forward keeps for its backward: one node, cached per shapes"),
    ("final", "eliminate_dead_code", "dead_code_elimination", "eliminate_dead_code", ""),
]

# sizes are not in a plan's key, so shape propagation keeps ranks only (keep_sizes=False)
_TAKES_INPUTS = {"propagate_shapes": (False,)}
_TAKES_OPTIMIZER = {"differentiate"}



def builtin_passes() -> list[PassEntry]:
    """ember's own passes in the order they run, as ``PassEntry`` objects of origin
    ``builtin`` (what ``ember._build`` registers in ``PASSES`` with the owner ``"ember"``)."""
    return [PassEntry(s, n, _builtin(m, f), "builtin", note,
                      takes_inputs=n in _TAKES_INPUTS, takes_optimizer=n in _TAKES_OPTIMIZER)
            for s, n, m, f, note in _BUILTINS]


PASSES = table("ember_jit_passes")
AUTODIFF_SUBGRAPH_NODE_THRESHOLD = 2   # the seeds' autodiffSubgraphNodeThreshold
AUTODIFF_SUBGRAPH_INLINE_THRESHOLD = 5  # the seeds' autodiffSubgraphInlineThreshold
_inlining = [True]

_custom: list[PassEntry] = []
_lock = threading.Lock()


class PassHandle:
    """Returned by :func:`register_pass`; ``handle.remove()`` unregisters the pass."""

    def __init__(self, entry: PassEntry):
        self.entry = entry

    def remove(self) -> None:
        """Unregister the pass (again is a no-op); executors recompile their plans."""
        with _lock:
            if self.entry in _custom:
                _custom.remove(self.entry)
        _bump()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def debug_set_autodiff_subgraph_inlining(state: bool) -> None:
    """``False`` makes every differentiable node its own autodiff subgraph, however small,
    and keeps them all (no inlining): the seeds' ``debugSetAutodiffSubgraphInlining``, for
    testing symbolic gradients. Executors recompile their plans."""
    _inlining[0] = bool(state)
    _bump()


def autodiff_subgraph_inlining() -> bool:
    """The current setting of :func:`debug_set_autodiff_subgraph_inlining`."""
    return _inlining[0]


def register_pass(fn: Callable, stage: str = "nondiff", name: Optional[str] = None) -> PassHandle:
    """Add ``fn(graph) -> None | Graph`` to the pipeline at ``stage`` (see the module doc).

    It runs for every plan compiled afterwards (executors drop their cached plans), on
    forward graphs and on the backward graphs of differentiable graphs alike.
    Raises ValueError for an unknown stage, TypeError if ``fn`` is not callable.
    Reference: PyTorch's ``torch::jit::RegisterPass``.
    """
    if not callable(fn):
        raise TypeError(f"register_pass: expected a callable Graph -> None | Graph, got "
                        f"{type(fn).__name__}")
    if stage not in STAGES:
        raise ValueError(f"register_pass: unknown stage {stage!r}; the stages are "
                         f"{', '.join(STAGES)}")
    entry = PassEntry(stage, name or getattr(fn, "__qualname__", repr(fn)), fn, "custom")
    with _lock:
        _custom.append(entry)
    _bump()
    return PassHandle(entry)


def _registered_passes() -> tuple[list[PassEntry], list[PassEntry]]:
    """``(builtin, plugin)`` entries of ``PASSES`` (plugins load first)."""
    builtin, out = [], []
    for owner, item in PASSES.entries():
        if owner == BUILTIN:
            builtin.append(item)
            continue
        stage, fn = item
        if stage not in STAGES:
            warnings.warn(f"ignoring a plugin JIT pass {fn!r} for unknown stage {stage!r} "
                          f"(stages: {', '.join(STAGES)})", JitPassWarning, stacklevel=2)
            continue
        owner = getattr(fn, "__module__", "?").split(".")[0]   # today's origin names
        out.append(PassEntry(stage, getattr(fn, "__qualname__", repr(fn)), fn,
                             f"plugin:{owner}"))
    return builtin, out


def pipeline() -> list[PassEntry]:
    """Every pass in the order a plan compile runs them, custom and plugin passes where
    they run: at the start of ``nondiff`` and ``autodiff``, at the end of other stages."""
    with _lock:
        custom = list(_custom)
    builtin, plugin = _registered_passes()
    custom = plugin + custom
    out: list[PassEntry] = []
    for stage in STAGES:
        mine = [c for c in custom if c.stage == stage]
        first = stage in ("nondiff", "autodiff")
        if first:
            out += mine
        out += [b for b in builtin if b.stage == stage]
        if not first:
            out += mine
    return out


def stage_passes(stage: str) -> list[PassEntry]:
    """The passes of one stage, in order."""
    return [p for p in pipeline() if p.stage == stage]


def log_targets() -> set:
    """The names ``EMBER_JIT_LOG`` lists (comma separated, blanks ignored): pass names,
    ``recompiles`` (:mod:`ember.jit.runtime.recompiles`) or ``all``. It reads the environment at
    every call, so callers ask only off the hot path (after a pass, at a plan-cache miss)."""
    raw = os.environ.get("EMBER_JIT_LOG", "")
    return {s.strip() for s in raw.split(",") if s.strip()}


def log_enabled(name: str) -> bool:
    """Whether ``EMBER_JIT_LOG`` asks for ``name`` (or holds ``all``)."""
    targets = log_targets()
    return bool(targets) and ("all" in targets or name in targets)


def emit_log(log: logging.Logger, text: str) -> None:
    """Write one ``EMBER_JIT_LOG`` message: to ``log`` at INFO when it (or an ancestor)
    has a handler, else to stderr, so the knob works without configuring logging."""
    if log.hasHandlers():
        log.info(text)
    else:
        print(text, file=sys.stderr)


class CustomPassFailed(Exception):
    """A custom or plugin pass raised or left a broken graph (raised by :func:`run_pass`).

    ``fallback`` is a copy of the graph taken before the pass: the executor goes on from it
    with the later passes. The message names the pass, its origin and stage, and what went
    wrong."""

    def __init__(self, entry: PassEntry, what: str, fallback):
        super().__init__(f"pass '{entry.name}' ({entry.origin}, stage {entry.stage}) {what}")
        self.entry = entry
        self.fallback = fallback


def _kinds(values) -> str:
    return "(" + ", ".join(type(v.type).__name__ for v in values) + ")"


def _signature_change(before, after) -> Optional[str]:
    """How ``after`` takes other inputs or gives other outputs than ``before`` (counts and
    kinds of type: a pass may refine a TensorType, not turn it into a list), else None."""
    for side in ("inputs", "outputs"):
        old, new = getattr(before, side), getattr(after, side)
        if _kinds(old) != _kinds(new):
            return (f"changed the graph's {side}: expected {len(old)} {side} of kinds "
                    f"{_kinds(old)}, got {len(new)} of kinds {_kinds(new)}")
    return None


def _call(entry: PassEntry, graph, args):
    result = entry.fn(graph, *args)
    if result is not None and result is not graph:
        from ..ir.graph import Graph
        if not isinstance(result, Graph):
            raise TypeError(f"pass {entry.name} returned {type(result).__name__}; a pass "
                            f"returns None (changed in place) or a Graph")
        graph = result
    return graph


def _run_guarded(entry: PassEntry, graph, args):
    """Run a custom or plugin pass on ``graph`` and check what it left: the graph must lint
    and keep the kinds of its inputs and outputs. Raises CustomPassFailed carrying a copy
    of the graph from before the pass; UserGraphError passes through."""
    from ..ir.lint import JitLintError
    before = graph.copy()
    try:
        after = _call(entry, graph, args)
        problem = _signature_change(before, after)
        after.lint()
    except UserGraphError:
        raise
    except JitLintError as e:
        raise CustomPassFailed(entry, f"left a graph that fails lint: {e}", before) from e
    except Exception as e:  # noqa: BLE001 - a faulty pass must not disable the others
        raise CustomPassFailed(entry, f"raised {type(e).__name__}: {e}", before) from e
    if problem is not None:
        raise CustomPassFailed(entry, problem, before)
    return after


def run_pass(entry: PassEntry, graph, inputs=None, optimizer=None):
    """Run one pass (with the call's ``inputs`` if it takes them, ``optimizer`` if it makes
    graphs of its own, see :class:`PassEntry`); returns the graph (the same, or the one
    the pass returned).

    A built-in pass's exceptions propagate to the caller, which names the pass. A custom or
    plugin pass is checked after it runs (``Graph.lint()``, the same kinds of inputs and
    outputs); a failure raises :class:`CustomPassFailed` with a copy of the graph from
    before the pass, so the caller can go on without it (PyTorch lints after every pass
    in debug builds: ``GRAPH_DUMP`` / ``Graph::lint`` in ``graph_executor.cpp``)."""
    args = ((inputs, *_TAKES_INPUTS[entry.name]) if entry.takes_inputs else
            (optimizer,) if entry.takes_optimizer else ())
    if entry.origin == "builtin":
        graph = _call(entry, graph, args)
    else:
        graph = _run_guarded(entry, graph, args)
    if log_enabled(entry.name):
        emit_log(logger, f"graph after {entry.name} ({entry.stage}):\n{graph}")
    return graph
