"""Kernel forms derived from ``derivatives.yaml``: a pointwise formula compiled once into a
function that calls the kernels of one Type directly, for backward passes that record
nothing (``fast_formulas.py`` says when that pays and when it declines).

The formula's expression is the one source: ``tanh``'s ``grad * (1 - result * result)``
becomes::

    def _kernel_tanh__self(grad, result):
        if _gm.enabled or _tr.active or grad.__class__ is not _T or ...: return None
        _typ = grad._type
        if result._type is not _typ or _typ.scalar_type._category < 1: return None
        _k = _typ.kernels
        return _wrap(_k['mul'](grad._data, _k['sub'](1, _k['mul'](result._data,
                     result._data), 1)), _typ.backend)

Each operator calls the kernel the op's wrapper calls, with the operands in the order the
wrapper passes them (``n - t`` is ``rsub(t, n)``, which runs ``sub(n, t, 1)``; ``n * t`` is
``mul(t, n)``), so the result is the formula's bit for bit. The function declines (returns
None, and the formula runs) where the wrappers would do something else: grad mode on, a
trace open, an operand that is not a plain Tensor of the first one's Type, or a number
constant of a higher category than that Type (the wrapper would promote). What compiles:
tensor names (the gradient, Tensor arguments and outputs), int and float literals,
``+ - * /`` with a tensor operand (a number divisor only), unary ``-``, one comparison,
``where(c, a, b)``, and the methods ``METHODS`` names on tensors (``grad.mm(mat2.t())``);
anything else raises :class:`NotKernelForm`.

Reference: PyTorch computes hot formulas with dedicated kernels (``tanh_backward``); here
they are generated from the formula instead of written a second time.
"""
from __future__ import annotations

import ast
import linecache

from .._base.grad_mode import STATE as _GRAD_MODE
from .._base.tracing_state import STATE as _TRACING
from ..tensor import Tensor as _T
from ..tensor import wrap as _wrap

__all__ = ["NotKernelForm", "kernel_form"]

_BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}
_COMPARE = {ast.Gt: "gt", ast.Lt: "lt", ast.GtE: "ge", ast.LtE: "le", ast.Eq: "eq",
            ast.NotEq: "ne"}
_FLIPPED = {"gt": "lt", "lt": "gt", "ge": "le", "le": "ge", "eq": "eq", "ne": "ne"}
_CATEGORY = {int: 1, float: 2}
#: Methods whose op, on tensors of one Type, calls its kernel on the arrays as they are
#: (the operands of a formula are valid: its forward ran), with how many tensor arguments
METHODS = {"t": 0, "mm": 1}  # ScalarType._category a number needs to pass unpromoted


class NotKernelForm(Exception):
    """The expression uses something this module cannot write as kernel calls."""


def kernel_form(expression: str, tensors, name: str, where: str = "derivatives.yaml"):
    """The kernel form of ``expression``: a function of the tensor names it reads (in the
    order they first appear) returning a Tensor, or None where it declines.

    Args:
        expression: a ``derivatives.yaml`` formula (``"where(result > 0, grad, 0.0)"``).
        tensors: the names that are tensors (``grad``, the op's Tensor arguments, outputs).
        name: the function's name; ``where``: the formula's file:line, for its source.

    Raises NotKernelForm for an expression outside the subset in the module docstring.
    """
    try:
        tree = ast.parse(expression, mode="eval").body
    except SyntaxError as e:
        raise NotKernelForm(f"not a Python expression: {expression!r} ({e.msg})") from None
    lowering = _Lowering(frozenset(tensors))
    code, is_tensor = lowering.term(tree)
    if not is_tensor:
        raise NotKernelForm(f"{expression!r} does not give a tensor")
    params = lowering.params
    first = params[0]
    plain = " or ".join(f"{p}.__class__ is not _T" for p in params)
    same = " or ".join(f"{p}._type is not _typ" for p in params[1:])
    src = [f"def {name}({', '.join(params)}):",
           f"    # {expression}  ({where})",
           f"    if _gm.enabled or _tr.active or {plain}: return None",
           f"    _typ = {first}._type",
           f"    if {same + ' or ' if same else ''}_typ.scalar_type._category < "
           f"{lowering.category}: return None",
           "    _k = _typ.kernels",
           f"    return _wrap({code}, _typ.backend)", ""]
    text = "\n".join(src)
    filename = f"<ember.autograd kernel form: {name} from {where}>"
    ns = {"_gm": _GRAD_MODE, "_tr": _TRACING, "_T": _T, "_wrap": _wrap}
    exec(compile(text, filename, "exec"), ns)  # noqa: S102 - our own generated source
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    fn = ns[name]
    fn.formula, fn.__doc__ = expression, f"``{expression}`` as kernel calls ({where})."
    return fn


class _Lowering:
    """The expression as kernel-call source; ``term`` returns ``(source, is_tensor)``."""

    def __init__(self, tensors: frozenset):
        self.tensors = tensors
        self.params: list[str] = []
        self.category = 0

    def term(self, e: ast.expr) -> tuple[str, bool]:
        method = getattr(self, "_" + type(e).__name__, None)
        if method is None:
            raise NotKernelForm(f"{type(e).__name__} expressions ({ast.unparse(e)!r})")
        return method(e)

    def _Name(self, e: ast.Name):
        if e.id not in self.tensors:
            raise NotKernelForm(f"{e.id!r} is not a tensor of the formula")
        if e.id not in self.params:
            self.params.append(e.id)
        return f"{e.id}._data", True

    def _Constant(self, e: ast.Constant):
        if type(e.value) not in _CATEGORY:
            raise NotKernelForm(f"the constant {e.value!r}")
        self.category = max(self.category, _CATEGORY[type(e.value)])
        return repr(e.value), False

    def _UnaryOp(self, e: ast.UnaryOp):
        if isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant):
            return self._Constant(ast.Constant(-e.operand.value))
        x, t = self.term(e.operand)
        if not (isinstance(e.op, ast.USub) and t):
            raise NotKernelForm(f"the unary operator in {ast.unparse(e)!r}")
        return f"_k['neg']({x})", True

    def _BinOp(self, e: ast.BinOp):
        op = _BINARY.get(type(e.op))
        (a, ta), (b, tb) = self.term(e.left), self.term(e.right)
        if op is None or not (ta or tb) or (op == "div" and not ta):
            raise NotKernelForm(f"the operation {ast.unparse(e)!r}")
        if op in ("add", "mul") and not ta:  # n + t, n * t: Tensor.__radd__/__rmul__
            a, b = b, a
        if op == "div":
            return f"_k['div']({a}, {b}, None)", True
        alpha = ", 1" if op in ("add", "sub") else ""  # n - t: rsub runs sub(n, t, 1)
        return f"_k[{op!r}]({a}, {b}{alpha})", True

    def _Compare(self, e: ast.Compare):
        if len(e.ops) != 1 or type(e.ops[0]) not in _COMPARE:
            raise NotKernelForm(f"the comparison {ast.unparse(e)!r}")
        name = _COMPARE[type(e.ops[0])]
        (a, ta), (b, tb) = self.term(e.left), self.term(e.comparators[0])
        if not (ta or tb):
            raise NotKernelForm(f"a comparison of numbers {ast.unparse(e)!r}")
        if not ta:  # 0 < t is t > 0
            a, b, name = b, a, _FLIPPED[name]
        return f"_k[{name!r}]({a}, {b})", True

    def _Call(self, e: ast.Call):
        if isinstance(e.func, ast.Attribute) and METHODS.get(e.func.attr) == len(e.args) \
                and not e.keywords:
            operands = [self.term(x) for x in (e.func.value, *e.args)]
            if not all(t for _, t in operands):
                raise NotKernelForm(f"{ast.unparse(e)!r} on a number")
            return f"_k[{e.func.attr!r}]({', '.join(c for c, _ in operands)})", True
        if not (isinstance(e.func, ast.Name) and e.func.id == "where" and len(e.args) == 3
                and not e.keywords):
            raise NotKernelForm(f"the call {ast.unparse(e)!r}")
        (c, tc), (a, ta), (b, tb) = (self.term(x) for x in e.args)
        if not tc or not (ta or tb):
            raise NotKernelForm(f"{ast.unparse(e)!r} needs a tensor condition and operand")
        return f"_k['where']({c}, {a}, {b})", True
