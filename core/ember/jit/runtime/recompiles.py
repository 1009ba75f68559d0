"""Why a GraphExecutor compiled another plan: recompile reasons and their log.

At every plan-cache miss after its first, a GraphExecutor compares the call's
ArgumentSpec with each cached one and keeps the differences from the nearest (the fewest
differing fields; the earliest compiled on a tie), one line per field::

    >>> print(reason)
    plan 2: input 0: dtype float32 -> float64; grad mode off -> on

The lines name an input by position (``input 1[2]`` is item 2 of a Tensor[] input):
``dtype a -> b``, ``device cpu -> cuda:0``, ``rank 2 -> 3``, ``requires_grad False ->
True``, a kind change ``Tensor -> NoneType`` (``Tensor[]`` is a list of tensors, other
values show their type name), ``list length 2 -> 3``, and ``grad mode off -> on``.
Misses the executor cannot see (the tracer's shape guards) are added with
``GraphExecutor.record_recompile``, in the same form.

``EMBER_JIT_LOG=recompiles`` (or ``all``; the list ``pipeline.log_targets`` parses) logs
each reason when it happens, to the ``ember.jit.recompiles`` logger at INFO, or to stderr
when no logger up to the root has a handler, as pipeline.py logs graphs. The variable is
read at the miss only, never on a cache hit.

Reference: PyTorch's ``TORCH_LOGS=recompiles`` (torch._dynamo's guard failure reasons).
"""
from __future__ import annotations

import logging
from typing import NamedTuple, Optional

from ..passes import pass_manager as _pipeline
from .argument_spec import ArgumentSpec, TensorArg, TensorListArg, ValueArg

__all__ = ["RecompileReason", "spec_differences", "explain", "log_recompile",
           "check_differences", "PIPELINE_CHANGED"]

logger = logging.getLogger("ember.jit.recompiles")

# NOTE: register_pass, a plugin reload and the autodiff-inlining flag drop every plan, so
# the next miss is a recompile with no cached spec to compare against.
PIPELINE_CHANGED = ("pass pipeline changed (a pass was registered or removed, plugins "
                    "reloaded, or autodiff inlining toggled)")


class RecompileReason(NamedTuple):
    """One plan-cache miss after the first: ``plan_index`` (the new plan's place among the
    executor's cached plans, 0 the first), ``spec`` (the call's ArgumentSpec, or None for
    a miss recorded without one) and ``differences`` (one line per differing field)."""

    plan_index: int
    spec: Optional[ArgumentSpec]
    differences: tuple

    def __str__(self) -> str:
        return f"plan {self.plan_index}: {'; '.join(self.differences)}"


def spec_differences(old: ArgumentSpec, new: ArgumentSpec) -> tuple:
    """The fields of ``new`` that differ from ``old``, as lines like ``input 0: dtype
    float32 -> float64`` (see the module doc); empty when the specs are equal."""
    out: list = []
    if len(old.inputs) != len(new.inputs):
        out.append(f"inputs {len(old.inputs)} -> {len(new.inputs)}")
    for i, (a, b) in enumerate(zip(old.inputs, new.inputs)):
        _entry_differences(f"input {i}", a, b, out)
    if old.grad_enabled != new.grad_enabled:
        out.append(f"grad mode {_on(old.grad_enabled)} -> {_on(new.grad_enabled)}")
    return tuple(out)


def explain(new: ArgumentSpec, cached, plan_index: int) -> RecompileReason:
    """The reason for compiling ``new`` when the specs ``cached`` (in compile order) are
    already compiled: the differences from the nearest one. With none cached (the plans
    were dropped because the pipeline changed) the reason is :data:`PIPELINE_CHANGED`."""
    best: Optional[tuple] = None
    for old in cached:
        diff = spec_differences(old, new)
        if best is None or len(diff) < len(best):  # strict: the earliest wins a tie
            best = diff
    return RecompileReason(plan_index, new, best if best is not None else (PIPELINE_CHANGED,))


def check_differences(differences) -> tuple:
    """``differences`` as a non-empty tuple of strings; raises TypeError for anything
    else (a single string included: it would be split into characters)."""
    if (isinstance(differences, str) or not isinstance(differences, (tuple, list))
            or not differences or not all(isinstance(d, str) for d in differences)):
        raise TypeError(f"record_recompile: expected a non-empty tuple of strings such as "
                        f"('input 1: dim 0 guarded at 4, got 8',), got {differences!r}; "
                        f"wrap a single line in a tuple")
    return tuple(differences)


def log_recompile(reason: RecompileReason) -> None:
    """Log ``reason`` if ``EMBER_JIT_LOG`` lists ``recompiles`` (or ``all``)."""
    if _pipeline.log_enabled("recompiles"):
        _pipeline.emit_log(logger, f"ember.jit recompile: {reason}")


def _entry_differences(where: str, a, b, out: list) -> None:
    if a.__class__ is not b.__class__ or (a.__class__ is ValueArg and a != b):
        out.append(f"{where}: {_kind(a)} -> {_kind(b)}")
    elif a.__class__ is TensorArg:
        for name, show in _TENSOR_FIELDS:
            old, new = getattr(a, name), getattr(b, name)
            if old != new:
                out.append(f"{where}: {name} {show(old)} -> {show(new)}")
    elif a.__class__ is TensorListArg:
        if len(a.items) != len(b.items):
            out.append(f"{where}: list length {len(a.items)} -> {len(b.items)}")
        for j, (x, y) in enumerate(zip(a.items, b.items)):
            _entry_differences(f"{where}[{j}]", x, y, out)


# (TensorArg field, as the message names it, and its format)
_TENSOR_FIELDS = (("dtype", lambda d: d.name), ("device", str), ("rank", str),
                  ("requires_grad", str))


def _kind(e) -> str:
    return ("Tensor" if e.__class__ is TensorArg else "Tensor[]"
            if e.__class__ is TensorListArg else e.type_name)


def _on(flag: bool) -> str:
    return "on" if flag else "off"
