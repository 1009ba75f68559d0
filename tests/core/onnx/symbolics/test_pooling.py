"""ONNX export of the pooling ops (``ember/onnx/symbolics/pooling.py``): each symbolic and
its argument paths, against onnxruntime, at opsets 13 and 17 (and the branches' opsets),
with dynamic batches, float64 where onnxruntime has the kernel, and every declined
configuration. The pooling layers are exported with the other ``ember.nn`` layers, in
test_nn.py."""
from __future__ import annotations

import numpy as np
import onnx
import pytest

import ember.nn as nn
import ember.nn.functional as F
import ember.onnx as eo

from .._check import check_export, ops_in
from ._shared import export_checked_only, randint, randn


OPSETS = [13, 17]


MAX_POOLS = [  # (kernel, stride, padding, dilation, ceil_mode, input shape)
    (2, None, 0, 1, False, (2, 3, 8, 8)),
    (3, 2, 1, 1, False, (2, 3, 9, 8)),
    ((3, 2), (2, 1), (1, 0), (1, 2), False, (1, 2, 7, 9)),
    (3, 2, 1, 1, True, (2, 3, 8, 8)),          # ceil_mode adds a window
    (2, 2, 1, 1, True, (1, 2, 5, 5)),          # ceil_mode's window would start in padding
    ((2, 3), 2, 1, 1, True, (1, 2, 5, 6)),     # one dim of each: lengthened end padding
    (3, 2, 1, 2, True, (1, 2, 9, 10)),
    (2, 3, 1, 2, True, (1, 2, 6, 5)),          # lengthened padding past the kernel: Pad
    (2, 2, 0, 1, False, (3, 6, 6)),            # unbatched
]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("case", range(len(MAX_POOLS)))
def test_max_pool2d(case, opset):
    k, s, p, d, ceil, shape = MAX_POOLS[case]
    x = randn(*shape)
    m = check_export(lambda x: F.max_pool2d(x, k, s, p, d, ceil), (x,), opset_version=opset)
    assert "MaxPool" in ops_in(m)
    check_export(lambda x: F.max_pool2d(x, k, s, p, d, ceil, return_indices=True), (x,),
                 opset_version=opset)


def test_max_pool_ceil_mode_attribute():
    def ceil_attr(k, s, p, shape):
        m = check_export(lambda x: F.max_pool2d(x, k, s, p, ceil_mode=True), (randn(*shape),))
        node = next(n for n in m.graph.node if n.op_type == "MaxPool")
        return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}

    assert ceil_attr(3, 2, 1, (1, 1, 8, 8))["ceil_mode"] == 1
    attrs = ceil_attr(2, 2, 1, (1, 1, 5, 5))    # same size as floor mode
    assert attrs["ceil_mode"] == 0 and attrs["pads"] == [1, 1, 1, 1]
    attrs = ceil_attr((2, 3), 2, 1, (1, 1, 5, 6))
    assert attrs["ceil_mode"] == 0 and attrs["pads"] == [1, 1, 1, 2]


@pytest.mark.parametrize("opset", [13, 18])
def test_max_pool_dynamic_axes(opset):
    fn = lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True)
    check_export(fn, (randn(2, 3, 8, 8),), dynamic_axes={0: [0, 2, 3]}, opset_version=opset,
                 more_inputs=(randn(3, 3, 9, 11, seed=1),))
    # ceil_mode=1 at run time: at 5 the last window would start in the padding (dropped)
    fn = lambda x: F.max_pool2d(x, 2, 2, 1, ceil_mode=True, return_indices=True)
    check_export(fn, (randn(1, 2, 6, 6),), dynamic_axes={0: [2, 3]}, opset_version=opset,
                 more_inputs=(randn(1, 2, 5, 7, seed=1),))
    check_export(nn.MaxPool2d(2), (randn(2, 3, 8, 8),), dynamic_axes={0: [0]},
                 more_inputs=(randn(4, 3, 8, 8, seed=1),))


@pytest.mark.parametrize("opset", OPSETS)
def test_max_pool1d(opset):
    x = randn(2, 3, 11)
    m = check_export(lambda x: F.max_pool1d(x, 3, 2, 1, 2, True), (x,), opset_version=opset)
    assert ops_in(m) == ["MaxPool"]
    check_export(lambda x: F.max_pool1d(x, 2), (randn(3, 8),), opset_version=opset)
    check_export(lambda x: F.max_pool1d(x, 3, 1, 1, return_indices=True), (x,),
                 opset_version=opset)


@pytest.mark.parametrize("dtype", [np.float64, np.int8, np.uint8, np.int16, np.int32])
def test_max_pool_dtypes(dtype):
    x = randn(2, 3, 6, 6, dtype=np.float64) if dtype == np.float64 else \
        randint(0 if dtype == np.uint8 else -100, 100, (2, 3, 6, 6), dtype)
    m = check_export(lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True), (x,))
    assert ("Cast" in ops_in(m)) == (dtype in (np.int16, np.int32))


def test_max_pool_int64_fails():
    with pytest.raises(eo.OnnxExportError, match=r"max pooling of int64.*x\.double\(\)"):
        eo.export(lambda x: F.max_pool2d(x, 2), (randint(0, 9, (1, 2, 4, 4)),), None)


AVG_POOLS = [  # (kernel, stride, padding, ceil_mode, count_include_pad, divisor, shape)
    (2, None, 0, False, True, None, (2, 3, 8, 8)),
    (3, 2, 1, False, True, None, (2, 3, 9, 8)),
    (3, 2, 1, False, False, None, (2, 3, 9, 8)),
    ((3, 2), (2, 1), (1, 0), False, True, None, (1, 2, 7, 9)),
    (3, 2, 1, True, True, None, (2, 3, 8, 8)),
    (3, 2, 1, True, False, None, (2, 3, 8, 8)),
    ((2, 3), 2, 1, True, True, None, (1, 2, 5, 6)),    # lengthened padding: window sums
    ((2, 3), 2, 1, True, False, None, (1, 2, 5, 6)),
    (3, 2, 1, False, True, 5, (2, 3, 8, 8)),
    (3, 2, 1, True, False, 4, (2, 3, 8, 8)),
    (2, 2, 0, False, True, 3, (2, 3, 8, 8)),
    (2, 1, 1, False, True, None, (3, 5, 5)),            # unbatched
]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("case", range(len(AVG_POOLS)))
def test_avg_pool2d(case, opset):
    k, s, p, ceil, cip, div, shape = AVG_POOLS[case]
    fn = lambda x: F.avg_pool2d(x, k, s, p, ceil, cip, div)
    m = check_export(fn, (randn(*shape),), opset_version=opset)
    assert "AveragePool" in ops_in(m)
    assert ("Div" in ops_in(m)) == (div is not None or case == 6)


@pytest.mark.parametrize("opset", OPSETS)
def test_avg_pool1d(opset):
    check_export(lambda x: F.avg_pool1d(x, 3, 2, 1, True, False), (randn(2, 3, 10),),
                 opset_version=opset)
    check_export(lambda x: F.avg_pool1d(x, 2), (randn(3, 8),), opset_version=opset)


def test_avg_pool_dynamic_axes():
    check_export(lambda x: F.avg_pool2d(x, 3, 2, 1, True, False), (randn(2, 3, 8, 8),),
                 dynamic_axes={0: [0, 2, 3]}, more_inputs=(randn(3, 3, 9, 10, seed=1),))
    check_export(lambda x: F.avg_pool2d(x, 3, 2, 1, divisor_override=2),
                 (randn(2, 3, 8, 8),), dynamic_axes={0: [0, 2]},
                 more_inputs=(randn(3, 3, 11, 8, seed=1),))


def test_avg_pool_float64():
    # no float64 AveragePool kernel in onnxruntime's CPU provider: checker only
    export_checked_only(lambda x: F.avg_pool2d(x, 3, 2, 1, True, False, 2),
                        (randn(1, 2, 6, 6, dtype=np.float64),))


def test_avg_pool_divisor_ceil_dynamic_fails():
    with pytest.raises(eo.OnnxExportError, match="divisor_override and ceil_mode"):
        eo.export(lambda x: F.avg_pool2d(x, 3, 2, 1, True, True, 2), (randn(1, 2, 8, 8),),
                  None, input_names=["x"], dynamic_axes={"x": [2]})


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("size,shape,ops", [
    (1, (2, 3, 7, 5), ["GlobalAveragePool"]),
    ((1, 1), (3, 4, 4), ["Constant", "Unsqueeze", "GlobalAveragePool", "Constant", "Squeeze"]),
    ((2, 3), (2, 3, 8, 9), ["AveragePool"]),
    ((3, 5), (2, 3, 8, 8), ["Constant", "MatMul", "Constant", "MatMul"]),
    ((4, 3), (2, 3, 8, 7), ["Constant", "MatMul", "Constant", "MatMul"]),
    ((8, 2), (3, 8, 5), ["Constant", "MatMul"]),
])
def test_adaptive_avg_pool2d(size, shape, ops, opset):
    m = check_export(lambda x: F.adaptive_avg_pool2d(x, size), (randn(*shape),),
                     opset_version=opset)
    assert ops_in(m) == ops


def test_adaptive_avg_pool2d_dynamic():
    check_export(nn.AdaptiveAvgPool2d(1), (randn(2, 3, 7, 5),), dynamic_axes={0: [0, 2, 3]},
                 more_inputs=(randn(3, 3, 4, 9, seed=1),))
    check_export(nn.AdaptiveAvgPool2d((3, 5)), (randn(2, 3, 7, 8),), dynamic_axes={0: [0]},
                 more_inputs=(randn(4, 3, 7, 8, seed=1),))
    with pytest.raises(eo.OnnxExportError, match="adaptive_avg_pool2d to .*dynamic spatial"):
        eo.export(nn.AdaptiveAvgPool2d(2), (randn(1, 2, 8, 8),), None, input_names=["x"],
                  dynamic_axes={"x": [3]})


def test_adaptive_avg_pool2d_empty_fails():
    with pytest.raises(eo.OnnxExportError, match="empty output"):
        eo.export(lambda x: F.adaptive_avg_pool2d(x, (0, 2)), (randn(1, 2, 4, 4),), None)


def test_adaptive_avg_pool_float64():
    # the MatMul path runs (float64 MatMul exists); pooling ops are checked only
    check_export(nn.AdaptiveAvgPool2d((3, 5)), (randn(2, 3, 8, 8, dtype=np.float64),))
    export_checked_only(nn.AdaptiveAvgPool2d(1), (randn(2, 3, 8, 8, dtype=np.float64),))


ADAPTIVE_MAX = [  # (layer, input shape, ops without the indices)
    (lambda i: nn.AdaptiveMaxPool2d((3, 2), i), (2, 3, 6, 6), ["MaxPool"]),
    (lambda i: nn.AdaptiveMaxPool2d((2, 3), i), (2, 3, 3, 4), ["MaxPool"]),   # stride 1
    (lambda i: nn.AdaptiveMaxPool2d(1, i), (2, 3, 5, 7), ["GlobalMaxPool"]),
    (lambda i: nn.AdaptiveMaxPool2d((None, 2), i), (3, 5, 6), None),          # unbatched
    (lambda i: nn.AdaptiveMaxPool1d(4, i), (2, 3, 8), ["MaxPool"]),
    (lambda i: nn.AdaptiveMaxPool1d(1, i), (2, 3, 7), ["GlobalMaxPool"]),
    (lambda i: nn.AdaptiveMaxPool1d(3, i), (3, 9), None),
    (lambda i: nn.AdaptiveMaxPool1d(3, i), (2, 3, 7), ["MaxPool"]),   # 7 -> 3: k 3, stride 2
]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("indices", [False, True])
@pytest.mark.parametrize("case", range(len(ADAPTIVE_MAX)))
def test_adaptive_max_pool(case, indices, opset):
    make, shape, ops = ADAPTIVE_MAX[case]
    m = check_export(make(indices), (randn(*shape),), opset_version=opset)
    if ops is not None and not indices:
        assert ops_in(m) == ops
    if indices:                 # MaxPool's Indices, per plane as ember's
        assert "MaxPool" in ops_in(m) and "Mod" in ops_in(m)


def test_adaptive_max_pool_dynamic_and_float64():
    check_export(nn.AdaptiveMaxPool2d(1), (randn(2, 3, 7, 5),), dynamic_axes={0: [0, 2, 3]},
                 more_inputs=(randn(3, 3, 4, 9, seed=1),))
    check_export(nn.AdaptiveMaxPool2d((3, 2), True), (randn(2, 3, 6, 6),),
                 dynamic_axes={0: [0]}, more_inputs=(randn(4, 3, 6, 6, seed=1),))
    check_export(nn.AdaptiveMaxPool2d((3, 2), True), (randn(2, 3, 6, 6, dtype=np.float64),))
    # no float64 GlobalMaxPool kernel in onnxruntime's CPU provider: checker only
    export_checked_only(nn.AdaptiveMaxPool2d(1), (randn(2, 3, 6, 6, dtype=np.float64),))
    with pytest.raises(eo.OnnxExportError, match="adaptive_max_pool2d to .*dynamic spatial"):
        eo.export(nn.AdaptiveMaxPool2d(2), (randn(1, 2, 8, 8),), None, input_names=["x"],
                  dynamic_axes={"x": [3]})


def test_adaptive_max_pool_uneven_windows_fail():
    """6 -> 4 gives windows of lengths 2 and 3: no MaxPool has them."""
    with pytest.raises(eo.UnsupportedOperatorError,
                       match=r"\[6, 6\] to output size \[4, 4\].*multiple of the output"):
        eo.export(nn.AdaptiveMaxPool2d(4), (randn(1, 2, 6, 6),), None)
    with pytest.raises(eo.UnsupportedOperatorError, match="adaptive_max_pool1d"):
        eo.export(nn.AdaptiveMaxPool1d(4), (randn(1, 2, 7),), None)     # 2, 3, 3, 2


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("layer,shape", [
    (lambda: nn.LPPool2d(2, 2), (2, 3, 6, 6)),
    (lambda: nn.LPPool2d(1.5, (2, 3), stride=(1, 2)), (2, 3, 5, 7)),
    (lambda: nn.LPPool2d(3, 3, 2, ceil_mode=True), (1, 2, 8, 8)),
    (lambda: nn.LPPool2d(float("inf"), 2), (2, 3, 6, 6)),
    (lambda: nn.LPPool1d(2, 3), (2, 3, 8)),
    (lambda: nn.LPPool1d(1, 2, 1, ceil_mode=True), (3, 7)),
])
def test_lp_pool(layer, shape, opset):
    """Traced as ember's composite: pow, avg_pool, sign/abs/relu, mul, pow."""
    x = randn(*shape).abs()         # x^p of negative x is NaN for fractional p, as in ember
    m = check_export(layer(), (x,), opset_version=opset)
    assert {"AveragePool", "MaxPool"} & set(ops_in(m))


# --- 3-D pooling and adaptive_avg_pool1d ------------------------------------------------------

@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("fn", [
    lambda x: F.max_pool3d(x, 2),
    lambda x: F.max_pool3d(x, (3, 2, 2), (2, 1, 2), (1, 1, 0), (1, 2, 1), ceil_mode=True),
    lambda x: F.avg_pool3d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    lambda x: F.avg_pool3d(x, 2, divisor_override=3),
    lambda x: F.adaptive_avg_pool3d(x, (2, 1, 3)),
    lambda x: F.adaptive_max_pool3d(x, (1, 2, 3)),
    lambda x: F.lp_pool3d(x.abs() + 0.1, 2, 2),
])
def test_3d_pooling(fn, opset):
    check_export(fn, (randn(2, 3, 4, 6, 6),), opset_version=opset)
    check_export(fn, (randn(3, 4, 6, 6),), opset_version=opset)        # unbatched


def test_adaptive_avg_pool1d():
    m = check_export(lambda x: F.adaptive_avg_pool1d(x, 3), (randn(2, 3, 7),))
    assert "MatMul" in ops_in(m)
    check_export(lambda x: F.adaptive_avg_pool1d(x, 1), (randn(3, 7),))


@pytest.mark.parametrize("fn, match", [
    (lambda x: F.adaptive_avg_pool3d(x, (3, 2, 2)), "adaptive_avg_pool3d from"),
    (lambda x: F.adaptive_max_pool3d(x, 2, return_indices=True), "return_indices"),
])
def test_3d_declined(fn, match):
    with pytest.raises(eo.OnnxExportError, match=match):
        eo.export(fn, (randn(1, 2, 4, 4, 4),), None)
