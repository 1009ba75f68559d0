"""Symbolics of ember's comparisons (``eq``, ``ne``, ``lt``, ``le``, ``gt``, ``ge``),
logical ops (``logical_and``/``or``/``xor``/``not``) and bitwise ops (``bitwise_and``/
``or``/``xor``/``not``, ``bitwise_left_shift``/``bitwise_right_shift``) and the
special-value predicates (``isnan``, ``isinf``, ``isposinf``, ``isneginf``, ``isfinite``).

Comparisons compute in the promoted dtype of their operands and give bool (type
promotion and in-place variants: see ``_operands.py``).

ONNX ops: Equal, Less, LessOrEqual, Greater, GreaterOrEqual, And, Or, Xor, Not,
BitwiseAnd/Or/Xor/Not (opset 18), BitShift, IsNaN, IsInf (``detect_positive`` /
``detect_negative`` for isposinf / isneginf; isfinite is Not(IsNaN or IsInf)).

Compositions where ONNX has no op, or its op differs from ember's:

* ``bitwise_*`` on integers need opset 18 (bool works at any opset through And/Or/Xor/
  Not); the shifts take uint8 only (ONNX BitShift is unsigned), counts of 8 or more give 0
  (ONNX leaves them undefined; a Where puts the 0 in).
* The predicates on integers and bools (no NaN or infinity): ``Equal(x, x)`` (all True,
  for isfinite) or its ``Not`` (all False), which keep x's shape at any batch size.

References: the ONNX operator specifications (https://onnx.ai/onnx/operators/); PyTorch's
``torch/onnx/symbolic_opset9.py`` ... ``symbolic_opset20.py`` as the reference mapping.
"""
from __future__ import annotations

from ... import types as _t
from ..registry import builtin
from ._operands import _as, _binary, _bool, _common, _node, _op, _out


# ---- comparisons, logical and bitwise ----

_COMPARE = {"eq": "Equal", "ne": "Equal", "lt": "Less", "le": "LessOrEqual",
            "gt": "Greater", "ge": "GreaterOrEqual"}


def _compare(name, op_type):
    def symbolic(g, self, other):
        dt = _common(self, other)
        if dt is _t.bool_ and op_type != "Equal":
            dt = _t.uint8        # ordered comparisons take no bools
        r = _bool(g, op_type, _as(g, self, dt), _as(g, other, dt))
        return _bool(g, "Not", r) if name == "ne" else r
    symbolic.__name__ = name
    symbolic.__doc__ = (f"{'Not(Equal)' if name == 'ne' else op_type} on both operands in "
                        f"their promoted dtype.")
    return symbolic


for _name, _op_type in _COMPARE.items():
    builtin(f"ember::{_name}")(_compare(_name, _op_type))


def _truth(g, v):
    """Nonzero (NaN included) as True: Cast to bool."""
    return _as(g, v, _t.bool_)


def _logical(op_type):
    def symbolic(g, self, other):
        return _bool(g, op_type, _truth(g, self), _truth(g, other))
    symbolic.__name__ = f"logical_{op_type.lower()}"
    symbolic.__doc__ = f"{op_type} of the operands' truth values."
    return symbolic


builtin("ember::logical_and")(_logical("And"))
builtin("ember::logical_or")(_logical("Or"))
builtin("ember::logical_xor")(_logical("Xor"))


@builtin("ember::logical_not")
def logical_not(g, x):
    return _bool(g, "Not", _truth(g, x))


def _bitwise_op(g, name, dt):
    """The ONNX op for bitwise ``name`` ("And", "Not", ...) on ``dt``, or a failure."""
    if dt is _t.bool_:
        return name
    if g.opset < 18:
        g.fail(f"ONNX has bitwise ops on integers (Bitwise{name}) from opset 18; export "
               f"with opset_version >= 18 (bool tensors work at any opset)")
    return f"Bitwise{name}"


def _bitwise(name):
    def symbolic(g, self, other):
        dt = _out(g, self, other)
        return _binary(g, _bitwise_op(g, name, dt), self, other, dt)
    symbolic.__name__ = f"bitwise_{name.lower()}"
    symbolic.__doc__ = f"Bitwise{name} on integers (opset 18), {name} on bools."
    return symbolic


builtin("ember::bitwise_and")(_bitwise("And"))
builtin("ember::bitwise_or")(_bitwise("Or"))
builtin("ember::bitwise_xor")(_bitwise("Xor"))


@builtin("ember::bitwise_not")
def bitwise_not(g, x):
    return _op(g, _bitwise_op(g, "Not", x.dtype), x)


def _shift(direction):
    def symbolic(g, self, other):
        dt = _out(g, self, other)
        if dt is not _t.uint8:
            g.fail(f"ONNX BitShift takes unsigned integers only, and the result here is "
                   f"{dt.name} (ember's signed right shift is arithmetic, which BitShift "
                   f"cannot do); shift a uint8 tensor, or multiply / floor-divide by "
                   f"powers of two instead")
        a, b = _as(g, self, dt), _as(g, other, dt)
        # counts of 8 or more give 0 in ember; ONNX leaves them undefined, so BitShift
        # gets at most 7 and a Where puts the 0 in
        shifted = _op(g, "BitShift", a, _op(g, "Min", b, g.scalar(7, dtype=dt)),
                      direction=direction)
        in_range = _bool(g, "Less", b, g.scalar(8, dtype=dt))
        return _node(g, "Where", in_range, shifted, g.scalar(0, dtype=dt), dtype=dt)
    symbolic.__name__ = f"bitwise_{direction.lower()}_shift"
    symbolic.__doc__ = f"BitShift({direction}) on uint8; counts >= 8 give 0 as in ember."
    return symbolic


builtin("ember::bitwise_left_shift")(_shift("LEFT"))
builtin("ember::bitwise_right_shift")(_shift("RIGHT"))

del _name, _op_type


# ---- special values ----

def _all(g, x, value: bool):
    """A bool tensor of x's shape, all ``value`` (integers and bools have no NaN or inf)."""
    same = _bool(g, "Equal", x, x)
    return same if value else _bool(g, "Not", same)


def _predicate(name, op_type, nonfloat: bool, **attrs):
    def symbolic(g, x):
        if not x.dtype.is_floating_point:
            return _all(g, x, nonfloat)
        return _node(g, op_type, x, dtype=_t.bool_, **attrs)
    symbolic.__name__ = name
    symbolic.__doc__ = f"{op_type}{attrs or ''} on floats; {nonfloat} for integers and bools."
    return symbolic


builtin("ember::isnan")(_predicate("isnan", "IsNaN", False))
builtin("ember::isinf")(_predicate("isinf", "IsInf", False))
builtin("ember::isposinf")(_predicate("isposinf", "IsInf", False, detect_negative=0))
builtin("ember::isneginf")(_predicate("isneginf", "IsInf", False, detect_positive=0))


@builtin("ember::isfinite")
def isfinite(g, x):
    """Not(Or(IsNaN(x), IsInf(x))); True for integers and bools."""
    if not x.dtype.is_floating_point:
        return _all(g, x, True)
    special = _bool(g, "Or", _node(g, "IsNaN", x, dtype=_t.bool_),
                    _node(g, "IsInf", x, dtype=_t.bool_))
    return _bool(g, "Not", special)
