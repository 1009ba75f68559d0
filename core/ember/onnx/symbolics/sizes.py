"""Symbolics of the size values a trace computes (``ember/jit/frontend/symbolic_sizes.py``) and of
the factories it records when a size is one (``ember/jit/frontend/traced_factories.py``).

A size that follows no dynamic axis is folded to a Python number here, so the ops that
take it see the constant they saw before sizes were traced (and write the same nodes). A
size that follows one becomes a :class:`~ember.onnx.context.SizeValue`: a rank-0 int64
value computed at run time, which ``view``, ``expand``, ``index``, the upsampling ops and
the factories below take as is (``takes_size_values``); other symbolics get the traced
number and ``g.dynamic(i)`` (see ``export.py``).

Mapping (ONNX operators, https://onnx.ai/onnx/operators/):

* ``ember::size(x, d)`` -> ``Shape`` + ``Gather`` (axis 0, a scalar index): an int64
  scalar.
* ``{add,sub,mul}.int`` -> ``Add``/``Sub``/``Mul`` on int64; ``floordiv.int`` -> ``Div``
  (ONNX's integer Div truncates; sizes are non-negative, where truncation is floor);
  ``remainder.int`` -> ``Mod`` (``fmod=0``: the sign of the divisor, as Python's ``%``);
  ``neg.int`` -> ``Neg``; ``div.int`` -> ``Div`` on float64 (``Cast``).
* ``{add,sub,mul,div}.float`` -> the same ops on float64; ``floordiv.float`` ->
  ``Floor(Div)``; ``remainder.float`` -> ``a - Floor(a / b) * b``; ``floor``/``ceil``
  ``.float`` -> ``Floor``/``Ceil`` + ``Cast`` to int64; ``Int.float`` -> ``Cast`` (toward
  zero, as Python's ``int``).
* A size list (``prim::ListConstruct``) is written where an op takes it: each run-time
  size ``Unsqueeze`` d to ``[1]``, runs of constants as one 1-D constant, ``Concat``
  (``_shapes._shape``).
* ``zeros``/``ones``/``empty``/``full`` -> ``ConstantOfShape`` (``Expand`` for a fill
  value that is itself a size); ``arange`` -> ``Range``; ``rand``/``randn`` ->
  ``RandomUniformLike``/``RandomNormalLike``; ``randint`` -> ``RandomUniformLike`` +
  ``Floor`` + ``Cast``. With constant sizes: a constant (``rand*``: ``RandomUniform``/
  ``RandomNormal``).

Departures: random factories draw from the runtime's generator, not ember's (the same
distribution, other numbers; a ``generator`` argument is ignored). ``empty`` is zeros.

Reference: PyTorch's ``torch/onnx/symbolic_opset9.py`` (``size``, ``zeros``, ``arange``)
and ``symbolic_opset11.py`` (the mapping; own code), and the ONNX operator specifications.
"""
from __future__ import annotations

import math
import operator

import numpy as np
from onnx import helper, numpy_helper

from ... import types as _t
from ..context import OnnxValue, SizeValue, has_size_value, takes_size_values
from ..dtypes import to_onnx
from ..registry import builtin
from ._shapes import _Dim, _norm, _shape

__all__ = ["size_items", "size_tensor"]


# ---- helpers ---------------------------------------------------------------------------

def size_items(x: OnnxValue, items) -> list:
    """Size items for ``_shapes._shape``/``_reshape`` of ``x``: a run-time size that is one
    of ``x``'s own dims becomes ``_Dim`` (a Reshape copies it with 0); ints and other
    SizeValues stay."""
    out = []
    for it in items:
        if isinstance(it, SizeValue) and it.source is not None and it.source[0] == x.name:
            out.append(_Dim(it.source[1]))
        else:
            out.append(it if isinstance(it, OnnxValue) else int(it))
    return out


def size_tensor(g, items) -> OnnxValue:
    """The 1-D int64 value of a size list (ints and SizeValues)."""
    items = [items] if not isinstance(items, (list, tuple)) else list(items)
    return _shape(g, None, [it if isinstance(it, OnnxValue) else int(it) for it in items])


def _sized(v: OnnxValue, dtype, traced) -> SizeValue:
    return SizeValue(v.name, dtype, traced)


def _operand(g, v, dtype) -> OnnxValue:
    """A size operand (SizeValue or Python number) as a rank-0 value of ``dtype``."""
    if isinstance(v, OnnxValue):
        return g.cast(v, dtype)
    return g.scalar(v, dtype=dtype)


def _fold(values) -> bool:
    """Whether every operand is a Python number (the result is folded in Python)."""
    return not any(isinstance(v, OnnxValue) for v in values)


def _traced(v):
    return v.traced if isinstance(v, SizeValue) else v


# ---- ember::size and the arithmetic on sizes ---------------------------------------------

@builtin("ember::size")
def size(g, x, dim):
    """The traced size where dim ``dim`` follows no dynamic axis, else Shape + Gather."""
    if x.sizes is None:
        g.fail("the input's sizes are unknown to the exporter; x.size(d) needs them")
    d = _norm(int(dim), len(x.sizes))
    if not x.is_dynamic(d):
        return int(x.sizes[d])
    shape = g.shape_of(x)
    v = g.op("Gather", shape, g.scalar(d, dtype=_t.int64), axis=0, dtype=_t.int64)
    return SizeValue(v.name, _t.int64, int(x.sizes[d]), (x.name, d))


def _register(kind: str, py_fn, build, dtype):
    """Register a size op: folded by ``py_fn`` on Python numbers, else ``build(g, *vals)``
    on operands cast to ``dtype``; the result is a SizeValue of the IR's type."""
    out_dtype = _t.float64 if kind == "ember::div.int" or (
        kind.endswith(".float") and kind.split("::")[1].split(".")[0]
        not in ("floor", "ceil", "Int")) else _t.int64

    @builtin(kind)
    @takes_size_values
    def symbolic(g, *args):
        if _fold(args):
            return py_fn(*args)
        v = build(g, *(_operand(g, a, dtype) for a in args))
        return _sized(g.cast(v, out_dtype) if v.dtype is not out_dtype else v, out_dtype,
                      py_fn(*(_traced(a) for a in args)))
    symbolic.__name__ = kind.split("::")[1].replace(".", "_")
    symbolic.__doc__ = f"{kind} on sizes (see the module docstring)."
    return symbolic


def _onnx(op_type):
    return lambda g, *vals: g.op(op_type, *vals, dtype=vals[0].dtype)


def _float_floordiv(g, a, b):
    return g.op("Floor", g.op("Div", a, b, dtype=a.dtype), dtype=a.dtype)


def _float_remainder(g, a, b):      # Python's %: the sign of the divisor
    return g.op("Sub", a, g.op("Mul", _float_floordiv(g, a, b), b, dtype=a.dtype),
                dtype=a.dtype)


def _rounded(op_type):
    def build(g, a):
        return g.cast(g.op(op_type, a, dtype=a.dtype), _t.int64)
    return build


_INT = {"add": (operator.add, _onnx("Add")), "sub": (operator.sub, _onnx("Sub")),
        "mul": (operator.mul, _onnx("Mul")),
        # NOTE: integer Div truncates; equal to floor for the non-negative sizes here
        "floordiv": (operator.floordiv, _onnx("Div")),
        "remainder": (operator.mod, lambda g, a, b: g.op("Mod", a, b, fmod=0,
                                                         dtype=a.dtype))}
_FLOAT = {"add": (operator.add, _onnx("Add")), "sub": (operator.sub, _onnx("Sub")),
          "mul": (operator.mul, _onnx("Mul")), "div": (operator.truediv, _onnx("Div")),
          "floordiv": (operator.floordiv, _float_floordiv),
          "remainder": (operator.mod, _float_remainder)}
for _name, (_py, _build) in _INT.items():
    _register(f"ember::{_name}.int", _py, _build, _t.int64)
for _name, (_py, _build) in _FLOAT.items():
    _register(f"ember::{_name}.float", _py, _build, _t.float64)
_register("ember::neg.int", operator.neg, _onnx("Neg"), _t.int64)
_register("ember::div.int", operator.truediv, _onnx("Div"), _t.float64)
_register("ember::floor.float", math.floor, _rounded("Floor"), _t.float64)
_register("ember::ceil.float", math.ceil, _rounded("Ceil"), _t.float64)
_register("ember::Int.float", int, lambda g, a: g.cast(a, _t.int64), _t.float64)


# ---- factories -----------------------------------------------------------------------------

def _fill_dtype(dtype):
    """The dtype ConstantOfShape / the Random* ops make before a Cast (bfloat16 through
    float32: older opsets lack it)."""
    return _t.float32 if dtype is _t.bfloat16 else dtype


def _filled(g, size, value, dtype) -> OnnxValue:
    """A tensor of ``size`` (ints and SizeValues) filled with ``value``, in ``dtype``."""
    if not has_size_value(size) and not isinstance(value, OnnxValue):
        return g.constant(np.full([int(s) for s in size], value, dtype=dtype.numpy))
    shape = size_tensor(g, size)
    if isinstance(value, OnnxValue):
        return g.op("Expand", g.cast(value, dtype), shape, dtype=dtype)
    work = _fill_dtype(dtype)
    fill = np.array([value]).astype(work.numpy)
    out = g.op("ConstantOfShape", shape, value=numpy_helper.from_array(fill), dtype=work)
    return g.cast(out, dtype)


@builtin("ember::zeros", "ember::empty")
@takes_size_values
def zeros(g, size, dtype=None, device=None, requires_grad=False):
    """ConstantOfShape 0 of a run-time size; a constant otherwise."""
    return _filled(g, size, 0, g.out(0).dtype)


@builtin("ember::ones")
@takes_size_values
def ones(g, size, dtype=None, device=None, requires_grad=False):
    """ConstantOfShape 1 of a run-time size; a constant otherwise."""
    return _filled(g, size, 1, g.out(0).dtype)


@builtin("ember::full")
@takes_size_values
def full(g, size, fill_value, dtype=None, device=None, requires_grad=False):
    """ConstantOfShape of ``fill_value``; Expand when the fill value is a run-time size."""
    return _filled(g, size, fill_value, g.out(0).dtype)


@builtin("ember::arange")
@takes_size_values
def arange(g, start, end, step, dtype=None, device=None, requires_grad=False):
    """Range on the output dtype (a constant when no bound is a run-time size)."""
    out = g.out(0).dtype
    if _fold((start, end, step)):
        return g.constant(np.arange(start, end, step).astype(out.numpy))
    work = out if out in (_t.float32, _t.float64, _t.int16, _t.int32, _t.int64) else _t.float64
    y = g.op("Range", *(_operand(g, v, work) for v in (start, end, step)), dtype=work)
    return g.cast(y, out)


def _random(g, size, op_type, dtype, **attrs) -> OnnxValue:
    """``RandomUniform``/``RandomNormal`` of ``size`` in ``dtype`` (float64 for a
    non-float one; the ``Like`` form of a ConstantOfShape for a run-time size)."""
    floats = (_t.float16, _t.bfloat16, _t.float32, _t.float64)
    work = _fill_dtype(dtype) if dtype in floats else _t.float64
    if has_size_value(size):
        y = g.op(op_type + "Like", _filled(g, size, 0, work), dtype=work, **attrs)
    else:
        y = g.op(op_type, shape=[int(s) for s in size], dtype=work, **attrs)
    # NOTE: ONNX's attribute is also called dtype, which g.op takes for the ember dtype
    g.nodes[-1].attribute.append(helper.make_attribute("dtype", to_onnx(work)))
    return y


@builtin("ember::rand")
@takes_size_values
def rand(g, size, generator=None, dtype=None, device=None, requires_grad=False):
    """RandomUniform[Like] in [0, 1); the runtime's numbers, not ember's."""
    out = g.out(0).dtype
    return g.cast(_random(g, size, "RandomUniform", out), out)


@builtin("ember::randn")
@takes_size_values
def randn(g, size, generator=None, dtype=None, device=None, requires_grad=False):
    """RandomNormal[Like] (mean 0, scale 1); the runtime's numbers, not ember's."""
    out = g.out(0).dtype
    return g.cast(_random(g, size, "RandomNormal", out), out)


@builtin("ember::randint")
@takes_size_values
def randint(g, low, high, size, generator=None, dtype=None, device=None,
            requires_grad=False):
    """Floor(RandomUniform[Like] in [low, high)), cast to the output dtype."""
    if isinstance(low, OnnxValue) or isinstance(high, OnnxValue):
        g.fail("randint: low/high computed from a size; ONNX's RandomUniform takes them as "
               "attributes. Draw with rand and scale: (rand(...) * n).floor()")
    u = _random(g, size, "RandomUniform", _t.float64, low=float(low), high=float(high))
    # NOTE: clamp to high - 1: a float draw may round up to high
    top = g.scalar(float(high) - 1, dtype=_t.float64)
    return g.cast(g.op("Min", g.op("Floor", u, dtype=_t.float64), top, dtype=_t.float64),
                  g.out(0).dtype)
