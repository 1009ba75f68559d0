"""Old path of :mod:`ember.jit.ir.kinds` (the jit sub-packages, issue 38):
the same module object, so ``from ember.jit.kinds import X`` and patching
``ember.jit.kinds.X`` keep working.
"""
# jit_layout: alias module of ember.jit.ir.kinds
import importlib
import sys

sys.modules[__name__] = importlib.import_module("ember.jit.ir.kinds")
