"""Graph passes: one pass per module, each a ``Graph -> None`` (in place) function whose
docstring shows a before/after example in IR text.

Written so far (import each from its module, e.g. ``from ember.jit.passes.peephole import
peephole``):

* ``dead_code_elimination.eliminate_dead_code``
* ``common_subexpression_elimination.eliminate_common_subexpression``
* ``constant_pooling.constant_pooling``
* ``peephole.peephole``
* ``remove_expands.remove_expands``
* ``canonicalize_ops.canonicalize_ops``
* ``canonicalize.canonicalize`` (returns a renumbered copy; tests compare graphs with it:
  ``assert str(canonicalize(g)) == str(canonicalize(parse_ir(expected)))``)

The ordered pipeline the GraphExecutor runs (and ``pipeline()``, which lists it) comes with
the executor (issue 5).
"""
from ember.jit.passes.canonicalize import canonicalize

__all__ = ["canonicalize"]
