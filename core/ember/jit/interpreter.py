"""Old path of :mod:`ember.jit.runtime.interpreter` (the jit sub-packages, issue 38):
the same module object, so ``from ember.jit.interpreter import X`` and patching
``ember.jit.interpreter.X`` keep working.
"""
# jit_layout: alias module of ember.jit.runtime.interpreter
import importlib
import sys

sys.modules[__name__] = importlib.import_module("ember.jit.runtime.interpreter")
