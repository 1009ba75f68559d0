"""Pointwise kernels: unary math, binary arithmetic, comparisons, logical and bitwise ops.

Operands arrive already promoted to one dtype by the dispatcher (``promote: common`` or
``float`` in native_functions.yaml); Python scalars arrive as weak Python numbers.
"""
from __future__ import annotations


def kernels(xp) -> dict:
    def add(a, b, alpha):
        return xp.add(a, b) if alpha == 1 else xp.add(a, xp.multiply(b, alpha))

    def sub(a, b, alpha):
        return xp.subtract(a, b) if alpha == 1 else xp.subtract(a, xp.multiply(b, alpha))

    return {
        "add": add,
        "sub": sub,
        "mul": xp.multiply,
        "neg": xp.negative,
        "exp": xp.exp,
    }
