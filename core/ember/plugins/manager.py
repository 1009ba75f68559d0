"""Load plugins from entry points of group ``ember``, validate them, isolate their faults.

* Loading happens once, on first use (creating a tensor, ``ember plugins``).
* ``EMBER_PLUGINS=cpu,cuda`` loads only those entry points; ``EMBER_DISABLE_PLUGINS=cuda``
  skips those. Both take comma-separated entry-point names.
* A plugin that raises on import, from a hook, or returns objects that fail validation is
  skipped with one ``UserWarning`` naming it and the cause; what it registered is rolled
  back and the others still load.
* A plugin that raises ``ember.errors.PluginUnavailable`` (the cuda plugin on a machine
  without a GPU or CuPy) registers nothing either, but quietly: ``ember plugins`` shows
  it as ``[unavailable]`` with the reason.
"""
from __future__ import annotations

import importlib.metadata as md
import os
import threading
import warnings
from dataclasses import dataclass, field

import pluggy

from ..errors import PluginError, PluginUnavailable
from . import hookspecs

GROUP = "ember"
HOOKS = ("ember_backends", "ember_convolution_algorithms", "ember_fusers", "ember_jit_passes",
         "ember_onnx_symbolics")


@dataclass
class PluginInfo:
    """What ``ember plugins`` prints for one entry point."""

    name: str
    distribution: str
    version: str
    registered: dict = field(default_factory=dict)  # hook name -> list of item descriptions
    error: str | None = None
    disabled: bool = False
    unavailable: str | None = None  # why a PluginUnavailable plugin registered nothing


_lock = threading.RLock()
_loaded = False
_pm: pluggy.PluginManager | None = None
_infos: list[PluginInfo] = []
# What loaded plugins registered, by hook (consumed by the conv dispatcher, fusers, JIT).
registered: dict[str, list] = {h: [] for h in HOOKS}
generation = 0  # bumped on every (re)load, so caches of registered things can expire


def _names(var: str) -> set[str] | None:
    raw = os.environ.get(var)
    if raw is None:
        return None
    return {n.strip() for n in raw.split(",") if n.strip()}


def _validate_backend(obj) -> str:
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
    return f"backend {obj.name} ({obj.type_prefix}*Type, {len(obj.kernels)} kernels)"


def _validate_named(kind: str, attrs: tuple[str, ...]):
    def check(obj) -> str:
        missing = [a for a in attrs if not hasattr(obj, a)]
        if missing:
            raise PluginError(f"{kind} {obj!r} lacks {', '.join(missing)}")
        return f"{kind} {getattr(obj, 'name', type(obj).__name__)}"
    return check


def _validate_pass(obj) -> str:
    if not (isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[0], str)
            and callable(obj[1])):
        raise PluginError(f"ember_jit_passes must return (stage, callable) pairs, got {obj!r}")
    return f"pass {getattr(obj[1], '__name__', obj[1])} at {obj[0]}"


def _validate_symbolic(obj) -> str:
    op = getattr(obj, "op", None) if not isinstance(obj, tuple) else (obj[0] if obj else None)
    fn = getattr(obj, "fn", None) if not isinstance(obj, tuple) else \
        (obj[1] if len(obj) > 1 else None)
    ok_tuple = not isinstance(obj, tuple) or len(obj) in (2, 3)
    if not (ok_tuple and isinstance(op, str) and op and callable(fn)):
        raise PluginError(f"ember_onnx_symbolics must return ember.onnx.Symbolic objects or "
                          f"(op, fn[, opset]) tuples, got {obj!r}")
    return f"onnx symbolic {op}"


VALIDATORS = {
    "ember_backends": _validate_backend,
    "ember_convolution_algorithms": _validate_named(
        "convolution algorithm", ("name", "priority", "device_type", "supports_groups",
                                  "supports", "forward", "backward")),
    "ember_fusers": _validate_named("fuser", ("name", "device_type", "compile")),
    "ember_jit_passes": _validate_pass,
    "ember_onnx_symbolics": _validate_symbolic,
}


def _load_one(pm: pluggy.PluginManager, ep, info: PluginInfo) -> None:
    """Import, register and call every hook of one plugin; raise on any fault."""
    from ..backends import registry
    module = ep.load()
    pm.register(module, name=ep.name)
    try:
        results: dict[str, list] = {}
        for hook in HOOKS:
            for impl in getattr(pm.hook, hook).get_hookimpls():
                if impl.plugin_name != ep.name:
                    continue
                items = impl.function() or []
                if not isinstance(items, (list, tuple)):
                    raise PluginError(f"{hook} must return a list, got {type(items).__name__}")
                info.registered[hook] = [VALIDATORS[hook](x) for x in items]
                results[hook] = list(items)
        for b in results.get("ember_backends", ()):
            if b.name != ep.name:
                raise PluginError(f"backend name {b.name!r} must equal its entry-point name "
                                  f"{ep.name!r}")
    except BaseException:
        pm.unregister(name=ep.name)
        raise
    # Commit only after everything validated, so a failing plugin leaves nothing behind.
    for hook, items in results.items():
        registered[hook].extend(items)
    for b in results.get("ember_backends", ()):
        registry.register(b)


def ensure_loaded() -> None:
    """Load every enabled plugin once. Safe to call from any thread, any number of times."""
    global _loaded, _pm, generation
    if _loaded:
        return
    with _lock:
        if _loaded:
            return
        pm = pluggy.PluginManager(GROUP)
        pm.add_hookspecs(hookspecs)
        allow, deny = _names("EMBER_PLUGINS"), _names("EMBER_DISABLE_PLUGINS") or set()
        seen = set()
        for ep in sorted(md.entry_points(group=GROUP), key=lambda e: e.name):
            if ep.name in seen:  # the same distribution on sys.path twice
                continue
            seen.add(ep.name)
            dist = getattr(ep, "dist", None)
            info = PluginInfo(ep.name, dist.name if dist else "?", dist.version if dist else "?")
            _infos.append(info)
            if (allow is not None and ep.name not in allow) or ep.name in deny:
                info.disabled = True
                continue
            try:
                _load_one(pm, ep, info)
            except PluginUnavailable as e:     # no GPU here, say: expected, no warning
                info.unavailable = str(e)
                info.registered.clear()
            except Exception as e:  # noqa: BLE001 - fault isolation is the point
                info.error = f"{type(e).__name__}: {e}"
                info.registered.clear()
                warnings.warn(f"ember: skipping plugin '{ep.name}' ({info.distribution} "
                              f"{info.version}): {info.error}", UserWarning, stacklevel=3)
        _pm = pm
        generation += 1
        _loaded = True


def plugins() -> list[PluginInfo]:
    """Every entry point seen, loaded or not, with what it registered or why it was skipped."""
    ensure_loaded()
    return list(_infos)


def reload() -> None:
    """Forget every plugin and load again (tests, and after installing a plugin)."""
    global _loaded, _pm
    from ..backends import registry
    with _lock:
        for b in list(registry._backends):
            registry.unregister(b)
        for items in registered.values():
            items.clear()
        _infos.clear()
        _pm = None
        _loaded = False
    ensure_loaded()
