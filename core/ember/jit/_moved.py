"""Old module paths that became packages when ``jit/`` got its sub-packages.

``ember.jit.ir`` and ``ember.jit.autodiff`` were modules; they are packages now, and the
names of the old modules (``from ember.jit.ir import Graph``) load, on first use, out of
the module that took their place (``ember.jit.ir.graph``, ``ember.jit.autodiff.
differentiation``). Reference: PEP 562, module ``__getattr__``.
"""
import importlib


def names_of(package: str, home: str):
    """A module ``__getattr__`` for ``package`` that serves the names of module ``home``
    (imported on the first such read). Raises AttributeError naming both modules for a
    name neither has."""
    def __getattr__(name):
        if name.startswith("__") and name != "__all__":
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        try:
            return getattr(importlib.import_module(home), name)
        except AttributeError:
            raise AttributeError(f"module {package!r} has no attribute {name!r} "
                                 f"(nor has {home})") from None
    return __getattr__
