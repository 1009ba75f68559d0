"""Factories in a trace: ``zeros(x.size(0), 3)`` becomes a node, not a constant.

A factory called with plain sizes while tracing makes a tensor the graph holds as a
constant, as before. One called with a size that is a SymInt (``x.size(0)``, ``x.shape``,
``new_zeros(b, t)``, ``zeros_like(x)``) is recorded as an ``ember::<factory>`` node whose
size operand is the graph's size value, so the plan makes a tensor of the run-time size.
Random factories (``randn``, ``rand``, ``randint``) draw from the generator at every call,
as eager mode does.

The node kinds run the factory itself (keyword-only arguments by name)::

    ember::zeros(int[] size, *, ScalarType? dtype, Device? device, bool requires_grad)
    ember::ones / ember::empty      (the same)
    ember::full(int[] size, Scalar fill_value, *, ScalarType? dtype, Device? device, ...)
    ember::arange(Scalar start, Scalar end, Scalar step, *, ScalarType? dtype, ...)
    ember::rand / ember::randn(int[] size, *, Generator? generator, ScalarType? dtype, ...)
    ember::randint(int low, int high, int[] size, *, Generator? generator, ...)

Reference: PyTorch's tracer records ``aten::zeros`` with a traced size list.
"""
from __future__ import annotations

import inspect

from .symbolic_sizes import concrete, has_symbolic
from .tracing_state import STATE

__all__ = ["record_factory", "FACTORY_SCHEMAS", "register_ops"]

_TAIL = "ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor"
_RNG_TAIL = "Generator? generator=None, " + _TAIL

#: schema per factory kind; the node's inputs follow it
FACTORY_SCHEMAS = {
    "ember::zeros": "zeros(int[] size, *, " + _TAIL,
    "ember::ones": "ones(int[] size, *, " + _TAIL,
    "ember::empty": "empty(int[] size, *, " + _TAIL,
    "ember::full": "full(int[] size, Scalar fill_value, *, " + _TAIL,
    "ember::arange": "arange(Scalar start, Scalar end, Scalar step, *, " + _TAIL,
    "ember::rand": "rand(int[] size, *, " + _RNG_TAIL,
    "ember::randn": "randn(int[] size, *, " + _RNG_TAIL,
    "ember::randint": "randint(int low, int high, int[] size, *, " + _RNG_TAIL,
}

_FNS: dict = {}


def _bind(kind: str, fn, args: tuple, kwargs: dict) -> list:
    """The factory call's arguments in ``FACTORY_SCHEMAS[kind]`` order."""
    b = inspect.signature(fn).bind(*args, **kwargs)
    b.apply_defaults()
    a = b.arguments
    name = kind.split("::")[1]
    if name == "arange":
        start, end = (0, a["start"]) if a["end"] is None else (a["start"], a["end"])
        head = [start, end, a["step"]]
    elif name == "randint":
        low, high, size = a["low"], a["high"], a["size"]
        if size is None:
            low, high, size = 0, low, high
        head = [low, high, list(size)]
    else:
        size = a["size"]
        if name != "full" and len(size) == 1 and isinstance(size[0], (list, tuple)):
            size = size[0]
        head = [list(size)] + ([a["fill_value"]] if name == "full" else [])
    tail = [a["generator"]] if name in ("rand", "randn", "randint") else []
    return head + tail + [a["dtype"], a["device"], a["requires_grad"]]


def record_factory(kind: str, fn, args: tuple, kwargs: dict):
    """Run factory ``fn`` and, when a size argument is a SymInt of an open trace, record it
    as one ``kind`` node; returns the tensor."""
    local = STATE.local
    stack = getattr(local, "stack", None)
    if (not stack or getattr(local, "paused", False) or getattr(local, "in_op", 0)
            or not (has_symbolic(args) or has_symbolic(tuple(kwargs.values())))):
        return fn(*args, **kwargs)
    from ..runtime.op_registry import op_info
    from .tracer import pause, user_location
    values = _bind(kind, fn, args, kwargs)
    with pause():
        result = fn(*concrete(args), **{k: concrete(v) for k, v in kwargs.items()})
    info = op_info(kind)
    loc = user_location()
    from ..ir.ir_types import TensorType
    for state in list(stack):
        g = state.graph
        ins = [state.encode(v, a) for v, a in zip(values, info.schema.arguments)]
        node = g.insert_node(g.create(kind, ins))
        node.source_location = loc
        node.output().type = TensorType.from_tensor(result)
        state.set_value(result, node.output())
    return result


def register_ops(register) -> None:
    """Register every factory kind through ``register(kind, fn, schema)``; ``fn`` calls the
    factory with the node's inputs (keyword-only ones by name)."""
    from ... import factories
    for kind, schema in FACTORY_SCHEMAS.items():
        register(kind, getattr(factories, kind.split("::")[1]), schema)
