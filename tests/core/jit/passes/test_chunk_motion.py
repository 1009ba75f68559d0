"""chunk_motion: a chunk of a pointwise op's result moves above the op (PyTorch's
tryToMoveChunk), so the chunk cuts group inputs; run through FuseGraph with the reference
fuser, as the pass runs."""
import numpy as np

from ember.jit.runtime.interpreter import run_graph
from ember.jit.ir.parser import parse_ir
from ember.jit.passes.fuse_graph import fuse_graph
from helpers import assert_fuses_to, graph_inputs

G = "Float(2, 8, device=cpu)"
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
    assert_fuses_to(MOVABLE, f"""graph(%x : {G}, %y : {G}, %b : {B8}):
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
    import ember.jit.autodiff.autodiff_prims  # noqa: F401 - runs prim::TensorMeta
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
    args = graph_inputs(g)
    got, want = run_graph(g, args), run_graph(parse_ir(text), args)
    np.testing.assert_allclose(got[0].numpy(), want[0].numpy(), rtol=1e-6)
    for m, w in zip(got[1:], want[1:]):
        assert (m.shape, m.dtype, m.device) == (w.shape, w.dtype, w.device)
