"""fuse_graph: greedy producer/consumer fusion into prim::FusionGroup, for a registered fuser.

A test-only reference fuser ("compiles" a subgraph into an interpreter closure) stands in
for the Triton fuser on CPU, so the grouping is checked as IR text and by running it.
"""
import importlib

import numpy as np
import pytest

import ember as E
from ember.jit.fuser import fusion_fallbacks, using_fuser
from ember.jit.interpreter import run_graph
from ember.jit.parser import parse_ir
from ember.jit.passes import canonicalize
from ember.jit.passes.fuse_graph import fuse_graph
from helpers import ReferenceFuser, literal_blocks


def tensors(graph, seed=0):
    """Random inputs for a graph whose inputs are all ``Float(sizes..., device=cpu)``."""
    rng = np.random.default_rng(seed)
    return [E.tensor(rng.uniform(-2, 2, v.type.sizes).astype(np.float32))
            for v in graph.inputs]


def check(before: str, after: str, run: bool = True) -> None:
    g = parse_ir(before)
    assert fuse_graph(g) is None
    g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(after)))
    if run:
        ref = parse_ir(before)
        args = tensors(ref)
        for got, want in zip(run_graph(g, args), run_graph(ref, args)):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_docstring_example(fuser):
    before, after = literal_blocks(importlib.import_module(
        "ember.jit.passes.fuse_graph").__doc__)
    g = parse_ir(before)
    fuse_graph(g)
    assert str(g) == after
    check(before, after)
    assert len(fuser.compiled) == 1  # the run above compiled the one group once


F = "Float(2, 3, device=cpu)"
CHAIN = f"""graph(%x : {F}, %y : {F}):
  %one : int = prim::Constant[value=1]()
  %a : {F} = ember::mul(%x, %y)
  %b : {F} = ember::add(%a, %x, %one)
  %c : {F} = ember::sigmoid(%b)
  return (%c)"""


def test_no_fuser_no_groups():
    check(CHAIN, CHAIN)


def test_unknown_or_other_device_no_groups(fuser):
    for t in ("Float(2, 3)", "Float(2, 3, device=cuda:0)", "Tensor"):
        text = CHAIN.replace(F, t)
        check(text, text, run=False)


def test_mixed_devices_are_not_fused(fuser):
    # mul reads a cuda tensor: it stays out; add and sigmoid are all cpu
    Y = "Float(2, 3, device=cuda:0)"
    check(CHAIN.replace("%y : " + F, "%y : " + Y), f"""graph(%x : {F}, %y : {Y}):
  %a : {F} = ember::mul(%x, %y)
  %c : {F} = prim::FusionGroup_0[device=device("cpu")](%a, %x)
  return (%c)
with prim::FusionGroup_0 = graph(%a : {F}, %x : {F}):
  %one : int = prim::Constant[value=1]()
  %b : {F} = ember::add(%a, %x, %one)
  %c : {F} = ember::sigmoid(%b)
  return (%c)""", run=False)


def test_chain_with_scalar_constants(fuser):
    check(CHAIN, f"""graph(%x : {F}, %y : {F}):
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
    check(text, text, run=False)


def test_refused_kind_cuts_the_chain():
    with using_fuser("cpu", ReferenceFuser(refuse={"ember::add"})):
        check(CHAIN, CHAIN)


def test_use_between_producer_and_consumer_blocks_fusion(fuser):
    # %a is read by mm before its consumer add: moving %a down to the add is invalid
    text = """graph(%x : Float(3, 3, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %a : Float(3, 3, device=cpu) = ember::exp(%x)
  %m : Float(3, 3, device=cpu) = ember::mm(%a, %x)
  %b : Float(3, 3, device=cpu) = ember::add(%a, %m, %one)
  return (%b)"""
    check(text, text)


def test_later_use_becomes_a_group_output(fuser):
    T = "Float(3, 3, device=cpu)"
    check(f"""graph(%x : {T}):
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
    check(f"""graph(%x : {F}):
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
    check(f"""graph(%gates : {G}, %cx : {Q}):
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
    check(f"""graph(%x : {G}, %y : {G}):
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
    check(text, f"""graph(%x : {G}):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %a : {H}, %b : {H} = ember::chunk(%x, %two, %one)
  %p : {H} = prim::FusionGroup_0[device=device("cpu")](%b, %a)
  return (%p, %b)
with prim::FusionGroup_0 = graph(%b : {H}, %a : {H}):
  %e : {H} = ember::exp(%a)
  %p : {H} = ember::mul(%e, %b)
  return (%p)""")


B8, Q4 = "Float(8, device=cpu)", "Float(2, 4, device=cpu)"
MOVABLE = f"""graph(%x : {G}, %y : {G}, %b : {B8}):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %s : {G} = ember::mul(%x, %y)
  %t : {G} = ember::add(%s, %b, %one)
  %l : Tensor[] = ember::chunk(%t, %two, %one)
  %a : {Q4}, %c : {Q4} = prim::ListUnpack(%l)
  %e : {Q4} = ember::tanh(%a)
  %p : {Q4} = ember::mul(%e, %c)
  return (%p)"""


def test_chunk_moves_above_its_producers(fuser):
    # PyTorch's tryToMoveChunk: chunk(x * y + b) becomes x_j * y_j + b_j per piece of a
    # BroadcastingChunk of the group inputs (b broadcast over the rows, then chunked)
    check(MOVABLE, f"""graph(%x : {G}, %y : {G}, %b : {B8}):
  %p : {Q4} = prim::FusionGroup_0[device=device("cpu")](%x, %y, %b)
  return (%p)
with prim::FusionGroup_0 = graph(%x : {G}, %y : {G}, %b : {B8}):
  %one : int = prim::Constant[value=1]()
  %x0 : {Q4}, %x1 : {Q4}, %y0 : {Q4}, %y1 : {Q4}, %b0 : {Q4}, %b1 : {Q4} = \
prim::BroadcastingChunk[chunks=2, dim=1](%x, %y, %b)
  %s0 : {Q4} = ember::mul(%x0, %y0)
  %s1 : {Q4} = ember::mul(%x1, %y1)
  %a : {Q4} = ember::add(%s0, %b0, %one)
  %c : {Q4} = ember::add(%s1, %b1, %one)
  %e : {Q4} = ember::tanh(%a)
  %p : {Q4} = ember::mul(%e, %c)
  return (%p)""".replace("\\\n", ""))


def _moved(text: str) -> bool:
    g = parse_ir(text)
    fuse_graph(g)
    g.lint()
    return "prim::BroadcastingChunk" in str(g)


def test_chunk_stays_when_its_producer_is_read_elsewhere(fuser):
    assert not _moved(MOVABLE.replace("return (%p)", "return (%p, %t)"))


def test_chunk_stays_below_a_0d_operand_of_another_dtype(fuser):
    # x + s with s a 0-d double is float; its pieces would be dimensioned doubles
    assert not _moved(MOVABLE.replace(f"%b : {B8}", "%b : Double(device=cpu)"))
    assert _moved(MOVABLE.replace(f"%b : {B8}", "%b : Float(device=cpu)"))


def test_chunk_stays_below_type_as(fuser):
    text = MOVABLE.replace("ember::add(%s, %b, %one)", "ember::type_as(%s, %b)")
    assert not _moved(text)


def test_tensor_metas_follow_a_moved_chunk_and_split_no_group(fuser):
    # autodiff's forward reads shapes of values in the middle of the chain; the metas
    # sink to the return, the moved ops' metas come from their pieces (cat_dim), the
    # chunk's list meta from a list of the pieces, and the pieces' metas from the group's
    # inputs
    text = f"""graph(%x : {G}, %y : {G}, %b : {B8}):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %s : {G} = ember::mul(%x, %y)
  %sm : Any = prim::TensorMeta(%s)
  %t : {G} = ember::add(%s, %b, %one)
  %tm : Any = prim::TensorMeta(%t)
  %l : Tensor[] = ember::chunk(%t, %two, %one)
  %lm : Any = prim::TensorMeta(%l)
  %a : {Q4}, %c : {Q4} = prim::ListUnpack(%l)
  %e : {Q4} = ember::tanh(%a)
  %em : Any = prim::TensorMeta(%e)
  %p : {Q4} = ember::mul(%e, %c)
  return (%p, %sm, %tm, %lm, %em)"""
    import ember.jit.differentiable_graph  # noqa: F401 - runs prim::TensorMeta
    g = parse_ir(text)
    fuse_graph(g)
    g.lint()
    top = [n.kind for n in g.nodes()]
    assert top.count("prim::FusionGroup") == 1 and "ember::chunk" not in top
    assert [n.attr("cat_dim", None) for n in g.nodes() if n.kind == "prim::TensorMeta"] \
        == [1, 1, None]
    # %e and the pieces are read only for their shapes: the group stores none of them,
    # their metas come from the group's inputs (piece 0 of the chunked mul-add for %e
    # and the first piece, piece 1 for the second)
    (group,) = [n for n in g.nodes() if n.kind == "prim::FusionGroup"]
    assert len(group.outputs) == 1
    assert [n.kind for n in g.nodes()].count("prim::BroadcastMeta") == 2
    args = tensors(g)
    got, want = run_graph(g, args), run_graph(parse_ir(text), args)
    np.testing.assert_allclose(got[0].numpy(), want[0].numpy(), rtol=1e-6)
    for m, w in zip(got[1:], want[1:]):
        assert (m.shape, m.dtype, m.device) == (w.shape, w.dtype, w.device)


def test_broadcasting_chunk_errors_are_shape_errors():
    from ember.errors import ShapeError
    from ember.jit.fuser import broadcasting_chunk
    x, b = E.ones(2, 8), E.arange(8.0)
    pieces = broadcasting_chunk([x, b], 4, 1, 4)
    assert [tuple(p.shape) for p in pieces] == [(2, 2)] * 8
    np.testing.assert_array_equal(pieces[5].numpy(), [[2.0, 3.0]] * 2)
    with pytest.raises(ShapeError, match="do not broadcast"):
        broadcasting_chunk([x, E.ones(3)], 4, 1, 4)
    with pytest.raises(ShapeError, match="gives 3 pieces; the graph unpacks 4"):
        broadcasting_chunk([E.ones(2, 6)], 4, 1, 4)


def test_nested_blocks_get_their_own_groups(fuser):
    check(f"""graph(%x : {F}, %k : bool):
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
    args = tensors(g)
    want = run_graph(parse_ir(CHAIN), args)[0].numpy()
    np.testing.assert_allclose(run_graph(g, args)[0].numpy(), want, rtol=1e-6)
    assert "no fuser is registered for device type 'cpu'" in fusion_fallbacks()[-1].reason


def test_shared_producer_joins_after_its_other_user(fuser):
    check(f"""graph(%x : {F}, %y : {F}):
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
