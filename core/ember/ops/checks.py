"""Operand checks that must see the operands before promotion (``check:`` in the yaml).

Promotion can hide what an op must refuse: ``bool_tensor - 1`` promotes to int64 before
any kernel sees it. PyTorch runs such checks ahead of its shared elementwise path
(``sub_check``); so does the generated wrapper of an op declared with ``check: <name>``,
calling ``CHECKS[name](op, operands)`` with the raw Tensors and Python numbers.
"""
from __future__ import annotations

from typing import Callable

from .. import types as _t

CHECKS: dict[str, Callable] = {}


class _NOT_TENSOR:  # noqa: N801 - a sentinel whose scalar_type is never bool
    scalar_type = None


def check(name: str):
    """Register the operand check ``name``."""
    def register(fn):
        CHECKS[name] = fn
        return fn
    return register


@check("no_bool")
def no_bool(op: str, operands) -> None:
    """Refuse bool tensors and Python bools (``sub``: there is no bool subtraction).

    Raises RuntimeError pointing at ``^`` / logical_xor, or ``~`` to invert a mask.
    """
    n = 0
    for v in operands:  # NOTE: on every sub call: kept to attribute checks
        if v.__class__ is bool or getattr(v, "_type", _NOT_TENSOR).scalar_type is _t.bool_:
            n += 1
    if n == 0 or any(v is None for v in operands):
        return  # (a None operand: the wrapper's TypeError for it comes next, as PyTorch's)
    if n == 2:
        raise RuntimeError(f"{op}(): subtraction, the `-` operator, with two bool tensors is "
                           f"not supported; use the `^` or logical_xor() operator instead")
    if n:
        raise RuntimeError(f"{op}(): subtraction, the `-` operator, with a bool tensor is not "
                           f"supported; if you are trying to invert a mask, use the `~` or "
                           f"logical_not() operator instead")
