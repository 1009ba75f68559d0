"""canonicalize: structurally equal graphs print the same after renumbering."""
from ember.jit.ir.parser import parse_ir
from ember.jit.passes import canonicalize

BEFORE = """graph(%x : Tensor, %c : bool):
  %17 : int = prim::Constant[value=1]()
  %y.3 : Tensor = ember::add(%x, %x, %17) # scope: features.0; loc: model.py:3
  %z : Tensor = prim::If(%c)
    block0():
      %q : Tensor = ember::neg(%y.3)
      -> (%q)
    block1():
      %w.9 : Tensor = prim::FusionGroup_0(%x)
      -> (%w.9)
  return (%z)
with prim::FusionGroup_0 = graph(%a : Tensor):
  %b : Tensor = ember::relu(%a)
  return (%b)
"""

AFTER = """graph(%x : Tensor,
      %c : bool):
  %2 : int = prim::Constant[value=1]()
  %3 : Tensor = ember::add(%x, %x, %2)
  %4 : Tensor = prim::If(%c)
    block0():
      %5 : Tensor = ember::neg(%3)
      -> (%5)
    block1():
      %6 : Tensor = prim::FusionGroup_0(%x)
      -> (%6)
  return (%4)
with prim::FusionGroup_0 = graph(%0 : Tensor):
  %1 : Tensor = ember::relu(%0)
  return (%1)
"""


def test_canonicalize_renumbers_in_printing_order():
    g = parse_ir(BEFORE)
    c = canonicalize(g)
    c.lint()
    assert str(c) == AFTER
    assert str(g) == str(parse_ir(BEFORE))  # the argument is unchanged


def test_structurally_equal_graphs_compare_equal():
    other = BEFORE.replace("%17", "%k").replace("%y.3", "%1").replace("%q", "%0")
    assert str(canonicalize(parse_ir(other))) == str(canonicalize(parse_ir(BEFORE)))
    renamed_inputs = BEFORE.replace("%x", "%inp").replace("%c", "%flag")
    assert str(canonicalize(parse_ir(renamed_inputs))) != str(canonicalize(parse_ir(BEFORE)))
    assert str(canonicalize(parse_ir(renamed_inputs), rename_inputs=True)) == \
        str(canonicalize(parse_ir(BEFORE), rename_inputs=True))


def test_numeric_input_names_are_not_reused():
    g = parse_ir("graph(%2 : Tensor, %x : Tensor):\n  %a = ember::neg(%2)\n  return (%a)")
    assert "%3 : Tensor = ember::neg(%2)" in str(canonicalize(g))


def test_keep_source_info():
    g = parse_ir(BEFORE)
    assert "# scope: features.0; loc: model.py:3" in str(canonicalize(g, keep_source_info=True))
    assert "#" not in str(canonicalize(g))
