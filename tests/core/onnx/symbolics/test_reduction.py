"""ONNX export of reductions, scans and sorting (ember/onnx/symbolics/reduction.py):
each symbolic against ember through onnxruntime, at opsets 13, 17 and 18 (Reduce* axes
move from an attribute to an input in 18), with NaN, ties and dynamic axes."""
import numpy as np
import pytest

import ember as E
from ember.onnx import OnnxExportError

from .._check import check_export, ops_in

OPSETS = [13, 17, 18]
NAN, INF = float("nan"), float("inf")


def _rand(*shape, dtype=np.float32, seed=0):
    return E.tensor(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


def _ints(*shape, high=4, dtype=np.int64, seed=0):
    return E.tensor(np.random.default_rng(seed).integers(-high, high, shape).astype(dtype))


def _with_nan():
    """(3, 4, 5) float32 with NaNs (one row all NaN), +-inf and ties."""
    a = np.random.default_rng(1).integers(-3, 3, (3, 4, 5)).astype(np.float32)
    a[0, 1, 2] = a[1, 2, 0] = a[1, 2, 3] = NAN
    a[2, 3, :] = NAN
    a[0, 0, 1] = a[2, 1, 4] = INF
    a[0, 0, 3] = a[1, 0, 0] = -INF
    return E.tensor(a)


def _flat(*outs):
    """Outputs of mixed tensors and (values, indices) pairs as one flat tuple."""
    flat = []
    for o in outs:
        flat.extend(o if isinstance(o, tuple) else (o,))
    return tuple(flat)


def _axes_forms(model, op_type):
    """How the model's ``op_type`` nodes that name axes take them: {'input'}, {'attr'}."""
    forms = set()
    for n in model.graph.node:
        if n.op_type == op_type:
            if len(n.input) > 1:
                forms.add("input")
            elif any(a.name == "axes" for a in n.attribute):
                forms.add("attr")
    return forms


# ---- sum, mean, prod ----------------------------------------------------------------------

@pytest.mark.parametrize("opset", OPSETS)
def test_sum_mean_prod(opset):
    x = _rand(3, 4, 5)
    m = check_export(lambda x: (x.sum(), x.sum(1), x.sum([0, -1], keepdim=True), x.sum([]),
                                x.mean(), x.mean(-2), x.mean([0, 2], keepdim=True),
                                x.prod(), x.prod(1), x.prod(-1, keepdim=True)),
                     (x,), opset_version=opset)
    ops = ops_in(m)
    assert {"ReduceSum", "ReduceMean", "ReduceProd"} <= set(ops)
    assert _axes_forms(m, "ReduceSum") == {"input"}
    assert _axes_forms(m, "ReduceMean") == {"input" if opset >= 18 else "attr"}


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.bool_])
def test_sum_prod_integral_accumulate_in_int64(dtype):
    x = E.tensor(np.random.default_rng(2).integers(-3, 4, (3, 4)).astype(dtype))
    check_export(lambda x: (x.sum(), x.sum(0), x.prod(1), x.prod(), x.cumsum(1)), (x,))


def test_dtype_argument_casts_input_first():
    x = _rand(3, 4)
    i = _ints(3, 4)
    check_export(lambda x, i: (x.sum(dtype=E.float64), x.mean(1, dtype=E.float64),
                               x.prod(0, dtype=E.float64), i.sum(1, dtype=E.int32),
                               i.mean(dtype=E.float32), x.cumsum(0, dtype=E.float64),
                               i.cumsum(1, dtype=E.float32), x.norm(dim=1, dtype=E.float64)),
                 (x, i), opset_version=13)


def test_float64():
    x = _rand(3, 4, 5, dtype=np.float64)
    check_export(lambda x: (x.sum(1), x.mean(), x.prod(2), x.var(1), x.std(), x.norm(3, 1),
                            x.logsumexp(0), x.cumsum(2), x.cumprod(1), x.amax(1),
                            *x.max(0), *x.sort(1), x.argmin()), (x,))


def test_float16_accumulates_in_float32():
    x = E.tensor(np.random.default_rng(3).uniform(0, 2, (4, 64)).astype(np.float16))
    m = check_export(lambda x: (x.sum(1), x.mean(1), x.cumsum(1), x.amax(1), *x.min(0)), (x,))
    assert "Cast" in ops_in(m)


def test_zero_dim_input():
    x = E.tensor(np.float32(2.5))
    check_export(lambda x: (x.sum(0), x.prod(), *x.max(0), x.argmax(0), x.argmin(),
                            *x.sort(), x.cumsum(0), x.cumprod(0), x.amax(), *x.topk(1),
                            x.var(), x.std(0, correction=0), x.norm(), x.logsumexp(0),
                            x.any(), x.mean()), (x,))


# ---- max, min, amax, amin, argmax, argmin ------------------------------------------------

@pytest.mark.parametrize("opset", OPSETS)
def test_max_min(opset):
    x = _rand(3, 4, 5)
    m = check_export(lambda x: _flat(x.max(), x.min(), x.max(1), x.min(-1, keepdim=True),
                                     x.amax([0, 2]), x.amin(), x.amax(-1, keepdim=True),
                                     x.argmax(), x.argmin(1), x.argmax(keepdim=True),
                                     x.argmin(-1, keepdim=True)),
                     (x,), opset_version=opset)
    assert {"ReduceMax", "ReduceMin", "ArgMax", "ArgMin"} <= set(ops_in(m))
    arg = next(n for n in m.graph.node if n.op_type == "ArgMax")
    assert {a.name: a.i for a in arg.attribute}["select_last_index"] == 0


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.uint8, np.bool_])
def test_max_min_integral_and_bool(dtype):
    x = E.tensor(np.random.default_rng(4).integers(0, 3, (4, 6)).astype(dtype))
    fns = lambda x: _flat(x.max(), x.min(), x.max(1), x.min(0, keepdim=True), x.amax(1),
                          x.amin([0, 1]), *([] if dtype is np.bool_ else
                                            [x.argmax(), x.argmin(1)]))
    m = check_export(fns, (x,))
    assert "IsNaN" not in ops_in(m)


def test_ties_give_the_first_index():
    x = E.tensor(np.array([[1, 3, 3, 0, 3], [2, 2, 2, 2, 2], [-1, -5, 0, -5, -5]],
                          np.float32))
    assert x.max(1)[1].tolist() == [1, 0, 2] and x.argmin().item() == 11   # ember: first
    check_export(lambda x: _flat(x.max(1), x.min(1), x.argmax(1), x.argmin(1), x.argmax(),
                                 x.argmin()), (x,))


def test_nan_propagates_and_first_nan_wins():
    x = _with_nan()
    m = check_export(lambda x: _flat(x.max(), x.min(), x.max(2), x.min(1, keepdim=True),
                                     x.amax([0, 2]), x.amin(-1), x.argmax(2), x.argmin(1),
                                     x.argmax(), x.argmin(keepdim=True),
                                     x.norm(INF, 2), x.norm(-INF)), (x,))
    assert "IsNaN" in ops_in(m)


# ---- var, std ----------------------------------------------------------------------------

@pytest.mark.parametrize("opset", [13, 18])
def test_var_std(opset):
    x = _rand(3, 4, 5) * 3 + 10
    check_export(lambda x: (x.var(), x.var(1), x.var(0, False), x.std([0, 2], keepdim=True),
                            x.std(correction=2), x.var(-1, correction=0.5), x.std(1, True),
                            x.var([1], unbiased=False, keepdim=True), x.var(correction=7),
                            x.var(1, correction=5)),
                 (x,), opset_version=opset)


# ---- norm, logsumexp ---------------------------------------------------------------------

@pytest.mark.parametrize("opset", OPSETS)
def test_norm(opset):
    x = _rand(3, 4, 5)
    x[0, 1, :2] = 0.0
    m = check_export(lambda x: (x.norm(), x.norm(2, 1), x.norm(None, [0, 2], True),
                                x.norm(1, dim=1), x.norm(INF, dim=[0, 2]), x.norm(-INF),
                                x.norm(0), x.norm(0, -1, keepdim=True),
                                x.norm(3.5, dim=1, keepdim=True), x.norm(-1.5), x.norm(0.5, 0),
                                x.norm("fro"), x.norm("fro", dim=[1, 2], keepdim=True)),
                     (x,), opset_version=opset)
    assert {"ReduceL2", "ReduceL1", "Pow"} <= set(ops_in(m))


def test_norm_nuclear_fails():
    with pytest.raises(OnnxExportError, match=r"norm.str.*'nuc'.*no SVD"):
        E.onnx.export(lambda x: x.norm("nuc"), (_rand(3, 4),), None)


@pytest.mark.parametrize("opset", [13, 18])
def test_logsumexp(opset):
    a = np.random.default_rng(5).standard_normal((3, 4, 5)).astype(np.float32) * 50
    a[0, 1, :] = -INF               # all -inf gives -inf
    a[1, 2, 3] = 1000.0             # no overflow
    a[2, 0, 1] = INF
    x = E.tensor(a)
    i = _ints(3, 4)
    check_export(lambda x, i: (x.logsumexp(2), x.logsumexp([0, 2], keepdim=True),
                               x.logsumexp([]), x.logsumexp(-1, True), i.logsumexp(1)),
                 (x, i), opset_version=opset)


# ---- any, all ----------------------------------------------------------------------------

@pytest.mark.parametrize("opset", [13, 18])
def test_any_all(opset):
    a = np.ones((3, 4, 5), np.float32)
    a[0, :, 1] = 0.0
    a[1] = 0.0
    a[2, 1, 2] = NAN                # NaN counts as true
    x, b = E.tensor(a), E.tensor(a > 0)
    u = E.tensor((a > 0).astype(np.uint8))
    check_export(lambda x, b, u: (x.any(), x.all(), x.any(1), x.all(-1, keepdim=True),
                                  x.any([0, 2]), x.all([]), b.any(2), b.all(), u.any(1),
                                  u.all([])),
                 (x, b, u), opset_version=opset)


# ---- cumsum, cumprod ---------------------------------------------------------------------

@pytest.mark.parametrize("opset", [13, 17])
def test_cumsum_cumprod(opset):
    a = np.random.default_rng(6).uniform(-1.5, 1.5, (3, 4, 5)).astype(np.float32)
    a[1, 2, 1] = 0.0
    a[0, 0, 2] = NAN
    x, i = E.tensor(a), _ints(3, 6)
    long = E.tensor(np.random.default_rng(7).uniform(0.5, 1.5, (2, 40)).astype(np.float32))
    m = check_export(lambda x, i, long: (x.cumsum(1), x.cumsum(-1), x.cumprod(0), x.cumprod(1),
                                         x.cumprod(-1), i.cumprod(1), i.cumsum(0),
                                         long.cumprod(1)),
                     (x, i, long), opset_version=opset)
    assert {"CumSum", "ReduceProd"} <= set(ops_in(m))
    assert any(t.dims == [40, 40] for t in m.graph.initializer)   # the big mask


# ---- sort, argsort, topk -----------------------------------------------------------------

@pytest.mark.parametrize("opset", [13, 17])
def test_sort_argsort_topk(opset):
    x = _rand(3, 4, 6)
    check_export(lambda x: _flat(x.sort(), x.sort(1, descending=True), x.argsort(0),
                                 x.argsort(-1, descending=True, stable=True),
                                 x.sort(stable=True), x.topk(2), x.topk(3, 1, largest=False),
                                 x.topk(1, 0), x.topk(6, sorted=False), x.topk(0)),
                 (x,), opset_version=opset)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.float32])
def test_sort_is_stable_on_ties(dtype):
    x = E.tensor(np.random.default_rng(7).integers(0, 3, (4, 40)).astype(dtype))
    check_export(lambda x: _flat(x.sort(1), x.sort(1, descending=True), x.argsort(0),
                                 x.topk(5), x.topk(7, largest=False), x.topk(1, 0)), (x,))


def test_sort_bool():
    x = E.tensor(np.random.default_rng(8).integers(0, 2, (3, 9)).astype(bool))
    check_export(lambda x: _flat(x.sort(1), x.argsort(1, descending=True)), (x,))


def test_sort_nan_is_largest():
    x = _with_nan()
    check_export(lambda x: _flat(x.sort(), x.sort(1, descending=True), x.argsort(0),
                                 x.topk(3), x.topk(4, 2, largest=False), x.topk(1, 1)), (x,))


def test_topk_k_from_dynamic_axis():
    x = _rand(3, 5)
    check_export(lambda x: x.topk(x.shape[1], dim=1, largest=False), (x,),
                 dynamic_axes={0: [1]}, more_inputs=(_rand(3, 7, seed=1),))


def test_topk_k_baked_from_other_dynamic_axis_fails():
    x = _rand(2, 5)   # doubled, the batch (4) still fits the 5 of dim 1
    with pytest.raises(OnnxExportError, match="topk's k .* follows a dynamic axis"):
        check_export(lambda x: x.topk(x.shape[0], dim=1), (x,), dynamic_axes={0: [0]})


# ---- dynamic axes ------------------------------------------------------------------------

def test_dynamic_batch():
    x = _rand(3, 4)
    m = check_export(lambda x: _flat(x.var(0), x.std(), x.var([0, 1], correction=2),
                                     x.sum(0), x.mean(), x.max(0), x.argmax(),
                                     x.argmax(keepdim=True), x.sort(0), x.argsort(0, True),
                                     x.topk(2, 1), x.cumsum(0), x.cumprod(0), x.norm(0)),
                     (x,), dynamic_axes={0: [0]}, more_inputs=(_rand(5, 4, seed=1),))
    assert "Range" in ops_in(m) and "Shape" in ops_in(m)
