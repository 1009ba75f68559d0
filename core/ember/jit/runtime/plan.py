"""ExecutionPlan: an optimized graph turned into one generated Python function.

Per-node interpretation costs more than the kernels on small tensors, so a plan writes
the graph out as straight-line Python, as torch.fx does. For the graph of ``(x * y + 1).sin()``
with no gradient needed, on float32 CPU tensors, ``plan.code`` reads::

    def plan(x, y):
        try:
            x_a = x._data
            y_a = y._data
            v2 = _np_multiply_1(x_a, y_a)  # ember::mul
            v4 = _np_add_2(v2, 1)  # ember::add
            v5 = _np_sin_3(v4)  # ember::sin
            v5_t = _wrap(v5, B_cpu)
            return (v5_t,)
        except Exception as _e:
            _raise_as_eager(_e, locals())
            raise

Two ways to run an op node:

- *array mode*, when no gradient can be needed: the backend kernel (here, the one ufunc
  each kernel would call) is called on arrays, with the argument conversions (the table
  the wrappers are written from: ``ops/arguments.py``) and dim wrapping the op's wrapper
  would do done once, at plan time. ``plan_array_mode.py`` lowers these nodes and says
  when it applies (known operand types, operands already of the result dtype, a plain
  kernel).
- *tensor mode*: the op's generated wrapper is called on Tensors, so autograd records as
  in eager mode; used for every node when a gradient may be needed, and for the nodes
  array mode cannot take.

In array mode, ``memory_planning.py`` gives intermediates that only ufunc lines read
buffer slots that later values reuse, so a warm plan on large inputs allocates only its
outputs (``plan.memory_plan``, ``plan.arena_misses()``).

A value may exist as an array (``v5``) and as a Tensor (``v5_t``); the conversion is
written at its first use. Nodes holding state (``prim::DifferentiableGraph``,
``prim::FusionGroup``, ``prim::PythonOp``) run through ops built once per plan
(``interpreter.runtime_op``), taking and returning Tensors.

Errors: a plan raises what eager mode raises for the same call, with a PEP 678 note
naming the user's line the node was traced at (``in the traced code at repro.py:12
(ember::add)``). Every plan's body sits in one ``try`` (free until something raises,
Python >= 3.11) whose handler, ``_raise_as_eager``, finds the node of the line that
raised. A tensor-mode line raised the wrapper's own error: it gets the note. A kernel
called on arrays does not check its operands as the op's wrapper does, so for an
array-mode line the handler runs the wrapper on the same operands and raises its error
instead (``plan_array_mode.eager_error``). An error from a nested plan (a
DifferentiableGraph's ``f``) already has its note; one from a subgraph the interpreter ran
(an unfused FusionGroup) is unwrapped from its ``JitRuntimeError``. Each plan's source is
in ``linecache`` under ``plan.filename`` (``<ember-plan-3>``), so tracebacks show its lines.

Reference: PyTorch's ``ExecutionPlan`` (``graph_executor.h``), torch.fx ``GraphModule``
code generation.
"""
from __future__ import annotations

import itertools
import keyword
import linecache
import weakref
from functools import partial
from types import TracebackType
from typing import Optional

from ... import dispatch as _d
from ...backends import registry as _registry
from .interpreter import JitRuntimeError, add_location, is_located, runtime_op
from ..ir.ir_types import ListType, TensorType
from . import memory_planning as _mp
from ..ir.kinds import prim
from .op_registry import is_op_kind, op_info
from .plan_fusion import emit_fusion_group
from .plan_array_mode import (IDENT, Form, Unsupported, eager_error, emit_array_op, is_tensor,
                              is_tensor_list, out_capable)

__all__ = ["ExecutionPlan", "Form"]


def _call_form(v) -> Form:
    """The form of a value a wrapper or runtime op returns (they take and give Tensors)."""
    return Form.TENSOR if is_tensor(v) or is_tensor_list(v) else Form.PYTHON



class _Emitter:
    def __init__(self, graph, array_mode: bool):
        self.graph = graph
        self.array_mode = array_mode
        self.lines: list[str] = []
        self.globals: dict = {"_wrap": _d.wrap}
        self.names: dict = {}  # Value -> base identifier
        self.forms: list[dict] = [{}]  # scopes: Value -> {Form: name}
        self.used: set = set()
        self.n_globals = 0
        self.runtime_ops: list = []  # (node, op) for nodes that run through a built op
        self.array_lines: dict = {}  # index in lines -> (OpInfo, operands) of an array node
        self.line_nodes: dict = {}  # index in lines -> the node that line runs (for errors)
        self.memory_plan = _mp.EMPTY  # buffer slots of intermediates (memory_planning.py)

    # -- names -----------------------------------------------------------------------------
    def name(self, v) -> str:
        n = self.names.get(v)
        if n is None:
            base = IDENT.sub("_", v.debug_name)
            if not base or base[0].isdigit() or keyword.iskeyword(base) or base.startswith("_"):
                base = "v" + base.lstrip("_")
            n, k = base, 1
            while n in self.used:
                n, k = f"{base}_{k}", k + 1
            self.used.add(n)
            self.names[v] = n
        return n

    def const(self, value, hint: str) -> str:
        if value is None or value.__class__ in (bool, int, str) or (
                value.__class__ is float and value == value and abs(value) != float("inf")):
            return repr(value)
        self.n_globals += 1
        g = f"_{hint}{self.n_globals}"
        self.globals[g] = value
        return g

    def form(self, v) -> dict:
        for scope in reversed(self.forms):
            if v in scope:
                return scope[v]
        raise KeyError(v)

    def define(self, v, form: Form, name: Optional[str] = None) -> str:
        """Note that ``v`` exists in ``form`` under ``name`` (default: its base name) in
        the current scope; returns the name."""
        name = name or self.name(v)
        self.forms[-1].setdefault(v, {})[form] = name
        return name

    def crossing_form(self, v) -> Form:
        """The form a value takes where it crosses a block boundary (the outputs of an If,
        a Loop, a FusionGroup's two ways): an array in array mode, else a Tensor; a
        Python value if it is no tensor."""
        if is_tensor(v) or is_tensor_list(v):
            return Form.ARRAY if self.array_mode else Form.TENSOR
        return Form.PYTHON

    def in_form(self, v, form: Form, indent: str) -> str:
        """The name of ``v`` in ``form``, writing the conversion if needed."""
        if form is Form.ARRAY:
            return self.as_array(v, indent)
        if form is Form.TENSOR:
            return self.as_tensor(v, indent)
        return self.arg(v, indent)

    # -- conversions -----------------------------------------------------------------------
    def as_tensor(self, v, indent: str) -> str:
        f = self.form(v)
        if Form.TENSOR in f:
            return f[Form.TENSOR]
        if Form.PYTHON in f:
            return f[Form.PYTHON]
        arr = f[Form.ARRAY]
        if is_tensor_list(v):
            b = self.backend_of(v)
            out = self.define(v, Form.TENSOR, self.name(v) + "_t")
            self.lines.append(f"{indent}{out} = [None if _x is None else _wrap(_x, {b}) "
                              f"for _x in {arr}]")
            return out
        b = self.backend_of(v)
        out = self.define(v, Form.TENSOR, self.name(v) + "_t")
        self.lines.append(f"{indent}{out} = {arr} if {arr} is None else _wrap({arr}, {b})"
                          if not isinstance(v.type, TensorType) or v.type.dtype is None
                          else f"{indent}{out} = _wrap({arr}, {b})")
        return out

    def as_array(self, v, indent: str) -> str:
        f = self.form(v)
        if Form.ARRAY in f:
            return f[Form.ARRAY]
        if Form.PYTHON in f:
            return f[Form.PYTHON]
        t = f[Form.TENSOR]
        out = self.define(v, Form.ARRAY, self.name(v) + "_a")
        if is_tensor_list(v):
            self.lines.append(f"{indent}{out} = [_x._data for _x in {t}]")
        else:
            self.lines.append(f"{indent}{out} = {t}._data")
        return out

    def backend_of(self, v) -> str:
        typ = v.type
        if isinstance(typ, ListType):
            typ = typ.elem
        dev = getattr(typ, "device", None)
        backend = _registry.get_backend(dev if dev is not None else "cpu")
        g = f"B_{IDENT.sub('_', backend.name)}"
        self.globals[g] = backend
        return g

    # -- nodes -----------------------------------------------------------------------------
    def block(self, block, indent: str) -> None:
        for n in block.nodes():
            self.node(n, indent)

    def node(self, n, indent: str) -> None:
        """Write node ``n``, noting it as the node of every line written (for errors)."""
        start = len(self.lines)
        self.emit_node(n, indent)
        for i in range(start, len(self.lines)):  # lines of nested nodes keep their own
            self.line_nodes.setdefault(i, n)

    def emit_node(self, n, indent: str) -> None:
        kind = n.kind
        if kind == prim.Constant:
            v = n.output()
            val = n.attr("value", None)
            from ...tensor import Tensor
            if isinstance(val, Tensor):
                self.define(v, Form.TENSOR, self.const(val, "c"))
                if self.array_mode:
                    self.define(v, Form.ARRAY, self.const(val._data, "c"))
            else:
                self.define(v, Form.PYTHON, self.const(val, "c"))
            return
        if kind == prim.If:
            return self.if_(n, indent)
        if kind == prim.Loop:
            return self.loop(n, indent)
        if kind == prim.FusionGroup:
            return emit_fusion_group(self, n, indent)
        if kind in (prim.ListConstruct, prim.TupleConstruct):
            out = n.output()
            arr = self.array_mode and is_tensor_list(out) and all(
                is_tensor(v) for v in n.inputs)
            items = [self.as_array(v, indent) if arr else self.arg(v, indent) for v in n.inputs]
            o = self.define(out, Form.ARRAY if arr else
                            Form.TENSOR if is_tensor_list(out) else Form.PYTHON)
            br = ("[", "]") if kind == prim.ListConstruct else ("(", ",)" if items else ")")
            self.lines.append(f"{indent}{o} = {br[0]}{', '.join(items)}{br[1]}")
            return
        if kind in (prim.ListUnpack, prim.TupleUnpack):
            src_v = n.input()
            f = self.form(src_v)
            k = next(k for k in (Form.ARRAY, Form.TENSOR, Form.PYTHON) if k in f)
            src = f[k]
            outs = [self.define(o, k if is_tensor(o) else Form.PYTHON) for o in n.outputs]
            lhs = ", ".join(outs) + ("," if len(outs) == 1 else "")
            self.lines.append(f"{indent}{lhs} = {src}" if outs else f"{indent}pass")
            return
        if kind == "prim::AutogradZero":
            self.define(n.output(), Form.PYTHON, "None")
            return
        if kind == "prim::AutogradAnyNonZero":
            args = [self.arg(v, indent) for v in n.inputs]
            o = self.define(n.output(), Form.PYTHON)
            self.lines.append(f"{indent}{o} = " + (" or ".join(
                f"{a} is not None" for a in args) or "False"))
            return
        if is_op_kind(kind) and self.array_mode:
            try:
                return emit_array_op(self, n, indent)
            except Unsupported:
                pass
        return self.generic(n, indent)

    def arg(self, v, indent: str) -> str:
        """A value as an argument of a Tensor-taking call."""
        if is_tensor(v) or is_tensor_list(v):
            return self.as_tensor(v, indent)
        f = self.form(v)
        return f.get(Form.PYTHON) or f.get(Form.TENSOR) or f[Form.ARRAY]

    def generic(self, n, indent: str, op_obj=None) -> None:
        """Write ``n`` as a call of its op's wrapper on Tensors, or of its runtime op
        (``op_obj`` when built already)."""
        args = [self.arg(v, indent) for v in n.inputs]
        if is_op_kind(n.kind):
            info = op_info(n.kind)
            fn = self.const(info.fn, "f_" + IDENT.sub("_", n.kind.split("::")[1]) + "_")
            call = info.call_source(fn, args)
            outs = [self.define(o, _call_form(o)) for o in n.outputs]
            lhs = outs[0] if len(outs) == 1 else ", ".join(outs) + ("," if outs else "")
            self.lines.append(f"{indent}{lhs or '_'} = {call}  # {n.kind}")
            return
        if n.blocks:
            raise NotImplementedError(f"ExecutionPlan: cannot run a {n.kind} node with blocks; "
                                      f"a required pass should have lowered it")
        op_obj = runtime_op(n) if op_obj is None else op_obj
        self.runtime_ops.append((n, op_obj))
        op = self.const(op_obj, "op")
        outs = [self.define(o, _call_form(o)) for o in n.outputs]
        lhs = ", ".join(outs) + "," if outs else "_"
        self.lines.append(f"{indent}{lhs} = {op}({', '.join(args)})  # {n.kind}")

    def if_(self, n, indent: str) -> None:
        cond = self.arg(n.input(), indent)
        outs = [self.name(o) for o in n.outputs]
        kinds = [self.crossing_form(o) for o in n.outputs]
        self.lines.append(f"{indent}if {cond}:")
        for b in n.blocks:
            if b is n.blocks[1]:
                self.lines.append(f"{indent}else:")
            self.forms.append({})
            start = len(self.lines)
            self.block(b, indent + "    ")
            for o, v, k in zip(outs, b.outputs, kinds):
                src = self.in_form(v, k, indent + "    ")
                self.lines.append(f"{indent}    {o} = {src}")
            if len(self.lines) == start:
                self.lines.append(f"{indent}    pass")
            self.forms.pop()
        for o, k in zip(n.outputs, kinds):
            self.define(o, k)

    def loop(self, n, indent: str) -> None:
        trips = self.arg(n.inputs[0], indent)
        cond = self.arg(n.inputs[1], indent)
        body = n.blocks[0]
        kinds = [self.crossing_form(v) for v in n.outputs]
        carried = [self.name(o) for o in n.outputs]
        for o, v, k in zip(carried, n.inputs[2:], kinds):
            src = self.in_form(v, k, indent)
            self.lines.append(f"{indent}{o} = {src}")
        it = self.name(body.inputs[0])
        c = f"_cond_{it}"
        self.lines += [f"{indent}{it} = 0", f"{indent}{c} = {cond}",
                       f"{indent}while {c} and {it} < {trips}:"]
        self.forms.append({})
        self.define(body.inputs[0], Form.PYTHON, it)
        for o, v, k in zip(carried, body.inputs[1:], kinds):
            self.define(v, k, o)
        inner = indent + "    "
        self.block(body, inner)
        res = [self.arg(body.outputs[0], inner)]
        for v, k in zip(body.outputs[1:], kinds):
            res.append(self.in_form(v, k, inner))
        lhs = ", ".join([c] + carried)
        self.lines.append(f"{inner}{lhs} = {', '.join(res)}")
        self.lines.append(f"{inner}{it} += 1")
        self.forms.pop()
        for o, k in zip(n.outputs, kinds):
            self.define(o, k)


_plan_numbers = itertools.count(1)


def _register_source(filename: str, code: str, fn) -> None:
    """Put a plan's source in ``linecache`` under its ``<ember-plan-N>`` filename, as
    torch.fx does, so tracebacks and ``inspect.getsource(plan.fn)`` show its lines. The
    entry goes when ``fn`` is collected; a live traceback keeps ``fn`` (its frame's
    globals hold it), so its source stays readable as long as the traceback is."""
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    weakref.finalize(fn, linecache.cache.pop, filename, None)


def _raise_as_eager(table: dict, err: BaseException, env: dict) -> None:
    """The handler of every plan, called with ``table`` (plan line -> (node, how to rerun
    it on Tensors, or None)), the exception ``err`` the plan caught and the plan's
    locals. Raises eager mode's error in place of ``err``, or returns (having added the
    node's location note to ``err``) for the plan to re-raise ``err``, which then already
    is eager's error (see "Errors" in the module doc)."""
    tb = err.__traceback__
    entry = table.get(tb.tb_lineno) if tb is not None else None
    if isinstance(err, JitRuntimeError) and err.__cause__ is not None:
        # the interpreter ran a subgraph (an unfused FusionGroup) through the op wrappers:
        # the cause is eager mode's error; the interpreter's wrapping is not
        cause = err.__cause__
        node = err.node if err.node is not None else entry[0] if entry else None
        if node is not None:
            add_location(cause, node)
        inner = cause.__traceback__
        outer = []  # err's frames from the plan's line down to where cause was caught
        while tb is not None and (inner is None or tb.tb_frame is not inner.tb_frame):
            outer.append(tb)
            tb = tb.tb_next
        raise cause.with_traceback(_through(outer, inner)) from None
    if entry is None or is_located(err):  # an inner plan (a DifferentiableGraph's) did it
        return
    node, rerun = entry
    if rerun is not None:  # an array-mode line: its kernel does not check as the wrapper
        eager = eager_error(rerun, env, tb.tb_frame.f_globals)
        if eager is not None:
            add_location(eager, node)
            # from the plan's line to the wrapper's frames (eager_error's own left out)
            inner = eager.__traceback__.tb_next if eager.__traceback__ else None
            raise eager.with_traceback(_through([tb], inner)) from None
    add_location(err, node)


def _through(entries: list, inner: Optional[TracebackType]) -> Optional[TracebackType]:
    """A traceback through the frames of ``entries`` (traceback entries, outermost first)
    and on into ``inner``: tracebacks then show the plan's line that raised."""
    for e in reversed(entries):
        inner = TracebackType(inner, e.tb_frame, e.tb_lasti, e.tb_lineno)
    return inner


class ExecutionPlan:
    """A compiled graph: ``plan.run(inputs) -> tuple of outputs`` (Tensors and values).

    Args:
        graph: the optimized graph (value types should be complete where array mode is
            wanted; unknown types make nodes run in tensor mode).
        array_mode: whether no gradient can be needed, so kernels may run on arrays.
        min_planned_elements: in array mode, intermediates reuse buffers in calls where a
            graph input they come from has at least this many elements (0: always; None:
            no memory planning). See ``memory_planning.py``.
    Attributes: ``graph``, ``code`` (the generated source), ``fn`` (the function),
    ``filename`` (``<ember-plan-N>``: the name ``code`` has in ``linecache``),
    ``memory_plan`` (a ``memory_planning.MemoryPlan``: ``slots`` maps each planned value to
    its buffer slot; see ``arena_misses``).
    Raises NotImplementedError for a node kind it cannot run (a ``prim::GradOf`` left
    unlowered). Running it raises what eager mode would (see "Errors" in the module doc).
    """

    def __init__(self, graph, array_mode: bool = False,
                 min_planned_elements: Optional[int] = _mp.DEFAULT_MIN_ELEMENTS):
        self.graph = graph
        self.array_mode = array_mode
        em = _Emitter(graph, array_mode)
        if array_mode and min_planned_elements is not None:
            em.memory_plan = _mp.plan_memory(graph, out_capable, min_planned_elements)
        self.memory_plan = em.memory_plan
        self._arena = _mp.Arena(self.memory_plan.n_slots)
        params = [em.name(v) for v in graph.inputs]
        for v, p in zip(graph.inputs, params):
            em.define(v, _call_form(v), p)
        em.lines += _mp.prologue(self.memory_plan, dict(zip(graph.inputs, params)), "    ")
        em.block(graph.block, "    ")
        rets = [em.arg(v, "    ") for v in graph.outputs]
        ret = "(" + ", ".join(rets) + ("," if len(rets) == 1 else "") + ")"
        body = em.lines + _mp.epilogue(self.memory_plan, "    ") + [f"    return {ret}"]
        # NOTE: line 1 is the def, line 2 the try (see "Errors" in the module doc)
        table = {i + 3: (n, em.array_lines.get(i)) for i, n in em.line_nodes.items()}
        body = ["    try:"] + ["    " + line for line in body] + [
            "    except Exception as _e:", "        _raise_as_eager(_e, locals())",
            "        raise"]
        self.code = f"def plan({', '.join(params)}):\n" + "\n".join(body) + "\n"
        self.filename = f"<ember-plan-{next(_plan_numbers)}>"
        # __name__: numpy's floating-point warnings attributed to plans are ignored, as for
        # the kernels eager calls (ember.backends.kernels' filter)
        ns = dict(em.globals, _raise_as_eager=partial(_raise_as_eager, table),
                  __name__="ember.jit.generated", **self._arena.runtime_globals())
        exec(compile(self.code, self.filename, "exec"), ns)  # noqa: S102 - generated
        self.fn = ns["plan"]
        _register_source(self.filename, self.code, self.fn)
        self.runtime_ops = em.runtime_ops

    def run(self, inputs) -> tuple:
        """Run the plan on flat ``inputs`` (one per graph input)."""
        return self.fn(*inputs)

    def arena_misses(self) -> int:
        """How many times a planned intermediate was allocated instead of written into its
        slot's buffer (first calls, new sizes), over all calls so far; 0 on a warm call at
        fixed sizes. Calls below the size threshold use no slots and count nothing."""
        return self._arena.misses

    def release_buffers(self) -> None:
        """Free the slot buffers kept between calls (calls running now keep theirs)."""
        self._arena.clear()

    def debug_state(self) -> dict:
        """``{"graph": optimized graph, "code": source, "array_mode": bool, "memory_slots":
        {value's debug name: buffer slot}, "arena_misses": int}``."""
        return {"graph": self.graph, "code": self.code, "array_mode": self.array_mode,
                "memory_slots": {v.debug_name: s for v, s in self.memory_plan.slots.items()},
                "arena_misses": self.arena_misses()}
