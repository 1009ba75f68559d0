"""fuse_concat: a cat of pieces that groups compute becomes one group ending in
prim::FusedConcat (run through FuseGraph with the reference fuser, as the pass runs)."""
import importlib

import numpy as np
import pytest

import ember as E
from ember.errors import ShapeError
from ember.jit.runtime.fuser import FUSED_CONCAT, using_fuser
from ember.jit.runtime.interpreter import JitRuntimeError, run_graph
from ember.jit.ir.parser import parse_ir
from ember.jit.passes.fuse_graph import fuse_graph
from helpers import ReferenceFuser, backward_graphs, fused_graph, literal_blocks

F = "Float(2, 4, device=cpu)"


def kinds(graph) -> list:
    return [n.kind for n in graph.nodes() if n.kind != "prim::Constant"]


def concat_nodes(graph) -> list:
    return [n for group in graph.nodes() if group.kind == "prim::FusionGroup"
            for n in group.g("Subgraph").nodes() if n.kind == FUSED_CONCAT]


def group_kinds(graph) -> list:
    groups = [n for n in graph.nodes() if n.kind == "prim::FusionGroup"]
    return [kinds(g.g("Subgraph")) for g in groups]


def test_docstring_example(fuser):
    before, after = literal_blocks(importlib.import_module(
        "ember.jit.passes.fuse_concat").__doc__)
    g = fused_graph(before)
    assert str(g) == after


def cat_of(pieces: str, dim: int = 1, extra: str = "", out: str = "%c",
           sizes: str = "Float(2, 8, device=cpu)") -> str:
    """A graph of %x, %y (2, 4): %s = sigmoid(x * y), %t = tanh(x - y), then
    ``cat([pieces], dim)``, then ``extra`` lines, returning ``out``."""
    return f"""graph(%x : {F}, %y : {F}):
  %one : int = prim::Constant[value=1]()
  %dim : int = prim::Constant[value={dim}]()
  %a : {F} = ember::mul(%x, %y)
  %s : {F} = ember::sigmoid(%a)
  %b : {F} = ember::sub(%x, %y, %one)
  %t : {F} = ember::tanh(%b)
  %l : Tensor[] = prim::ListConstruct({pieces})
  %c : {sizes} = ember::cat(%l, %dim)
{extra}  return ({out})"""


@pytest.mark.parametrize("dim, sizes", [(0, "Float(4, 4, device=cpu)"),
                                        (1, "Float(2, 8, device=cpu)"),
                                        (-1, "Float(2, 8, device=cpu)")])
def test_sibling_groups_become_one(fuser, dim, sizes):
    g = fused_graph(cat_of("%s, %t", dim=dim, sizes=sizes))
    assert kinds(g) == ["prim::FusionGroup"]
    (inner,) = group_kinds(g)
    assert inner[-1] == FUSED_CONCAT and sorted(inner[:-1]) == sorted(
        ["ember::mul", "ember::sigmoid", "ember::sub", "ember::tanh"])
    (concat,) = concat_nodes(g)
    assert concat.attr("dim") == dim


def test_a_piece_read_after_the_cat_is_also_a_group_output(fuser):
    g = fused_graph(cat_of("%s, %t", out="%c, %s"))
    (group,) = [n for n in g.nodes() if n.kind == "prim::FusionGroup"]
    assert [v.debug_name for v in group.outputs] == ["c", "s"]


def test_input_pieces_join_as_group_inputs(fuser):
    # %x is not computed: it enters the group and the kernel copies it into its slice
    g = fused_graph(cat_of("%s, %x, %s", sizes="Float(2, 12, device=cpu)"))
    (group,) = [n for n in g.nodes() if n.kind == "prim::FusionGroup"]
    assert kinds(group.g("Subgraph")) == ["ember::mul", "ember::sigmoid", FUSED_CONCAT]
    assert [v.debug_name for v in group.inputs] == ["x", "y"]


@pytest.mark.parametrize("why, text", [
    ("no piece is computed by a fusible op", cat_of("%x, %y")),
    ("the list has another reader",
     cat_of("%s, %t", extra="  %n : int = ember::len(%l)\n", out="%c, %n")),
    ("the dim is not a constant",
     cat_of("%s, %t").replace("graph(%x", "graph(%d : int, %x")
     .replace("ember::cat(%l, %dim)", "ember::cat(%l, %d)")),
])
def test_cats_left_alone(fuser, why, text):
    g = parse_ir(text)
    fuse_graph(g)
    g.lint()
    assert "ember::cat" in kinds(g), why
    assert not concat_nodes(g), why


def test_producer_with_a_use_before_the_cat_stays_out(fuser):
    # %s is read by mm before the cat: its group cannot move to the cat's place
    text = cat_of("%s, %t").replace(
        "  %l : Tensor[]", "  %m : Float(2, 2, device=cpu) = ember::mm(%s, %w)\n  %l : Tensor[]"
    ).replace(f"%y : {F})", f"%y : {F}, %w : Float(4, 2, device=cpu))").replace(
        "return (%c)", "return (%c, %m)")
    g = fused_graph(text)
    groups = group_kinds(g)
    assert ["ember::mul", "ember::sigmoid"] in groups
    assert ["ember::sub", "ember::tanh", FUSED_CONCAT] in groups


def test_no_fuser_no_change():
    text = cat_of("%s, %t")
    g = parse_ir(text)
    fuse_graph(g)
    assert str(g) == str(parse_ir(text))


def test_a_concat_group_is_not_merged_into_a_later_consumer(fuser):
    # run FuseGraph twice: the second walk must not pull the FusedConcat group into the
    # mul that reads the whole buffer
    text = cat_of("%s, %t", extra="  %d : Float(2, 8, device=cpu) = ember::mul(%c, %c)\n"
                  "  %e : Float(2, 8, device=cpu) = ember::exp(%d)\n", out="%e")
    g = fused_graph(text)
    fuse_graph(g)
    g.lint()
    groups = group_kinds(g)
    assert sorted(map(len, groups)) == [2, 5], groups
    assert ["ember::mul", "ember::exp"] in groups


def test_unfused_concat_raises_cats_error(fuser):
    g = fused_graph(f"""graph(%x : {F}, %y : {F}):
  %zero : int = prim::Constant[value=0]()
  %a : {F} = ember::exp(%x)
  %s : {F} = ember::sigmoid(%a)
  %b : {F} = ember::exp(%y)
  %t : {F} = ember::tanh(%b)
  %l : Tensor[] = prim::ListConstruct(%s, %t)
  %c : Float(4, 4, device=cpu) = ember::cat(%l, %zero)
  return (%c)""")
    assert len(concat_nodes(g)) == 1
    x, y = E.ones(2, 4), E.ones(3, 5)  # pieces (2, 4) and (3, 5) do not cat along dim 0
    with pytest.raises(JitRuntimeError, match=r"FusedConcat failed: ShapeError: cat\(\): "
                       r"sizes of tensors must match") as info:
        run_graph(g, [x, y])
    assert isinstance(info.value.__cause__, ShapeError)


def test_lstm_backward_is_one_group_with_exact_gradients(fuser):
    rng = np.random.default_rng(2)
    shapes = [(2, 4), (2, 4), (2, 4), (16, 4), (16, 4), (16,)]
    arrays = [rng.standard_normal(s) for s in shapes]
    seeds = [E.tensor(rng.standard_normal((2, 4))) for _ in range(2)]

    def cell(x, hx, cx, w_ih, w_hh, b):
        gates = x @ w_ih.t() + hx @ w_hh.t() + b
        i, f, g, o = gates.chunk(4, 1)
        cy = f.sigmoid() * cx + i.sigmoid() * g.tanh()
        return o.sigmoid() * cy.tanh(), cy

    eager = [E.tensor(a).requires_grad_() for a in arrays]
    E.autograd.backward(list(cell(*eager)), seeds)
    leaves = [E.tensor(a).requires_grad_() for a in arrays]
    traced = E.jit.trace(cell, tuple(leaves))
    for _ in range(2):  # the second call runs the optimized plans
        for t in leaves:
            t.grad = None
        E.autograd.backward(list(traced(*leaves)), seeds)
    for got, want in zip(leaves, eager):
        np.testing.assert_array_equal(got.grad.numpy(), want.grad.numpy())
    backward = backward_graphs(traced)
    assert backward
    for g in backward:
        assert kinds(g).count("prim::FusionGroup") == 1
        assert "ember::cat" not in kinds(g)
        assert len(concat_nodes(g)) == 1


def test_reference_fuser_compiles_concat_groups():
    f = ReferenceFuser()
    with using_fuser("cpu", f):
        fused_graph(cat_of("%s, %t"))
    assert any(FUSED_CONCAT in [n.kind for n in sg.nodes()] for sg in f.compiled)
