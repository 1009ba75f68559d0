"""Python operators on ``Tensor`` (``x + y``, ``2 - x``, ``x == None``) bound to the
generated ops, as PyTorch's ``torch/_tensor.py`` binds ``__add__`` & co. to its ops.

``install_operators`` runs once, from the composition root (``ember/_build.py``), after
the wrappers exist: each dunder becomes the op's wrapper itself (no frame in between),
a reflected one (``__rtruediv__``) a one-line swap, and ``==`` / ``!=`` against a
non-number fall back to Python's identity test, as in PyTorch.
"""
from __future__ import annotations

from .. import types as _t
from ..tensor import Tensor

# Python operators -> op names.
# "r:" marks reflected operators whose tensor is the right-hand operand.
OPERATORS = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add_",
    "__sub__": "sub", "__rsub__": "rsub", "__isub__": "sub_",
    "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_",
    "__truediv__": "div", "__rtruediv__": "r:div", "__itruediv__": "div_",
    "__floordiv__": "floor_divide", "__rfloordiv__": "r:floor_divide",
    "__ifloordiv__": "floor_divide_",
    "__mod__": "remainder", "__rmod__": "r:remainder", "__imod__": "remainder_",
    "__pow__": "pow", "__rpow__": "r:pow", "__ipow__": "pow_",
    "__matmul__": "matmul", "__rmatmul__": "r:matmul",
    "__and__": "bitwise_and", "__rand__": "bitwise_and", "__iand__": "bitwise_and_",
    "__or__": "bitwise_or", "__ror__": "bitwise_or", "__ior__": "bitwise_or_",
    "__xor__": "bitwise_xor", "__rxor__": "bitwise_xor", "__ixor__": "bitwise_xor_",
    "__lshift__": "bitwise_left_shift", "__rshift__": "bitwise_right_shift",
    "__rlshift__": "r:bitwise_left_shift", "__rrshift__": "r:bitwise_right_shift",
    "__ilshift__": "bitwise_left_shift_", "__irshift__": "bitwise_right_shift_",
    "__eq__": "eq", "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt",
    "__ge__": "ge",
    "__neg__": "neg", "__pos__": "positive", "__abs__": "abs", "__invert__": "bitwise_not",
}


def install_operators(namespace: dict) -> None:
    """Bind each Python operator to its generated op (skipping ops not declared yet)."""
    for dunder, op in OPERATORS.items():
        reflected = op.startswith("r:")
        name = op[2:] if reflected else op
        fn = namespace.get(name) or getattr(Tensor, name, None)
        if fn is None:
            continue
        if reflected:
            def rop(self, other, _fn=fn):
                return _fn(other, self)
            rop.__name__ = dunder
            setattr(Tensor, dunder, rop)
        elif dunder in ("__eq__", "__ne__"):
            # NOTE: as in PyTorch, a Tensor compared with a non-number (None, a str) is not
            # an elementwise op: Python falls back to identity, so ``t == None`` is False.
            def cmp(self, other, _fn=fn):
                if other.__class__ is not Tensor and _t.scalar_kind(other) is None:
                    return NotImplemented
                return _fn(self, other)
            cmp.__name__ = dunder
            setattr(Tensor, dunder, cmp)
        else:
            setattr(Tensor, dunder, fn)
    Tensor.__hash__ = lambda self: id(self)
