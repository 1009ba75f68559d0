"""The slicing, splitting, joining and reordering symbolics
(``ember/onnx/symbolics/slicing.py``): each op exported, checked and run in onnxruntime
against ember, in float32, int64 and bool, at opsets 13, 17 and 18, with a dynamic batch
where sizes follow it, and each refusal."""
from __future__ import annotations

import pytest

import ember as E
import ember.onnx as eo
from ember.onnx.context import GraphContext, OnnxValue
from ember.onnx.symbolics import indexing, slicing

from .._check import check_export, ops_in
from ._shared import SLICING_CASES, SLICING_DYNAMIC, data


@pytest.mark.parametrize("name", sorted(SLICING_CASES))
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_static(name, dtype):
    check_export(SLICING_CASES[name], (data((2, 3, 4), dtype),))


@pytest.mark.parametrize("name", sorted(SLICING_CASES))
@pytest.mark.parametrize("opset", [13, 18])
def test_static_opsets(name, opset):
    check_export(SLICING_CASES[name], (data((2, 3, 4)),), opset_version=opset)


@pytest.mark.parametrize("opset", [13, 17, 18])
def test_split_chunk_unbind_ops(opset):
    """One Split node with its sizes as an input at every opset (18 added num_outputs)."""
    x = data((2, 3, 4))
    m = check_export(lambda x: x.chunk(2, 2), (x,), opset_version=opset)
    assert ops_in(m) == ["Constant", "Split"]
    split = next(n for n in m.graph.node if n.op_type == "Split")
    assert len(split.input) == 2 and not split.attribute[1:]
    m = check_export(lambda x: x.split([1, 3], 2), (x,), opset_version=opset)
    assert ops_in(m) == ["Constant", "Split"]
    m = check_export(lambda x: x.unbind(0), (x,), opset_version=opset)
    assert ops_in(m).count("Squeeze") == 2


# ---- chunk and select in depth ---------------------------------------------------------------

def test_chunk_every_size():
    """Every size 0..7 of the chunked dim against 1..4 chunks (fewer pieces when ceil
    leaves nothing for the last ones, empty pieces for an empty dim), dims 0 and -1."""
    for n in range(8):
        x = data((n, 2))
        for chunks in range(1, 5):
            check_export(lambda x: x.chunk(chunks, 0), (x,))
            check_export(lambda x: x.t().chunk(chunks, -1), (x,))


@pytest.mark.parametrize("opset", [13, 17, 18])
def test_chunk_with_a_dynamic_batch(opset):
    x, x2 = data((4, 6, 5)), data((7, 6, 5), seed=1)
    for dim, chunks in [(1, 4), (2, 2), (-1, 5), (1, 1)]:
        check_export(lambda x: x.chunk(chunks, dim), (x,), opset_version=opset,
                     dynamic_axes={0: [0]}, more_inputs=(x2,))
    # along the batch itself: the piece size is ceil(batch / chunks) at run time
    for batch in (5, 6):   # 2 pieces at 4, 5 and 6
        check_export(lambda x: x.chunk(2, 0), (x,), opset_version=opset,
                     dynamic_axes={0: [0]}, more_inputs=(data((batch, 6, 5)),))
    check_export(lambda x: x.chunk(3, 0), (data((7, 2)),), opset_version=opset,
                 dynamic_axes={0: [0]}, more_inputs=(data((9, 2)),))   # 3 pieces at 7-9


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_select_every_index(dtype):
    x = data((2, 3, 4), dtype)
    for dim in range(-3, 3):
        n = x.shape[dim]
        for i in range(-n, n):
            m = check_export(lambda x: x.select(dim, i), (x,))
            assert ops_in(m) == ["Constant", "Gather"]


def test_select_with_a_dynamic_batch():
    x, x2 = data((4, 3)), data((6, 3), seed=1)
    for dim, i in [(1, 0), (1, -1), (0, 0), (0, -1), (0, -4), (0, 3)]:
        check_export(lambda x: x.select(dim, i), (x,), dynamic_axes={0: [0]},
                     more_inputs=(x2,))
    check_export(lambda x: x.select(0, 0).select(0, 2), (x,))   # to a 0-d tensor


# ---- a dynamic batch -----------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SLICING_DYNAMIC))
def test_dynamic_batch(name):
    check_export(SLICING_DYNAMIC[name], (data((4, 3, 4)),), dynamic_axes={0: [0]},
                 more_inputs=(data((6, 3, 4), seed=1),))


@pytest.mark.parametrize("name", ["chunk_static_dim", "narrow_length", "split_rest_first",
                                  "roll_batch"])
@pytest.mark.parametrize("opset", [13, 18])
def test_dynamic_batch_opsets(name, opset):
    check_export(SLICING_DYNAMIC[name], (data((4, 3, 4), "int64"),), opset_version=opset,
                 dynamic_axes={0: [0]}, more_inputs=(data((7, 3, 4), "int64", seed=1),))


# ---- refusals ------------------------------------------------------------------------------

REFUSED = {   # x of shape (4, 3, 4), dim 0 dynamic -> error message
    "narrow_short": (lambda x: x.narrow(0, 0, x.shape[0] - 1), "narrow: start 0"),
    "select_batch": (lambda x: x.select(0, x.shape[0] - 1), "select: index 3"),
    "split_size": (lambda x: x.split(x.shape[0], 0), "split: split_size 4"),
    "split_two": (lambda x: x.flatten(1).split([x.shape[0], 12 - x.shape[0]], 1),
                  "split: sizes"),
    "roll_shift": (lambda x: x.roll(x.shape[0], 1), "roll: a shift"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused(name):
    fn, match = REFUSED[name]
    with pytest.raises(eo.OnnxExportError, match=match):
        check_export(fn, (data((4, 3, 4)),), dynamic_axes={0: [0]})


def test_split_by_size_along_the_batch_is_refused():
    # the number of pieces follows the batch (5 -> [3, 2], 10 -> [3, 3, 3, 1]): no single
    # ONNX graph has a fixed output count for it
    with pytest.raises(eo.OnnxExportError, match="depends on the sizes"):
        check_export(lambda x: x.split(3, 0), (E.tensor(data((5, 3, 4))),),
                     dynamic_axes={0: [0]})


def bound(opset=17, variation=()):
    """A GraphContext bound as for a node, to call a symbolic on values the tracer never
    produces (sizes unknown, a dynamic unbind)."""
    g = GraphContext(opset)
    g._bind(None, (OnnxValue("", None, None),), tuple(variation))
    return g


def test_unknown_sizes_and_dynamic_unbind_are_refused():
    unknown = OnnxValue("x", E.float32, None)
    with pytest.raises(eo.OnnxExportError, match="sizes are unknown"):
        slicing.narrow(bound(), unknown, 0, 0, 1)
    with pytest.raises(eo.OnnxExportError, match="sizes of the inputs are unknown"):
        indexing.scatter(bound(), OnnxValue("x", E.float32, (2, 3)), 0,
                         OnnxValue("i", E.int64, (1, 3)), unknown)
    batch = OnnxValue("x", E.float32, (4, 3), (True, False))
    with pytest.raises(eo.OnnxExportError, match="unbind along a dynamic axis"):
        slicing.unbind(bound(), batch, 0)
