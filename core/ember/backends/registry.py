"""The backends that plugins registered, and the default device.

Plugins are loaded on first use (``ember.plugins.manager.ensure_loaded``). A backend is
found by its name, which is its plugin's entry-point name and the device type.

``TABLE`` is the ``ember_backends`` hook's table (``ember._base.registry.Registry``): the
plugin manager registers each plugin's backends there (``TABLE.register(backends,
owner)``), which indexes them by name here; ``TABLE.unregister(owner)`` takes exactly that
plugin's backends out. Kernels every backend shares (the convolution dispatcher of
``backends/convolution.py``) are registered by the composition root with
``register_shared_kernels`` and given to each backend as it registers.
"""
from __future__ import annotations

import threading

from .._base.registry import Registry, table
from ..errors import NoBackendError, PluginError
from ..types import Device

_backends: dict = {}
_loader = None  # loads the plugins once; given by the composition root (ember/_build.py)
_infos = None   # lists the plugins (manager.plugins), for plugin_hint; given the same way
_shared: list = []   # (owner, install(backend)): kernels every backend gets


def set_loader(load, infos=None) -> None:
    """Make ``load()`` (``plugins.manager.ensure_loaded``) what runs before the first
    lookup, and ``infos()`` (``plugins.manager.plugins``) what ``plugin_hint`` reads;
    called once by ``ember._build``, so this layer never imports the manager."""
    global _loader, _infos
    _loader = load
    if infos is not None:
        _infos = infos


def register_shared_kernels(install, owner: str) -> None:
    """Have ``install(backend)`` add kernels to every backend, those registered already
    and those to come (it must not replace a backend's own: ``kernels.setdefault``).
    ``owner`` names who gives them (``"ember"`` for the convolution dispatcher). Raises
    ValueError when ``owner`` already gave an installer."""
    if any(o == owner for o, _ in _shared):
        raise ValueError(f"register_shared_kernels: {owner!r} already gave an installer")
    _shared.append((owner, install))
    for backend in list(_backends.values()):
        install(backend)


class _DefaultDevice(threading.local):
    device: Device | None = None


_default = _DefaultDevice()


def register(backend) -> None:
    """Add ``backend`` (called by the plugin manager after it validated the backend).

    The kernels every backend shares (``register_shared_kernels``: the convolution
    dispatcher, which picks among registered algorithms) are added first. Raises
    PluginError if another backend holds the name: one never silently replaces another
    (``unregister`` it first)."""
    held = _backends.get(backend.name)
    if held is not None and held is not backend:
        raise PluginError(f"a backend named '{backend.name}' is already registered "
                          f"({held.type_prefix}*Type); unregister('{backend.name}') first "
                          f"to replace it")
    for _, install in _shared:
        install(backend)
    _backends[backend.name] = backend


def unregister(name: str) -> None:
    """Forget backend ``name`` (no error if it is not registered); plugin reloads use it."""
    _backends.pop(name, None)


def _forget(backend) -> None:
    if _backends.get(backend.name) is backend:
        del _backends[backend.name]


class _BackendTable(Registry):
    """The ``ember_backends`` table: its batches index backends by name in ``_backends``;
    ``reset`` (the manager's ``reload``) forgets every backend, as before the table."""

    def reset(self) -> None:
        super().reset()
        _backends.clear()


TABLE = table("ember_backends", lambda hook: _BackendTable(hook, register, _forget))


def all_backends() -> list:
    """Every registered backend, after the plugins have loaded."""
    _ensure()
    return list(_backends.values())


def plugin_hint(name: str) -> str:
    """Why no backend ``name`` is registered, as a sentence to append to an error: what
    its plugin (the entry point of that name) said when it registered nothing, failed or
    was disabled, else which distribution to install."""
    from ..plugins.hints import distribution, install_hint
    for info in (_infos() if _infos is not None else ()):
        if info.name != name:
            continue
        plugin = f"The plugin {info.distribution} {info.version}"
        if info.disabled:
            return (f" {plugin} is installed but disabled: check EMBER_PLUGINS / "
                    f"EMBER_DISABLE_PLUGINS.")
        if info.unavailable:
            return f" {plugin} is installed but registered nothing: {info.unavailable.rstrip('.')}."
        if info.error:
            return f" {plugin} is installed but failed to load: {info.error.rstrip('.')}."
        if info.refused:
            return f" {plugin} is installed but was refused: {info.refused}."
    return f" Install it with {install_hint(name)}." if distribution(name) else ""


def _ensure() -> None:
    if _loader is not None:
        _loader()


def get_backend(device) -> object:
    """The backend for a device (``"cpu"``, ``"cuda:0"``, a Device, or a backend name).

    Raises NoBackendError naming the plugin to install when none is registered under it.
    """
    name = device.type if isinstance(device, Device) else Device(device).type
    b = _backends.get(name)
    if b is None:
        _ensure()
        b = _backends.get(name)
        if b is None:
            have = ", ".join(sorted(_backends)) or "none"
            hint = plugin_hint(name) or (f" Install the plugin that provides '{name}', or "
                                         f"check EMBER_PLUGINS / EMBER_DISABLE_PLUGINS.")
            raise NoBackendError(
                f"no ember backend named '{name}' is registered (registered backends: "
                f"{have}).{hint} `ember plugins` lists what loaded.")
    return b


def default_device() -> Device:
    """The device factories use when none is given (``cpu`` unless set)."""
    return _default.device or Device("cpu")


def set_default_device(device) -> None:
    """Set the device factories use by default (``torch.set_default_device``).

    ``device`` is a backend's entry-point name with an optional index (``"cuda:1"``).
    Raises NoBackendError if no such backend is installed.
    """
    d = Device(device)
    get_backend(d)
    _default.device = d


def default_backend():
    """The backend of the default device; raises NoBackendError if it is not installed."""
    return get_backend(default_device())
