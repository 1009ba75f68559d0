"""Old path of :mod:`ember.jit.runtime.fuser` (the jit sub-packages, issue 38):
the same module object, so ``from ember.jit.fuser import X`` and patching
``ember.jit.fuser.X`` keep working.
"""
# jit_layout: alias module of ember.jit.runtime.fuser
import importlib
import sys

sys.modules[__name__] = importlib.import_module("ember.jit.runtime.fuser")
