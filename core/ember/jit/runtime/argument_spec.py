"""``ArgumentSpec``: what a GraphExecutor specializes a plan on (the seeds' ArgumentSpec).

One call of a graph becomes a key: for each graph input whether it is a
defined Tensor, and if so its dtype, device, rank and whether it requires grad; plus
whether grad mode is on. Two calls with equal specs can run the same ExecutionPlan
(shapes are not part of the key: a new batch size reuses the plan, as in PyTorch, and the
plan's shape-specialized passes keep sizes symbolic). Non-tensor inputs are keyed by type
only.

Each input's entry is a NamedTuple whose class says what the input is
(:class:`TensorArg`, :class:`TensorListArg`, :class:`ValueArg`), so readers write
``e.dtype``, not ``e[1]``; entries of different classes never compare equal (their
fields differ in count or type). The spec is a tuple of them, so building it is one pass
over the inputs and hashing is C-speed::

    spec = ArgumentSpec.of((x, w), grad_enabled=True)
    spec.inputs  -> (TensorArg(dtype=float32, device=Device("cpu"), rank=2,
                               requires_grad=True), TensorArg(...))

Reference: torch/csrc/jit/runtime/argument_spec.h.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ...tensor import Tensor

__all__ = ["ArgumentSpec", "TensorArg", "TensorListArg", "ValueArg", "flatten_inputs"]


class TensorArg(NamedTuple):
    """A defined Tensor input: its dtype (ScalarType), device, rank, and whether it
    requires grad (always False under grad mode off)."""
    dtype: object
    device: object
    rank: int
    requires_grad: bool


class TensorListArg(NamedTuple):
    """A non-empty list or tuple of Tensors (a ``Tensor[]`` input): a TensorArg each."""
    items: tuple


class ValueArg(NamedTuple):
    """Any other input, keyed by its type's name (``"int"``; ``"NoneType"`` for an
    undefined input such as a missing gradient)."""
    type_name: str


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
    input, a :class:`TensorArg`, :class:`TensorListArg` or :class:`ValueArg`.

    Raises nothing; any Python value can be keyed.
    """

    grad_enabled: bool
    inputs: tuple

    @classmethod
    def of(cls, args, grad_enabled: bool) -> "ArgumentSpec":
        """The spec of ``args`` (one entry per graph input) under grad mode
        ``grad_enabled``."""
        return cls(bool(grad_enabled), tuple(_entry(x, grad_enabled) for x in args))

    @property
    def requires_grad(self) -> bool:
        """Whether the call needs a gradient (grad mode on and some input requires it)."""
        return self.grad_enabled and any(_entry_rg(e) for e in self.inputs)

    def __str__(self) -> str:
        parts = [_entry_str(e) for e in self.inputs]
        return f"ArgumentSpec(grad {'on' if self.grad_enabled else 'off'}: " \
               f"{', '.join(parts)})"


def _entry(x, grad_enabled: bool):
    if isinstance(x, Tensor):
        return TensorArg(x.dtype, x.device, x.ndim, bool(grad_enabled and x.requires_grad))
    if isinstance(x, (list, tuple)) and x and all(isinstance(i, Tensor) for i in x):
        return TensorListArg(tuple(_entry(i, grad_enabled) for i in x))
    return ValueArg(type(x).__name__)


def _entry_rg(e) -> bool:
    if e.__class__ is TensorArg:
        return e.requires_grad
    return e.__class__ is TensorListArg and any(_entry_rg(i) for i in e.items)


def _entry_str(e) -> str:
    if e.__class__ is TensorArg:
        rg = ", requires_grad" if e.requires_grad else ""
        return f"Tensor({e.dtype.name}, {e.device}, rank {e.rank}{rg})"
    if e.__class__ is TensorListArg:
        return "[" + ", ".join(_entry_str(i) for i in e.items) + "]"
    return e.type_name
