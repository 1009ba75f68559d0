"""The shape, view, slicing and indexing symbolics (``ember/onnx/symbolics/shape.py``,
``slicing.py``, ``indexing.py``): each op exported, checked and run in onnxruntime against
ember, in float32, int64 and bool, at opsets 13, 17 and 18, with a dynamic batch where
sizes follow it, and each refusal.

Index tensors in ``x[...]`` do not trace yet (``ember/_indexing.py`` records the index
arrays, which no IR constant can hold), so those tests build the IR graph the tracer
would record (``ember::index`` of a ``prim::ListConstruct``) and export it."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.onnx as eo
from ember.jit.ir import Graph
from ember.jit.ir_types import AnyType, ListType, TensorType
from ember.jit.kinds import prim
from ember.onnx.context import GraphContext, OnnxValue
from ember.onnx.export import export_graph
from ember.onnx.symbolics import indexing, slicing

from .._check import assert_close, check_export, ops_in, run_onnx


def data(shape, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "float32":
        a = rng.standard_normal(shape).astype(np.float32)
    elif dtype == "int64":
        a = rng.integers(-9, 9, shape).astype(np.int64)
    else:
        a = rng.random(shape) > 0.5
    return E.tensor(a)


I = E.tensor   # index tensors made inside the model become constants

# name -> fn of x, x of shape (2, 3, 4); each runs in float32, int64 and bool
CASES = {
    "view": lambda x: x.view(6, 4),
    "view_flat": lambda x: x.view(-1),
    "view_0d": lambda x: x[0, 0, :1].view(()),
    "reshape": lambda x: x.reshape(4, -1, 2),
    "reshape_same": lambda x: x.reshape(2, 3, 4),
    "view_as": lambda x: x.view_as(E.zeros(6, 4)),
    "reshape_as": lambda x: x.reshape_as(E.zeros(3, 8)),
    "flatten": lambda x: x.flatten(),
    "flatten_1": lambda x: x.flatten(1),
    "flatten_01": lambda x: x.flatten(0, 1),
    "flatten_neg": lambda x: x.flatten(-2, -1),
    "flatten_same": lambda x: x.flatten(1, 1),
    "flatten_0d": lambda x: x[0, 0, 0].flatten(),
    "unflatten": lambda x: x.unflatten(2, (2, 2)),
    "unflatten_neg": lambda x: x.unflatten(-1, (-1, 2)),
    "unflatten_0": lambda x: x.unflatten(0, (1, 2)),
    "permute": lambda x: x.permute(2, 0, 1),
    "permute_neg": lambda x: x.permute(-1, 0, -2),
    "transpose": lambda x: x.transpose(0, 2),
    "transpose_neg": lambda x: x.transpose(-1, -2),
    "transpose_same": lambda x: x.transpose(1, 1),
    "mT": lambda x: x.mT,
    "swapaxes": lambda x: x.swapaxes(0, 1),
    "swapdims": lambda x: x.swapdims(2, 0),
    "t": lambda x: x[0].t(),
    "t_1d": lambda x: x[0, 0].t(),
    "T": lambda x: x[0].T,
    "movedim": lambda x: x.movedim(0, 2),
    "movedim_list": lambda x: x.movedim((0, 1), (2, 0)),
    "moveaxis": lambda x: E.moveaxis(x, -1, 0),
    "squeeze_all": lambda x: x[:, :1].squeeze(),
    "squeeze_dim": lambda x: x[:, :1].squeeze(1),
    "squeeze_kept": lambda x: x.squeeze(0),
    "squeeze_list": lambda x: x[:1, :1].squeeze((0, -1, 1)),
    "unsqueeze": lambda x: x.unsqueeze(0),
    "unsqueeze_neg": lambda x: x.unsqueeze(-1),
    "unsqueeze_mid": lambda x: x.unsqueeze(-3),
    "expand": lambda x: x[:, :1].expand(2, 3, 4),
    "expand_keep": lambda x: x[:, :1].expand(-1, 5, -1),
    "expand_lead": lambda x: x[0].expand(2, 2, 3, 4),
    "expand_as": lambda x: x[:1].expand_as(x),
    "contiguous": lambda x: x.transpose(0, 1).contiguous(),
    "clone": lambda x: x.clone(),
    "narrow": lambda x: x.narrow(2, 1, 2),
    "narrow_neg": lambda x: x.narrow(1, -2, 2),
    "narrow_neg_mid": lambda x: x.narrow(-1, -3, 2),
    "narrow_empty": lambda x: x.narrow(0, 2, 0),
    "select": lambda x: x.select(1, 2),
    "select_neg": lambda x: x.select(-1, -1),
    "chunk": lambda x: x.chunk(2, 2),
    "chunk_uneven": lambda x: x.chunk(2, 1),
    "chunk_fewer": lambda x: x.chunk(3, 2),
    "chunk_one": lambda x: x.chunk(1, 0),
    "chunk_empty": lambda x: x[:, :, :0].chunk(2, 2),
    "split": lambda x: x.split(3, 2),
    "split_exact": lambda x: x.split(1, 0),
    "split_big": lambda x: x.split(5, 1),
    "split_sizes": lambda x: x.split([1, 3], 2),
    "split_sizes_neg": lambda x: E.split(x, [2, 0, 1], -2),
    "unbind": lambda x: x.unbind(1),
    "iterate": lambda x: list(x),
    "cat": lambda x: E.cat([x, x[:, :1]], 1),
    "cat_neg": lambda x: E.cat([x, x.flip(0), x], -1),
    "cat_one": lambda x: E.cat([x], 0),
    "cat_skip_empty": lambda x: E.cat([x[0, 0], x[0, 0, :0].flatten(), x[1, 1]]),
    "cat_promote": lambda x: E.cat([x, x.to(E.float64)], 0),
    "stack": lambda x: E.stack([x, x.flip(0)], 1),
    "stack_neg": lambda x: E.stack([x, x], -1),
    "stack_one": lambda x: E.stack([x]),
    "flip": lambda x: x.flip(0),
    "flip_multi": lambda x: x.flip((0, 2)),
    "flip_neg": lambda x: x.flip(-1),
    "roll": lambda x: x.roll(1, 0),
    "roll_neg": lambda x: x.roll(-1, 2),
    "roll_multi": lambda x: x.roll((1, -5), (0, 2)),
    "roll_flat": lambda x: x.roll(5),
    "roll_whole": lambda x: x.roll(4, 2),
    "repeat": lambda x: x.repeat(1, 2, 1),
    "repeat_lead": lambda x: x.repeat(2, 1, 1, 2),
    "repeat_ones": lambda x: x.repeat(1, 1, 1),
    "type_as_int": lambda x: x.type_as(I([1])),
    "type_as_float": lambda x: x.type_as(I([1.0])),
    "type_as_bool": lambda x: x.type_as(I([True])),
    "to_float64": lambda x: x.to(E.float64),
    "to_int32": lambda x: x.to(E.int32),
    "to_cpu_bool": lambda x: x.to("cpu", E.bool),
    "to_device_obj": lambda x: x.to(E.Device("cpu"), E.float32),
    "to_copy": lambda x: x.to(copy=True),
    "index_int": lambda x: x[1],
    "index_neg": lambda x: x[-1],
    "index_ints": lambda x: x[0, -1, 2],
    "index_slices": lambda x: x[1:, ::2, -3:-1],
    "index_steps": lambda x: x[:, 1::2, ::3],
    "index_clamp": lambda x: x[-10:10, :-5],
    "index_ellipsis": lambda x: x[..., 1],
    "index_none": lambda x: x[None, :, None, -1],
    "index_mixed": lambda x: x[0, None, 1:, None, ::2],
    "index_true": lambda x: x[True],
    "index_false": lambda x: x[:, False],
    "index_full": lambda x: x[:, :],
    "index_select": lambda x: x.index_select(1, I([2, 0, 2])),
    "index_select_0d": lambda x: x.index_select(-1, I(3)),
    "index_select_neg_dim": lambda x: x.index_select(-2, I([1])),
    "gather": lambda x: x.gather(2, I([[[0, 3], [1, 1], [2, 0]], [[3, 3], [0, 1], [2, 2]]])),
    "gather_smaller": lambda x: x.gather(1, I([[[0, 2], [1, 1]]])),
    "gather_int32": lambda x: x.gather(0, I([[[1, 0, 1, 0]]], dtype=E.int32)),
    "scatter": lambda x: x.scatter(2, I([[[0, 3], [1, 2], [3, 0]]] * 2), x.flip(0)),
    "scatter_smaller": lambda x: x.scatter(1, I([[[2, 0]]]), x),
    "scatter_value": lambda x: x.scatter(1, I([[[0, 2, 1, 0]]]), 1),
    "take_along_dim": lambda x: E.take_along_dim(x, I([[[0], [-1], [2]]]), 2),
    "take_along_dim_bcast": lambda x: E.take_along_dim(x[:1], I([[[1, 0, 3]]] * 2), -1),
    "take_along_dim_flat": lambda x: E.take_along_dim(x, I([[0, -1], [23, 5]])),
}


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


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_static(name, dtype):
    check_export(CASES[name], (data((2, 3, 4), dtype),))


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("opset", [13, 18])
def test_static_opsets(name, opset):
    check_export(CASES[name], (data((2, 3, 4)),), opset_version=opset)


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


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("opset", [16, 18])
def test_scatter_add(dtype, opset):
    x = data((2, 3, 4), dtype)
    m = check_export(lambda x: x.scatter_add(1, I([[[0, 0, 2, 0]], [[1, 1, 1, 1]]]), x), (x,),
                     opset_version=opset)
    node = next(n for n in m.graph.node if n.op_type == "ScatterElements")
    assert [a.s for a in node.attribute if a.name == "reduction"] == [b"add"]
    check_export(lambda x: x.scatter_add(2, I([[[3, 3]]]), x), (x,), opset_version=opset)


def test_scatter_add_needs_opset_16():
    with pytest.raises(eo.UnsupportedOperatorError, match="opset_version >= 16"):
        check_export(lambda x: x.scatter_add(1, I([[[0]]]), x), (data((2, 3, 4)),),
                     opset_version=15)


@pytest.mark.parametrize("opset", [13, 18])
def test_one_hot(opset):
    x = E.tensor(np.array([[0, 3, 1], [2, 2, 0]], dtype=np.int64))
    m = check_export(lambda x: E.one_hot(x, 5), (x,), opset_version=opset)
    assert "OneHot" in ops_in(m)
    check_export(lambda x: E.one_hot(x), (x,), opset_version=opset)      # max + 1 classes
    check_export(lambda x: E.one_hot(x[0, 0]), (x,), opset_version=opset)  # 0-d


# ---- chunk, select and type_as in depth ----------------------------------------------------

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

DYNAMIC = {   # x of shape (4, 3, 4), then (6, 3, 4) and (1, 3, 4); dim 0 dynamic
    "view_batch": lambda x: x.view(x.shape[0], -1),
    "view_batch_sizes": lambda x: x.view(x.shape[0], 2, 6),
    "reshape_last": lambda x: x.reshape(-1, x.shape[-1]),
    "view_product": lambda x: x.view(x.shape[0] * 3, 4),
    "reshape_permuted_same_pos": lambda x: x.transpose(0, 1).reshape(3, x.shape[0], 2, 2),
    "reshape_permuted": lambda x: x.transpose(0, 1).reshape(x.shape[0], 3, 2, 2),
    "view_as": lambda x: x.view_as(x.flatten(1)),
    "flatten": lambda x: x.flatten(),
    "flatten_1": lambda x: x.flatten(1),
    "flatten_01": lambda x: x.flatten(0, 1),
    "flatten_12": lambda x: x.flatten(1, 2),
    "unflatten_batch": lambda x: x.unflatten(0, (x.shape[0], 1)),
    "unflatten_static": lambda x: x.unflatten(2, (2, 2)),
    "unflatten_minus1": lambda x: x.unflatten(0, (1, -1)),
    "expand_batch": lambda x: x[:, :1].expand(x.shape[0], 3, 4),
    "expand_keep": lambda x: x[:, :1].expand(-1, 3, -1),
    "expand_other_dim": lambda x: x.transpose(0, 2)[:1, :1].expand(x.shape[0], 3, x.shape[0]),
    "expand_as": lambda x: x[:, :1].expand_as(x),
    "chunk_static_dim": lambda x: x.chunk(2, 2),
    "chunk_batch": lambda x: x.chunk(2, 0),
    "split_static_dim": lambda x: x.split([1, 3], 2),
    "split_rest_first": lambda x: x.split([x.shape[0] - 1, 1], 0),
    "split_rest_last": lambda x: x.split([1, x.shape[0] - 1], 0),
    "narrow_length": lambda x: x.narrow(0, 1, x.shape[0] - 1),
    "narrow_start": lambda x: x.narrow(0, x.shape[0] - 2, 2),
    "narrow_static": lambda x: x.narrow(2, 1, 2),
    "narrow_neg": lambda x: x.narrow(0, -1, 1),
    "select_static": lambda x: x.select(1, -1),
    "select_neg": lambda x: x.select(0, -1),
    "unbind_static": lambda x: x.unbind(1),
    "index_from_1": lambda x: x[1:],
    "index_to_last": lambda x: x[:-1],
    "index_to_size": lambda x: x[:x.shape[0]],
    "index_from_size": lambda x: x[x.shape[0]:],
    "index_other": lambda x: x[:, 0, None, 1:3],
    "index_neg": lambda x: x[-1, ..., ::2],
    "cat": lambda x: E.cat([x, x.flip(0)], 0),
    "stack": lambda x: E.stack([x, x], 1),
    "flip": lambda x: x.flip(0),
    "roll_batch": lambda x: x.roll(5, 0),
    "roll_neg": lambda x: x.roll(-1, 0),
    "roll_flat": lambda x: x.roll(7),
    "repeat": lambda x: x.repeat(1, 2, 1),
    "permute": lambda x: x.permute(1, 0, 2),
    "squeeze_static": lambda x: x[:, :1].squeeze(),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "take_along_dim": lambda x: E.take_along_dim(x, I([[[0], [3], [-1]]]), 2),
    "gather_smaller": lambda x: x.gather(2, I([[[0], [3], [1]]])),
    "scatter_smaller": lambda x: x.scatter(2, I([[[0], [3], [1]]]), x),
    "type_as": lambda x: x.type_as(I([1])),
}


@pytest.mark.parametrize("name", sorted(DYNAMIC))
def test_dynamic_batch(name):
    check_export(DYNAMIC[name], (data((4, 3, 4)),), dynamic_axes={0: [0]},
                 more_inputs=(data((6, 3, 4), seed=1),))


@pytest.mark.parametrize("name", ["view_batch", "reshape_last", "expand_batch",
                                  "chunk_static_dim", "narrow_length", "split_rest_first",
                                  "index_to_size", "roll_batch"])
@pytest.mark.parametrize("opset", [13, 18])
def test_dynamic_batch_opsets(name, opset):
    check_export(DYNAMIC[name], (data((4, 3, 4), "int64"),), opset_version=opset,
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
    assert list(onnx_const(m, 0)) == [-1, 4]                   # the only unknown
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


def test_dynamic_one_hot_and_to():
    x = E.tensor(np.array([[0, 3, 1], [2, 2, 0]] * 2, dtype=np.int64))
    x2 = E.tensor(np.array([[1, 4, 0]] * 5, dtype=np.int64))
    check_export(lambda x: E.one_hot(x, 5).to(E.float32), (x,), dynamic_axes={0: [0]},
                 more_inputs=(x2,))


# ---- refusals ------------------------------------------------------------------------------

REFUSED = {   # x of shape (4, 3, 4), dim 0 dynamic -> error message
    "view_two_unknown": (lambda x: x.view(x.shape[0] * 2, -1), "view/reshape: sizes"),
    "expand_other_tensor": (lambda x: x[0, :1].expand(x.shape[0], 4), "expand: size 4"),
    "repeat_batch": (lambda x: x.repeat(x.shape[0], 1, 1), "repeat: a repeat count"),
    "narrow_short": (lambda x: x.narrow(0, 0, x.shape[0] - 1), "narrow: start 0"),
    "select_batch": (lambda x: x.select(0, x.shape[0] - 1), "select: index 3"),
    "split_size": (lambda x: x.split(x.shape[0], 0), "split: split_size 4"),
    "split_two": (lambda x: x.flatten(1).split([x.shape[0], 12 - x.shape[0]], 1),
                  "split: sizes"),
    "roll_shift": (lambda x: x.roll(x.shape[0], 1), "roll: a shift"),
    "index_int": (lambda x: x[x.shape[0] - 1], "index: index 3"),
    "index_stop": (lambda x: x[:x.shape[0] - 1], "index: the slice None:3"),
    "index_both": (lambda x: x[1:x.shape[0]], "index: the slice 1:4"),
    "index_other_dim": (lambda x: x[..., :x.shape[0]], "index: the slice None:4"),
    "index_bools": (lambda x: x[True, True], "several bools"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused(name):
    fn, match = REFUSED[name]
    with pytest.raises(eo.OnnxExportError, match=match):
        check_export(fn, (data((4, 3, 4)),), dynamic_axes={0: [0]})


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

def export_ir(kind, args, out, opset=17, variation=None):
    """Export one node ``kind`` whose args are Tensors (graph inputs), lists (a
    ``prim::ListConstruct`` of inputs and constants) or constants; ``out`` is ember's
    result. Returns (model, input arrays)."""
    g, arrays = Graph(), []

    def value(a):
        if isinstance(a, E.Tensor):
            arrays.append(a.numpy())
            return g.add_input(f"in{len(arrays) - 1}", TensorType.from_tensor(a))
        if isinstance(a, list) and any(isinstance(i, E.Tensor) for i in a):
            n = g.create(prim.ListConstruct, [value(i) for i in a])
            n.output().type = ListType(TensorType())
            return g.insert_node(n).output()
        if isinstance(a, slice) or (isinstance(a, list) and any(isinstance(i, slice)
                                                                 for i in a)):
            return g.insert_constant(a, type=AnyType())
        return g.insert_constant(a)

    vals = [value(a) for a in args]
    node = g.insert_node(g.create(kind, vals))
    node.output().type = TensorType.from_tensor(out)
    g.register_output(node.output())
    var = {g.inputs[i]: v for i, v in (variation or {}).items()}
    names = [f"in{i}" for i in range(len(arrays))]
    model = export_graph(g, opset, names, ["out"], {}, {}, [], [], var)
    return model, arrays


INDEX_TENSORS = {   # x of shape (4, 3, 5) -> index entries, per _indexing.normalize
    "int": [I([2, 0, -1])],
    "int_2d": [slice(None), I([[0, 2], [1, 1]])],
    "int_0d": [slice(None), slice(None), I(4)],
    "int32": [slice(1, None), I([0, 2], dtype=E.int32)],
    "int_after_basic": [0, slice(None), I([1, 3])],
    "mask": [I([True, False, True, True])],
    "mask_mid": [slice(None), I([False, True, True])],
    "mask_2d": [I([[True, False, True]] * 2 + [[False, False, True]] * 2)],
    "mask_2d_after_none": [None, slice(None), I([[True, False, True, False, True]] * 3)],
    "mask_0d": [slice(None), I(True)],
    "mask_0d_false": [I(False)],
    "two_adjacent": [slice(None), I([0, 2, -1]), I([4, 0, 1])],
    "two_broadcast": [I([[0], [3]]), I([1, 2, 0])],
    "two_apart": [I([0, 1]), slice(None), I([3, -5])],
    "three": [I([1]), I([2, 0]), I([[4], [0]])],
}


@pytest.mark.parametrize("name", sorted(INDEX_TENSORS))
@pytest.mark.parametrize("opset", [13, 17])
def test_index_tensors(name, opset):
    x = data((4, 3, 5))
    idx = INDEX_TENSORS[name]
    from ember._indexing import index_normalized
    want = index_normalized(x, tuple(i._data if isinstance(i, E.Tensor) else i for i in idx),
                            False)
    model, arrays = export_ir("ember::index", [x, idx], want, opset)
    assert_close(run_onnx(model, arrays)[0], want.numpy())


def test_index_tensor_ops():
    x = data((4, 3, 5))
    for name, op in [("int", "Gather"), ("mask", "Compress"), ("two_apart", "GatherND")]:
        idx = INDEX_TENSORS[name]
        want = x[tuple(idx)]
        assert op in ops_in(export_ir("ember::index", [x, idx], want)[0])


def test_index_tensor_refusals():
    x = data((4, 3, 5))
    idx = [I([True, False, True, True]), I([0, 1, 2])]
    with pytest.raises(eo.OnnxExportError, match="a bool mask together"):
        export_ir("ember::index", [x, idx], x[0, :1])
    idx = [I([1, 0]), I([0, 2])]
    with pytest.raises(eo.OnnxExportError, match="several index tensors whose sizes"):
        export_ir("ember::index", [x, idx], x[0, :2], variation={1: (True,)})
    with pytest.raises(eo.OnnxExportError, match="a bool with index tensors"):
        export_ir("ember::index", [x, [True, I([0])]], x[None, :1])


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


def test_split_by_size_along_the_batch_is_refused():
    # the number of pieces follows the batch (5 -> [3, 2], 10 -> [3, 3, 3, 1]): no single
    # ONNX graph has a fixed output count for it
    with pytest.raises(eo.OnnxExportError, match="depends on the sizes"):
        check_export(lambda x: x.split(3, 0), (E.tensor(data((5, 3, 4))),),
                     dynamic_axes={0: [0]})


def test_traced_tensor_indices_export():
    # index tensors from the inputs (an index input, a mask, an argsort) stay graph values
    def f(x, i):
        return x[i], x[x > 0.5], x[x[:, 0].argsort()], x[:, [0, 2]]
    x = E.tensor(np.random.default_rng(0).random((4, 3)).astype(np.float32))
    i = E.tensor(np.array([2, 0, 2], np.int64))
    model = check_export(f, (x, i))
    assert {"Gather", "Compress"} <= set(ops_in(model))
    got = run_onnx(model, [x.numpy(), np.array([3, 1, 0], np.int64)])   # another index
    assert_close(got[0], x.numpy()[[3, 1, 0]])
