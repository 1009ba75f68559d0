"""ember's plugin system: hook specifications and the entry-point loader."""
from .hookspecs import hookimpl, hookspec

__all__ = ["hookimpl", "hookspec"]
