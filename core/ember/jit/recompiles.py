"""Old path of :mod:`ember.jit.runtime.recompiles` (the jit sub-packages, issue 38):
the same module object, so ``from ember.jit.recompiles import X`` and patching
``ember.jit.recompiles.X`` keep working.
"""
# jit_layout: alias module of ember.jit.runtime.recompiles
import importlib
import sys

sys.modules[__name__] = importlib.import_module("ember.jit.runtime.recompiles")
