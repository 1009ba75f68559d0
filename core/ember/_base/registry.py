"""One hook's table of registered items, owned by the registry module that reads it.

Each registry (the backends, the convolution algorithms, the fusers, the JIT passes, the
ONNX symbolics, the process-group backends) keeps its items in a :class:`Registry` and
registers them one way, whoever the owner: ``register(items, owner)`` adds an owner's
batch, ``unregister(owner)`` takes exactly that batch out again. The plugin manager calls
it at its all-at-once commit with the plugin's name as owner, once it validated the items
and checked their keys; the composition root (``ember/_build.py``) calls it for ember's own
items with the owner :data:`BUILTIN`. A batch may be a zero-argument callable returning the
list (a *deferred* batch: ember's ONNX symbolics import the ``onnx`` package, so they are
listed on the table's first read, not at ``import ember``).

One table exists per hook (:func:`table`). Registries sit below the plugin manager and
never import it: the composition root gives this module the manager's loader
(:func:`set_loader`), and :meth:`Registry.entries` runs it before the first read, so
plugins load before first use wherever the read happens.

Nothing here imports from ember (layer 0). Reference: pluggy's ``PluginManager.register`` /
``unregister`` (one owner, its hook implementations in and out together), and llm's
``default_plugins/`` (the built-ins register like any plugin).
"""
from __future__ import annotations

import threading
from typing import Callable, Iterable

BUILTIN = "ember"
"""The owner of ember's own items (built-in passes, ONNX symbolics, shared kernels)."""

_lock = threading.RLock()
_generation = [0]   # bumped by every change of any table: caches of items expire
_loader: list = [None]


def set_loader(load: Callable[[], None]) -> None:
    """Make ``load()`` (``plugins.manager.ensure_loaded``) run before a table's items are
    first read; called once by ``ember._build``."""
    _loader[0] = load


def ensure_loaded() -> None:
    """Run the loader given to :func:`set_loader` (it returns at once after the first
    load); nothing when none was given."""
    load = _loader[0]
    if load is not None:
        load()


def generation() -> int:
    """A number that changes whenever any table changes (a plugin loads or unloads, a
    built-in batch is added) or :func:`bump_generation` is called: caches of registered
    items key on it."""
    return _generation[0]


def bump_generation() -> None:
    """Move :func:`generation` for a change its caches depend on that is not a table's
    (a JIT pass registered directly with ``register_pass``): one counter for all, so two
    different states never read the same number."""
    with _lock:
        _generation[0] += 1


class Registry:
    """The items of one hook (``hook``, e.g. ``"ember_jit_passes"``), in batches by owner,
    in registration order (an owner's items in the order it gave them).

    ``on_add(item)`` / ``on_remove(item)``, when given, run for each item of a batch as it
    is registered / unregistered (the backends registry indexes backends by name).
    """

    def __init__(self, hook: str, on_add: Callable | None = None,
                 on_remove: Callable | None = None):
        self.hook = hook
        self._batches: list[list] = []   # [owner, items or a deferred callable]
        self._on_add, self._on_remove = on_add, on_remove
        self.version = 0

    def __repr__(self) -> str:
        return f"Registry({self.hook!r}, owners={self.owners()})"

    def _bump(self) -> None:
        bump_generation()
        self.version = _generation[0]

    def register(self, items: Iterable | Callable[[], Iterable], owner: str) -> None:
        """Add ``owner``'s ``items`` (a list, or a zero-argument callable returning it,
        read on first use). Raises ValueError when ``owner`` already holds a batch here
        (``unregister`` it first), TypeError for an owner that is not a non-empty str and
        for a deferred batch on a table that indexes its items (``on_add``);
        what ``on_add`` raises propagates and leaves the batch out."""
        if not isinstance(owner, str) or not owner:
            raise TypeError(f"{self.hook}: expected a non-empty str owner, got {owner!r}")
        batch = items if callable(items) else list(items)
        with _lock:
            if any(b[0] == owner for b in self._batches):
                raise ValueError(f"{self.hook}: owner {owner!r} already registered items; "
                                 f"unregister({owner!r}) first to replace them")
            if self._on_add is not None and callable(batch):
                raise TypeError(f"{self.hook}: this table indexes its items as they come "
                                f"(on_add), so a batch must be a list, not a deferred "
                                f"callable")
            if self._on_add is not None:
                done = []
                try:
                    for item in batch:
                        self._on_add(item)
                        done.append(item)
                except BaseException:
                    for item in done if self._on_remove is not None else ():
                        self._on_remove(item)
                    raise
            self._batches.append([owner, batch])
            self._bump()

    def unregister(self, owner: str) -> list:
        """Take ``owner``'s items out (exactly those); returns them ([] if it held none)."""
        with _lock:
            found = [b for b in self._batches if b[0] == owner]
            if not found:
                return []
            self._batches = [b for b in self._batches if b[0] != owner]
            items = [] if callable(found[0][1]) else found[0][1]   # never listed: none
            if self._on_remove is not None:
                for item in items:
                    self._on_remove(item)
            self._bump()
            return list(items)

    def reset(self) -> None:
        """Take out every owner's items except ember's own (:data:`BUILTIN`): the plugin
        manager's ``reload()``."""
        for owner in [b[0] for b in self._batches if b[0] != BUILTIN]:
            self.unregister(owner)

    def owners(self) -> list[str]:
        """The owners holding a batch, in registration order."""
        return [b[0] for b in self._batches]

    def _resolve(self, builtin: bool = True) -> None:
        """List the deferred batches (ember's too unless ``builtin`` is False), once each.
        NOTE: outside the lock: listing imports modules, which may take tables."""
        for batch in list(self._batches):
            make = batch[1]
            if callable(make) and (builtin or batch[0] != BUILTIN):
                listed = list(make())
                with _lock:
                    if batch[1] is make:
                        batch[1] = listed

    def entries(self, load: bool = True) -> list[tuple[str, object]]:
        """``(owner, item)`` for every item, in order; plugins load first unless
        ``load=False`` (the manager itself, while it commits)."""
        if load:
            ensure_loaded()
        self._resolve()
        with _lock:
            return [(b[0], item) for b in self._batches if not callable(b[1])
                    for item in b[1]]

    def items(self, load: bool = True) -> list:
        """Every item, in order (see :meth:`entries`)."""
        return [item for _, item in self.entries(load)]

    def plugin_items(self) -> list:
        """The items of every owner but ember, in order, without loading plugins or
        resolving deferred built-in batches (``manager.registered`` reads them)."""
        self._resolve(builtin=False)
        with _lock:
            return [item for b in self._batches if b[0] != BUILTIN and not callable(b[1])
                    for item in b[1]]

    def replace_plugin_items(self, items: Iterable) -> None:
        """Make ``items`` the table's only non-builtin items, as one batch of owner
        ``"(set directly)"``, or restore the batches of a list :meth:`plugin_batches`
        returned (tests patching ``manager.registered[hook]``)."""
        batches = getattr(items, "batches", None)
        if batches is None:
            batches = [["(set directly)", list(items)]]
        with _lock:
            for owner in [b[0] for b in self._batches if b[0] != BUILTIN]:
                self.unregister(owner)
            for owner, batch in batches:
                self.register(batch, owner)

    def plugin_batches(self) -> list:
        """:meth:`plugin_items` as a list that remembers its batches, so that
        :meth:`replace_plugin_items` given it back restores their owners."""
        with _lock:
            out = _Items(self.plugin_items())
            out.batches = [list(b) for b in self._batches if b[0] != BUILTIN]
        return out


_tables: dict = {}


def table(hook: str, make: Callable[[str], Registry] = Registry) -> Registry:
    """The one table of ``hook``, made by ``make(hook)`` on first call. The registry module
    that reads the hook owns it and its rules; the composition root and the plugin manager
    reach it by name, so neither has to import that module (the JIT pipeline, the fusers
    and the ONNX exporter load only when used)."""
    with _lock:
        found = _tables.get(hook)
        if found is None:
            found = _tables[hook] = make(hook)
        return found


class _Items(list):
    """A list of plugin items that remembers the ``[owner, items]`` batches it came from."""

    batches: list = []
