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
  symbolic's op and opset, a process-group backend's name) another plugin already holds
  is refused. A refused plugin registers nothing, gets one ``UserWarning`` naming both
  distributions, and ``ember plugins`` shows it as ``[refused]`` with the reason. ember's
  own plugins load first, so they own their keys; the others load by entry-point name.
* A plugin that raises ``ember.errors.PluginUnavailable`` (the cuda plugin on a machine
  without a GPU or CuPy) registers nothing either, but quietly: ``ember plugins`` shows
  it as ``[unavailable]`` with the reason.
* ``load_module(module, name)`` loads a module (or importable module name) as a plugin
  in process, without installing it (tests, notebooks), through the same steps and rules
  (validation, isolation, collisions with every plugin loaded so far, all or nothing);
  ``unload_module(name)`` takes it out again. ``reload()`` forgets such plugins.
* The registries own their tables (``ember._base.registry.Registry``, one per hook, handed
  to the manager by the composition root: ``set_tables``). At the commit the manager
  calls each table's ``register(items, owner)`` with the plugin's name as owner;
  ``unload_module`` calls ``unregister(owner)`` and ``reload()`` ``reset()``, which keep
  ember's own items (owner ``"ember"``, registered by ``ember/_build.py`` through the same
  call). ``registered[hook]`` reads the plugins' items of each table.
"""
from __future__ import annotations

import importlib
import importlib.metadata as md
import os
import re
import threading
import warnings
from dataclasses import dataclass, field

import pluggy

from .._base.registry import BUILTIN
from ..errors import PluginError, PluginUnavailable
from . import hookspecs
from .hints import FIRST_PARTY
from .kernel_table import KernelTable
from .tables import HOOKS, table_of as _table
from .tables import registered, set_tables  # noqa: F401 - manager.registered, set_tables
from .validation import VALIDATORS, missing_kernels_message, registry_keys

GROUP = "ember"


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
    in_process: bool = False        # loaded by load_module, not from an entry point


class _Collision(PluginError):
    """A plugin claims a registry key another plugin (``owner``, a PluginInfo) holds."""

    def __init__(self, message: str, owner: PluginInfo):
        super().__init__(message)
        self.owner = owner


_lock = threading.RLock()
_loaded = False
_pm: pluggy.PluginManager | None = None
_infos: list[PluginInfo] = []
_committed = None  # the _Load of the plugins in the registries: their keys and items
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
        self.owners: dict = {}          # (hook, key) -> PluginInfo holding it
        self.items_of: dict = {}        # plugin name -> {hook: its items}
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
        self.items_of[info.name] = results


def _load_one(pm: pluggy.PluginManager, name: str, get_module, info: PluginInfo,
              load: _Load) -> None:
    """Import (``get_module()``), register and call every hook of plugin ``name``; stage
    its items in ``load`` only if all of them validate and none collides; raise on any
    fault."""
    module = get_module()
    pm.register(module, name=name)
    try:
        results: dict[str, list] = {}
        for hook in HOOKS:
            for impl in getattr(pm.hook, hook).get_hookimpls():
                if impl.plugin_name != name:
                    continue
                items = impl.function() or []
                if not isinstance(items, (list, tuple)):
                    raise PluginError(f"{hook} must return a list, got {type(items).__name__}")
                info.registered[hook] = [VALIDATORS[hook](x) for x in items]
                results[hook] = list(items)
        for b in results.get("ember_backends", ()):
            if b.name != name:
                where = ("the name given to load_module" if info.in_process else
                         "its entry-point name")
                raise PluginError(f"backend name {b.name!r} must equal {where} {name!r}")
        load.claim(info, results)
        for b in results.get("ember_backends", ()):
            lacking = missing_kernels_message(b, name)
            if lacking:   # registered all the same: a partial backend may be on purpose
                load.messages.append(lacking)
    except BaseException:
        pm.unregister(name=name)
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


def _way_out(info: PluginInfo, owner: PluginInfo) -> str:
    """How to let ``info`` load where ``owner`` holds its name or a key."""
    if owner.in_process:
        return f"unload_module('{owner.name}') first"
    if info.in_process:
        return (f"disable the installed one first with EMBER_DISABLE_PLUGINS={owner.name} "
                f"and ember.plugins.manager.reload()")
    return (f"uninstall one of the two distributions, or disable one with "
            f"EMBER_DISABLE_PLUGINS={info.name} or EMBER_DISABLE_PLUGINS={owner.name}")


def _try(pm, name: str, get_module, info: PluginInfo, load: _Load) -> None:
    """Load one plugin, turning every failure of the plugin into ``info``'s state."""
    try:
        _load_one(pm, name, get_module, info, load)
    except PluginUnavailable as e:     # no GPU here, say: expected, no warning
        info.unavailable = str(e)
        info.registered.clear()
    except _Collision as e:
        info.refused = str(e)
        info.registered.clear()
        load.messages.append(f"ember: refusing plugin '{name}' ({info.distribution} "
                             f"{info.version}): {e}; {_way_out(info, e.owner)}")
    except KeyboardInterrupt:
        raise   # the host was interrupted; ensure_loaded commits nothing
    except BaseException as e:  # noqa: BLE001 - fault isolation: SystemExit, GeneratorExit too
        info.error = _describe(e)
        info.registered.clear()
        load.messages.append(f"ember: skipping plugin '{name}' ({info.distribution} "
                             f"{info.version}): {info.error}")


def ensure_loaded() -> None:
    """Load every enabled plugin once. Safe to call from any thread, any number of times.

    Raises only KeyboardInterrupt (after which nothing is registered and the next call
    loads again); every plugin fault becomes a warning and ``ember plugins`` state."""
    global _loaded, _pm, _committed, generation
    if _loaded:
        return
    with _lock:
        if _loaded:
            return
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
                _try(pm, ep.name, ep.load, info, load)
        _commit(load)   # the registries change only here, all at once
        _infos[:] = sorted(load.infos, key=lambda i: i.name)
        _pm, _committed = pm, load
        generation += 1
        _loaded = True
    for message in load.messages:
        warnings.warn(message, UserWarning, stacklevel=3)


def _commit(load: _Load) -> None:
    """Register every plugin's staged items in their tables (``register(items, owner)``,
    in load order; a backend's kernel table first made one whose misses raise a typed
    error). All or nothing: if a table refuses a batch, the batches of this commit
    already in leave again and the error propagates."""
    done = []
    try:
        for name, results in load.items_of.items():
            for hook, items in results.items():
                if not items:
                    continue
                if hook == "ember_backends":
                    for b in items:
                        if not isinstance(b.kernels, KernelTable):
                            b.kernels = KernelTable(b.kernels, b)
                _table(hook).register(items, _owner(name))
                done.append((hook, name))
    except BaseException:
        for hook, name in reversed(done):
            _table(hook).unregister(_owner(name))
        raise


def _owner(name: str) -> str:
    """The owner plugin ``name``'s items are registered under: its name, unless that is
    the built-ins' owner ``"ember"`` (which ``reload()`` keeps)."""
    return name if name != BUILTIN else f"{name} (plugin)"


def plugins() -> list[PluginInfo]:
    """Every entry point seen, loaded or not, with what it registered or why it was skipped."""
    ensure_loaded()
    return list(_infos)


def reload() -> None:
    """Forget every plugin, those of ``load_module`` too, and load the entry points again
    (tests, and after installing a plugin)."""
    global _loaded, _pm, _committed
    with _lock:
        for hook in HOOKS:
            _table(hook).reset()
        _infos.clear()
        _pm = _committed = None
        _loaded = False
    ensure_loaded()


def load_module(module, name: str | None = None) -> PluginInfo:
    """Load ``module`` (a module object, or the name of an importable module) as plugin
    ``name`` in this process, without installing it: for tests and notebooks.

    It goes through the steps an entry point does: its hookimpls are called, every item is
    validated, a backend's name must equal ``name``, and a plugin whose name or whose
    items' registry keys (``validation.KEYS``) another loaded plugin holds is refused; a
    failing plugin registers nothing and gets one ``UserWarning``. ``ember plugins`` lists
    it, as ``<module> (loaded in process)``; caches of plugin items expire
    (``generation``). ``name`` defaults to the module's ``__name__``, as pluggy's
    ``PluginManager.register`` names a module. Returns its PluginInfo: check ``.error``,
    ``.refused``, ``.unavailable`` (all None once it loaded). Undo with
    ``unload_module(name)``. Raises TypeError for a ``module`` that is neither a module
    nor a str, and KeyboardInterrupt only (nothing registered) from the plugin.
    """
    global generation
    if isinstance(module, str):
        modname = module

        def get_module():
            return importlib.import_module(modname)
    elif hasattr(module, "__name__") and hasattr(module, "__dict__"):
        modname = module.__name__

        def get_module():
            return module
    else:
        raise TypeError(f"load_module() expected a module or the name of an importable "
                        f"module, got {type(module).__name__}")
    name = modname if name is None else name
    if not isinstance(name, str) or not name:
        raise TypeError(f"load_module() expected a non-empty str name, got {name!r}")
    ensure_loaded()
    with _lock:
        info = PluginInfo(name, modname, "(loaded in process)", in_process=True)
        load = _Load()
        # a failed earlier try under this name is replaced, not listed twice
        _infos[:] = [i for i in _infos if not (i.name == name and i.in_process
                                                and not _holds(i))]
        held = next((i for i in _infos if i.name == name and _holds(i)), None)
        if held is not None:
            info.refused = (f"the name '{name}' is already held by plugin '{held.name}' "
                            f"({held.distribution} {held.version})")
            load.messages.append(f"ember: refusing plugin '{name}' ({info.distribution} "
                                 f"{info.version}): {info.refused}; pass another name=, or "
                                 f"{_way_out(info, held)}")
        else:
            load.owners = dict(_committed.owners)
            _try(_pm, name, get_module, info, load)
        _commit(load)
        _committed.owners.update(load.owners)
        _committed.items_of.update(load.items_of)
        _infos.append(info)
        generation += 1
    for message in load.messages:
        warnings.warn(message, UserWarning, stacklevel=2)
    return info


def _holds(info: PluginInfo) -> bool:
    return not (info.disabled or info.error or info.refused or info.unavailable)


def unload_module(name: str) -> None:
    """Take plugin ``name``, loaded by ``load_module``, out of this process: its items
    leave the registries (and caches expire) and ``ember plugins`` no longer lists it.
    Tensors on its backend stay alive but can no longer be created. Raises KeyError for a
    name ``load_module`` did not load, ValueError for an installed plugin (disable that
    one with ``EMBER_DISABLE_PLUGINS`` and ``reload()``)."""
    global generation
    with _lock:
        infos = [i for i in _infos if i.name == name]
        if not infos:
            raise KeyError(f"unload_module(): no plugin named {name!r} was loaded; "
                           f"loaded: {', '.join(i.name for i in _infos) or 'none'}")
        mine = [i for i in infos if i.in_process]
        if not mine:
            raise ValueError(f"unload_module(): plugin {name!r} was installed "
                             f"({infos[0].distribution}), not loaded by load_module; "
                             f"disable it with EMBER_DISABLE_PLUGINS={name} and reload()")
        for info in mine:
            _infos.remove(info)
        if any(_holds(i) for i in mine):
            for hook in _committed.items_of.pop(name, {}):
                _table(hook).unregister(_owner(name))   # exactly its items
            _committed.owners = {k: v for k, v in _committed.owners.items()
                                 if all(v is not i for i in mine)}
            _pm.unregister(name=name)
        generation += 1
