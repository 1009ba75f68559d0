"""Array mode of an ExecutionPlan (``plan.py``): op nodes lowered to kernel calls on arrays.

When no gradient can be needed, ``plan.py``'s emitter hands each op node to
:func:`emit_array_op`, which writes it as a call of the backend kernel on arrays, with the
argument conversions and dim wrapping the op's wrapper would do done once, at plan time.
For ``(x * y + 1).relu()`` on int64 CPU tensors the lines read::

    v2 = _K_mul_1(x_a, y_a)  # ember::mul
    v4 = _K_add_2(v2, 1, 1)  # ember::add
    v5 = _K_relu_3(v4)  # ember::relu

where ``_K_mul_1`` is ``Type.kernels["mul"]`` of the int64 CPU Type, and ``add``'s
``alpha`` (the second ``1``) was checked and converted when the plan was built.

It applies only where every tensor operand's dtype, device and rank are known, the
operands already share the result dtype (else promotion would cast), every other argument
is a constant, and the op is a plain kernel (not composite, not in place); otherwise it
raises :class:`Unsupported` and the node runs in tensor mode (the op's wrapper on Tensors).
Where the kernel declares an array-level form (``ember.backends.kernels.array_form``: for
float32/float64 operands it does nothing but call one ufunc, ``add`` when ``alpha`` is 1),
the plan calls that ufunc (``v2 = _np_multiply_1(x_a, y_a)``; ``plan.py``'s example).
Such a call can write into a buffer (``out=``): :func:`out_capable` tells
``memory_planning.py`` which nodes these are, and where it gave the result a buffer slot,
:func:`emit_array_op` writes the call in that module's planned form.

Errors: a kernel called on arrays does not check its operands as the op's wrapper does
(numpy says "operands could not be broadcast together" where eager ember raises
ShapeError). So :func:`emit_array_op` records, per line it writes, how to call the op's
wrapper on the same operands, and when such a line raises, the plan's handler
(``plan._raise_as_eager``) asks :func:`eager_error` for the error the wrapper raises on
them, eager mode's error with its message, and raises that instead.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple, Optional

import numpy as np

from ... import dispatch as _d
from ...backends import registry as _registry
from ...backends.kernels.array_form import UfuncForm, ufunc_form
from ...ops import arguments as _arguments
from ...ops.native import DIM_ARG_NAMES
from ..ir.ir_types import ListType, TensorType
from ..ir.kinds import prim
from .memory_planning import emit_planned_call
from .op_registry import is_op_kind, op_info

__all__ = ["Form", "Unsupported", "emit_array_op", "out_capable", "eager_error", "is_tensor",
           "is_tensor_list"]

#: What may not appear in a generated Python name (plan.py names values with it too).
IDENT = re.compile(r"[^0-9a-zA-Z_]")
_SCALAR_CATEGORY = {bool: 0, int: 1, float: 2}


class Form(Enum):
    """How a graph value exists in a plan's generated code; a value may exist in several
    forms at once, each under its own name (``v5`` and ``v5_t``)."""

    ARRAY = "array"     # the backend array (array mode): ``v5``, ``x_a``
    TENSOR = "tensor"   # an ember Tensor, or a list of them: ``v5_t``, a plan's inputs
    PYTHON = "python"   # any other value: an int, a list of ints, None, a constant


class Unsupported(Exception):
    """This node cannot run in array mode."""


def is_tensor(v) -> bool:
    """Whether graph value ``v`` is typed ``Tensor`` (it may take an array form)."""
    return isinstance(v.type, TensorType)


def is_tensor_list(v) -> bool:
    """Whether graph value ``v`` is typed ``Tensor[]``."""
    return isinstance(v.type, ListType) and isinstance(v.type.elem, TensorType)


def _convert_arg(a, value, op: str, pos: int):
    """Apply the wrapper's conversion of a non-Tensor argument to a constant ``value``:
    the one ``ARGUMENT_CONVERSIONS`` names for its schema type (``ops/arguments.py``, the
    table the generated wrappers are written from), done once, here."""
    if a.type.base == "Generator" and not (value is None and a.type.optional):
        raise Unsupported("generator")  # (drawn from at run time: the wrapper's to do)
    return _arguments.convert(a, value, op, pos)


class _Lowering(NamedTuple):
    """What :func:`_lower` found out about an op node that array mode can run."""
    info: object       # the op's OpInfo
    consts: dict       # argument name -> converted constant
    st: object         # the ScalarType of the operands (and of a ufunc's result)
    backend: object
    kernel: object     # the backend's kernel for the operands' Type
    form: Optional[UfuncForm]  # the kernel's array-level form, if it holds here, or None


def _lower(n) -> _Lowering:
    """How array mode runs op node ``n``; raises :class:`Unsupported` when it cannot."""
    info = op_info(n.kind)
    nf = info.nf
    if nf is None or info.composite or info.inplace or info.schema.out_argument:
        raise Unsupported(n.kind)
    schema = info.schema
    op = schema.name
    # every tensor operand's dtype/device/rank must be known, and every other argument
    # a constant: then the wrapper's work can be done here, once
    tensors, scalars = [], []
    consts = {}
    for pos, (a, v) in enumerate(zip(schema.arguments, n.inputs), 1):
        if a.type.base == "Tensor":
            if is_tensor(v):
                t = v.type
                if t.dtype is None or t.device is None or t.rank is None:
                    raise Unsupported("unknown tensor type")
                tensors.append((a, v))
            elif a.type.is_list:
                if not is_tensor_list(v):
                    raise Unsupported("list")
                tensors.append((a, v))
            else:
                c = _constant(v)
                if c is _NOT_CONST:
                    raise Unsupported("non-constant operand")
                if c is not None:
                    if c.__class__ not in _SCALAR_CATEGORY:
                        raise Unsupported("operand")
                    scalars.append(c)
                consts[a.name] = c
        else:
            c = _constant(v)
            if c is _NOT_CONST:
                raise Unsupported("non-constant argument")
            consts[a.name] = _convert_arg(a, c, op, pos)
    if not tensors:
        raise Unsupported("no tensor operand")
    first = next((v for a, v in tensors if is_tensor(v)), None)
    if first is None:  # only a Tensor[] (cat, stack): its element types are not known
        raise Unsupported("tensor list only")
    dev = first.type.device
    dtypes = {v.type.dtype for a, v in tensors if is_tensor(v)}
    if len(dtypes) != 1 or any(v.type.device != dev for a, v in tensors if is_tensor(v)):
        raise Unsupported("mixed operands")
    st = dtypes.pop()
    if nf.promote:
        if any(_SCALAR_CATEGORY[s.__class__] > st._category for s in scalars):
            raise Unsupported("a scalar promotes")
        if nf.promote == "float" and not st.is_floating_point:
            raise Unsupported("int -> float")
    if any(is_tensor_list(v) for a, v in tensors) and len(tensors) != 1:
        raise Unsupported("list and tensors")
    if nf.wrap_dims:
        rank = first.type.rank + nf.dim_extra
        for a in schema.arguments:
            if a.name in DIM_ARG_NAMES and a.type.base == "int" and a.name in consts:
                fn = _d.wrap_dims if a.type.is_list or a.type.optional else _d.wrap_dim
                consts[a.name] = fn(consts[a.name], rank, op)
    backend = _registry.get_backend(dev)
    try:
        kernel = backend.type(st).kernels[nf.kernel_name]
    except NotImplementedError:  # no kernel for this dtype: the wrapper raises eager's error
        raise Unsupported("no kernel") from None
    return _Lowering(info, consts, st, backend, kernel,
                     _ufunc_of(kernel, backend.xp, schema, st, consts, tensors))


def out_capable(n):
    """The result dtype (a ScalarType) of node ``n`` if array mode writes it as one numpy
    ufunc call, which can take ``out=`` (``memory_planning.py``), else None."""
    if not is_op_kind(n.kind):
        return None
    try:
        low = _lower(n)
    except Unsupported:
        return None
    return low.st if low.form is not None and low.backend.xp is np else None


def emit_array_op(em, n, indent: str) -> None:
    """Write op node ``n`` as a kernel (or ufunc) call on arrays into emitter ``em``
    (``plan._Emitter``: its ``lines``, ``const``, ``define``, ``as_array``, and
    ``memory_plan``, whose slot for the output makes the call write into a buffer), and
    note the line in ``em.array_lines`` for :func:`eager_error`. Raises
    :class:`Unsupported`, having written nothing, when the node cannot run in array mode."""
    info, consts, st, backend, kernel, form = _lower(n)
    schema, nf = info.schema, info.nf
    if form is not None:
        # the kernel would only hand these operands to this ufunc: call it directly
        k = em.const(form.ufunc, "np_" + IDENT.sub("_", form.ufunc.__name__) + "_")
        args, arrays = [], []
        operands = len(schema.arguments) - len(form.when)
        for a, v in list(zip(schema.arguments, n.inputs))[:operands]:
            if a.type.base == "Tensor" and is_tensor(v):
                args.append(em.as_array(v, indent))
                arrays.append((args[-1], v))
            else:
                args.append(em.const(consts[a.name], "c"))
        out = em.define(n.output(), Form.ARRAY)
        if n.output() not in em.memory_plan.slots:
            em.lines.append(f"{indent}{out} = {k}({', '.join(args)})  # {n.kind}")
            return _note_array_line(em, n, info, backend, indent)
        lines = emit_planned_call(em.lines, indent, em.memory_plan, n.output(), out, k, args,
                                  arrays, n.kind)
        return _note_array_line(em, n, info, backend, indent, lines)
    k = em.const(kernel, "K_" + IDENT.sub("_", nf.kernel_name) + "_")
    kargs = []
    for a, v in zip(schema.arguments, n.inputs):
        if a.type.base == "Tensor" and (is_tensor(v) or is_tensor_list(v)):
            kargs.append(em.as_array(v, indent))
        else:
            kargs.append(em.const(consts[a.name], "c"))
    outs = [em.define(o, Form.ARRAY if is_tensor(o) or is_tensor_list(o) else Form.PYTHON)
            for o in n.outputs]
    lhs = outs[0] if len(outs) == 1 else ", ".join(outs)
    em.lines.append(f"{indent}{lhs} = {k}({', '.join(kargs)})  # {n.kind}")
    _note_array_line(em, n, info, backend, indent)


def _note_array_line(em, n, info, backend, indent: str, lines=None) -> None:
    """Remember how to call the op's wrapper on the operands of the array-mode line
    just written (or of ``lines``, indices in ``em.lines``), for :func:`eager_error`: an
    ``_Operand`` per array operand, the unconverted constant for any other argument
    (``emit_array_op`` admits no other)."""
    lines = lines if lines is not None else [len(em.lines) - 1]
    operands = []  # (the operands are arrays already: nothing is emitted)
    for a, v in zip(info.schema.arguments, n.inputs):
        if a.type.base == "Tensor" and (is_tensor(v) or is_tensor_list(v)):
            operands.append(_Operand(em.as_array(v, indent), is_tensor_list(v), backend))
        else:
            operands.append(_constant(v))
    for line in lines:
        em.array_lines[line] = (info, operands)


_NOT_CONST = object()

def _ufunc_of(kernel, xp, schema, st, consts: dict, tensors) -> Optional[UfuncForm]:
    """The array-level form of ``kernel`` if it holds for this call (float32/float64
    operands, the declared values of its other arguments, no 0-d operand), or None."""
    form = ufunc_form(kernel, xp)
    if form is None or st.name not in ("float32", "float64"):
        return None
    when, n_args = form.when, len(schema.arguments)
    if len(when) >= n_args:
        return None
    rest = schema.arguments[n_args - len(when):]
    if any(a.type.base == "Tensor" for a in rest):
        return None
    for a, value in zip(rest, when):
        c = consts.get(a.name, _NOT_CONST)
        if c is not value and not (value.__class__ is int and c.__class__ is int
                                   and c == value):
            return None
    # a 0-d result would come back as a numpy scalar, which later kernels may not take
    if any(not is_tensor(v) or v.type.rank == 0 for a, v in tensors):
        return None
    return form


def _constant(v):
    n = v.node
    if n.kind == prim.Constant:
        return n.attr("value", None)
    if n.kind == prim.ListConstruct and all(i.node.kind == prim.Constant for i in n.inputs):
        return [i.node.attr("value", None) for i in n.inputs]
    return _NOT_CONST


@dataclass(frozen=True)
class _Operand:
    """An array operand of an array-mode line: the name holding it (a local of the plan, or
    one of its globals for a constant), and how to wrap it."""
    name: str
    is_list: bool
    backend: object

    def tensor(self, env: dict, globals_: dict):
        arr = env[self.name] if self.name in env else globals_[self.name]
        if self.is_list:
            return [None if x is None else _d.wrap(x, self.backend) for x in arr]
        return _d.wrap(arr, self.backend)


def eager_error(rerun, env: dict, globals_: dict) -> Optional[Exception]:
    """The error the op's wrapper raises on the operands of an array-mode line (``rerun``:
    the ``(OpInfo, operands)`` :func:`emit_array_op` noted), or None if it accepts them.
    ``env`` and ``globals_``: the plan's locals and globals when the line raised."""
    info, operands = rerun
    try:
        args = [a.tensor(env, globals_) if a.__class__ is _Operand else a for a in operands]
    except (KeyError, TypeError):  # NOTE: no operands to rerun on: keep the kernel's error
        return None
    try:
        info.call(*args)
    except Exception as eager:  # noqa: BLE001 - whatever eager mode raises is the answer
        return eager
    return None
