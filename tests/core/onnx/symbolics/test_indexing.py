"""The indexing symbolics (``ember/onnx/symbolics/indexing.py``): ``x[...]``,
index_select, gather, scatter, take_along_dim and one_hot, each exported, checked and run
in onnxruntime against ember, in float32, int64 and bool, at opsets 13, 17 and 18, with a
dynamic batch where sizes follow it, and each refusal.

Index tensors in ``x[...]`` do not trace yet (``ember/_indexing.py`` records the index
arrays, which no IR constant can hold), so those tests build the IR graph the tracer
would record (``ember::index`` of a ``prim::ListConstruct``) and export it."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.onnx as eo

from .._check import assert_close, check_export, ops_in, run_onnx
from ._shared import INDEXING_CASES, INDEXING_DYNAMIC, I, data, export_ir


@pytest.mark.parametrize("name", sorted(INDEXING_CASES))
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_static(name, dtype):
    check_export(INDEXING_CASES[name], (data((2, 3, 4), dtype),))


@pytest.mark.parametrize("name", sorted(INDEXING_CASES))
@pytest.mark.parametrize("opset", [13, 18])
def test_static_opsets(name, opset):
    check_export(INDEXING_CASES[name], (data((2, 3, 4)),), opset_version=opset)


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


# ---- a dynamic batch -----------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(INDEXING_DYNAMIC))
def test_dynamic_batch(name):
    check_export(INDEXING_DYNAMIC[name], (data((4, 3, 4)),), dynamic_axes={0: [0]},
                 more_inputs=(data((6, 3, 4), seed=1),))


@pytest.mark.parametrize("name", ["index_to_size"])
@pytest.mark.parametrize("opset", [13, 18])
def test_dynamic_batch_opsets(name, opset):
    check_export(INDEXING_DYNAMIC[name], (data((4, 3, 4), "int64"),), opset_version=opset,
                 dynamic_axes={0: [0]}, more_inputs=(data((7, 3, 4), "int64", seed=1),))


def test_dynamic_one_hot_and_to():
    x = E.tensor(np.array([[0, 3, 1], [2, 2, 0]] * 2, dtype=np.int64))
    x2 = E.tensor(np.array([[1, 4, 0]] * 5, dtype=np.int64))
    check_export(lambda x: E.one_hot(x, 5).to(E.float32), (x,), dynamic_axes={0: [0]},
                 more_inputs=(x2,))


# ---- refusals ------------------------------------------------------------------------------

REFUSED = {   # x of shape (4, 3, 4), dim 0 dynamic -> error message
    "index_bools": (lambda x: x[True, True], "several bools"),
}

# refused while a trace baked sizes in; now the graph computes them (symbolics/sizes.py)
FROM_SIZES = {
    "index_int": lambda x: x[x.shape[0] - 1],
    "index_stop": lambda x: x[:x.shape[0] - 1],
    "index_both": lambda x: x[1:x.shape[0]],
    "index_other_dim": lambda x: x[..., :x.shape[0]],
}


@pytest.mark.parametrize("name", sorted(FROM_SIZES))
def test_bounds_computed_from_sizes(name):
    check_export(FROM_SIZES[name], (data((4, 3, 4)),), dynamic_axes={0: [0]},
                 more_inputs=(data((3, 3, 4), seed=1),))


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused(name):
    fn, match = REFUSED[name]
    with pytest.raises(eo.OnnxExportError, match=match):
        check_export(fn, (data((4, 3, 4)),), dynamic_axes={0: [0]})


# ---- IR graphs built by hand (what the tracer cannot record yet) -----------------------------

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


# ---- nonzero -------------------------------------------------------------------------------

@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_nonzero(dtype, opset):
    """NonZero + Transpose; K follows the data: the output's first dim is a dim_param and
    the model runs on inputs with other counts."""
    x = data((3, 4), dtype)
    m = check_export(E.nonzero, (x,), opset_version=opset)
    assert ops_in(m) == ["NonZero", "Transpose"]
    assert m.graph.output[0].type.tensor_type.shape.dim[0].dim_param
    for seed in (1, 2):
        other = data((3, 4), dtype, seed=seed)
        assert_close(run_onnx(m, [other.numpy()])[0], E.nonzero(other).numpy())
    # later ops see K as dynamic too
    fn = lambda x: (E.nonzero(x) * 2).reshape(-1, 1)
    m = check_export(fn, (x,), opset_version=opset)
    other = data((3, 4), dtype, seed=3)
    assert_close(run_onnx(m, [other.numpy()])[0], fn(other).numpy())


def test_nonzero_dtypes_nan_and_0d():
    special = np.array([np.nan, 0.0, -0.0, np.inf, 1e-30], np.float64)
    check_export(E.nonzero, (E.tensor(special),))                        # Not(Equal(x, 0))
    check_export(E.nonzero, (E.tensor(np.array([[0, 3], [-1, 0]], np.int8)),))
    for v in (0.0, 2.5):                                                 # ember's (K, 0)
        check_export(E.nonzero, (E.tensor(np.array(v, np.float32)),))
    check_export(E.nonzero, (data((2, 3, 4)),), dynamic_axes={0: [0]},
                 more_inputs=(data((5, 3, 4), seed=1),))
