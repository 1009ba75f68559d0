"""ember-example-pass: a JIT pass registered through the ``ember_jit_passes`` hook (entry
point ``example_pass``)."""
from .fold_idempotent import IDEMPOTENT, fold_idempotent

__all__ = ["IDEMPOTENT", "fold_idempotent"]
