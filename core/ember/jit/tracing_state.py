"""Old path of :mod:`ember.jit.frontend.tracing_state` (the jit sub-packages, issue 38):
the same module object, so ``from ember.jit.tracing_state import X`` and patching
``ember.jit.tracing_state.X`` keep working.
"""
# jit_layout: alias module of ember.jit.frontend.tracing_state
import importlib
import sys

sys.modules[__name__] = importlib.import_module("ember.jit.frontend.tracing_state")
