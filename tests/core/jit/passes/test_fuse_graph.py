"""fuse_graph: greedy producer/consumer fusion into prim::FusionGroup, for a registered fuser.

A test-only reference fuser ("compiles" a subgraph into an interpreter closure) stands in
for the Triton fuser on CPU, so the grouping is checked as IR text and by running it.
"""
import importlib

import numpy as np
import pytest

import ember as E
from ember.jit.runtime.fuser import fusion_fallbacks, using_fuser
from ember.jit.runtime.interpreter import run_graph
from ember.jit.ir.parser import parse_ir
from ember.jit.passes.fuse_graph import fuse_graph
from helpers import ReferenceFuser, assert_fuses_to, graph_inputs, literal_blocks


def test_docstring_example(fuser):
    before, after = literal_blocks(importlib.import_module(
        "ember.jit.passes.fuse_graph").__doc__)
    g = parse_ir(before)
    fuse_graph(g)
    assert str(g) == after
    assert_fuses_to(before, after)
    assert len(fuser.compiled) == 1  # the run above compiled the one group once


F = "Float(2, 3, device=cpu)"
CHAIN = f"""graph(%x : {F}, %y : {F}):
  %one : int = prim::Constant[value=1]()
  %a : {F} = ember::mul(%x, %y)
  %b : {F} = ember::add(%a, %x, %one)
  %c : {F} = ember::sigmoid(%b)
  return (%c)"""


def test_no_fuser_no_groups():
    assert_fuses_to(CHAIN, CHAIN)


def test_unknown_or_other_device_no_groups(fuser):
    for t in ("Float(2, 3)", "Float(2, 3, device=cuda:0)", "Tensor"):
        text = CHAIN.replace(F, t)
        assert_fuses_to(text, text, run=False)


def test_mixed_devices_are_not_fused(fuser):
    # mul reads a cuda tensor: it stays out; add and sigmoid are all cpu
    Y = "Float(2, 3, device=cuda:0)"
    assert_fuses_to(CHAIN.replace("%y : " + F, "%y : " + Y), f"""graph(%x : {F}, %y : {Y}):
  %a : {F} = ember::mul(%x, %y)
  %c : {F} = prim::FusionGroup_0[device=device("cpu")](%a, %x)
  return (%c)
with prim::FusionGroup_0 = graph(%a : {F}, %x : {F}):
  %one : int = prim::Constant[value=1]()
  %b : {F} = ember::add(%a, %x, %one)
  %c : {F} = ember::sigmoid(%b)
  return (%c)""", run=False)


def test_chain_with_scalar_constants(fuser):
    assert_fuses_to(CHAIN, f"""graph(%x : {F}, %y : {F}):
  %c : {F} = prim::FusionGroup_0[device=device("cpu")](%x, %y)
  return (%c)
with prim::FusionGroup_0 = graph(%x : {F}, %y : {F}):
  %one : int = prim::Constant[value=1]()
  %a : {F} = ember::mul(%x, %y)
  %b : {F} = ember::add(%a, %x, %one)
  %c : {F} = ember::sigmoid(%b)
  return (%c)""")


def test_non_constant_scalar_input_is_not_fused(fuser):
    text = f"""graph(%x : {F}, %y : {F}, %alpha : int):
  %a : {F} = ember::mul(%x, %y)
  %b : {F} = ember::add(%a, %x, %alpha)
  return (%b)"""
    assert_fuses_to(text, text, run=False)


def test_refused_kind_cuts_the_chain():
    with using_fuser("cpu", ReferenceFuser(refuse={"ember::add"})):
        assert_fuses_to(CHAIN, CHAIN)


def test_use_between_producer_and_consumer_blocks_fusion(fuser):
    # %a is read by mm before its consumer add: moving %a down to the add is invalid
    text = """graph(%x : Float(3, 3, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %a : Float(3, 3, device=cpu) = ember::exp(%x)
  %m : Float(3, 3, device=cpu) = ember::mm(%a, %x)
  %b : Float(3, 3, device=cpu) = ember::add(%a, %m, %one)
  return (%b)"""
    assert_fuses_to(text, text)


def test_later_use_becomes_a_group_output(fuser):
    T = "Float(3, 3, device=cpu)"
    assert_fuses_to(f"""graph(%x : {T}):
  %a : {T} = ember::exp(%x)
  %b : {T} = ember::neg(%a)
  %m : {T} = ember::mm(%b, %a)
  return (%m, %a)""", f"""graph(%x : {T}):
  %b : {T}, %a : {T} = prim::FusionGroup_0[device=device("cpu")](%x)
  %m : {T} = ember::mm(%b, %a)
  return (%m, %a)
with prim::FusionGroup_0 = graph(%x : {T}):
  %a : {T} = ember::exp(%x)
  %b : {T} = ember::neg(%a)
  return (%b, %a)""")


def test_groups_merge_on_a_second_sweep(fuser):
    # PyTorch's example: {h, l} cannot take f (g reads f before the group); {f, g} forms
    # next; the second sweep merges the two groups.
    assert_fuses_to(f"""graph(%x : {F}):
  %f : {F} = ember::exp(%x)
  %g : {F} = ember::sin(%f)
  %h : {F} = ember::cos(%f)
  %l : {F} = ember::neg(%h)
  return (%l, %g)""", f"""graph(%x : {F}):
  %l : {F}, %g : {F} = prim::FusionGroup_0[device=device("cpu")](%x)
  return (%l, %g)
with prim::FusionGroup_0 = graph(%x : {F}):
  %f : {F} = ember::exp(%x)
  %g : {F} = ember::sin(%f)
  %h : {F} = ember::cos(%f)
  %l : {F} = ember::neg(%h)
  return (%l, %g)""")


G = "Float(2, 8, device=cpu)"


def test_lstm_cell_chunk_is_pulled_in(fuser):
    # The seeds' LSTM cell: the gates tensor is chunked in four; the group reads it whole.
    Q = "Float(2, 2, device=cpu)"
    body = f"""
  %i : {Q} = ember::sigmoid(%i.0)
  %f : {Q} = ember::sigmoid(%f.0)
  %g : {Q} = ember::tanh(%g.0)
  %o : {Q} = ember::sigmoid(%o.0)
  %fc : {Q} = ember::mul(%f, %cx)
  %ig : {Q} = ember::mul(%i, %g)
  %cy : {Q} = ember::add(%fc, %ig, %one)
  %tc : {Q} = ember::tanh(%cy)
  %hy : {Q} = ember::mul(%o, %tc)
  return (%hy, %cy)"""
    assert_fuses_to(f"""graph(%gates : {G}, %cx : {Q}):
  %four : int = prim::Constant[value=4]()
  %one : int = prim::Constant[value=1]()
  %l : Tensor[] = ember::chunk(%gates, %four, %one)
  %i.0 : {Q}, %f.0 : {Q}, %g.0 : {Q}, %o.0 : {Q} = prim::ListUnpack(%l)""" + body,
          f"""graph(%gates : {G}, %cx : {Q}):
  %hy : {Q}, %cy : {Q} = prim::FusionGroup_0[device=device("cpu")](%cx, %gates)
  return (%hy, %cy)
with prim::FusionGroup_0 = graph(%cx : {Q}, %gates : {G}):
  %four : int = prim::Constant[value=4]()
  %one : int = prim::Constant[value=1]()
  %l : Tensor[] = ember::chunk(%gates, %four, %one)
  %i.0 : {Q}, %f.0 : {Q}, %g.0 : {Q}, %o.0 : {Q} = prim::ListUnpack(%l)""" + body)


def test_multi_output_split_is_pulled_in_but_not_its_producer(fuser):
    # The split must cut a group input, so the add that feeds it stays outside.
    H = "Float(2, 4, device=cpu)"
    assert_fuses_to(f"""graph(%x : {G}, %y : {G}):
  %one : int = prim::Constant[value=1]()
  %four : int = prim::Constant[value=4]()
  %s : {G} = ember::add(%x, %y, %one)
  %a : {H}, %b : {H} = ember::split(%s, %four, %one)
  %e : {H} = ember::exp(%a)
  %p : {H} = ember::mul(%e, %b)
  return (%p)""", f"""graph(%x : {G}, %y : {G}):
  %one : int = prim::Constant[value=1]()
  %s : {G} = ember::add(%x, %y, %one)
  %p : {H} = prim::FusionGroup_0[device=device("cpu")](%s)
  return (%p)
with prim::FusionGroup_0 = graph(%s : {G}):
  %one : int = prim::Constant[value=1]()
  %four : int = prim::Constant[value=4]()
  %a : {H}, %b : {H} = ember::split(%s, %four, %one)
  %e : {H} = ember::exp(%a)
  %p : {H} = ember::mul(%e, %b)
  return (%p)""")


def test_chunk_read_outside_the_group_stays_out(fuser):
    H = "Float(2, 4, device=cpu)"
    text = f"""graph(%x : {G}):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %a : {H}, %b : {H} = ember::chunk(%x, %two, %one)
  %e : {H} = ember::exp(%a)
  %p : {H} = ember::mul(%e, %b)
  return (%p, %b)"""
    assert_fuses_to(text, f"""graph(%x : {G}):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %a : {H}, %b : {H} = ember::chunk(%x, %two, %one)
  %p : {H} = prim::FusionGroup_0[device=device("cpu")](%b, %a)
  return (%p, %b)
with prim::FusionGroup_0 = graph(%b : {H}, %a : {H}):
  %e : {H} = ember::exp(%a)
  %p : {H} = ember::mul(%e, %b)
  return (%p)""")


def test_broadcasting_chunk_errors_are_shape_errors():
    from ember.errors import ShapeError
    from ember.jit.runtime.fuser import broadcasting_chunk
    x, b = E.ones(2, 8), E.arange(8.0)
    pieces = broadcasting_chunk([x, b], 4, 1, 4)
    assert [tuple(p.shape) for p in pieces] == [(2, 2)] * 8
    np.testing.assert_array_equal(pieces[5].numpy(), [[2.0, 3.0]] * 2)
    with pytest.raises(ShapeError, match="do not broadcast"):
        broadcasting_chunk([x, E.ones(3)], 4, 1, 4)
    with pytest.raises(ShapeError, match="gives 3 pieces; the graph unpacks 4"):
        broadcasting_chunk([E.ones(2, 6)], 4, 1, 4)


def test_nested_blocks_get_their_own_groups(fuser):
    assert_fuses_to(f"""graph(%x : {F}, %k : bool):
  %e : {F} = ember::exp(%x)
  %r : {F} = prim::If(%k)
    block0():
      %a : {F} = ember::neg(%e)
      %b : {F} = ember::sin(%a)
      -> (%b)
    block1():
      -> (%e)
  return (%r)""", f"""graph(%x : {F}, %k : bool):
  %e : {F} = ember::exp(%x)
  %r : {F} = prim::If(%k)
    block0():
      %b : {F} = prim::FusionGroup_0[device=device("cpu")](%e)
      -> (%b)
    block1():
      -> (%e)
  return (%r)
with prim::FusionGroup_0 = graph(%e : {F}):
  %a : {F} = ember::neg(%e)
  %b : {F} = ember::sin(%a)
  return (%b)""", run=False)


def test_groups_run_unfused_when_the_fuser_is_gone():
    g = parse_ir(CHAIN)
    with using_fuser("cpu", ReferenceFuser()):
        fuse_graph(g)
    args = graph_inputs(g)
    want = run_graph(parse_ir(CHAIN), args)[0].numpy()
    with using_fuser("cpu", None):  # not even the cpu plugin's
        np.testing.assert_allclose(run_graph(g, args)[0].numpy(), want, rtol=1e-6)
    assert "no fuser is registered for device type 'cpu'" in fusion_fallbacks()[-1].reason


def test_shared_producer_joins_after_its_other_user(fuser):
    assert_fuses_to(f"""graph(%x : {F}, %y : {F}):
  %one : int = prim::Constant[value=1]()
  %a : {F} = ember::exp(%x)
  %b : {F} = ember::add(%a, %y, %one)
  %f : {F} = ember::mul(%a, %b)
  return (%f)""", f"""graph(%x : {F}, %y : {F}):
  %f : {F} = prim::FusionGroup_0[device=device("cpu")](%y, %x)
  return (%f)
with prim::FusionGroup_0 = graph(%y : {F}, %x : {F}):
  %one : int = prim::Constant[value=1]()
  %a : {F} = ember::exp(%x)
  %b : {F} = ember::add(%a, %y, %one)
  %f : {F} = ember::mul(%a, %b)
  return (%f)""")


def test_a_second_run_changes_nothing(fuser):
    # in particular, the add feeding the group's split is not merged in later
    H = "Float(2, 4, device=cpu)"
    g = parse_ir(f"""graph(%x : {G}, %y : {G}):
  %one : int = prim::Constant[value=1]()
  %four : int = prim::Constant[value=4]()
  %s : {G} = ember::add(%x, %y, %one)
  %a : {H}, %b : {H} = ember::split(%s, %four, %one)
  %p : {H} = ember::mul(%a, %b)
  %e : {H} = ember::exp(%p)
  return (%e)""")
    fuse_graph(g)
    once = str(g)
    fuse_graph(g)
    g.lint()
    assert str(g) == once and "ember::add" in once.split("with")[0]
