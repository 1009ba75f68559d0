"""Old path of :mod:`ember.jit.frontend.traced` (the jit sub-packages, issue 38):
the same module object, so ``from ember.jit.traced import X`` and patching
``ember.jit.traced.X`` keep working.
"""
# jit_layout: alias module of ember.jit.frontend.traced
import importlib
import sys

sys.modules[__name__] = importlib.import_module("ember.jit.frontend.traced")
