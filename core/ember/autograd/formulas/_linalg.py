"""Backward helpers of linear algebra: ``matmul`` (every mix of 1-D, 2-D and batched
operands) and ``einsum``.
"""
from __future__ import annotations

import ember as E

from ._broadcasting import sum_to


def matmul_backward_self(grad, self, other):
    """``matmul`` w.r.t. ``self``, for every mix of 1-D, 2-D and batched operands."""
    if self.ndim == 2 and other.ndim == 2:
        return grad.mm(other.t())
    if self.ndim == 1 and other.ndim == 1:
        return grad * other
    a_1d, b_1d = self.ndim == 1, other.ndim == 1
    g = grad.unsqueeze(-2) if a_1d else grad
    g = g.unsqueeze(-1) if b_1d else g
    b = other.unsqueeze(-1) if b_1d else other
    ga = g @ b.mT
    ga = sum_to(ga, (1,) + tuple(self.shape) if a_1d else self.shape)
    return ga.reshape(self.shape)


def matmul_backward_other(grad, self, other):
    """``matmul`` w.r.t. ``other``."""
    if self.ndim == 2 and other.ndim == 2:
        return self.t().mm(grad)
    if self.ndim == 1 and other.ndim == 1:
        return grad * self
    a_1d, b_1d = self.ndim == 1, other.ndim == 1
    g = grad.unsqueeze(-2) if a_1d else grad
    g = g.unsqueeze(-1) if b_1d else g
    a = self.unsqueeze(0) if a_1d else self
    gb = a.mT @ g
    gb = sum_to(gb, tuple(other.shape) + (1,) if b_1d else other.shape)
    return gb.reshape(other.shape)


def _einsum_parts(equation: str, n: int):
    eq = equation.replace(" ", "")
    if "..." in eq:
        raise NotImplementedError("einsum backward with '...' is not implemented; spell the "
                                  "dims out with letters")
    lhs, arrow, out = eq.partition("->")
    ins = lhs.split(",")
    if not arrow:
        letters = "".join(ins)
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if len(ins) != n:
        raise ValueError(f"einsum(): equation {equation!r} has {len(ins)} operands, got {n}")
    return ins, out


def einsum_backward(grad, equation, tensors):
    """``einsum``: operand k's gradient is the einsum of ``grad`` with the other operands
    onto k's subscripts; letters only k has (summed away) are broadcast back."""
    ins, out = _einsum_parts(equation, len(tensors))
    grads = []
    for k, (sub, t) in enumerate(zip(ins, tensors)):
        if len(set(sub)) != len(sub):
            raise NotImplementedError(f"einsum backward for repeated subscripts ({sub!r}, a "
                                      f"diagonal) is not implemented")
        others = [(s, x) for j, (s, x) in enumerate(zip(ins, tensors)) if j != k]
        avail = set(out).union(*(set(s) for s, _ in others))
        kept = "".join(c for c in sub if c in avail)
        eq = ",".join([out] + [s for s, _ in others]) + "->" + kept
        g = E.einsum(eq, grad, *[x for _, x in others])
        if kept != sub:
            for i, c in enumerate(sub):
                if c not in avail:
                    g = g.unsqueeze(i)
            g = g.expand(t.shape)
        grads.append(g)
    return grads
