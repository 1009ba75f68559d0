"""Load plugins from entry points of group ``ember``, validate them, isolate their faults.

* Loading happens once, on first use (creating a tensor, ``ember plugins``).
* ``EMBER_PLUGINS=cpu,cuda`` loads only those entry points; ``EMBER_DISABLE_PLUGINS=cuda``
  skips those. Both take comma-separated entry-point names.
* A plugin that fails on import or in a hook (any exception, and ``SystemExit`` or
  ``GeneratorExit`` too: a plugin's ``sys.exit()`` does not end the host program), or
  returns objects that fail validation, is skipped with one ``UserWarning`` naming it and
  the cause; the others still load.
* Loading is all or nothing: a plugin's items are kept only once all of its hooks passed,
  and the load as a whole reaches the registries only at its end, so a
  ``KeyboardInterrupt`` (which propagates: it interrupts the host, not the plugin) leaves
  nothing registered and the next ``ensure_loaded`` starts clean.
* No silent replacement: one entry-point name has one owner (for ember's own plugins,
  ``FIRST_PARTY``, their distribution; else the first found on ``sys.path``), and a plugin
  returning an item whose registry key (``validation.KEYS``: a backend's name, an
  algorithm's device and name, a fuser's device type, a pass's stage and name, a
  symbolic's op and opset) another plugin already holds is refused. A refused plugin
  registers nothing, gets one ``UserWarning`` naming both distributions, and ``ember
  plugins`` shows it as ``[refused]`` with the reason. ember's own plugins load first, so
  they own their keys; the others load by entry-point name.
* A plugin that raises ``ember.errors.PluginUnavailable`` (the cuda plugin on a machine
  without a GPU or CuPy) registers nothing either, but quietly: ``ember plugins`` shows
  it as ``[unavailable]`` with the reason.
"""
from __future__ import annotations

import importlib.metadata as md
import os
import re
import threading
import warnings
from dataclasses import dataclass, field

import pluggy

from ..errors import PluginError, PluginUnavailable
from . import hookspecs
from .validation import VALIDATORS, registry_keys

GROUP = "ember"
# ember's own plugins (plugins/*/pyproject.toml): they load first and own their entry-point
# names, so a third-party plugin that sorts or sits on sys.path before them cannot take a
# name or a registry key from them.
FIRST_PARTY = {"cpu": "ember-cpu", "cuda": "ember-cuda", "nnpack_compat": "ember-nnpack-compat",
               "triton_fuser": "ember-triton-fuser"}
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
    refused: str | None = None      # why it collides with another plugin (see above)


class _Collision(PluginError):
    """A plugin claims a registry key another plugin (``owner``, a PluginInfo) holds."""

    def __init__(self, message: str, owner: PluginInfo):
        super().__init__(message)
        self.owner = owner


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


def _dist_key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()   # PEP 503 normalization


def _describe(e: BaseException) -> str:
    if isinstance(e, SystemExit):
        return f"SystemExit({e.code!r}): the plugin called sys.exit() or raised SystemExit"
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


class _Load:
    """One load, staged: nothing reaches the module state before every plugin was tried."""

    def __init__(self):
        self.infos: list[PluginInfo] = []
        self.items: dict[str, list] = {h: [] for h in HOOKS}
        self.owners: dict = {}          # (hook, key) -> PluginInfo holding it
        self.messages: list[str] = []   # warnings, emitted after the commit

    def claim(self, info: PluginInfo, results: dict) -> None:
        """Check ``results`` (hook -> items of one plugin) against what the plugins before
        it hold; raises _Collision naming the owner, else records the plugin's keys."""
        claims = [((hook, key), what) for hook, items in results.items()
                  for key, what in registry_keys(hook, items)]
        for k, what in claims:
            owner = self.owners.get(k)
            if owner is not None:
                raise _Collision(f"its {what} is already registered by plugin "
                                 f"'{owner.name}' ({owner.distribution} {owner.version})",
                                 owner)
        for k, _ in claims:
            self.owners[k] = info
        for hook, items in results.items():
            self.items[hook].extend(items)


def _load_one(pm: pluggy.PluginManager, ep, info: PluginInfo, load: _Load) -> None:
    """Import, register and call every hook of one plugin; stage its items in ``load``
    only if all of them validate and none collides; raise on any fault."""
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
        load.claim(info, results)
    except BaseException:
        pm.unregister(name=ep.name)
        raise


def _owners_first(eps) -> list:
    """``(ep, info, owner info or None)`` per entry point: ember's own first, then by name;
    per name the owner first, then the other distributions claiming it (refused)."""
    by_name: dict = {}
    for ep in eps:
        by_name.setdefault(ep.name, []).append(ep)
    out = []
    for name in sorted(by_name, key=lambda n: (n not in FIRST_PARTY, n)):
        claimants, dists = [], set()
        for ep in by_name[name]:
            dist = getattr(ep, "dist", None)
            key = _dist_key(dist.name) if dist else "?"
            if key in dists:  # the same distribution on sys.path twice
                continue
            dists.add(key)
            claimants.append((ep, PluginInfo(name, dist.name if dist else "?",
                                             dist.version if dist else "?")))
        known = _dist_key(FIRST_PARTY.get(name, ""))
        claimants.sort(key=lambda c: _dist_key(c[1].distribution) != known)
        owner = claimants[0][1]
        out += [(ep, info, None if info is owner else owner) for ep, info in claimants]
    return out


def _try(pm, ep, info: PluginInfo, load: _Load) -> None:
    """Load one plugin, turning every failure of the plugin into ``info``'s state."""
    try:
        _load_one(pm, ep, info, load)
    except PluginUnavailable as e:     # no GPU here, say: expected, no warning
        info.unavailable = str(e)
        info.registered.clear()
    except _Collision as e:
        info.refused = str(e)
        info.registered.clear()
        load.messages.append(f"ember: refusing plugin '{ep.name}' ({info.distribution} "
                             f"{info.version}): {e}; uninstall one of the two distributions, "
                             f"or disable one with EMBER_DISABLE_PLUGINS={ep.name} or "
                             f"EMBER_DISABLE_PLUGINS={e.owner.name}")
    except KeyboardInterrupt:
        raise   # the host was interrupted; ensure_loaded commits nothing
    except BaseException as e:  # noqa: BLE001 - fault isolation: SystemExit, GeneratorExit too
        info.error = _describe(e)
        info.registered.clear()
        load.messages.append(f"ember: skipping plugin '{ep.name}' ({info.distribution} "
                             f"{info.version}): {info.error}")


def ensure_loaded() -> None:
    """Load every enabled plugin once. Safe to call from any thread, any number of times.

    Raises only KeyboardInterrupt (after which nothing is registered and the next call
    loads again); every plugin fault becomes a warning and ``ember plugins`` state."""
    global _loaded, _pm, generation
    if _loaded:
        return
    with _lock:
        if _loaded:
            return
        from ..backends import registry
        pm = pluggy.PluginManager(GROUP)
        pm.add_hookspecs(hookspecs)
        allow, deny = _names("EMBER_PLUGINS"), _names("EMBER_DISABLE_PLUGINS") or set()
        load = _Load()
        for ep, info, owner in _owners_first(md.entry_points(group=GROUP)):
            load.infos.append(info)
            if (allow is not None and ep.name not in allow) or ep.name in deny:
                info.disabled = True
            elif owner is not None:
                info.refused = (f"entry point '{ep.name}' is already provided by "
                                f"{owner.distribution} {owner.version}")
                load.messages.append(
                    f"ember: refusing plugin '{ep.name}' ({info.distribution} "
                    f"{info.version}): {info.refused}; uninstall one of the two: `pip "
                    f"uninstall {info.distribution}` keeps {owner.distribution}, `pip "
                    f"uninstall {owner.distribution}` lets {info.distribution} load")
            else:
                _try(pm, ep, info, load)
        # commit: the registries change only here, all at once
        for hook, items in load.items.items():
            registered[hook].extend(items)
        for b in load.items["ember_backends"]:
            registry.register(b)
        _infos[:] = sorted(load.infos, key=lambda i: i.name)
        _pm = pm
        generation += 1
        _loaded = True
    for message in load.messages:
        warnings.warn(message, UserWarning, stacklevel=3)


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
