"""One node as a lowering rule sees it, and the table of rules.

A rule takes a :class:`_Node` (the node's kind, its ``ops.Operand`` inputs and its output
dtype) and returns one Triton expression; ``_rule(nargs, *ops)`` registers it in
``_RULES`` for each ``ember::<op>``, where ``ops.lower`` looks kinds up. ``_Node`` reads an
input in a given dtype (a constant converted as eager converts it), as a truth value, or
in the dtype the inputs promote to, and declines with the node's kind in the message.

The rule modules import this one and ``ops.py`` imports them, so the table is full once
``ops`` is imported, without an import cycle.

Reference: PyTorch's type promotion (``torch.result_type``).
"""
from __future__ import annotations

from typing import Callable, Optional

from ember import types as _t
from ember.jit.runtime.fuser import FusionDeclined
from ember.types import ScalarType

from .expr import _cast, _const_to, _is_float, _num, _p, _scalar


class _Node:
    """The operands of one node and helpers that read them in a given dtype."""

    def __init__(self, kind: str, inputs: list, out: ScalarType):
        self.kind, self.inputs, self.out = kind, inputs, out
        self.op = kind.split("::", 1)[-1]

    def decline(self, why: str):
        raise FusionDeclined(f"{self.kind}: {why}")

    def arg(self, i: int):
        """The constant value of input ``i``; declines for a tensor."""
        o = self.inputs[i]
        if not o.is_constant:
            self.decline(f"argument {i} must be a constant, got a tensor")
        return _scalar(o.value)

    def dtype(self, i: int) -> Optional[ScalarType]:
        return self.inputs[i].dtype

    def tensor(self, i: int, dt: ScalarType, check: Optional[str] = None) -> str:
        """Input ``i`` as a value of ``dt`` (a constant converted as eager converts it)."""
        o = self.inputs[i]
        if o.is_constant:
            return _const_to(o.value, dt, self.kind, check)
        return _cast(o.expr, o.dtype, dt)

    def truth(self, i: int) -> str:
        """Input ``i`` as bool: nonzero (NaN included) is True."""
        o = self.inputs[i]
        if o.is_constant:
            return _num(bool(_scalar(o.value)), _t.bool_)
        return o.expr if o.dtype is _t.bool_ else f"({_p(o.expr)} != {_num(0, o.dtype)})"

    def promoted(self, indices) -> ScalarType:
        """``torch.result_type`` of the inputs at ``indices``."""
        dims, zero, scalars = [], [], []
        for i in indices:
            o = self.inputs[i]
            if o.is_constant:
                v = _scalar(o.value)
                if v.__class__ not in (bool, int, float):
                    self.decline(f"expected a number or a tensor, got {v!r}")
                scalars.append(v)
            else:
                (zero if o.rank == 0 else dims).append(o.dtype)
        return _t.result_type(dims, zero, scalars)

    def floating_only(self):
        if not _is_float(self.out):
            self.decline(f"expected a floating dtype (eager raises NotImplementedError), "
                         f"got {self.out.name}")

    def no_bool(self):
        if self.out is _t.bool_:
            self.decline("bool tensors are not supported (eager raises)")


_RULES: dict[str, tuple[int, Callable]] = {}


def _rule(nargs: int, *ops: str):
    """Register the lowering of ``ember::<op>`` for each op; it takes ``nargs`` inputs."""
    def register(fn):
        for op in ops:
            _RULES[f"ember::{op}"] = (nargs, fn)
        return fn
    return register
