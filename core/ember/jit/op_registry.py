"""Old path of :mod:`ember.jit.runtime.op_registry` (the jit sub-packages, issue 38):
the same module object, so ``from ember.jit.op_registry import X`` and patching
``ember.jit.op_registry.X`` keep working.
"""
# jit_layout: alias module of ember.jit.runtime.op_registry
import importlib
import sys

sys.modules[__name__] = importlib.import_module("ember.jit.runtime.op_registry")
