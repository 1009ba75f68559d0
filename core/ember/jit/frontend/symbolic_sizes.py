"""Sizes are values in a trace: ``SymInt``, ``SymFloat`` and the guards they leave.

While a trace is open, ``x.size(0)``, ``x.shape``, ``x.numel()`` and ``len(x)`` of a traced
tensor give :class:`SymInt` s: Python ``int`` s (so every library that wants an int gets
one) that also know how the trace computes them. Arithmetic on them (``+ - * // %``,
unary minus, ``max``/``min`` through comparisons, ``/`` and ``*`` with floats, ``math.floor``
/ ``ceil`` of the result) gives new SymInts; an op argument that is a SymInt, or a list
holding one, enters the graph as a value (``prim::ListConstruct`` of ints), so the graph
computes its shapes from its inputs at run time::

    t = ember.jit.trace(lambda x: x.view(x.size(0), -1).sum(1), (ember.randn(4, 2, 3),))
    print(t.graph)
      %1 : int = prim::Constant[value=0]()
      %2 : int = ember::size(%x, %1)
      %3 : int = prim::Constant[value=-1]()
      %4 : int[] = prim::ListConstruct(%2, %3)
      %5 : Float(4, 6) = ember::view(%x, %4)
      ...

Node kinds (PyTorch's ``aten::size`` and TorchScript's ``aten::add.int`` and kin):
``ember::size(Tensor self, int dim) -> int``; ``ember::{add,sub,mul,floordiv,remainder}.int
(int a, int b) -> int``; ``ember::neg.int(int a) -> int``; ``ember::div.int(int a, int b)
-> float``; ``ember::{add,sub,mul,div}.float(float a, float b) -> float``;
``ember::{floor,ceil,Int}.float(float a) -> int``; ``prim::SliceConstruct(int? start,
int? stop, int? step)`` for a slice bound that is a size.

**Guards.** Whatever turns a SymInt into a plain Python fact is a *guard*: a comparison
(``if x.size(0) > 1``), ``bool()``, ``int()``, ``float()``, ``hash``-free dunders we do not
model (``**``, ``<<``, ...). The guard records the comparison as an expression over the
*input* sizes (``S[0][0] > 1`` is True) with the user's line; the traced function checks its
guards on every call and re-traces when one fails (``traced.py``). A SymInt read from an
intermediate tensor has no expression over the inputs: a guard on it pins every input
size (conservative, never wrong). Escapes Python gives no hook for (``range(n)``, a size
into numpy) are caught by ``traced.py``'s check of a new size against a fresh trace.

Reference: PyTorch's tracer (``getSizeOf`` records ``aten::size``, 2018) and
``torch.SymInt`` / dynamo's shape guards (``torch/fx/experimental/symbolic_shapes.py``).
"""
from __future__ import annotations

import math
import operator
import os
import sys
import warnings
from typing import Callable, NamedTuple, Optional

from ..ir.ir_types import AnyType, FloatType, IntType, ListType
from ..ir.kinds import prim
from .tracing_state import STATE

_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

__all__ = ["SymInt", "SymFloat", "Guard", "concrete", "has_symbolic", "sym_shape",
           "sym_size", "sym_numel", "encode_symbolic"]


class Guard(NamedTuple):
    """A fact the trace depends on: ``expr`` (Python over ``S``, the inputs' shapes, e.g.
    ``(S[0][0] > 1)``) evaluated to ``expected``; ``where`` is the user's line."""

    expr: str
    expected: object
    where: Optional[str]


def _state():
    """The innermost open trace, or None when not tracing, paused or inside an op."""
    local = STATE.local
    if getattr(local, "in_op", 0):
        return None
    return STATE.current()


def concrete(x):
    """``x`` with every SymInt/SymFloat (also inside lists, tuples, slices) made plain."""
    c = x.__class__
    if c is SymInt:
        return int.__int__(x)
    if c is SymFloat:
        return float.__float__(x)
    if c is list or c is tuple:
        return c(concrete(i) for i in x)
    if c is slice:
        return slice(concrete(x.start), concrete(x.stop), concrete(x.step))
    return x


def has_symbolic(x) -> bool:
    """Whether ``x`` is or holds (in lists, tuples, slices) a SymInt or SymFloat."""
    c = x.__class__
    if c is SymInt or c is SymFloat:
        return True
    if c is list or c is tuple:
        return any(has_symbolic(i) for i in x)
    if c is slice:
        return has_symbolic(x.start) or has_symbolic(x.stop) or has_symbolic(x.step)
    return False


# -- building values in a graph -------------------------------------------------------------
class _TensorRef:
    """An operand of ``_emit`` that is a traced tensor (``ember::size``'s ``self``)."""

    __slots__ = ("t",)

    def __init__(self, t):
        self.t = t


def _value(x, state):
    """The Value of ``x`` (a _TensorRef, SymInt, SymFloat or plain) in ``state``'s graph."""
    c = x.__class__
    if c is _TensorRef:
        return state.value_of(x.t)
    if c is SymInt or c is SymFloat:
        return x._value_in(state)
    return state.graph.insert_constant(x)


def _emit(state, kind: str, operands, out_type):
    g = state.graph
    n = g.insert_node(g.create(kind, [_value(o, state) for o in operands]))
    n.output().type = out_type
    from .tracer import user_location
    n.source_location = user_location()
    return n.output()


def encode_symbolic(x, state):
    """The Value of an op argument ``x`` that holds a SymInt (see ``has_symbolic``): a
    SymInt/SymFloat's own value, a list of ints as ``prim::ListConstruct``, a slice as
    ``prim::SliceConstruct``, a tuple/list of indices as ``prim::ListConstruct`` (Any)."""
    c = x.__class__
    if c is SymInt or c is SymFloat:
        return x._value_in(state)
    g = state.graph
    if c is slice:
        n = g.insert_node(g.create(prim.SliceConstruct, [
            encode_symbolic(i, state) if has_symbolic(i) else g.insert_constant(i)
            for i in (x.start, x.stop, x.step)]))
        n.output().type = AnyType()
        return n.output()
    vals = [encode_symbolic(i, state) if has_symbolic(i) else state.encode(i) for i in x]
    ints = all(i.__class__ in (int, SymInt) for i in x)
    n = g.insert_node(g.create(prim.ListConstruct, vals))
    n.output().type = ListType(IntType()) if ints else AnyType()
    return n.output()


# -- SymInt ---------------------------------------------------------------------------------
class _Sym:
    """What SymInt and SymFloat share: the build rule, the guard expression, the values."""

    def _init(self, build: Callable, expr: Optional[str]) -> None:
        self._build = build
        self._expr = expr
        self._values = {}

    def _value_in(self, state):
        v = self._values.get(id(state))
        if v is None or v.node.graph is not state.graph:
            v = self._values[id(state)] = self._build(state)
        return v

    def _guard(self, expr_fn, expected, other=None) -> None:
        """Record that ``expr_fn(self_expr, other_expr)`` evaluated to ``expected``."""
        state = _root_state()
        if state is None:
            return
        a = self._expr
        b = _expr_of(other)
        from .tracer import user_location
        where = user_location()
        caller = sys._getframe(2).f_code.co_filename
        if not caller.startswith(_EMBER_DIR):
            warn_guard(where, f"a size compared or turned into a Python value ({expected!r})")
        if a is None or b is None:
            state.pin_all_sizes(where)
            return
        state.add_guard(Guard(expr_fn(a, b), expected, where))


def _root_state():
    s = getattr(STATE.local, "stack", None)
    return s[0] if s else None


def _expr_of(x) -> Optional[str]:
    if isinstance(x, _Sym):
        return x._expr
    if x is None or isinstance(x, (bool, int)) or (isinstance(x, float) and math.isfinite(x)):
        return repr(x)
    return None  # inf/nan have no Python literal: a guard on them pins (never wrong)


def _binary(kind_int: str, kind_float: str, py, symbol: str, reverse: bool = False):
    """A dunder that records ``kind`` and returns a SymInt/SymFloat (NotImplemented for
    operands that are not numbers)."""
    def method(self, other):
        if not isinstance(other, (int, float)):
            return NotImplemented
        a, b = (other, self) if reverse else (self, other)
        res = py(concrete(a), concrete(b))
        if isinstance(res, bool) or not isinstance(res, (int, float)):
            return res
        ea, eb = _expr_of(a), _expr_of(b)
        expr = None if ea is None or eb is None else f"({ea} {symbol} {eb})"
        if isinstance(res, int):
            kind = kind_int
            return SymInt._make(res, lambda st: _emit(st, kind, (a, b), IntType()), expr)
        kind = kind_float
        return SymFloat._make(res, lambda st: _emit(st, kind, (a, b), FloatType()), expr)
    return method


def _compare(py, symbol: str):
    def method(self, other):
        if not isinstance(other, (int, float)):
            return NotImplemented
        res = py(concrete(self), concrete(other))
        self._guard(lambda a, b: f"({a} {symbol} {b})", res, other)
        return res
    return method


def _escape(name: str):
    """A dunder ember does not model symbolically: guard the value, then answer plainly."""
    base = getattr(int, name)

    def method(self, *args):
        self._guard(lambda a, _b: a, int.__int__(self))
        return base(int.__int__(self), *[concrete(a) for a in args])
    method.__name__ = name
    return method


class SymInt(_Sym, int):
    """A size in a trace: an ``int`` whose value the trace computes from the inputs.

    Arithmetic with ints gives SymInts (``ember::mul.int`` ...), with floats SymFloats;
    comparisons and ``bool``/``int``/``float`` return plain values and record a guard.
    Created by ``Tensor.size()``, ``.shape``, ``numel()`` and ``len()`` while tracing; never
    built by users. Reference: ``torch.SymInt``.
    """

    @classmethod
    def _make(cls, value: int, build: Callable, expr: Optional[str]) -> "SymInt":
        self = int.__new__(cls, value)
        self._init(build, expr)
        return self

    def __repr__(self) -> str:
        return int.__repr__(int.__int__(self))

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return format(int.__int__(self), spec)

    def __hash__(self) -> int:
        return int.__hash__(self)

    def __bool__(self) -> bool:
        res = int.__int__(self) != 0
        self._guard(lambda a, _b: f"({a} != 0)", res)
        return res

    def __int__(self) -> int:
        v = int.__int__(self)
        self._guard(lambda a, _b: a, v)
        return v

    def __index__(self) -> int:
        return self.__int__()

    def __float__(self) -> float:
        return float(self.__int__())

    def __neg__(self):
        e = self._expr
        return SymInt._make(-int.__int__(self),
                            lambda st: _emit(st, "ember::neg.int", (self,), IntType()),
                            None if e is None else f"(-{e})")

    def __pos__(self):
        return self

    def __abs__(self):
        if int.__int__(self) >= 0:   # a size: abs is itself, guarded on the sign
            self._guard(lambda a, _b: f"({a} >= 0)", True)
            return self
        return -self

    def __trunc__(self):
        return self

    __floor__ = __ceil__ = __trunc__

    def __round__(self, ndigits=None):
        return self if ndigits is None or ndigits >= 0 else round(self.__int__(), ndigits)

    __add__ = _binary("ember::add.int", "ember::add.float", operator.add, "+")
    __radd__ = _binary("ember::add.int", "ember::add.float", operator.add, "+", True)
    __sub__ = _binary("ember::sub.int", "ember::sub.float", operator.sub, "-")
    __rsub__ = _binary("ember::sub.int", "ember::sub.float", operator.sub, "-", True)
    __mul__ = _binary("ember::mul.int", "ember::mul.float", operator.mul, "*")
    __rmul__ = _binary("ember::mul.int", "ember::mul.float", operator.mul, "*", True)
    __floordiv__ = _binary("ember::floordiv.int", "ember::floordiv.float", operator.floordiv,
                           "//")
    __rfloordiv__ = _binary("ember::floordiv.int", "ember::floordiv.float",
                            operator.floordiv, "//", True)
    __mod__ = _binary("ember::remainder.int", "ember::remainder.float", operator.mod, "%")
    __rmod__ = _binary("ember::remainder.int", "ember::remainder.float", operator.mod, "%",
                       True)
    __truediv__ = _binary("ember::div.int", "ember::div.float", operator.truediv, "/")
    __rtruediv__ = _binary("ember::div.int", "ember::div.float", operator.truediv, "/", True)

    __eq__ = _compare(operator.eq, "==")
    __ne__ = _compare(operator.ne, "!=")
    __lt__ = _compare(operator.lt, "<")
    __le__ = _compare(operator.le, "<=")
    __gt__ = _compare(operator.gt, ">")
    __ge__ = _compare(operator.ge, ">=")

    for _n in ("__pow__", "__rpow__", "__lshift__", "__rlshift__", "__rshift__",
               "__rrshift__", "__and__", "__rand__", "__or__", "__ror__", "__xor__",
               "__rxor__", "__invert__", "__divmod__", "__rdivmod__", "bit_length",
               "bit_count", "to_bytes", "as_integer_ratio", "conjugate"):
        locals()[_n] = _escape(_n)
    del _n

    def __reduce__(self):
        return (int, (int.__int__(self),))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


class SymFloat(_Sym, float):
    """A float computed from sizes in a trace (``x.size(2) * 2.0``); ``math.floor``,
    ``math.ceil``, ``int()`` and ``round()`` of it give SymInts, comparisons guard."""

    @classmethod
    def _make(cls, value: float, build: Callable, expr: Optional[str]) -> "SymFloat":
        self = float.__new__(cls, value)
        self._init(build, expr)
        return self

    def __repr__(self) -> str:
        return float.__repr__(float.__float__(self))

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return format(float.__float__(self), spec)

    def __hash__(self) -> int:
        return float.__hash__(self)

    def __bool__(self) -> bool:
        res = float.__float__(self) != 0
        self._guard(lambda a, _b: f"({a} != 0)", res)
        return res

    def __float__(self) -> float:
        v = float.__float__(self)
        self._guard(lambda a, _b: a, v)
        return v

    def _to_int(self, kind: str, py, fn: str):
        e = self._expr
        return SymInt._make(py(float.__float__(self)),
                            lambda st: _emit(st, kind, (self,), IntType()),
                            None if e is None else f"{fn}({e})")

    def __floor__(self):
        return self._to_int("ember::floor.float", math.floor, "_floor")

    def __ceil__(self):
        return self._to_int("ember::ceil.float", math.ceil, "_ceil")

    def __trunc__(self):
        return self._to_int("ember::Int.float", int, "int")

    def __int__(self) -> int:
        # NOTE: int() turns whatever __int__ returns into a plain int, so int(x) is a guard;
        # math.trunc(x) is the symbolic spelling
        v = int(float.__float__(self))
        self._guard(lambda a, _b: f"int({a})", v)
        return v

    def __round__(self, ndigits=None):
        if ndigits is not None:
            return round(self.__float__(), ndigits)
        self._guard(lambda a, _b: a, float.__float__(self))
        return round(float.__float__(self))

    def __neg__(self):
        return self * -1

    __add__ = SymInt.__add__
    __radd__ = SymInt.__radd__
    __sub__ = SymInt.__sub__
    __rsub__ = SymInt.__rsub__
    __mul__ = SymInt.__mul__
    __rmul__ = SymInt.__rmul__
    __truediv__ = _binary("ember::div.float", "ember::div.float", operator.truediv, "/")
    __rtruediv__ = _binary("ember::div.float", "ember::div.float", operator.truediv, "/",
                           True)
    __eq__ = SymInt.__eq__
    __ne__ = SymInt.__ne__
    __lt__ = SymInt.__lt__
    __le__ = SymInt.__le__
    __gt__ = SymInt.__gt__
    __ge__ = SymInt.__ge__

    for _n in ("__pow__", "__rpow__", "__mod__", "__rmod__", "__floordiv__",
               "__rfloordiv__", "__divmod__", "__rdivmod__", "is_integer", "hex",
               "as_integer_ratio", "conjugate"):
        locals()[_n] = (lambda name: lambda self, *a: (
            self._guard(lambda e, _b: e, float.__float__(self)),
            getattr(float, name)(float.__float__(self), *[concrete(x) for x in a]))[1])(_n)
    del _n

    def __reduce__(self):
        return (float, (float.__float__(self),))


# -- where SymInts come from ----------------------------------------------------------------
def _input_expr(state, t, dim: int) -> Optional[str]:
    i = state.input_index(t)
    return None if i is None else f"S[{i}][{dim}]"


def _size_build(t, dim: int):
    def build(st):
        if not st.has(t):
            return st.graph.insert_constant(int(t._data.shape[dim]))
        return _emit(st, "ember::size", (_TensorRef(t), dim), IntType())
    return build


def sym_size(t, dim: int):
    """``t.size(dim)`` while tracing: a SymInt, or None when ``t`` is not traced here."""
    state = _state()
    if state is None or not state.has(t):
        return None
    n = int(t._data.shape[dim])
    return SymInt._make(n, _size_build(t, dim), _input_expr(_root_state(), t, dim))


def sym_shape(t):
    """``t.shape`` while tracing: a tuple of SymInts, or None when ``t`` is not traced."""
    state = _state()
    if state is None or not state.has(t):
        return None
    root = _root_state()
    return tuple(SymInt._make(int(n), _size_build(t, d), _input_expr(root, t, d))
                 for d, n in enumerate(t._data.shape))


def sym_numel(t):
    """``t.numel()`` while tracing: the product of the SymInt sizes (1 for a 0-d tensor)."""
    shape = sym_shape(t)
    if shape is None:
        return None
    n = 1
    for s in shape:
        n = s * n
    return n


# -- the node kinds, runnable in plans -------------------------------------------------------
def _floordiv_int(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError("integer division by zero in a traced size expression")
    return a // b


_PY = {
    "ember::size": ("size(Tensor self, int dim) -> int", lambda t, d: t._data.shape[d]),
    "ember::add.int": ("add.int(int a, int b) -> int", operator.add),
    "ember::sub.int": ("sub.int(int a, int b) -> int", operator.sub),
    "ember::mul.int": ("mul.int(int a, int b) -> int", operator.mul),
    "ember::floordiv.int": ("floordiv.int(int a, int b) -> int", _floordiv_int),
    "ember::remainder.int": ("remainder.int(int a, int b) -> int", operator.mod),
    "ember::neg.int": ("neg.int(int a) -> int", operator.neg),
    "ember::div.int": ("div.int(int a, int b) -> float", operator.truediv),
    "ember::add.float": ("add.float(float a, float b) -> float", operator.add),
    "ember::sub.float": ("sub.float(float a, float b) -> float", operator.sub),
    "ember::mul.float": ("mul.float(float a, float b) -> float", operator.mul),
    "ember::div.float": ("div.float(float a, float b) -> float", operator.truediv),
    "ember::floordiv.float": ("floordiv.float(float a, float b) -> float", operator.floordiv),
    "ember::remainder.float": ("remainder.float(float a, float b) -> float", operator.mod),
    "ember::floor.float": ("floor.float(float a) -> int", math.floor),
    "ember::ceil.float": ("ceil.float(float a) -> int", math.ceil),
    "ember::Int.float": ("Int.float(float a) -> int", int),
    prim.SliceConstruct: (None, slice),
}

def register_ops(register: Callable) -> None:
    """Register every size node kind through ``register(kind, fn, schema_text)``."""
    for kind, (schema, fn) in _PY.items():
        register(kind, fn, schema)


def warn_guard(where: Optional[str], what: str) -> None:
    """A TracerWarning that the trace now depends on a size (called for user code)."""
    from .tracer import TracerWarning
    warnings.warn(f"{what} at {where}: the trace depends on an input size here, so the "
                  f"traced function checks it on every call and traces again when it "
                  f"changes", TracerWarning, stacklevel=4)


def guarded_concrete(x):
    """``x`` made plain like :func:`concrete`, recording a guard for every SymInt in it:
    for the places that must bake a size in (a setitem bound, an index mixing tensors and
    sizes); the traced function then re-traces when that size changes."""
    c = x.__class__
    if c is SymInt:
        return x.__int__()
    if c is SymFloat:
        return x.__float__()
    if c is list or c is tuple:
        return c(guarded_concrete(i) for i in x)
    if c is slice:
        return slice(guarded_concrete(x.start), guarded_concrete(x.stop),
                     guarded_concrete(x.step))
    return x


def symbolic_getitem(t, index, getitem):
    """``t[index]`` for an index holding SymInts, recorded as ``ember::index`` whose index
    list computes its bounds at run time. Only basic indices (ints, slices, None, ``...``)
    stay symbolic; ``...`` is expanded at trace time (the rank is part of the plan's key).
    Any other index is made plain with guards (:func:`guarded_concrete`)."""
    from .tracer import pause, record_python
    items = index if index.__class__ is tuple else (index,)
    if not all(i is None or i is Ellipsis or isinstance(i, (int, slice)) for i in items) or \
            any(i.__class__ is bool for i in items):
        return getitem(t, guarded_concrete(index))
    used = sum(1 for i in items if i is not None and i is not Ellipsis)
    expanded: list = []
    for i in items:
        if i is Ellipsis:
            expanded += [slice(None)] * (t._data.ndim - used)
        else:
            expanded.append(i)
    with pause():
        out = getitem(t, concrete(tuple(expanded)))
    record_python("ember::index", None, (t, list(expanded)), out)
    return out
