"""The IR examples in the module docstrings are real: they parse, print back and run."""
import importlib

import ember.jit.ir.graph as ir
import ember.jit.ir.printer as printer
from ember.jit.ir.parser import parse_ir
from ember.jit.passes import canonicalize
from helpers import literal_blocks


def test_ir_docstring_text_and_builder_agree():
    text, code = literal_blocks(ir.__doc__)
    scope = {}
    exec(code, scope)  # builds ``g``
    assert str(scope["g"]) == text
    assert str(parse_ir(text)) == text


def test_printer_docstring_round_trips():
    (text,) = literal_blocks(printer.__doc__)
    g = parse_ir(text)
    g.lint()
    assert str(g) == text


def test_canonicalize_docstring_before_after():
    # ``ember.jit.passes.canonicalize`` is also the function's name: import the module
    module = importlib.import_module("ember.jit.passes.canonicalize")
    before, after = literal_blocks(module.__doc__)
    assert str(canonicalize(parse_ir(before))) == after
