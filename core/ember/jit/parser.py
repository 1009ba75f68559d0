"""Old path of :mod:`ember.jit.ir.parser` (the jit sub-packages, issue 38):
the same module object, so ``from ember.jit.parser import X`` and patching
``ember.jit.parser.X`` keep working.
"""
# jit_layout: alias module of ember.jit.ir.parser
import importlib
import sys

sys.modules[__name__] = importlib.import_module("ember.jit.ir.parser")
