"""Run a graph node by node through the eager ops: the reference semantics of the IR.

The ExecutionPlan generates Python for speed; this interpreter is the plain version the
passes use when they must know what a node computes (constant propagation folds a node by
running it; shape propagation runs the graph once to see every value's type), and the
plan's ``optimize=False`` fallback can be checked against it.

    outs = run_graph(graph, [x, w])               # a list, one value per graph output
    outs = run_graph(graph, [x, w], on_value=f)   # f(value, runtime object) for every value

Node kinds it runs: every ``ember::<op>`` (through ``op_registry``), ``prim::Constant``,
list/tuple construct and unpack, ``prim::If``, ``prim::Loop``, and the kinds that hold a
subgraph (``prim::FusionGroup``, ``prim::DifferentiableGraph``: their ``Subgraph`` runs
inline; ``prim::PythonOp``: its callable). Other kinds can be registered with
:func:`register_prim`.

Reference: PyTorch's ``torch/csrc/jit/runtime/interpreter.cpp`` (in spirit: a loop over
nodes with an environment of values).
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

from ember.jit.ir.kinds import prim
from ember.jit.runtime.op_registry import op_info

__all__ = ["run_graph", "run_node", "run_block", "register_prim",
           "register_prim_factory", "runtime_op", "node_outputs", "call_python_op",
           "JitRuntimeError", "location_note", "add_location", "is_located"]


class JitRuntimeError(RuntimeError):
    """A node failed while running; the message names the node and its source line.

    Attributes: ``node`` (the node that failed, or None); ``__cause__`` is the error the
    node raised, which an ExecutionPlan raises in its place (it is eager mode's error:
    the interpreter runs ops through their wrappers)."""

    def __init__(self, message: str, node=None):
        super().__init__(message)
        self.node = node


#: How every location note starts; an error that has one is not located again.
_NOTE_START = "in the traced code"
_UNPACK_KINDS = (prim.ListUnpack, prim.TupleUnpack)


def location_note(node) -> str:
    """The note an error raised by ``node`` gets: ``"in the traced code at repro.py:12
    (ember::add)"``. A node the tracer made without a location (the ``prim::ListUnpack`` of
    a ``Tensor[]`` result) is named by the node that made its input; a
    ``prim::AutogradFormula`` (a backward) by the forward op it differentiates."""
    where, what = node.source_location, node.kind
    if what == "prim::AutogradFormula":
        what = f"the backward of {node.attr('op', '?')}"
    elif what in _UNPACK_KINDS and node.inputs:
        src = node.inputs[0].node
        where = where or src.source_location
        # NOTE: the trace fixed how many tensors the op returns; other inputs may change it
        what = (f"{what} of {src.kind}'s {len(node.outputs)} results, a count the trace "
                f"fixed: trace again for such inputs")
    if where is None:
        return f"{_NOTE_START} ({what}; no source location was recorded)"
    return f"{_NOTE_START} at {where} ({what})"


def is_located(err: BaseException) -> bool:
    """Whether ``err`` already has a location note (an inner plan located it)."""
    return any(isinstance(n, str) and n.startswith(_NOTE_START)
               for n in getattr(err, "__notes__", ()))


def add_location(err: BaseException, node) -> None:
    """Add :func:`location_note` of ``node`` to ``err`` (PEP 678), unless it has one."""
    if is_located(err):
        return
    note = location_note(node)
    if hasattr(err, "add_note"):
        err.add_note(note)
    else:  # NOTE: Python 3.10 keeps the note but does not print it
        err.__notes__ = [*getattr(err, "__notes__", ()), note]


_PRIMS: dict[str, Callable] = {}
_FACTORIES: dict[str, Callable] = {}


def register_prim(kind: str):
    """Register ``fn(node, args) -> list of outputs`` as how ``kind`` nodes run."""
    def put(fn):
        _PRIMS[kind] = fn
        return fn
    return put


def register_prim_factory(kind: str):
    """Register ``factory(node) -> op``, where ``op(*args) -> list of outputs``, for kinds
    whose nodes hold state built once per node (a compiled kernel, a backward executor).
    The interpreter and every ExecutionPlan build the op once per node and reuse it."""
    def put(factory):
        _FACTORIES[kind] = factory
        return factory
    return put


def runtime_op(node) -> Callable:
    """A callable ``op(*args) -> list of outputs`` for ``node`` (built once; no blocks)."""
    factory = _FACTORIES.get(node.kind)
    if factory is not None:
        return factory(node)
    fn = _PRIMS.get(node.kind)
    if fn is not None:
        return lambda *args: fn(node, list(args))
    info = op_info(node.kind)
    if len(node.outputs) == 1:
        return lambda *args: [info.call(*args)]
    return lambda *args: list(info.call(*args))


def node_outputs(node, result) -> list:
    """Spread an op's return value over the node's outputs: one output takes the result
    whole (a Tensor, or a tuple for a ``Tensor[]`` return); several take its items."""
    if len(node.outputs) == 1:
        return [result]
    return list(result)


def run_node(node, args: Sequence) -> list:
    """Run one node (no blocks) on runtime ``args``; returns its outputs as a list."""
    kind = node.kind
    factory = _FACTORIES.get(kind)
    if factory is not None:
        return _cached_op(node, factory)(*args)
    fn = _PRIMS.get(kind)
    if fn is not None:
        return fn(node, list(args))
    return node_outputs(node, op_info(kind).call(*args))


_OP_CACHE: "dict" = {}


def _cached_op(node, factory):
    import weakref
    key = id(node)
    hit = _OP_CACHE.get(key)
    if hit is not None and hit[0]() is node:
        return hit[1]
    op = factory(node)
    _OP_CACHE[key] = (weakref.ref(node, lambda _r, k=key: _OP_CACHE.pop(k, None)), op)
    return op


def run_block(block, args: Sequence, env: Optional[dict] = None,
              on_value: Optional[Callable] = None) -> list:
    """Run ``block`` with its inputs bound to ``args``; returns its outputs."""
    env = {} if env is None else env
    for v, a in zip(block.inputs, args):
        env[v] = a
        if on_value is not None:
            on_value(v, a)
    for n in block.nodes():
        ins = [env[v] for v in n.inputs]
        try:
            if n.kind == prim.If:
                outs = run_block(n.blocks[0] if ins[0] else n.blocks[1], (), env, on_value)
            elif n.kind == prim.Loop:
                outs = _run_loop(n, ins, env, on_value)
            elif n.blocks and n.kind in _PRIMS:  # GradOf: its block reads outer values
                outs = _PRIMS[n.kind](n, ins, env, on_value)
            else:
                outs = run_node(n, ins)
        except JitRuntimeError:
            raise
        except Exception as e:
            where = f" (traced at {n.source_location})" if n.source_location else ""
            raise JitRuntimeError(f"{n.kind} failed{where}: {type(e).__name__}: {e}", n) from e
        for v, o in zip(n.outputs, outs):
            env[v] = o
            if on_value is not None:
                on_value(v, o)
    return [env[v] for v in block.outputs]


def _run_loop(n, ins, env, on_value) -> list:
    trips, cond, carried = ins[0], ins[1], list(ins[2:])
    body = n.blocks[0]
    i = 0
    while cond and i < trips:
        res = run_block(body, [i, *carried], env, on_value)
        cond, carried = res[0], list(res[1:])
        i += 1
    return carried


def run_graph(graph, inputs: Sequence, on_value: Optional[Callable] = None) -> list:
    """Run ``graph`` on ``inputs`` (one per graph input); returns the outputs as a list.

    Raises ValueError for a wrong number of inputs, JitRuntimeError when a node fails.
    """
    if len(inputs) != len(graph.inputs):
        raise ValueError(f"the graph takes {len(graph.inputs)} inputs "
                         f"({', '.join('%' + v.debug_name for v in graph.inputs)}), "
                         f"got {len(inputs)}")
    return run_block(graph.block, inputs, None, on_value)


# ---- prim kinds ---------------------------------------------------------------------------
@register_prim(prim.Constant)
def _constant(node, args):
    return [node.attr("value", None)]


@register_prim(prim.ListConstruct)
def _list_construct(node, args):
    return [list(args)]


@register_prim(prim.TupleConstruct)
def _tuple_construct(node, args):
    return [tuple(args)]


@register_prim(prim.ListUnpack)
@register_prim(prim.TupleUnpack)
def _unpack(node, args):
    seq = args[0]
    if len(seq) != len(node.outputs):
        raise ValueError(f"expected {len(node.outputs)} items to unpack, got {len(seq)}")
    return list(seq)


@register_prim(prim.FusionGroup)
@register_prim(prim.DifferentiableGraph)
def _subgraph(node, args):
    return run_graph(node.g("Subgraph"), args)


def call_python_op(node, args):
    """Call a ``prim::PythonOp``: attribute ``fn`` (a custom autograd Function class, run
    through ``apply``, or any callable), ``cconv`` (one letter per argument: ``v`` a node
    input, ``c`` the next item of attribute ``scalar_args``). Returns the call's result."""
    from ember.jit.ir.attributes import PyObjectRef
    fn = node.attr("fn")
    if isinstance(fn, PyObjectRef):
        fn = fn.resolve()
    scalars = iter(node.attr("scalar_args", ()))
    values = iter(args)
    call = [next(values) if c == "v" else next(scalars) for c in node.attr("cconv")]
    if isinstance(fn, type):  # a custom autograd Function: apply records its backward
        return fn.apply(*call)
    return fn(*call)


@register_prim(prim.PythonOp)
def _python_op(node, args):
    return node_outputs(node, call_python_op(node, args))
