"""fusion_metas: metas sink past fusible chains, and a group stores no output that only
metas read (its meta is computed from the group's inputs: prim::BroadcastMeta).

The graphs are written as autodiff's forward writes them (values in the middle of a chain
read by ``prim::TensorMeta``); a reference fuser stands in for the Triton one, and each
rewritten graph is run against the original: same results, metas of the same shape,
dtype and device.
"""
import pytest

import ember as E
from ember.errors import ShapeError
from ember.jit.autodiff.differentiable_graph import broadcast_meta, cat_meta, tensor_meta
from helpers import fused_graph


def kinds(g) -> list:
    return [n.kind for n in g.nodes()]


def group_of(g):
    (group,) = [n for n in g.nodes() if n.kind == "prim::FusionGroup"]
    return group


CHAIN = """graph(%x : Float(3, 1, device=cpu), %y : Float(4, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %a : Float(3, 4, device=cpu) = ember::mul(%x, %y)
  %am : Any = prim::TensorMeta(%a)
  %b : Float(3, 4, device=cpu) = ember::sigmoid(%a)
  %bm : Any = prim::TensorMeta(%b)
  %r : Any = prim::ReduceMeta(%am, %bm)
  %c : Float(3, 4, device=cpu) = ember::add(%b, %x, %one)
  return (%c, %r, %am)"""


def test_outputs_read_only_by_metas_are_not_stored(fuser):
    g = fused_graph(CHAIN)
    assert kinds(g).count("prim::FusionGroup") == 1
    assert len(group_of(g).outputs) == 1  # %c only: %a and %b were stored for metas
    assert kinds(g).count("prim::BroadcastMeta") == 1  # %a and %b share one recipe
    assert "prim::TensorMeta" not in kinds(g)


def test_an_output_read_elsewhere_stays(fuser):
    g = fused_graph(CHAIN.replace("return (%c, %r, %am)", "return (%c, %r, %am, %b)"))
    assert len(group_of(g).outputs) == 2
    assert kinds(g).count("prim::BroadcastMeta") == 1  # %a's meta still comes from inputs


@pytest.mark.parametrize("op", ["ember::type_as(%x, %y)", "ember::masked_fill(%x, %m, %one)"])
def test_ops_that_do_not_broadcast_keep_their_output(fuser, op):
    # type_as has its first operand's shape; masked_fill is kept out too
    text = f"""graph(%x : Float(3, 4, device=cpu), %y : Float(4, device=cpu),
          %m : Bool(3, 4, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %a : Float(3, 4, device=cpu) = {op}
  %am : Any = prim::TensorMeta(%a)
  %b : Float(3, 4, device=cpu) = ember::exp(%a)
  return (%b, %am)"""
    g = fused_graph(text)
    assert kinds(g).count("prim::FusionGroup") == 1 and "prim::BroadcastMeta" not in kinds(g)
    assert len(group_of(g).outputs) == 2


def test_unknown_dtype_keeps_the_output(fuser):
    g = fused_graph(CHAIN.replace("%a : Float(3, 4, device=cpu)", "%a : Tensor(device=cpu)"))
    group = group_of(g)
    (meta,) = [n for n in g.nodes() if n.kind == "prim::TensorMeta"]
    assert meta.input().node is group  # %a is stored for its meta; %b's is computed
    assert len(group.outputs) == 2 and kinds(g).count("prim::BroadcastMeta") == 1


def test_uneven_chunk_pieces_and_cat_meta(fuser):
    # chunk(5, 2) pieces are 3 and 2 wide; their metas and the list's meta must say so
    text = """graph(%x : Float(2, 5, device=cpu), %y : Float(2, 5, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %s : Float(2, 5, device=cpu) = ember::add(%x, %y, %one)
  %l : Tensor[] = ember::chunk(%s, %two, %one)
  %lm : Any = prim::TensorMeta(%l)
  %a : Float(2, 3, device=cpu), %c : Float(2, 2, device=cpu) = prim::ListUnpack(%l)
  %e : Float(2, 3, device=cpu) = ember::tanh(%a)
  %em : Any = prim::TensorMeta(%e)
  %cm : Any = prim::TensorMeta[cat_dim=1](%e, %c)
  %p : Float(2, 2, device=cpu) = ember::sigmoid(%c)
  return (%p, %lm, %em, %cm)"""
    g = fused_graph(text)
    # the pieces feed two chains; the one computing %e is read only for its shape, so
    # its group goes and both metas come from the BroadcastingChunk's pieces
    assert kinds(g).count("prim::FusionGroup") == 1
    assert len(group_of(g).outputs) == 1
    assert kinds(g).count("prim::BroadcastMeta") == 2


def test_broadcast_meta_runtime():
    a, b, c = E.ones(3, 1), E.ones(4), E.ones(3, 10, dtype=E.float64)
    m = broadcast_meta((a, b), (0, 0, 0, 1), E.float64)
    assert (m.shape, m.dtype, m.device) == (E.Size([3, 4]), E.float64, a.device)
    # piece 3 of chunk(4, dim 1) of broadcast(c, a): 10 = 3 + 3 + 3 + 1
    m = broadcast_meta((c, a), (1, 4, 1, 3, 2, 0, 1), E.float32)
    assert m.shape == E.Size([3, 1]) and m.dtype == E.float32
    m = broadcast_meta((c,), (1, 4, -1, 1, 1, 0), E.float32)
    assert m.shape == E.Size([3, 3])
    with pytest.raises(ShapeError, match="do not broadcast"):
        broadcast_meta((E.ones(3), E.ones(4)), (0, 0, 0, 1), E.float32)


def test_meta_prims_take_metas_for_tensors():
    x, y = E.ones(2, 3), E.ones(2, 5)
    assert cat_meta([tensor_meta(x), y], 1).shape == E.Size([2, 8])
    items = tensor_meta([tensor_meta(x), y])
    assert items.shape == [E.Size([2, 3]), E.Size([2, 5])]
