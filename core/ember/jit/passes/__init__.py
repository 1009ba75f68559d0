"""Graph passes: one pass per module, each a ``Graph -> None`` (in place) or ``Graph -> Graph``
function whose docstring shows a before/after example in IR text.

The ordered pipeline the GraphExecutor runs (and ``pipeline()``, which lists it) comes with
the executor; for now this package holds :func:`canonicalize`, which tests use to compare
graphs: ``assert str(canonicalize(g)) == str(canonicalize(parse_ir(expected)))``.
"""
from ember.jit.passes.canonicalize import canonicalize

__all__ = ["canonicalize"]
