"""Operands and dtypes shared by the elementwise symbolics (``arithmetic.py``,
``unary.py``, ``comparison.py``), and the compositions two of them use (``_trunc``,
``_extremum``).

Type promotion follows ember (``torch.result_type``): every tensor operand is cast to the
IR's output dtype (``g.out(0).dtype``) and every Python number becomes a rank-0 constant of
that dtype, cast as ember casts a wrapped number (``int8 tensor + 1000`` adds -24; a float
too large for float16 becomes inf). Float-only math (``exp``, ``sin``, true division, ...)
casts integral inputs to the output's floating dtype first. ONNX op: Cast.

Multi-step float formulas on float16/bfloat16 compute in float32 and round once, as
ember's "opmath" kernels (``_opmath``); so does any op ONNX does not define on a half
type at the target opset (Sin on bfloat16, IsInf before 20, Where on bfloat16 before 16;
``_node``).

In-place variants (``add_``, ``relu_``, ...) trace as their own kinds and have no
symbolics in the elementwise modules.
"""
from __future__ import annotations

import functools

import onnx

from ... import types as _t
from ..context import OnnxValue

_HALF = (_t.float16, _t.bfloat16)


# ---- operands and dtypes ----

def _common(*operands):
    """The dtype ember computes ``operands`` in (torch.result_type): OnnxValues by rank,
    Python numbers as weak scalars; None operands are skipped."""
    dims, zero_dims, numbers = [], [], []
    for v in operands:
        if v is None:
            continue
        if isinstance(v, OnnxValue):
            (zero_dims if v.rank == 0 else dims).append(v.dtype)
        else:
            numbers.append(v)
    return _t.result_type(dims, zero_dims, numbers)


def _out(g, *operands):
    """The IR's output dtype, or the promoted dtype of ``operands`` if the IR has none."""
    dt = g.out(0).dtype
    return dt if dt is not None else _common(*operands)


def _as(g, v, dtype) -> OnnxValue:
    """A tensor (cast) or Python number (constant) operand in ``dtype``."""
    if isinstance(v, OnnxValue):
        return g.cast(v, dtype)
    return g.scalar(v, dtype=dtype)


def _opmath(dtype):
    """The dtype multi-step float formulas compute in (float32 for float16/bfloat16)."""
    return _t.float32 if dtype in _HALF else dtype


def _binary(g, op_type, a, b, dtype=None) -> OnnxValue:
    """``op_type(a, b)`` with both operands in ``dtype`` (default: the output's)."""
    dt = dtype or _out(g, a, b)
    return _node(g, op_type, _as(g, a, dt), _as(g, b, dt), dtype=dt)


def _op(g, op_type, *inputs, **attrs) -> OnnxValue:
    """``g.op`` whose output has the dtype of its first input (elementwise ops)."""
    return _node(g, op_type, *inputs, dtype=inputs[0].dtype, **attrs)


def _bool(g, op_type, *inputs, **attrs) -> OnnxValue:
    return _node(g, op_type, *inputs, dtype=_t.bool_, **attrs)


@functools.lru_cache(maxsize=None)
def _input_types(op_type: str, opset: int) -> tuple:
    """Per formal input of ONNX ``op_type`` at ``opset``: the tensor types it takes."""
    schema = onnx.defs.get_schema(op_type, opset)
    allowed = {c.type_param_str: frozenset(c.allowed_type_strs)
               for c in schema.type_constraints}
    return tuple(allowed.get(i.type_str, frozenset({i.type_str})) for i in schema.inputs)


def _node(g, op_type, *inputs, dtype, **attrs) -> OnnxValue:
    """``g.op`` with output dtype ``dtype``; when the op does not take a float16/bfloat16
    input at this opset (Sin on bfloat16, IsInf before opset 20, Where on bfloat16 before
    16), the half inputs go through float32 and the result is rounded back."""
    halves = [i for i, v in enumerate(inputs) if v is not None and v.dtype in _HALF]
    if halves:
        formal = _input_types(op_type, g.opset)
        if any(f"tensor({inputs[i].dtype.name})" not in formal[min(i, len(formal) - 1)]
               for i in halves):
            inputs = [g.cast(v, _t.float32) if i in halves else v
                      for i, v in enumerate(inputs)]
            wide = _t.float32 if dtype in _HALF else dtype
            return g.cast(g.op(op_type, *inputs, dtype=wide, **attrs), dtype)
    return g.op(op_type, *inputs, dtype=dtype, **attrs)


def _unary(g, op_type, x, dtype=None, **attrs) -> OnnxValue:
    """One-input ``op_type`` on x, output dtype ``dtype`` (default x's)."""
    return _node(g, op_type, x, dtype=dtype or x.dtype, **attrs)


# ---- compositions shared by arithmetic.py and unary.py ----

def _trunc(g, x):
    """Round toward zero: Ceil below 0, Floor elsewhere (NaN and infinities pass)."""
    below = _bool(g, "Less", x, g.scalar(0, dtype=x.dtype))
    return _node(g, "Where", below, _unary(g, "Ceil", x), _unary(g, "Floor", x), dtype=x.dtype)


def _extremum(g, op_type, a, b):
    """Max/Min of two values of one dtype (NaN propagates in onnxruntime as in ember);
    on bools, max is Or and min is And."""
    if a.dtype is _t.bool_:
        return _bool(g, "Or" if op_type == "Max" else "And", a, b)
    return _op(g, op_type, a, b)
