"""The shape and view symbolics (``ember/onnx/symbolics/shape.py``): each op exported,
checked and run in onnxruntime against ember, in float32, int64 and bool, at opsets 13, 17
and 18, with a dynamic batch where sizes follow it, and each refusal. How a traced size
that follows a dynamic axis is written (0, -1, read at run time) is checked here for the
slicing and indexing ops too; ``_to_copy`` with a device, which a trace does not record,
through an IR graph built by hand."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.onnx as eo

from .._check import assert_close, check_export, ops_in, run_onnx
from ._shared import CASES, DYNAMIC, SHAPE_CASES, SHAPE_DYNAMIC, data, export_ir


def test_composites_trace_as_themselves():
    """The composites keep their own kinds in the trace (so they need symbolics); .T, .mT,
    iteration and .to decompose into permute, transpose, unbind and _to_copy."""
    x = data((2, 3, 4))
    kinds = {name: [n.kind for n in E.jit.trace(CASES[name], (x,), check_trace=False)
                    .graph.nodes() if not n.kind.startswith("prim::")]
             for name in ("view_as", "reshape_as", "swapaxes", "swapdims", "moveaxis",
                          "expand_as", "type_as_int", "T", "mT", "iterate", "to_int32")}
    assert kinds["view_as"] == ["ember::view_as"]
    assert kinds["reshape_as"] == ["ember::reshape_as"]
    assert kinds["swapaxes"] == ["ember::swapaxes"]
    assert kinds["swapdims"] == ["ember::swapdims"]
    assert kinds["moveaxis"] == ["ember::moveaxis"]
    assert kinds["expand_as"] == ["ember::index", "ember::expand_as"]
    assert kinds["type_as_int"] == ["ember::type_as"]
    assert kinds["T"] == ["ember::index", "ember::permute"]
    assert kinds["mT"] == ["ember::transpose"]
    assert kinds["iterate"] == ["ember::unbind"]
    assert kinds["to_int32"] == ["ember::_to_copy"]


@pytest.mark.parametrize("name", sorted(SHAPE_CASES))
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_static(name, dtype):
    check_export(SHAPE_CASES[name], (data((2, 3, 4), dtype),))


@pytest.mark.parametrize("name", sorted(SHAPE_CASES))
@pytest.mark.parametrize("opset", [13, 18])
def test_static_opsets(name, opset):
    check_export(SHAPE_CASES[name], (data((2, 3, 4)),), opset_version=opset)


def test_mapped_ops():
    x = data((2, 3, 4))
    assert ops_in(check_export(CASES["view"], (x,))) == ["Constant", "Reshape"]
    assert ops_in(check_export(CASES["flatten_1"], (x,))) == ["Flatten"]
    assert ops_in(check_export(CASES["permute"], (x,))) == ["Transpose"]
    assert ops_in(check_export(CASES["clone"], (x,))) == []
    assert ops_in(check_export(CASES["reshape_same"], (x,))) == []
    assert ops_in(check_export(CASES["transpose_same"], (x,))) == []
    assert ops_in(check_export(CASES["select"], (x,))) == ["Constant", "Gather"]
    assert ops_in(check_export(CASES["to_float64"], (x,))) == ["Cast"]
    assert ops_in(check_export(CASES["type_as_float"], (x,))) == ["Constant"]  # no Cast
    assert ops_in(check_export(CASES["index_int"], (x,))).count("Slice") == 1
    assert "Tile" in ops_in(check_export(CASES["repeat"], (x,)))
    assert "GatherElements" in ops_in(check_export(CASES["gather"], (x,)))
    assert "ScatterElements" in ops_in(check_export(CASES["scatter_value"], (x,)))


# ---- type_as in depth ------------------------------------------------------------------------

TYPES = [E.float32, E.float64, E.int64, E.int32, E.int8, E.uint8, E.bool]


@pytest.mark.parametrize("src", TYPES, ids=lambda t: t.name)
def test_type_as_every_pair(src):
    vals = np.array([[-3.7, -1.0, 0.0, 0.4], [1.0, 2.5, 7.9, 100.0]])
    if src in (E.uint8, E.bool):
        vals = np.abs(vals)
    x = E.tensor(vals.astype(src.numpy))
    for dst in TYPES:
        other = E.zeros(1, dtype=dst)
        m = check_export(lambda x: x.type_as(other), (x,))
        assert ops_in(m) == ["Constant"] + (["Cast"] if dst is not src else [])
        check_export(lambda x: x.to(dst), (x,))


def test_type_as_of_two_inputs_with_a_dynamic_batch():
    x, y = data((4, 3)), data((2,), "int64")
    check_export(lambda x, y: (x.type_as(y), y.type_as(x)), (x, y), dynamic_axes={0: [0]},
                 more_inputs=(data((6, 3), seed=1), y))


# ---- a dynamic batch -----------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SHAPE_DYNAMIC))
def test_dynamic_batch(name):
    check_export(SHAPE_DYNAMIC[name], (data((4, 3, 4)),), dynamic_axes={0: [0]},
                 more_inputs=(data((6, 3, 4), seed=1),))


@pytest.mark.parametrize("name", ["view_batch", "reshape_last", "expand_batch"])
@pytest.mark.parametrize("opset", [13, 18])
def test_dynamic_batch_opsets(name, opset):
    check_export(SHAPE_DYNAMIC[name], (data((4, 3, 4), "int64"),), opset_version=opset,
                 dynamic_axes={0: [0]}, more_inputs=(data((7, 3, 4), "int64", seed=1),))


@pytest.mark.parametrize("batch", [1, 2])
def test_dynamic_batch_small(batch):
    """Sizes computed at run time hold at small batches too (not chunk along the batch:
    ember gives fewer pieces there, ONNX an empty last one)."""
    names = ["view_batch", "reshape_permuted", "expand_batch", "expand_other_dim",
             "split_rest_first", "roll_batch", "index_to_size", "flatten_01"]
    for name in names + (["narrow_start"] if batch == 2 else []):
        check_export(DYNAMIC[name], (data((4, 3, 4)),), dynamic_axes={0: [0]},
                     more_inputs=(data((batch, 3, 4), seed=1),))


def test_dynamic_sizes_use_zero_minus_one_and_shape():
    x, x2 = data((4, 3, 4)), data((5, 3, 4), seed=1)

    def target(fn):
        m = check_export(fn, (x,), dynamic_axes={0: [0]}, more_inputs=(x2,))
        return m, ops_in(m)

    m, ops = target(DYNAMIC["view_batch"])
    assert ops == ["Constant", "Reshape"]
    assert list(onnx_const(m, 0)) == [0, -1]                   # 0: copy the batch
    m, ops = target(DYNAMIC["view_product"])
    assert "Mul" in ops                          # x.shape[0] * 3 computed at run time
    m, ops = target(DYNAMIC["reshape_permuted"])
    assert "Shape" in ops                                      # batch read at run time
    m, ops = target(DYNAMIC["expand_batch"])
    assert list(onnx_const(m, -1)) == [1, 3, 4]                # 1: keep the batch
    m, ops = target(DYNAMIC["chunk_static_dim"])
    assert "Shape" not in ops
    m, ops = target(DYNAMIC["chunk_batch"])
    assert "Div" in ops                                        # ceil(size / chunks)


def onnx_const(model, i):
    from onnx import numpy_helper
    consts = [n for n in model.graph.node if n.op_type == "Constant"]
    return numpy_helper.to_array(consts[i].attribute[0].t)


# ---- refusals ------------------------------------------------------------------------------

REFUSED = {   # x of shape (4, 3, 4), dim 0 dynamic -> error message
    "repeat_batch": (lambda x: x.repeat(x.shape[0], 1, 1), "repeat: a repeat count"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused(name):
    fn, match = REFUSED[name]
    with pytest.raises(eo.OnnxExportError, match=match):
        check_export(fn, (data((4, 3, 4)),), dynamic_axes={0: [0]})


# refused while a trace baked sizes in; now the graph computes them (symbolics/sizes.py)
@pytest.mark.parametrize("fn", [lambda x: x.view(x.shape[0] * 2, -1),
                                lambda x: x[0, :1].expand(x.shape[0], 4)])
def test_sizes_computed_in_the_graph(fn):
    check_export(fn, (data((4, 3, 4)),), dynamic_axes={0: [0]},
                 more_inputs=(data((6, 3, 4), seed=1),))


@pytest.mark.parametrize("fn", [lambda x: x.squeeze(), lambda x: x.squeeze(0)])
def test_squeeze_of_a_dynamic_dim_of_size_1_is_refused(fn):
    with pytest.raises(eo.OnnxExportError, match="squeeze of dim 0"):
        check_export(fn, (data((1, 3)),), dynamic_axes={0: [0]})


def test_reshape_to_size_0_needs_opset_14():
    x = data((2, 3, 4))
    fn = lambda x: x[:, :0].reshape(0, 5)   # noqa: E731
    with pytest.raises(eo.OnnxExportError, match="opset_version >= 14"):
        check_export(fn, (x,), opset_version=13)
    check_export(fn, (x,), opset_version=14)
    check_export(lambda x: x[:0].reshape(0, 12), (x,), opset_version=13)  # 0 copies a 0


# ---- IR graphs built by hand (what the tracer cannot record yet) -----------------------------

@pytest.mark.parametrize("device", ["cuda", "cuda:1", E.Device("cuda", 0)],
                         ids=["name", "name_index", "Device"])   # "cuda" ids mean a GPU test
def test_to_another_device_is_refused(device):
    x = data((2, 3))
    with pytest.raises(eo.OnnxExportError, match="ONNX models have no device"):
        export_ir("ember::_to_copy", [x, E.float64, device], x.double())


def test_to_with_cpu_device_in_ir():
    x = data((2, 3))
    model, arrays = export_ir("ember::_to_copy", [x, E.int64, E.Device("cpu")], x.long())
    assert_close(run_onnx(model, arrays)[0], x.long().numpy())
