"""Old path of :mod:`ember.jit.frontend.tracer` (the jit sub-packages, issue 38):
the same module object, so ``from ember.jit.tracer import X`` and patching
``ember.jit.tracer.X`` keep working.
"""
# jit_layout: alias module of ember.jit.frontend.tracer
import importlib
import sys

sys.modules[__name__] = importlib.import_module("ember.jit.frontend.tracer")
