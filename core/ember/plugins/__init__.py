"""ember's plugin system: hook specifications, the entry-point loader, and
``load_module`` / ``unload_module`` to load a module as a plugin without installing it.
The guide for plugin authors is ``docs/plugins.md``."""
from .hookspecs import hookimpl, hookspec
from .manager import load_module, unload_module

__all__ = ["hookimpl", "hookspec", "load_module", "unload_module"]
