"""What the plugin manager checks in each hook's items, and the key two plugins collide on.

Every item a hook returns is validated (``VALIDATORS[hook](item)`` returns the line
``ember plugins`` prints, or raises ``PluginError``) and has a *registry key*
(``KEYS[hook](item)``): what the consumer looks it up by, so two items with the same key
would make one shadow the other.

=============================  ==========================  ===============================
hook                           key                         consumer
=============================  ==========================  ===============================
``ember_backends``             backend name                ``backends/registry.py``
``ember_convolution_algorithms`` (device type, name)      ``backends/convolution.py``
``ember_fusers``               device type                 ``jit/runtime/fuser.py`` (one per device)
``ember_jit_passes``           (stage, pass name)          ``jit/passes/pass_manager.py``
``ember_onnx_symbolics``       (qualified op, opset)       ``onnx/registry.py``
``ember_process_group_backends`` backend name             ``distributed``
=============================  ==========================  ===============================

The manager refuses a plugin whose key is already held by another plugin (PyTorch's
dispatcher refuses a second kernel for one key the same way: "Tried to register an operator
... with the same name and overload name multiple times").

A backend is also checked against ``REQUIRED_KERNELS``, the minimal kernel set: one lacking
some still registers (a backend for one narrow use may leave kernels out on purpose), with
one warning from the manager naming every missing kernel and what needs it
(``missing_kernels_message``), and ``ember plugins`` shows them.
"""
from __future__ import annotations

from typing import NamedTuple

from ..errors import PluginError

MIN_OPSET = 13
"""The lowest opset the built-in ONNX symbolics target (Split, Squeeze, Unsqueeze and
ReduceSum take their axes as inputs from 13 on); a symbolic without an opset gets it.
``ember.onnx.MIN_OPSET`` and ``ember.onnx.registry.MIN_OPSET`` are this constant."""

class KernelGroup(NamedTuple):
    """Kernels a backend needs for one kind of use (``needed_by``)."""

    needed_by: str
    kernels: tuple[str, ...]


# The minimal kernel set of a backend, found by experiment (tests/core/plugins/
# test_required_kernels.py runs each use on a backend holding only these kernels, and
# checks that each one is needed). Printing and .numpy() / .tolist() / .item() need none:
# they go through the backend's to_numpy.
REQUIRED_KERNELS = {
    "factories": KernelGroup("the factories (ember.zeros, ones, full, empty, arange, *_like)",
                             ("empty", "full", "arange")),
    "random": KernelGroup("random numbers (ember.rand, randn, randint; nn layers' init)",
                          ("rand", "randn", "randint")),
    "autograd": KernelGroup("backward() through elementwise ops and sums",
                            ("add", "mul", "sum", "expand")),
    "training": KernelGroup("a training step (nn.Linear, F.mse_loss, backward, optim.SGD)",
                            ("t", "addmm", "mm", "sub", "mean", "div", "copy_")),
}


def missing_kernels(kernels) -> dict[str, list[str]]:
    """Group name -> the kernels of ``REQUIRED_KERNELS[group]`` that ``kernels`` (a
    backend's table) lacks; only groups with something missing."""
    out = {}
    for group, (_, needed) in REQUIRED_KERNELS.items():
        lacking = [k for k in needed if k not in kernels]
        if lacking:
            out[group] = lacking
    return out


def missing_kernels_message(backend, plugin: str) -> str | None:
    """The warning for a ``backend`` of ``plugin`` that lacks required kernels, naming
    every one by what needs it; None when it has them all."""
    missing = missing_kernels(backend.kernels)
    if not missing:
        return None
    parts = "; ".join(f"for {REQUIRED_KERNELS[g].needed_by}: {', '.join(ks)}"
                      for g, ks in missing.items())
    return (f"ember: backend '{backend.name}' of plugin '{plugin}' lacks kernels ember "
            f"needs: {parts}. Calls that need them raise NotImplementedError; add them to "
            f"its kernel table (ember.plugins.validation.REQUIRED_KERNELS, docs/plugins.md)")


def validate_backend(obj) -> str:
    """Check an ``ember_backends`` item (an ``ember.types.Backend`` with ``xp``,
    ``array_type``, ``to_numpy``, ``from_numpy``, an identifier name, callable kernels)."""
    from ..types import Backend
    if not isinstance(obj, Backend):
        raise PluginError(f"ember_backends returned {type(obj).__name__}, expected "
                          f"ember.types.Backend")
    missing = [a for a in ("xp", "array_type", "to_numpy", "from_numpy") if
               getattr(obj, a, None) is None]
    if missing or not obj.name.isidentifier():
        raise PluginError(f"backend {obj.name!r} is incomplete: missing {missing} or its "
                          f"name is not an identifier")
    bad = [k for k, v in obj.kernels.items() if not callable(v)]
    if bad:
        raise PluginError(f"backend {obj.name!r} has non-callable kernels: {bad[:5]}")
    missing = [k for ks in missing_kernels(obj.kernels).values() for k in ks]
    lacks = f"; lacks required kernels: {', '.join(missing)}" if missing else ""
    return f"backend {obj.name} ({obj.type_prefix}*Type, {len(obj.kernels)} kernels{lacks})"


def validate_named(kind: str, attrs: tuple[str, ...]):
    """A validator for objects that need attributes ``attrs`` and a string ``name``."""
    def check(obj) -> str:
        missing = [a for a in attrs if not hasattr(obj, a)]
        if missing:
            raise PluginError(f"{kind} {obj!r} lacks {', '.join(missing)}")
        if not isinstance(obj.name, str) or not obj.name:
            raise PluginError(f"{kind} {obj!r}: expected a non-empty str name, got "
                              f"{obj.name!r}")
        return f"{kind} {obj.name}"
    return check


def pass_name(fn) -> str:
    """The name a JIT pass is listed, logged and reported under (``jit/passes/pass_manager.py``)."""
    return getattr(fn, "__qualname__", repr(fn))


def validate_pass(obj) -> str:
    """Check an ``ember_jit_passes`` item: a ``(stage, callable)`` pair."""
    if not (isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[0], str)
            and callable(obj[1])):
        raise PluginError(f"ember_jit_passes must return (stage, callable) pairs, got {obj!r}")
    return f"pass {getattr(obj[1], '__name__', obj[1])} at {obj[0]}"


def _symbolic_parts(obj) -> tuple:
    if isinstance(obj, tuple):
        op = obj[0] if obj else None
        fn = obj[1] if len(obj) > 1 else None
        opset = obj[2] if len(obj) > 2 else None
        return op, fn, opset, len(obj) in (2, 3)
    return getattr(obj, "op", None), getattr(obj, "fn", None), getattr(obj, "opset", None), True


def validate_symbolic(obj) -> str:
    """Check an ``ember_onnx_symbolics`` item: a Symbolic or an ``(op, fn[, opset])``."""
    op, fn, _, ok_tuple = _symbolic_parts(obj)
    if not (ok_tuple and isinstance(op, str) and op and callable(fn)):
        raise PluginError(f"ember_onnx_symbolics must return ember.onnx.Symbolic objects or "
                          f"(op, fn[, opset]) tuples, got {obj!r}")
    return f"onnx symbolic {op}"


def _symbolic_key(obj) -> tuple:
    op, _, opset, _ = _symbolic_parts(obj)
    return (op if "::" in op else f"ember::{op}", MIN_OPSET if opset is None else opset)


def validate_process_group_backend(obj) -> str:
    """Check an ``ember_process_group_backends`` item (the protocol
    ``ember.distributed.ProcessGroupBackend``): a non-empty str ``name``, ``device_types`` a
    non-empty list or tuple of str, a callable ``new_group(rank, world_size, timeout)``."""
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not name:
        raise PluginError(f"process-group backend {obj!r}: expected a non-empty str name, "
                          f"got {name!r}")
    types = getattr(obj, "device_types", None)
    if not (isinstance(types, (list, tuple)) and types
            and all(isinstance(t, str) and t for t in types)):
        raise PluginError(f"process-group backend {name!r}: expected device_types, a "
                          f"non-empty list or tuple of str such as ('cpu',), got {types!r}")
    if not callable(getattr(obj, "new_group", None)):
        raise PluginError(f"process-group backend {name!r} lacks a callable "
                          f"new_group(rank, world_size, timeout)")
    return f"process group backend {name} ({', '.join(types)})"


VALIDATORS = {
    "ember_backends": validate_backend,
    "ember_convolution_algorithms": validate_named(
        "convolution algorithm", ("name", "priority", "device_type", "supports_groups",
                                  "supports", "forward", "backward")),
    "ember_fusers": validate_named("fuser", ("name", "device_type", "compile")),
    "ember_jit_passes": validate_pass,
    "ember_onnx_symbolics": validate_symbolic,
    "ember_process_group_backends": validate_process_group_backend,
}

# hook -> (what the key names, in a sentence; item -> key)
KEYS = {
    "ember_backends": (lambda k: f"backend '{k}'", lambda b: b.name),
    "ember_convolution_algorithms": (lambda k: f"convolution algorithm '{k[1]}' for '{k[0]}'",
                                     lambda a: (a.device_type, a.name)),
    "ember_fusers": (lambda k: f"fuser for device type '{k}'", lambda f: f.device_type),
    "ember_jit_passes": (lambda k: f"JIT pass '{k[1]}' at stage '{k[0]}'",
                         lambda p: (p[0], pass_name(p[1]))),
    "ember_onnx_symbolics": (lambda k: f"ONNX symbolic for {k[0]} at opset {k[1]}",
                             _symbolic_key),
    "ember_process_group_backends": (lambda k: f"process-group backend '{k}'",
                                     lambda b: b.name),
}


def registry_keys(hook: str, items) -> list:
    """``(key, description)`` for each of one plugin's ``items`` of ``hook``; raises
    PluginError when the plugin itself returns two items with one key."""
    describe, key_of = KEYS[hook]
    out, seen = [], set()
    for item in items:
        key = key_of(item)
        try:
            hash(key)
        except TypeError:
            raise PluginError(f"{hook}: {describe(key)} is not hashable") from None
        if key in seen:
            raise PluginError(f"{hook} returned the {describe(key)} twice; each key may be "
                              f"registered once")
        seen.add(key)
        out.append((key, describe(key)))
    return out
