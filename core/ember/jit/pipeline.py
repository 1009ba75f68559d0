"""Old path of :mod:`ember.jit.passes.pass_manager` (the jit sub-packages, issue 38):
the same module object, so ``from ember.jit.pipeline import X`` and patching
``ember.jit.pipeline.X`` keep working.
"""
# jit_layout: alias module of ember.jit.passes.pass_manager
import importlib
import sys

sys.modules[__name__] = importlib.import_module("ember.jit.passes.pass_manager")
