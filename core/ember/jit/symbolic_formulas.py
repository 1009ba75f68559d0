"""Symbolic backward formulas: a ``derivatives.yaml`` expression written out as ``ember::``
ops, so backward graphs of pointwise code can be optimized and fused like forward ones.

``derivatives.yaml`` states each backward formula once, as a Python expression; eager
autograd and ``prim::AutogradFormula`` run it through a generated function, which is
opaque to the JIT. For the pointwise and matrix ops, this module compiles the same
expression into IR instead (PyTorch wrote these gradients a second time, in TorchScript,
in ``symbolic_script.cpp``; ember reads the one source). ``tanh``'s ``grad * (1 - result *
result)``, with ``%g`` the incoming gradient and ``%r`` the forward result, becomes::

    %one : int = prim::Constant[value=1]()
    %0 : Tensor = ember::mul(%r, %r)
    %1 : Tensor = ember::rsub(%0, %one, %one)
    %2 : Tensor = ember::mul(%g, %1)

The operators map to ops the way the tracer records them (``n - t`` is ``rsub(t, n, 1)``,
``n * t`` is ``mul(t, n)``), so a compiled formula computes what the eager one does. What
compiles:

- names bound in ``env`` (the gradient, the op's arguments and results; a non-tensor value
  must be a ``prim::Constant``), and number, string, bool and None literals;
- ``+ - * / **``, unary ``-``, one comparison (``<`` ... ``!=``) on tensors and numbers;
  operations on numbers alone are folded (one that raises, ``2 / 0``, does not compile);
- ``a if test else b`` whose test is known at compile time (``rounding_mode is None``);
- ``maybe_multiply(g, s)`` for a constant ``s``, and calls and methods of pointwise ops
  (``where(c, g, 0.0)``, ``self.cos()``, ``result.pow(3)``) and of the matrix ops
  ``MATRIX_KINDS`` (``grad.mm(mat2.t())``, ``grad.transpose(dim0, dim1)``), keyword
  arguments and schema defaults included, where the formula's name is the ember function
  (or Tensor method) of that op;
- ``&`` and ``|`` (``bitwise_and``/``bitwise_or``, as on bool masks);
- ``isinstance(x, Tensor)`` (a constant is not), ``and``, ``or`` and ``not`` on numbers,
  decided at compile time;
- the helpers of ``ember.autograd.formulas`` that ``HELPERS`` writes out as formulas of
  the above (``pow_backward_self``, ``clamp_backward``, ...), with the helper's arguments
  bound to the caller's terms.

Anything else (attribute reads such as ``self.shape``, helpers such as ``sum_to``,
reductions) raises :class:`NotSymbolic` before any node is made; the caller keeps the
opaque ``prim::AutogradFormula``.

Reference: PyTorch's ``torch/csrc/jit/runtime/symbolic_script.cpp`` (gradients written as
TorchScript for the differentiable-graph fuser) and ``tools/autograd/derivatives.yaml``.
"""
from __future__ import annotations

import ast
import operator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Union

from ember.jit.ir import Block, Value
from ember.jit.ir_types import TensorType
from ember.jit.kinds import prim

__all__ = ["HELPERS", "MATRIX_KINDS", "NotSymbolic", "compile_formula", "parse_formula"]

# Ops besides the pointwise ones that formulas may call: the matrix products and the
# transposes their formulas read (mm's ``grad.mm(mat2.t())``), so the backward of a
# linear layer is ops too (PyTorch's symbolic_script writes mm's and t's gradients)
MATRIX_KINDS = frozenset({"ember::mm", "ember::bmm", "ember::t", "ember::transpose"})

#: Helpers of :mod:`ember.autograd.formulas` written out as formulas: signature ->
#: expression, in which the signature's names are the only ones bound. Each one does the
#: helper's arithmetic in the helper's order (its bool masks may be built otherwise), so
#: a compiled gradient equals the eager one bit for bit (PyTorch's symbolic_script writes
#: the same gradients: ``pow_0``/``pow_1`` and ``clamp_1``). ``zeros_like(grad)``
#: is ``where(grad < grad, grad, 0.0)``: the test is False even for NaN, and the result has
#: grad's (floating) dtype. ``is None`` does not compile on a tensor, so an optional
#: argument is tested with ``isinstance`` first. A number base (``2 ** x``) does not
#: compile: the helper takes the log of ``tensor(self, dtype=result.dtype)``, which no
#: pointwise op computes.
HELPERS = {
    "pow_backward_self(grad, self, exponent)":
        "where(exponent == 0, 0.0, grad * exponent * self.pow(exponent - 1))"
        " if isinstance(exponent, Tensor) else"
        " where(grad < grad, grad, 0.0) if exponent == 0 else"
        " grad * exponent * self.pow(exponent - 1)",
    "pow_backward_exponent(grad, self, exponent, result)":
        "where((self == 0) & (exponent >= 0), 0.0, grad * result * self.log())",
    "clamp_backward(grad, self, min, max)":  # the forward raises when both are None
        "where(self <= max, grad, 0.0) if not isinstance(min, Tensor) and min is None else"
        " where(self >= min, grad, 0.0) if not isinstance(max, Tensor) and max is None else"
        " where((self >= min) & (self <= max), grad, 0.0)",
    "clamp_backward_min(grad, self, min, max)":  # max wins ties: never when min >= max
        "where(self < min, grad, 0.0) if not isinstance(max, Tensor) and max is None else"
        " where((self < min) & (min < max), grad, 0.0)",
    "clamp_backward_max(grad, self, min, max)":
        "where(self > max, grad, 0.0) if not isinstance(min, Tensor) and min is None else"
        " where((self > max) | (min > max), grad, 0.0)",
    # NOTE: eager picks the product's layout from mat2's strides, which a graph does not
    # know; the graph computes the row-major form: the same product, and where eager takes
    # the column-major form the same values up to the GEMM's summation order
    "mm_mat2_backward(grad, mat1, mat2, alpha)": "maybe_multiply(mat1.t().mm(grad), alpha)",
}


class NotSymbolic(Exception):
    """The expression uses something this module cannot write as ``ember::`` ops; the
    message says what."""


@dataclass(frozen=True)
class _Op:
    kind: str
    args: tuple  # of terms: _Op, Value (a tensor), or a Python constant wrapped in _Num


@dataclass(frozen=True)
class _Num:
    value: Any


_Term = Union[_Op, Value, _Num]

_BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow",
           ast.BitAnd: "bitwise_and", ast.BitOr: "bitwise_or"}
_COMPARE = {ast.Gt: "gt", ast.Lt: "lt", ast.GtE: "ge", ast.LtE: "le", ast.Eq: "eq",
            ast.NotEq: "ne"}
_FLIPPED = {"gt": "lt", "lt": "gt", "ge": "le", "le": "ge", "eq": "eq", "ne": "ne"}
_FOLD = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
         ast.Div: operator.truediv, ast.Pow: operator.pow, ast.BitAnd: operator.and_,
         ast.BitOr: operator.or_, ast.Gt: operator.gt, ast.Lt: operator.lt,
         ast.GtE: operator.ge, ast.LtE: operator.le, ast.Eq: operator.eq, ast.NotEq: operator.ne}
_SCALARS = (type(None), bool, int, float, str)


@lru_cache(maxsize=None)
def parse_formula(expression: str) -> ast.expr:
    """The parsed expression (cached: each formula is parsed once). Raises NotSymbolic for
    text that is not one Python expression."""
    try:
        return ast.parse(expression, mode="eval").body
    except SyntaxError as e:
        raise NotSymbolic(f"not a Python expression: {expression!r} ({e.msg})") from None


def compile_formula(expression: str, env: dict, block: Block) -> Value:
    """Append to ``block`` the ``ember::`` ops computing ``expression``; returns the value
    of the result (a Tensor-typed value, or a value of ``env`` when the formula is a name,
    as ``grad`` is for ``add``'s ``self``).

    Args:
        expression: a formula of ``derivatives.yaml`` (``"grad * result * (1 - result)"``).
        env: each name the formula may read -> its value in the graph (``grad``, the op's
            arguments, ``result``). A non-tensor value must come from a ``prim::Constant``.
        block: where the nodes go (in order, at its end).

    Raises NotSymbolic (with nothing added to ``block``) for what the module docstring
    lists as unsupported, and for a formula whose result is not a tensor.
    """
    term = _Lowering(env).term(parse_formula(expression))
    if not isinstance(term, (_Op, Value)) or (isinstance(term, Value) and not _is_tensor(term)):
        raise NotSymbolic(f"{expression!r} does not give a tensor")
    return _emit(term, block, {})


def _is_tensor(v: Value) -> bool:
    return isinstance(v.type, TensorType)


@lru_cache(maxsize=None)
def _helper(name: str):
    """``(parameter names, parsed expression)`` of the ``HELPERS`` entry for ``name``, or
    None when there is none."""
    for signature, expression in HELPERS.items():
        call = ast.parse(signature, mode="eval").body
        if call.func.id == name:
            return tuple(a.id for a in call.args), parse_formula(expression)
    return None


class _Lowering:
    """The expression as a tree of terms; checks everything before a node is made. ``env``
    maps names to graph values, or (in a helper's body) to the caller's terms."""

    def __init__(self, env: dict):
        self.env = env

    def term(self, e: ast.expr) -> _Term:
        method = getattr(self, "_" + type(e).__name__, None)
        if method is None:
            raise NotSymbolic(f"{type(e).__name__} expressions ({ast.unparse(e)!r})")
        return method(e)

    def _Constant(self, e: ast.Constant) -> _Term:
        return _num(e.value, e)

    def _Name(self, e: ast.Name) -> _Term:
        if e.id not in self.env:
            raise NotSymbolic(f"the name {e.id!r} is not an argument or result of the op")
        v = self.env[e.id]
        if isinstance(v, (_Op, _Num)) or _is_tensor(v):
            return v
        if v.node.kind != prim.Constant:
            raise NotSymbolic(f"{e.id!r} is not a tensor and not a constant")
        return _num(v.to_ivalue(), e)

    def _UnaryOp(self, e: ast.UnaryOp) -> _Term:
        x = self.term(e.operand)
        if isinstance(e.op, ast.USub):
            return _fold(operator.neg, (x,), e) if isinstance(x, _Num) else \
                _Op("ember::neg", (x,))
        if isinstance(e.op, ast.Not) and isinstance(x, _Num):
            return _Num(not x.value)
        raise NotSymbolic(f"the unary operator in {ast.unparse(e)!r}")

    def _BinOp(self, e: ast.BinOp) -> _Term:
        op = _BINARY.get(type(e.op))
        if op is None:
            raise NotSymbolic(f"the operator in {ast.unparse(e)!r}")
        a, b = self.term(e.left), self.term(e.right)
        if isinstance(a, _Num) and isinstance(b, _Num):
            return _fold(_FOLD[type(e.op)], (a, b), e)
        one = _Num(1)
        if isinstance(a, _Num):  # a number on the left: as Tensor.__r*__ records it
            if op == "add":
                return _Op("ember::add", (b, a, one))
            if op == "sub":
                return _Op("ember::rsub", (b, a, one))
            if op in ("mul", "bitwise_and", "bitwise_or"):
                return _Op(f"ember::{op}", (b, a))
            if op == "div":
                return _Op("ember::div", (a, b, _Num(None)))
            raise NotSymbolic(f"a number raised to a tensor power ({ast.unparse(e)!r})")
        if op in ("add", "sub"):
            return _Op(f"ember::{op}", (a, b, one))
        if op == "div":
            return _Op("ember::div", (a, b, _Num(None)))
        return _Op(f"ember::{op}", (a, b))

    def _Compare(self, e: ast.Compare) -> _Term:
        if len(e.ops) != 1:
            raise NotSymbolic(f"chained comparison {ast.unparse(e)!r}")
        a, b, op = self.term(e.left), self.term(e.comparators[0]), e.ops[0]
        if isinstance(op, (ast.Is, ast.IsNot)):
            if not (isinstance(a, _Num) and isinstance(b, _Num)):
                raise NotSymbolic(f"'is' on a tensor ({ast.unparse(e)!r})")
            return _Num((a.value is b.value) == isinstance(op, ast.Is))
        name = _COMPARE.get(type(op))
        if name is None:
            raise NotSymbolic(f"the comparison in {ast.unparse(e)!r}")
        if isinstance(a, _Num) and isinstance(b, _Num):
            return _fold(_FOLD[type(op)], (a, b), e)
        if any(isinstance(x, _Num) and not isinstance(x.value, (bool, int, float))
               for x in (a, b)):  # eager: ``t == None`` is False, ``t < None`` raises
            raise NotSymbolic(f"a tensor compared with a non-number ({ast.unparse(e)!r})")
        if isinstance(a, _Num):
            a, b, name = b, a, _FLIPPED[name]
        return _Op(f"ember::{name}", (a, b))

    def _BoolOp(self, e: ast.BoolOp) -> _Term:
        # Python's short circuit: the operands after the deciding one are not lowered
        for operand in e.values[:-1]:
            x = self.term(operand)
            if not isinstance(x, _Num):
                raise NotSymbolic(f"'and'/'or' on a tensor ({ast.unparse(e)!r})")
            if bool(x.value) == isinstance(e.op, ast.Or):
                return x
        return self.term(e.values[-1])

    def _IfExp(self, e: ast.IfExp) -> _Term:
        test = self.term(e.test)
        if not isinstance(test, _Num):
            raise NotSymbolic(f"a condition known only at run time ({ast.unparse(e.test)!r})")
        return self.term(e.body if test.value else e.orelse)

    def _Call(self, e: ast.Call) -> _Term:
        if isinstance(e.func, ast.Name) and e.func.id == "isinstance":
            return self._isinstance(e)
        args = [self.term(a) for a in e.args]
        if any(isinstance(a, ast.Starred) for a in e.args) or \
                any(k.arg is None for k in e.keywords):
            raise NotSymbolic(f"*args or **kwargs in {ast.unparse(e)!r}")
        kwargs = {k.arg: self.term(k.value) for k in e.keywords}
        if isinstance(e.func, ast.Attribute):  # a method: x.cos(), grad.masked_fill(m, 0)
            receiver = self.term(e.func.value)
            if isinstance(receiver, _Num):
                raise NotSymbolic(f"a method of a number ({ast.unparse(e)!r})")
            from ember.tensor import Tensor
            if not callable(getattr(Tensor, e.func.attr, None)):
                raise NotSymbolic(f"Tensor has no method {e.func.attr!r} ({ast.unparse(e)!r})")
            return _op_call(e.func.attr, [receiver] + args, kwargs, e)
        if not isinstance(e.func, ast.Name):
            raise NotSymbolic(f"the call {ast.unparse(e)!r}")
        name = e.func.id
        if name == "maybe_multiply" and len(args) == 2 and not kwargs:
            g, s = args
            if not isinstance(s, _Num):
                raise NotSymbolic(f"maybe_multiply by a tensor ({ast.unparse(e)!r})")
            return g if s.value == 1 else _Op("ember::mul", (g, s))
        helper = _helper(name)
        if helper is not None:
            return self._expand(helper, args, kwargs, e)
        import ember
        from ember.autograd.codegen import namespace
        if namespace().get(name) is not getattr(ember, name, None):
            raise NotSymbolic(f"{name!r} is a formula helper, not an ember op")
        return _op_call(name, args, kwargs, e)

    def _isinstance(self, e: ast.Call) -> _Num:
        """``isinstance(x, Tensor)``, known at compile time."""
        if len(e.args) != 2 or e.keywords or not isinstance(e.args[1], ast.Name) or \
                e.args[1].id != "Tensor":
            raise NotSymbolic(f"isinstance other than isinstance(x, Tensor) ({ast.unparse(e)!r})")
        return _Num(not isinstance(self.term(e.args[0]), _Num))

    def _expand(self, helper: tuple, args: list, kwargs: dict, e: ast.Call) -> _Term:
        """A ``HELPERS`` entry's expression with its parameters bound to ``args`` and
        ``kwargs`` (terms of the caller); it sees no other name."""
        params, body = helper
        if len(args) > len(params) or set(kwargs) - set(params[len(args):]) or \
                len(args) + len(kwargs) != len(params):
            raise NotSymbolic(f"{ast.unparse(e)!r} does not match the helper's parameters "
                              f"{params}")
        return _Lowering({**dict(zip(params, args)), **kwargs}).term(body)


def _num(value, e: ast.expr) -> _Num:
    """A number, string, bool or None literal; NotSymbolic for other constants (lists)."""
    if not isinstance(value, _SCALARS):
        raise NotSymbolic(f"a {type(value).__name__} constant in {ast.unparse(e)!r}")
    return _Num(value)


def _fold(fn, args: tuple, e: ast.expr) -> _Num:
    """``fn`` on the values of number terms, at compile time; NotSymbolic when it raises
    (``2 / 0``, ``-None``)."""
    try:
        return _num(fn(*(a.value for a in args)), e)
    except (ArithmeticError, TypeError, ValueError) as err:
        raise NotSymbolic(f"{ast.unparse(e)!r} raises {type(err).__name__}: {err}") from None


def _op_call(name: str, args: list, kwargs: dict, e: ast.Call) -> _Op:
    """``ember::<name>`` on ``args`` and ``kwargs`` in schema order, defaults filled in;
    only for the pointwise ops a fuser may fuse and ``MATRIX_KINDS``."""
    from ember.jit.fuser import FUSIBLE_KINDS
    from ember.jit.op_registry import is_op_kind, op_info
    kind = f"ember::{name}"
    if kind not in FUSIBLE_KINDS and kind not in MATRIX_KINDS or not is_op_kind(kind):
        raise NotSymbolic(f"{name!r} is not a pointwise or matrix op ({ast.unparse(e)!r})")
    schema = op_info(kind).schema
    params = schema.arguments
    if len(args) > len(params) or any(k not in {p.name for p in params} for k in kwargs):
        raise NotSymbolic(f"{ast.unparse(e)!r} does not match {schema}")
    out = list(args)
    for p in params[len(args):]:
        if p.name in kwargs:
            out.append(kwargs.pop(p.name))
        elif p.default is not None:
            out.append(_num(ast.literal_eval(p.default), e))
        else:
            raise NotSymbolic(f"{ast.unparse(e)!r} leaves {p.name!r} of {schema} unset")
    if kwargs:
        raise NotSymbolic(f"{ast.unparse(e)!r} passes {sorted(kwargs)} twice")
    if not isinstance(out[0], (_Op, Value)):
        raise NotSymbolic(f"{ast.unparse(e)!r}: the first argument is not a tensor")
    return _Op(kind, tuple(out))


def _emit(term: _Term, block: Block, consts: dict) -> Value:
    """The value of ``term``, its ops appended to ``block`` (constants made once)."""
    if isinstance(term, Value):
        return term
    graph = block.graph
    if isinstance(term, _Num):
        key = (type(term.value), repr(term.value))  # repr: -0.0 is not 0.0
        if key not in consts:
            with graph.insert_point_guard(block):
                consts[key] = graph.insert_constant(term.value)
        return consts[key]
    inputs = [_emit(a, block, consts) for a in term.args]
    node = block.append_node(graph.create(term.kind, inputs))
    node.output().type = TensorType()
    return node.output()
