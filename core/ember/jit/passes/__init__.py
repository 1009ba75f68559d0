"""Graph passes: one pass per module, each a ``Graph -> None`` (in place) function whose
docstring shows a before/after example in IR text (import each from its module, e.g.
``from ember.jit.passes.peephole import peephole``).

``pipeline()`` lists the order a GraphExecutor runs them in, custom passes included (see
``ember/jit/passes/pass_manager.py``). ``canonicalize(g)`` returns a renumbered copy; tests compare
graphs with it: ``assert str(canonicalize(g)) == str(canonicalize(parse_ir(expected)))``.
"""
from ember.jit.passes.canonicalize import canonicalize
from ember.jit.passes.pass_manager import pipeline

__all__ = ["canonicalize", "pipeline"]
