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
- the helpers of ``ember.autograd.formulas`` named in ``HELPERS`` (``pow_backward_self``,
  ``clamp_backward``, ...): their Python source is lowered, statement by statement, with
  the helper's arguments bound to the caller's terms.

Anything else (attribute reads such as ``self.shape``, helpers such as ``sum_to``,
reductions) raises :class:`NotSymbolic` before any node is made; the caller keeps the
opaque ``prim::AutogradFormula``.

Reference: PyTorch's ``torch/csrc/jit/runtime/symbolic_script.cpp`` (gradients written as
TorchScript for the differentiable-graph fuser) and ``tools/autograd/derivatives.yaml``.
"""
from __future__ import annotations

import ast
import inspect
import operator
import textwrap
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Union

from ember.jit.ir.graph import Block, Value
from ember.jit.ir.ir_types import TensorType
from ember.jit.ir.kinds import prim

__all__ = ["HELPERS", "MATRIX_KINDS", "NotSymbolic", "compile_formula", "parse_formula"]

# Ops besides the pointwise ones that formulas may call: the matrix products and the
# transposes their formulas read (mm's ``grad.mm(mat2.t())``), so the backward of a
# linear layer is ops too (PyTorch's symbolic_script writes mm's and t's gradients)
MATRIX_KINDS = frozenset({"ember::mm", "ember::bmm", "ember::t", "ember::transpose"})

#: Helpers of :mod:`ember.autograd.formulas` the lowering writes out from their own
#: source (``inspect.getsource``): the helper stays the one definition of its math, which
#: eager autograd runs and the JIT lowers, so a compiled gradient does the helper's
#: arithmetic in the helper's order and equals the eager one bit for bit (PyTorch's
#: symbolic_script restates ``pow_0``/``pow_1`` and ``clamp_1`` instead). A helper body may
#: hold assignments, ``if`` statements whose tests are known at compile time and
#: ``return``; ``E.<op>`` is the ember op. A number base (``2 ** x``) does not compile:
#: the helper takes the log of ``E.tensor(self, dtype=result.dtype)``, which no pointwise
#: op computes. ``is_column_major`` is False on a graph value (a graph does not know
#: strides): the graph computes the row-major product, the same values up to the GEMM's
#: summation order where eager picks the column-major one. Other helpers are left out on
#: purpose: naming one here makes more ops symbolically differentiable.
HELPERS = ("pow_backward_self", "pow_backward_exponent", "clamp_backward",
           "clamp_backward_min", "clamp_backward_max", "mm_mat2_backward")


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
    """``(parameter names, body statements, module globals)`` of the helper ``name`` of
    :mod:`ember.autograd.formulas` when ``HELPERS`` names it, else None."""
    if name not in HELPERS:
        return None
    from ember.autograd import formulas
    fn = getattr(formulas, name)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
    except (OSError, TypeError):  # no source shipped (a .pyc-only install): stay opaque
        raise NotSymbolic(f"the source of the helper {name!r} is not available") from None
    if not isinstance(tree, ast.FunctionDef) or tree.args.vararg or tree.args.kwarg or \
            tree.args.kwonlyargs or tree.args.defaults:
        raise NotSymbolic(f"the helper {name!r} is not a plain function of its arguments")
    return tuple(a.arg for a in tree.args.args), tuple(tree.body), fn.__globals__


_NO_RETURN = object()


class _Lowering:
    """The expression as a tree of terms; checks everything before a node is made. ``env``
    maps names to graph values, or (in a helper's body) to the caller's terms and the
    helper's locals; ``module`` is a helper's globals (its ``E`` is ember), else None."""

    def __init__(self, env: dict, module: dict | None = None):
        self.env = env
        self.module = module

    def _is_ember(self, e: ast.expr) -> bool:
        """Whether ``e`` names the op namespace in a helper's body (``E`` of ``E.where``:
        ``ember.ops.namespace``, or ``ember`` itself)."""
        return self.module is not None and isinstance(e, ast.Name) and \
            e.id not in self.env and \
            getattr(self.module.get(e.id), "__name__", "") in ("ember", "ember.ops.namespace")

    def statements(self, body) -> _Term:
        """A helper's body: assignments to one name, ``if`` on a compile-time test, and
        ``return``; the returned term (``_NO_RETURN`` when the statements fall through)."""
        for s in body:
            if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
                continue  # the docstring
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and \
                    isinstance(s.targets[0], ast.Name):
                self.env[s.targets[0].id] = self.term(s.value)
            elif isinstance(s, ast.If):
                test = self.term(s.test)
                if not isinstance(test, _Num):
                    raise NotSymbolic(f"a condition known only at run time "
                                      f"({ast.unparse(s.test)!r})")
                out = self.statements(s.body if test.value else s.orelse)
                if out is not _NO_RETURN:
                    return out
            elif isinstance(s, ast.Return) and s.value is not None:
                return self.term(s.value)
            else:
                raise NotSymbolic(f"the statement {ast.unparse(s)!r} of a helper")
        return _NO_RETURN

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
            if isinstance(a, _Num) and isinstance(b, _Num):
                return _Num((a.value is b.value) == isinstance(op, ast.Is))
            if self.module is not None and isinstance(b, _Num) and b.value is None:
                # a helper tests its optional arguments so (``if min is None``); a term
                # bound to one is a tensor. Formulas keep the stricter rule
                return _Num(isinstance(op, ast.IsNot))
            raise NotSymbolic(f"'is' on a tensor ({ast.unparse(e)!r})")
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
        if isinstance(e.func, ast.Attribute) and self._is_ember(e.func.value):
            return self._function(e.func.attr, args, kwargs, e)  # E.where(...) in a helper
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
        return self._function(e.func.id, args, kwargs, e)

    def _function(self, name: str, args: list, kwargs: dict, e: ast.Call) -> _Term:
        """A call of a formula helper or of the ember function ``name``."""
        if name == "is_column_major" and len(args) == 1 and not kwargs:
            return _Num(False)  # see HELPERS: a graph value has no strides
        if name == "maybe_multiply" and len(args) == 2 and not kwargs:
            g, s = args
            if not isinstance(s, _Num):
                raise NotSymbolic(f"maybe_multiply by a tensor ({ast.unparse(e)!r})")
            return g if s.value == 1 else _Op("ember::mul", (g, s))
        helper = _helper(name)
        if helper is not None:
            return self._expand(helper, args, kwargs, e)
        from ember.autograd.codegen import namespace
        from ember.ops import namespace as ops_namespace
        if namespace().get(name) is not getattr(ops_namespace, name, None):
            raise NotSymbolic(f"{name!r} is a formula helper, not an ember op")
        return _op_call(name, args, kwargs, e)

    def _isinstance(self, e: ast.Call) -> _Num:
        """``isinstance(x, Tensor)`` (``E.Tensor`` in a helper), known at compile time."""
        cls = e.args[1] if len(e.args) == 2 else None
        tensor = isinstance(cls, ast.Name) and cls.id == "Tensor" or \
            isinstance(cls, ast.Attribute) and cls.attr == "Tensor" and self._is_ember(cls.value)
        if e.keywords or not tensor:
            raise NotSymbolic(f"isinstance other than isinstance(x, Tensor) ({ast.unparse(e)!r})")
        return _Num(not isinstance(self.term(e.args[0]), _Num))

    def _expand(self, helper: tuple, args: list, kwargs: dict, e: ast.Call) -> _Term:
        """A ``HELPERS`` helper's body with its parameters bound to ``args`` and ``kwargs``
        (terms of the caller); it sees no other name of the caller."""
        params, body, module = helper
        if len(args) > len(params) or set(kwargs) - set(params[len(args):]) or \
                len(args) + len(kwargs) != len(params):
            raise NotSymbolic(f"{ast.unparse(e)!r} does not match the helper's parameters "
                              f"{params}")
        out = _Lowering({**dict(zip(params, args)), **kwargs}, module).statements(body)
        if out is _NO_RETURN:
            raise NotSymbolic(f"the helper of {ast.unparse(e)!r} returns nothing")
        return out


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
    from ember.jit.runtime.fuser import FUSIBLE_KINDS
    from ember.jit.runtime.op_registry import is_op_kind, op_info
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
