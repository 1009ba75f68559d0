"""``ArgumentSpec``: what a GraphExecutor specializes a plan on (the seeds' ArgumentSpec).

One call of a graph becomes a key: for each graph input whether it is a
defined Tensor, and if so its dtype, device, rank and whether it requires grad; plus
whether grad mode is on. Two calls with equal specs can run the same ExecutionPlan
(shapes are not part of the key: a new batch size reuses the plan, as in PyTorch, and the
plan's shape-specialized passes keep sizes symbolic). Non-tensor inputs are keyed by type
only.

The spec is a tuple, so building it is one pass over the inputs and hashing is C-speed::

    spec = ArgumentSpec.of((x, w), grad_enabled=True)
    spec.key  -> (True, (("t", float32, Device("cpu"), 2, True), ("t", float32, ...)))

Reference: torch/csrc/jit/runtime/argument_spec.h.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..tensor import Tensor

__all__ = ["ArgumentSpec", "flatten_inputs"]


def flatten_inputs(args) -> list:
    """Tensors and other leaves of ``args`` (nested tuples/lists), depth first, in order."""
    out: list = []
    stack = [iter(args)]
    while stack:
        for item in stack[-1]:
            if isinstance(item, (tuple, list)):
                stack.append(iter(item))
                break
            out.append(item)
        else:
            stack.pop()
    return out


@dataclass(frozen=True)
class ArgumentSpec:
    """Hashable specialization key of one call: ``grad_enabled`` and one entry per flat
    input, ``("t", dtype, device, rank, requires_grad)`` for a Tensor or ``("v",
    type name)`` for anything else (None included, as an undefined input).

    Raises nothing; any Python value can be keyed.
    """

    grad_enabled: bool
    inputs: tuple

    @classmethod
    def of(cls, args, grad_enabled: bool) -> "ArgumentSpec":
        """The spec of ``args`` (one entry per graph input) under grad mode
        ``grad_enabled``; a list or tuple of tensors gives ``("l", entries)``."""
        return cls(bool(grad_enabled), tuple(_entry(x, grad_enabled) for x in args))

    @property
    def requires_grad(self) -> bool:
        """Whether the call needs a gradient (grad mode on and some input requires it)."""
        return self.grad_enabled and any(_entry_rg(e) for e in self.inputs)

    def __str__(self) -> str:
        parts = [_entry_str(e) for e in self.inputs]
        return f"ArgumentSpec(grad {'on' if self.grad_enabled else 'off'}: " \
               f"{', '.join(parts)})"


def _entry(x, grad_enabled: bool) -> tuple:
    if isinstance(x, Tensor):
        return ("t", x.dtype, x.device, x.ndim, bool(grad_enabled and x.requires_grad))
    if isinstance(x, (list, tuple)) and x and all(isinstance(i, Tensor) for i in x):
        return ("l", tuple(_entry(i, grad_enabled) for i in x))
    return ("v", type(x).__name__)


def _entry_rg(e) -> bool:
    if e[0] == "t":
        return e[4]
    return e[0] == "l" and any(_entry_rg(i) for i in e[1])


def _entry_str(e) -> str:
    if e[0] == "t":
        rg = ", requires_grad" if e[4] else ""
        return f"Tensor({e[1].name}, {e[2]}, rank {e[3]}{rg})"
    if e[0] == "l":
        return "[" + ", ".join(_entry_str(i) for i in e[1]) + "]"
    return e[1]
