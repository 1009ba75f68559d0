"""The tracer: records the ops a Python function runs into a Graph.

While a trace is open on a thread, every op wrapper hands its call to :func:`record_op`,
which runs the op and adds one ``ember::<op>`` node to each open trace (traces nest: a
tensor can take part in several at once, each with its own value). A trace maps each
Tensor it has seen to its Value; a Tensor it has not seen (created outside, or by a
factory) enters the graph as a constant.

Composite ops are recorded as themselves with the seeds' DCE trick: the ops inside the
composite record their nodes as usual, then the composite's outputs are re-recorded as
one node taking the composite's inputs; the inner nodes are left without uses and dead
code elimination removes them, so exporters and passes see ``ember::linear``, not ``mm``
and ``add``. (A composite whose inner nodes write in place keeps its inner nodes instead:
replaying both would apply the write twice.)

Also recorded: ``Tensor.to`` (``ember::_to_copy``) and indexing (``ember::index``,
``ember::index_put_``), custom autograd Functions (``prim::PythonOp``), and calls of
already traced functions (their graph is inlined). Turning a traced tensor into a Python
bool, int, float or list gives a :class:`TracerWarning`: the trace keeps that value as a
constant. Those callers sit below the JIT and reach ``record_python``,
``record_python_op``, ``warn_python_value`` and ``pause`` through the hook table
``ember._base.hooks.TRACER`` (``tracer_hooks.py``), not by importing this module.

Reference: PyTorch's tracer (``torch/csrc/jit/frontend/tracer.cpp``) and the seeds'
"trace non-primitive ops as themselves" commit.
"""
from __future__ import annotations

import contextlib
import os
import sys
import warnings
from typing import Optional

from ..ir.graph import Graph, constant_type_or_none
from ..ir.ir_types import ListType, TensorType
from ..ir.kinds import prim
from ..runtime.op_registry import op_info
from .symbolic_sizes import concrete, encode_symbolic, has_symbolic
from .tracing_state import STATE

__all__ = ["TracingState", "TracerWarning", "record_op", "record_python_op", "pause",
           "inline_call", "warn_python_value", "open_trace", "STATE"]

_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class TracerWarning(UserWarning):
    """The trace may not generalize: a tensor became a Python value, or re-running the
    traced function gave different results. Reference: ``torch.jit.TracerWarning``."""


class TracingState:
    """One open trace: its ``graph``, and the map from Tensors to the Values that hold them
    (by identity; the Tensors are kept alive so an id is never reused mid-trace)."""

    def __init__(self, graph: Optional[Graph] = None):
        self.graph = graph if graph is not None else Graph()
        self.env: dict[int, tuple] = {}
        self.scope: list[str] = []
        # sizes (symbolic_sizes.py): graph inputs by tensor id -> (tensor, flat index), the
        # guards the trace depends on, and where a guard on an unexpressible size pinned
        # every input size (None while none did)
        self.inputs: dict[int, tuple] = {}
        self.guards: list = []
        self.pinned: Optional[str] = None

    def set_input(self, t, v, index: int) -> None:
        """Record that Tensor ``t`` is graph input ``index`` held by Value ``v``."""
        self.set_value(t, v)
        self.inputs[id(t)] = (t, index)

    def input_index(self, t) -> Optional[int]:
        """The flat input index of Tensor ``t``, or None when it is not a graph input."""
        hit = self.inputs.get(id(t))
        return hit[1] if hit is not None and hit[0] is t else None

    def add_guard(self, guard) -> None:
        """Record a :class:`~ember.jit.frontend.symbolic_sizes.Guard` (once per expression)."""
        if all(g.expr != guard.expr for g in self.guards):
            self.guards.append(guard)

    def pin_all_sizes(self, where: Optional[str]) -> None:
        """A guard on a size the inputs cannot express: the trace holds for the traced
        input sizes only."""
        if self.pinned is None:
            self.pinned = where or "<unknown>"

    def set_value(self, t, v) -> None:
        """Record that Tensor ``t`` is held by Value ``v`` from now on."""
        self.env[id(t)] = (t, v)

    def has(self, t) -> bool:
        """Whether this trace has seen Tensor ``t`` (as an input or an op's result)."""
        hit = self.env.get(id(t))
        return hit is not None and hit[0] is t

    def value_of(self, t):
        """The Value of Tensor ``t``; a Tensor never seen becomes a constant."""
        hit = self.env.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        if t.requires_grad:
            with pause():          # the tracer's own detach is not part of the trace
                c = t.detach()
        else:
            c = t
        if t.requires_grad:
            warnings.warn("a tensor that requires grad and is not an input of the trace is "
                          "captured as a constant: no gradient will flow to it; pass it as an "
                          "input (or make it a Module parameter)", TracerWarning, stacklevel=4)
        v = self.graph.insert_constant(c)
        self.set_value(t, v)
        return v

    def encode(self, x, arg=None):
        """The Value for argument ``x``: tensors by the map, lists of tensors as a
        ``prim::ListConstruct``, everything else a constant."""
        from ...tensor import Tensor
        if isinstance(x, Tensor):
            return self.value_of(x)
        if has_symbolic(x):
            return encode_symbolic(x, self)
        if isinstance(x, (list, tuple)) and x and any(isinstance(i, Tensor) for i in x):
            vals = [self.encode(i) for i in x]
            n = self.graph.create(prim.ListConstruct, vals)
            n.output().type = ListType(TensorType())
            return self.graph.insert_node(n).output()
        g = self.graph
        typ = constant_type_or_none(x, arg)
        return g.insert_constant(x, type=typ)


@contextlib.contextmanager
def open_trace(state: TracingState):
    """Open ``state`` on this thread for the duration of the block."""
    stack = STATE.stack()
    stack.append(state)
    with STATE.lock:
        STATE.active += 1
    try:
        yield state
    finally:
        with STATE.lock:
            STATE.active -= 1
        stack.remove(state)


@contextlib.contextmanager
def pause():
    """Run ops without recording them (the tracer's own calls, PythonOp bodies)."""
    local = STATE.local
    old = getattr(local, "paused", False)
    local.paused = True
    try:
        yield
    finally:
        local.paused = old


def _states() -> list:
    if getattr(STATE.local, "paused", False):
        return []
    return list(getattr(STATE.local, "stack", ()) or ())


def user_location() -> Optional[str]:
    """``file:line`` of the innermost frame outside ember (the user's line), or None."""
    return _user_location()


def _user_location() -> Optional[str]:
    f = sys._getframe(2)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(_EMBER_DIR) and not fn.startswith("<ember"):
            return f"{fn}:{f.f_lineno}"
        f = f.f_back
    return None


def _schema_values(info, args: tuple, kwargs: dict) -> list:
    """The op's arguments in schema order from how the wrapper was called."""
    schema = info.schema
    pos_names = [a for a in schema.arguments if not a.kwarg_only]
    out, rest = [], list(args)
    variadic = info.variadic
    for i, a in enumerate(pos_names):
        if variadic and a.type.is_list and i == len(pos_names) - 1:
            v = rest
            if len(v) == 1 and isinstance(v[0], (list, tuple)):
                v = v[0]
            out.append(list(v))
            rest = []
        else:
            out.append(rest.pop(0))
    out += [kwargs[a.name] for a in schema.arguments if a.kwarg_only]
    return out


def _outputs(result) -> list:
    from ...tensor import Tensor
    if isinstance(result, Tensor):
        return [result]
    if isinstance(result, tuple) and hasattr(result, "_fields"):
        return list(result)
    return [result]


def _record_outputs(state: TracingState, node, info, results: list) -> None:
    from ...tensor import Tensor
    g = state.graph
    rets = info.schema.returns if info.schema is not None else ()
    for i, r in enumerate(results):
        out = node.add_output()
        if isinstance(r, Tensor):
            out.type = TensorType.from_tensor(r)
            state.set_value(r, out)
        elif isinstance(r, (tuple, list)) and all(isinstance(t, Tensor) for t in r) and (
                i < len(rets) and rets[i].type.is_tensor_list):
            out.type = ListType(TensorType())
            unpack = g.insert_node(g.create(prim.ListUnpack, [out], num_outputs=len(r)))
            for o, t in zip(unpack.outputs, r):
                o.type = TensorType.from_tensor(t)
                state.set_value(t, o)
        else:
            out.type = constant_type_or_none(r, None)


def record_op(kind: str, fn, args: tuple, kwargs: dict):
    """Run wrapper ``fn`` and record the call as a ``kind`` node in every open trace."""
    states = _states()
    info = op_info(kind)
    marks = [s.graph.block.return_node.prev for s in states]
    local = STATE.local
    # the op itself runs on plain ints: the node below records the sizes symbolically, and
    # comparisons inside the op must not become guards (NOTE: in_op also stops Tensor.shape
    # from giving SymInts to the op's insides)
    cargs, ckwargs = args, kwargs
    if has_symbolic(args) or has_symbolic(tuple(kwargs.values())):
        cargs, ckwargs = concrete(args), {k: concrete(v) for k, v in kwargs.items()}
    local.skip = True
    local.in_op = getattr(local, "in_op", 0) + 1
    try:
        result = fn(*cargs, **ckwargs)
    finally:
        local.skip = False
        local.in_op -= 1
    values = _schema_values(info, args, kwargs)
    out_kw = kwargs.get("out")
    loc = _user_location()
    results = _outputs(result)
    for state, mark in zip(states, marks):
        g = state.graph
        if info.composite and _wrote_in_place(g, mark):
            continue  # the inner nodes already stand for the composite
        ins = [state.encode(v, a) for v, a in zip(values, info.schema.arguments)]
        node = g.insert_node(g.create(kind, ins, num_outputs=0))
        node.source_location = loc
        node.scope = state.scope[-1] if state.scope else None  # qualified names
        _record_outputs(state, node, info, results)
        if out_kw is not None:
            state.set_value(out_kw, node.outputs[0])
    return result


def _wrote_in_place(g: Graph, mark) -> bool:
    n = mark.next if mark is not None else g.block.nodes()[0] if g.block.nodes() else None
    while n is not None and n is not g.block.return_node:
        if n.has_side_effects:
            return True
        n = n.next
    return False


def record_python(kind: str, fn, args: tuple, result):
    """Record a hand-written op (``Tensor.to``, indexing) that already ran: ``kind`` with
    inputs ``args`` (see ``op_registry``) and output ``result``."""
    for state in _states():
        g = state.graph
        ins = [state.encode(a) for a in args]
        node = g.insert_node(g.create(kind, ins, num_outputs=0))
        node.source_location = _user_location()
        _record_outputs(state, node, op_info(kind), [result])


def record_python_op(fn, args: tuple):
    """Run ``fn`` (a custom autograd Function class, called through ``apply``, or a plain
    callable) on ``args`` untraced and record it as one ``prim::PythonOp`` node; returns
    its result."""
    from ...tensor import Tensor
    states = _states()
    with pause():
        result = fn.apply(*args) if isinstance(fn, type) else fn(*args)
    for state in states:
        g = state.graph
        cconv = "".join("v" if isinstance(a, Tensor) else "c" for a in args)
        vals = [state.value_of(a) for a in args if isinstance(a, Tensor)]
        node = g.insert_node(g.create(prim.PythonOp, vals, num_outputs=0))
        node.set_attr("fn", fn).set_attr("cconv", cconv)
        node.set_attr("scalar_args", [a for a in args if not isinstance(a, Tensor)])
        node.source_location = _user_location()
        outs = list(result) if isinstance(result, tuple) else [result]
        for r in outs:
            o = node.add_output()
            if isinstance(r, Tensor):
                o.type = TensorType.from_tensor(r)
                state.set_value(r, o)
    return result


def inline_call(graph: Graph, inputs, outputs) -> None:
    """Inline ``graph`` (a traced function called while tracing) into every open trace,
    its inputs bound to ``inputs``' values and ``outputs`` mapped to its outputs."""
    from ...tensor import Tensor
    for state in _states():
        vals = [state.encode(x) for x in inputs]
        outs = state.graph.insert_graph(graph, vals)
        for t, v in zip(outputs, outs):
            if isinstance(t, Tensor):
                state.set_value(t, v)


def warn_python_value(t, what: str) -> None:
    """Warn if ``t`` is traced and is being turned into a Python ``what``."""
    for state in _states():
        if state.has(t):
            warnings.warn(f"converting a tensor to a Python {what} might cause the trace to "
                          f"be incorrect: the value is recorded as a constant, so the traced "
                          f"function will not follow it for other inputs",
                          TracerWarning, stacklevel=3)
            return
