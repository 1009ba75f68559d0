"""Old path of :mod:`ember.jit.ir.ir_types` (the jit sub-packages, issue 38):
the same module object, so ``from ember.jit.ir_types import X`` and patching
``ember.jit.ir_types.X`` keep working.
"""
# jit_layout: alias module of ember.jit.ir.ir_types
import importlib
import sys

sys.modules[__name__] = importlib.import_module("ember.jit.ir.ir_types")
