"""ExecutionPlan: an optimized graph turned into one generated Python function.

Per-node interpretation costs more than the kernels on small tensors, so a plan writes
the graph out as straight-line Python, as torch.fx does. For the graph of ``(x * y + 1).sin()``
with no gradient needed, on float32 CPU tensors, ``plan.code`` reads::

    def plan(x, y):
        x_a = x._data
        y_a = y._data
        v2 = K_mul(x_a, y_a)                  # ember::mul
        v4 = K_add(v2, 1.0, 1)                # ember::add
        v5 = K_sin(v4)                        # ember::sin
        return (_wrap(v5, B_cpu),)

Two ways to run an op node:

- *array mode*, when no gradient can be needed: the backend kernel is called on arrays
  (``K_mul`` is ``Type.kernels["mul"]`` for the dtype and device shape propagation found),
  with the argument conversions and dim wrapping the op's wrapper would do done once, at
  plan time. It applies only where the operands already share the result dtype (else
  promotion would cast) and the op is a plain kernel (not composite, not in place).
- *tensor mode*: the op's generated wrapper is called on Tensors, so autograd records as
  in eager mode; used for every node when a gradient may be needed, and for the nodes
  array mode cannot take.

A value may exist as an array (``v5``) and as a Tensor (``v5_t``); the conversion is
written at its first use. Nodes holding state (``prim::DifferentiableGraph``,
``prim::FusionGroup``, ``prim::PythonOp``) run through ops built once per plan
(``interpreter.runtime_op``), taking and returning Tensors.

Errors: a kernel called on arrays does not check its operands as the op's wrapper does
(numpy says "operands could not be broadcast together" where eager ember raises
ShapeError). So an array-mode plan's body sits in one ``try`` (free until something raises,
Python >= 3.11), and when an array-mode line raises, the node's wrapper is run on the same
operands to raise the error eager mode would, with its message.

Reference: PyTorch's ``ExecutionPlan`` (``graph_executor.h``), torch.fx ``GraphModule``
code generation.
"""
from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from functools import partial
from typing import Optional

from .. import dispatch as _d
from ..backends import registry as _registry
from ..ops.native import DIM_ARG_NAMES
from .interpreter import runtime_op
from .ir_types import ListType, TensorType
from .kinds import prim
from .op_registry import is_op_kind, op_info

__all__ = ["ExecutionPlan"]

_IDENT = re.compile(r"[^0-9a-zA-Z_]")
_SCALAR_CATEGORY = {bool: 0, int: 1, float: 2}


class _Unsupported(Exception):
    """This node cannot run in array mode."""


def _convert_arg(a, value, op: str, pos: int):
    """Apply the wrapper's conversion of a non-Tensor argument to a constant ``value``."""
    t, n = a.type, a.name
    if value is None and t.optional:
        return None
    if t.base in ("int", "SymInt"):
        return _d.check_int_list(value, op, n, pos, t.size) if t.is_list else \
            _d.check_int(value, op, n, pos)
    if t.base == "bool":
        return _d.check_bool_list(value, op, n, pos, t.size) if t.is_list else \
            _d.check_bool(value, op, n, pos)
    if t.base == "float":
        return _d.check_float(value, op, n, pos)
    if t.base == "Scalar":
        return _d.check_scalar(value, op, n, pos)
    if t.base == "str":
        return _d.check_str(value, op, n, pos)
    if t.base == "ScalarType":
        return _d.check_dtype(value, op, n, pos)
    if t.base in ("Generator",):
        raise _Unsupported("generator")
    return value


class _Emitter:
    def __init__(self, graph, array_mode: bool):
        self.graph = graph
        self.array_mode = array_mode
        self.lines: list[str] = []
        self.globals: dict = {"_wrap": _d.wrap}
        self.names: dict = {}  # Value -> base identifier
        self.forms: list[dict] = [{}]  # scopes: Value -> {"a": name, "t": name}
        self.used: set = set()
        self.n_globals = 0
        self.runtime_ops: list = []  # (node, op) for nodes that run through a built op
        self.array_lines: dict = {}  # index in lines -> (OpInfo, operands) of an array node

    # -- names -----------------------------------------------------------------------------
    def name(self, v) -> str:
        n = self.names.get(v)
        if n is None:
            base = _IDENT.sub("_", v.debug_name)
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

    def define(self, v, kind: str, name: Optional[str] = None) -> str:
        name = name or self.name(v)
        self.forms[-1].setdefault(v, {})[kind] = name
        return name

    # -- conversions -----------------------------------------------------------------------
    def as_tensor(self, v, indent: str) -> str:
        f = self.form(v)
        if "t" in f:
            return f["t"]
        if "p" in f:
            return f["p"]
        arr = f["a"]
        if _is_tensor_list(v):
            b = self.backend_of(v)
            out = self.define(v, "t", self.name(v) + "_t")
            self.lines.append(f"{indent}{out} = [None if _x is None else _wrap(_x, {b}) "
                              f"for _x in {arr}]")
            return out
        b = self.backend_of(v)
        out = self.define(v, "t", self.name(v) + "_t")
        self.lines.append(f"{indent}{out} = {arr} if {arr} is None else _wrap({arr}, {b})"
                          if not isinstance(v.type, TensorType) or v.type.dtype is None
                          else f"{indent}{out} = _wrap({arr}, {b})")
        return out

    def as_array(self, v, indent: str) -> str:
        f = self.form(v)
        if "a" in f:
            return f["a"]
        if "p" in f:
            return f["p"]
        t = f["t"]
        out = self.define(v, "a", self.name(v) + "_a")
        if _is_tensor_list(v):
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
        g = f"B_{_IDENT.sub('_', backend.name)}"
        self.globals[g] = backend
        return g

    # -- nodes -----------------------------------------------------------------------------
    def block(self, block, indent: str) -> None:
        for n in block.nodes():
            self.node(n, indent)

    def node(self, n, indent: str) -> None:
        kind = n.kind
        if kind == prim.Constant:
            v = n.output()
            val = n.attr("value", None)
            from ..tensor import Tensor
            if isinstance(val, Tensor):
                self.define(v, "t", self.const(val, "c"))
                if self.array_mode:
                    self.define(v, "a", self.const(val._data, "c"))
            else:
                self.define(v, "p", self.const(val, "c"))
            return
        if kind == prim.If:
            return self.if_(n, indent)
        if kind == prim.Loop:
            return self.loop(n, indent)
        if kind in (prim.ListConstruct, prim.TupleConstruct):
            out = n.output()
            arr = self.array_mode and _is_tensor_list(out) and all(
                _is_tensor(v) for v in n.inputs)
            items = [self.as_array(v, indent) if arr else self.arg(v, indent) for v in n.inputs]
            o = self.define(out, "a" if arr else ("t" if _is_tensor_list(out) else "p"))
            br = ("[", "]") if kind == prim.ListConstruct else ("(", ",)" if items else ")")
            self.lines.append(f"{indent}{o} = {br[0]}{', '.join(items)}{br[1]}")
            return
        if kind in (prim.ListUnpack, prim.TupleUnpack):
            src_v = n.input()
            f = self.form(src_v)
            k = "a" if "a" in f else ("t" if "t" in f else "p")
            src = f[k]
            outs = [self.define(o, k if _is_tensor(o) or k == "p" else "p") for o in n.outputs]
            lhs = ", ".join(outs) + ("," if len(outs) == 1 else "")
            self.lines.append(f"{indent}{lhs} = {src}" if outs else f"{indent}pass")
            return
        if kind == "prim::AutogradZero":
            self.define(n.output(), "p", "None")
            return
        if kind == "prim::AutogradAnyNonZero":
            args = [self.arg(v, indent) for v in n.inputs]
            o = self.define(n.output(), "p")
            self.lines.append(f"{indent}{o} = " + (" or ".join(
                f"{a} is not None" for a in args) or "False"))
            return
        if is_op_kind(kind) and self.array_mode:
            try:
                return self.array_op(n, indent)
            except _Unsupported:
                pass
        return self.generic(n, indent)

    def arg(self, v, indent: str) -> str:
        """A value as an argument of a Tensor-taking call."""
        if _is_tensor(v) or _is_tensor_list(v):
            return self.as_tensor(v, indent)
        f = self.form(v)
        return f.get("p") or f.get("t") or f["a"]

    def generic(self, n, indent: str) -> None:
        args = [self.arg(v, indent) for v in n.inputs]
        if is_op_kind(n.kind):
            info = op_info(n.kind)
            fn = self.const(info.fn, "f_" + _IDENT.sub("_", n.kind.split("::")[1]) + "_")
            call = info.call_source(fn, args)
            outs = [self.define(o, "t" if _is_tensor(o) or _is_tensor_list(o) else "p")
                    for o in n.outputs]
            lhs = outs[0] if len(outs) == 1 else ", ".join(outs) + ("," if outs else "")
            self.lines.append(f"{indent}{lhs or '_'} = {call}  # {n.kind}")
            return
        if n.blocks:
            raise NotImplementedError(f"ExecutionPlan: cannot run a {n.kind} node with blocks; "
                                      f"a required pass should have lowered it")
        op_obj = runtime_op(n)
        self.runtime_ops.append((n, op_obj))
        op = self.const(op_obj, "op")
        outs = [self.define(o, "t" if _is_tensor(o) or _is_tensor_list(o) else "p")
                for o in n.outputs]
        lhs = ", ".join(outs) + "," if outs else "_"
        self.lines.append(f"{indent}{lhs} = {op}({', '.join(args)})  # {n.kind}")

    def array_op(self, n, indent: str) -> None:
        info = op_info(n.kind)
        nf = info.nf
        if nf is None or info.composite or info.inplace or info.schema.out_argument:
            raise _Unsupported(n.kind)
        schema = info.schema
        op = schema.name
        # every tensor operand's dtype/device/rank must be known, and every other argument
        # a constant: then the wrapper's work can be done here, once
        tensors, scalars, kargs = [], [], []
        consts = {}
        for pos, (a, v) in enumerate(zip(schema.arguments, n.inputs), 1):
            if a.type.base == "Tensor":
                if _is_tensor(v):
                    t = v.type
                    if t.dtype is None or t.device is None or t.rank is None:
                        raise _Unsupported("unknown tensor type")
                    tensors.append((a, v))
                elif a.type.is_list:
                    if not _is_tensor_list(v):
                        raise _Unsupported("list")
                    tensors.append((a, v))
                else:
                    c = _constant(v)
                    if c is _NOT_CONST:
                        raise _Unsupported("non-constant operand")
                    if c is not None:
                        if c.__class__ not in _SCALAR_CATEGORY:
                            raise _Unsupported("operand")
                        scalars.append(c)
                    consts[a.name] = c
            else:
                c = _constant(v)
                if c is _NOT_CONST:
                    raise _Unsupported("non-constant argument")
                consts[a.name] = _convert_arg(a, c, op, pos)
        if not tensors:
            raise _Unsupported("no tensor operand")
        first = next((v for a, v in tensors if _is_tensor(v)), None)
        if first is None:  # only a Tensor[] (cat, stack): its element types are not known
            raise _Unsupported("tensor list only")
        dev = first.type.device
        dtypes = {v.type.dtype for a, v in tensors if _is_tensor(v)}
        if len(dtypes) != 1 or any(v.type.device != dev for a, v in tensors if _is_tensor(v)):
            raise _Unsupported("mixed operands")
        st = dtypes.pop()
        if nf.promote:
            if any(_SCALAR_CATEGORY[s.__class__] > st._category for s in scalars):
                raise _Unsupported("a scalar promotes")
            if nf.promote == "float" and not st.is_floating_point:
                raise _Unsupported("int -> float")
        if any(_is_tensor_list(v) for a, v in tensors) and len(tensors) != 1:
            raise _Unsupported("list and tensors")
        if nf.wrap_dims:
            rank = first.type.rank + nf.dim_extra
            for a in schema.arguments:
                if a.name in DIM_ARG_NAMES and a.type.base == "int" and a.name in consts:
                    fn = _d.wrap_dims if a.type.is_list or a.type.optional else _d.wrap_dim
                    consts[a.name] = fn(consts[a.name], rank, op)
        backend = _registry.get_backend(dev)
        ufunc = _lowering(nf.kernel_name, st, consts, tensors)
        if ufunc is not None:
            # the kernel would only hand these operands to this ufunc: call it directly
            k = self.const(getattr(backend.xp, ufunc), "np_" + ufunc + "_")
            args = [self.as_array(v, indent) if a.type.base == "Tensor" and _is_tensor(v)
                    else self.const(consts[a.name], "c")
                    for a, v in zip(schema.arguments, n.inputs)][:_ARITY[ufunc]]
            out = self.define(n.output(), "a")
            self.lines.append(f"{indent}{out} = {k}({', '.join(args)})  # {n.kind}")
            return self.note_array_line(n, info, backend, indent)
        kernel = backend.type(st).kernels[nf.kernel_name]
        k = self.const(kernel, "K_" + _IDENT.sub("_", nf.kernel_name) + "_")
        for a, v in zip(schema.arguments, n.inputs):
            if a.type.base == "Tensor" and (_is_tensor(v) or _is_tensor_list(v)):
                kargs.append(self.as_array(v, indent))
            else:
                kargs.append(self.const(consts[a.name], "c"))
        outs = [self.define(o, "a" if _is_tensor(o) or _is_tensor_list(o) else "p")
                for o in n.outputs]
        lhs = outs[0] if len(outs) == 1 else ", ".join(outs)
        self.lines.append(f"{indent}{lhs} = {k}({', '.join(kargs)})  # {n.kind}")
        self.note_array_line(n, info, backend, indent)

    def note_array_line(self, n, info, backend, indent: str) -> None:
        """Remember how to call the op's wrapper on the operands of the array-mode line
        just written, for :func:`_raise_as_eager`: an ``_Operand`` per array operand, the
        unconverted constant for any other argument (``array_op`` admits no other)."""
        line = len(self.lines) - 1  # (the operands are arrays already: nothing is emitted)
        operands = []
        for a, v in zip(info.schema.arguments, n.inputs):
            if a.type.base == "Tensor" and (_is_tensor(v) or _is_tensor_list(v)):
                operands.append(_Operand(self.as_array(v, indent), _is_tensor_list(v),
                                         backend))
            else:
                operands.append(_constant(v))
        self.array_lines[line] = (info, operands)

    def if_(self, n, indent: str) -> None:
        cond = self.arg(n.input(), indent)
        outs = [self.name(o) for o in n.outputs]
        kinds = []
        for o in n.outputs:
            tensorish = _is_tensor(o) or _is_tensor_list(o)
            kinds.append(("a" if self.array_mode else "t") if tensorish else "p")
        self.lines.append(f"{indent}if {cond}:")
        for b in n.blocks:
            if b is n.blocks[1]:
                self.lines.append(f"{indent}else:")
            self.forms.append({})
            start = len(self.lines)
            self.block(b, indent + "    ")
            for o, v, k in zip(outs, b.outputs, kinds):
                src = self.as_array(v, indent + "    ") if k == "a" else \
                    self.as_tensor(v, indent + "    ") if k == "t" else self.arg(v, indent)
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
        kinds = [("a" if self.array_mode else "t") if _is_tensor(v) or _is_tensor_list(v)
                 else "p" for v in n.outputs]
        carried = [self.name(o) for o in n.outputs]
        for o, v, k in zip(carried, n.inputs[2:], kinds):
            src = self.as_array(v, indent) if k == "a" else \
                self.as_tensor(v, indent) if k == "t" else self.arg(v, indent)
            self.lines.append(f"{indent}{o} = {src}")
        it = self.name(body.inputs[0])
        c = f"_cond_{it}"
        self.lines += [f"{indent}{it} = 0", f"{indent}{c} = {cond}",
                       f"{indent}while {c} and {it} < {trips}:"]
        self.forms.append({})
        self.define(body.inputs[0], "p", it)
        for o, v, k in zip(carried, body.inputs[1:], kinds):
            self.define(v, k, o)
        inner = indent + "    "
        self.block(body, inner)
        res = [self.arg(body.outputs[0], inner)]
        for v, k in zip(body.outputs[1:], kinds):
            res.append(self.as_array(v, inner) if k == "a" else
                       self.as_tensor(v, inner) if k == "t" else self.arg(v, inner))
        lhs = ", ".join([c] + carried)
        self.lines.append(f"{inner}{lhs} = {', '.join(res)}")
        self.lines.append(f"{inner}{it} += 1")
        self.forms.pop()
        for o, k in zip(n.outputs, kinds):
            self.define(o, k)


_NOT_CONST = object()

# Kernels that, for float32/float64 arrays and Python numbers (which numpy >= 2 treats as
# weak, as PyTorch does), do nothing but call one ufunc: op -> (ufunc, extra constant
# arguments that must have these values).
_UFUNCS = {
    "add": ("add", {"alpha": 1}), "sub": ("subtract", {"alpha": 1}), "mul": ("multiply", {}),
    "div": ("true_divide", {"rounding_mode": None}), "true_divide": ("true_divide", {}),
    "neg": ("negative", {}), "exp": ("exp", {}), "log": ("log", {}), "sin": ("sin", {}),
    "cos": ("cos", {}), "tanh": ("tanh", {}), "sqrt": ("sqrt", {}), "abs": ("absolute", {}),
    "maximum": ("maximum", {}), "minimum": ("minimum", {}),
}
_ARITY = {"add": 2, "subtract": 2, "multiply": 2, "true_divide": 2, "maximum": 2,
          "minimum": 2, "negative": 1, "exp": 1, "log": 1, "sin": 1, "cos": 1, "tanh": 1,
          "sqrt": 1, "absolute": 1}


def _lowering(kernel_name: str, st, consts: dict, tensors) -> Optional[str]:
    """The ufunc to call instead of the kernel, or None (see ``_UFUNCS``)."""
    entry = _UFUNCS.get(kernel_name)
    if entry is None or st.name not in ("float32", "float64"):
        return None
    ufunc, required = entry
    for name, value in required.items():
        if name not in consts or consts[name] is not value and not (
                value.__class__ is int and consts[name].__class__ is int
                and consts[name] == value):
            return None
    # a 0-d result would come back as a numpy scalar, which later kernels may not take
    if any(not _is_tensor(v) or v.type.rank == 0 for a, v in tensors):
        return None
    return ufunc


def _constant(v):
    n = v.node()
    if n.kind == prim.Constant:
        return n.attr("value", None)
    if n.kind == prim.ListConstruct and all(i.node().kind == prim.Constant for i in n.inputs):
        return [i.node().attr("value", None) for i in n.inputs]
    return _NOT_CONST


@dataclass(frozen=True)
class _Operand:
    """An array operand of an array-mode line: the local holding it, and how to wrap it."""
    name: str
    is_list: bool
    backend: object

    def tensor(self, env: dict):
        arr = env[self.name]
        if self.is_list:
            return [None if x is None else _d.wrap(x, self.backend) for x in arr]
        return _d.wrap(arr, self.backend)


def _is_tensor(v) -> bool:
    return isinstance(v.type, TensorType)


def _is_tensor_list(v) -> bool:
    return isinstance(v.type, ListType) and isinstance(v.type.elem, TensorType)


def _raise_as_eager(array_lines: dict, err: BaseException, env: dict) -> None:
    """Called by a plan with the exception ``err`` it caught and its locals: when an
    array-mode line (``array_lines``: line number -> (OpInfo, operands)) raised it, run that
    node's op wrapper on the same operands, as eager mode would, and raise the wrapper's
    error (a ShapeError where numpy said "could not be broadcast") in place of ``err``.
    Returns, for the plan to re-raise ``err``, when a tensor-mode line raised it (that
    error already is eager's) or when the wrapper accepts the operands."""
    tb = err.__traceback__
    entry = array_lines.get(tb.tb_lineno) if tb is not None else None
    if entry is None:
        return
    info, operands = entry
    args = [a.tensor(env) if a.__class__ is _Operand else a for a in operands]
    try:
        info.call(*args)
    except Exception as eager:
        raise eager from None  # the kernel's error says less than the wrapper's


class ExecutionPlan:
    """A compiled graph: ``plan.run(inputs) -> tuple of outputs`` (Tensors and values).

    Args:
        graph: the optimized graph (value types should be complete where array mode is
            wanted; unknown types make nodes run in tensor mode).
        array_mode: whether no gradient can be needed, so kernels may run on arrays.
    Attributes: ``graph``, ``code`` (the generated source), ``fn`` (the function).
    Raises NotImplementedError for a node kind it cannot run (a ``prim::GradOf`` left
    unlowered). Running it raises what eager mode would (see "Errors" in the module doc).
    """

    def __init__(self, graph, array_mode: bool = False):
        self.graph = graph
        self.array_mode = array_mode
        em = _Emitter(graph, array_mode)
        params = [em.name(v) for v in graph.inputs]
        for v, p in zip(graph.inputs, params):
            em.define(v, "t" if _is_tensor(v) or _is_tensor_list(v) else "p", p)
        em.block(graph.block, "    ")
        rets = [em.arg(v, "    ") for v in graph.outputs]
        ret = "(" + ", ".join(rets) + ("," if len(rets) == 1 else "") + ")"
        body = em.lines + [f"    return {ret}"]
        # NOTE: line 1 is the def, line 2 the try (see "Errors" in the module doc)
        array_lines = {i + 3: entry for i, entry in em.array_lines.items()}
        if array_lines:
            body = ["    try:"] + ["    " + line for line in body] + [
                "    except Exception as _e:", "        _raise_as_eager(_e, locals())",
                "        raise"]
        self.code = f"def plan({', '.join(params)}):\n" + "\n".join(body) + "\n"
        ns = dict(em.globals, _raise_as_eager=partial(_raise_as_eager, array_lines))
        exec(compile(self.code, "<ember.jit plan>", "exec"), ns)  # noqa: S102 - generated
        self.fn = ns["plan"]
        self.runtime_ops = em.runtime_ops

    def run(self, inputs) -> tuple:
        """Run the plan on flat ``inputs`` (one per graph input)."""
        return self.fn(*inputs)

    def debug_state(self) -> dict:
        """``{"graph": optimized graph, "code": source, "array_mode": bool}``."""
        return {"graph": self.graph, "code": self.code, "array_mode": self.array_mode}
