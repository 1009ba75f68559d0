"""ONNX export of the losses (ember/onnx/symbolics/loss.py): every reduction, weights,
ignore_index, label smoothing, probability targets and pos_weight, against ember through
onnxruntime at opsets 13 and 17; the nn loss Modules end to end; a dynamic batch."""
import warnings

import numpy as np
import pytest

import ember as E
import ember.nn as nn
import ember.nn.functional as F
from ember.onnx import OnnxExportError
from ember.onnx.context import GraphContext, OnnxValue
from ember.onnx.symbolics import loss as loss_symbolics

from .._check import check_export, ember_outputs, ops_in, run_onnx

# binary_cross_entropy checks that its input lies in [0, 1] with bool(...), which the
# tracer reports (TracerWarning); the check is input validation, not part of the graph.
pytestmark = pytest.mark.filterwarnings("ignore:converting a tensor to a Python bool")

OPSETS = [13, 17]
REDUCTIONS = ["mean", "sum", "none"]
N, C = 6, 5


def _rng(seed=0):
    return np.random.default_rng(seed)


def _logits(*shape, dtype=np.float32, seed=0):
    return E.tensor((_rng(seed).standard_normal(shape) * 2).astype(dtype))


def _log_probs(*shape, dtype=np.float32, seed=0):
    a = _rng(seed).standard_normal(shape)
    a = a - np.log(np.exp(a).sum(1, keepdims=True))
    return E.tensor(a.astype(dtype))


def _targets(*shape, ignored=(), seed=0):
    """int64 class indices in [0, C), with ``ignored`` flat positions set to -100."""
    t = _rng(seed).integers(0, C, shape)
    t.reshape(-1)[list(ignored)] = -100
    return E.tensor(t.astype(np.int64))


def _probs(*shape, dtype=np.float32, seed=0):
    return E.tensor(_rng(seed).uniform(0.02, 0.98, shape).astype(dtype))


def _with_repeats():
    """(N,) int64 class indices holding 2 and 3 twice (to be ignored by ignore_index)."""
    return E.tensor(np.array([2, 0, 3, 4, 3, 2], np.int64))


def _weight(dtype=np.float32):
    return E.tensor(_rng(9).uniform(0.5, 2.0, C).astype(dtype))


# ---- nll_loss ----------------------------------------------------------------------------

@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss(opset, reduction):
    x, x3 = _log_probs(N, C), _log_probs(N, C, 3, seed=1)
    t, t2, t3 = _targets(N, ignored=[1]), _with_repeats(), _targets(N, 3, seed=2)
    assert 3 in t3.flatten().tolist()      # some are ignored
    w = _weight()
    m = check_export(lambda x, t, t2, x3, t3: (
        F.nll_loss(x, t, reduction=reduction),
        F.nll_loss(x, t, weight=w, reduction=reduction),
        F.nll_loss(x, t2, ignore_index=2, reduction=reduction),
        F.nll_loss(x3, t3, weight=w, ignore_index=3, reduction=reduction)),
        (x, t, t2, x3, t3), opset_version=opset)
    assert set(ops_in(m)) <= {"NegativeLogLikelihoodLoss", "Constant"}


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_class_vector(reduction):
    """A (C,) input with a () target, unsqueezed for the ONNX op."""
    x, t = _log_probs(1, C)[0], E.tensor(np.int64(3))
    check_export(lambda x, t: (F.nll_loss(x, t, reduction=reduction),
                               F.nll_loss(x, t, weight=_weight(), reduction=reduction)), (x, t))


def test_nll_loss_all_ignored_mean_is_nan():
    x, t = _log_probs(3, C), E.tensor(np.full(3, 1, np.int64))
    check_export(lambda x, t: (F.nll_loss(x, t, ignore_index=1),
                               F.nll_loss(x, t, weight=_weight(), ignore_index=1),
                               F.cross_entropy(x, t, ignore_index=1, label_smoothing=0.2)),
                 (x, t))
    assert np.isnan(F.nll_loss(x, t, ignore_index=1).item())


# ---- cross_entropy -----------------------------------------------------------------------

@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy(opset, reduction):
    x, x3 = _logits(N, C), _logits(N, C, 2, 3, seed=1)
    t, t2 = _targets(N, ignored=[0, 4]), _with_repeats()
    t3 = _targets(N, 2, 3, seed=2)
    assert 1 in t3.flatten().tolist()      # some are ignored
    w = _weight()
    m = check_export(lambda x, t, t2, x3, t3: (
        F.cross_entropy(x, t, reduction=reduction),
        F.cross_entropy(x, t2, weight=w, ignore_index=2, reduction=reduction),
        F.cross_entropy(x, t, reduction=reduction, label_smoothing=0.2),
        F.cross_entropy(x, t, weight=w, reduction=reduction, label_smoothing=0.3),
        F.cross_entropy(x3, t3, weight=w, ignore_index=1, reduction=reduction,
                        label_smoothing=0.1),
        F.cross_entropy(x3, t3, reduction=reduction)),
        (x, t, t2, x3, t3), opset_version=opset)
    assert "SoftmaxCrossEntropyLoss" in ops_in(m)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_class_vector(reduction):
    x, t = _logits(C), E.tensor(np.int64(2))
    check_export(lambda x, t: (F.cross_entropy(x, t, reduction=reduction),
                               F.cross_entropy(x, t, weight=_weight(), reduction=reduction,
                                               label_smoothing=0.25)), (x, t))


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_probability_targets(opset, reduction):
    x, x3, x1 = _logits(N, C), _logits(N, C, 3, seed=1), _logits(C, seed=2)
    p = F.softmax(_logits(N, C, seed=3), 1)
    p3, p1 = F.softmax(_logits(N, C, 3, seed=4), 1), F.softmax(_logits(C, seed=5), 0)
    w = _weight()
    m = check_export(lambda x, p, x3, p3, x1, p1: (
        F.cross_entropy(x, p, reduction=reduction),
        F.cross_entropy(x, p, weight=w, reduction=reduction, label_smoothing=0.2),
        F.cross_entropy(x3, p3, weight=w, reduction=reduction),
        F.cross_entropy(x1, p1, weight=w, reduction=reduction, label_smoothing=0.1)),
        (x, p, x3, p3, x1, p1), opset_version=opset)
    assert "LogSoftmax" in ops_in(m)


def test_class_targets_as_constants_and_int32():
    """Targets made inside the model arrive as constants; int32 targets stay int32."""
    x = _logits(4, C)
    t = E.tensor(np.array([0, 4, 2, 1], np.int64))
    t32 = E.tensor(np.array([3, 3, -100, 0], np.int32))
    check_export(lambda x, t32: (F.cross_entropy(x, E.tensor([0, 4, 2, 1])),
                                 F.nll_loss(x, t, reduction="none"),
                                 F.cross_entropy(x, t32, label_smoothing=0.1),
                                 F.nll_loss(x, t32, weight=_weight())), (x, t32))


def test_float64():
    x, t, w = _logits(N, C, dtype=np.float64), _targets(N, ignored=[3]), _weight(np.float64)
    p, q = _probs(N, C, dtype=np.float64), _probs(N, C, dtype=np.float64, seed=1)
    check_export(lambda x, t, p, q: (
        F.nll_loss(x, t, weight=w), F.cross_entropy(x, t, weight=w, label_smoothing=0.2),
        F.cross_entropy(x, q, reduction="sum"), F.mse_loss(x, p), F.l1_loss(x, p, weight=q),
        F.smooth_l1_loss(x, p, beta=0.5), F.binary_cross_entropy(p, q, weight=w),
        F.binary_cross_entropy_with_logits(x, q, weight=w, pos_weight=w)), (x, t, p, q))


def test_weight_of_a_wider_dtype():
    """float64 weights with float32 logits: ember's result is float64 (its nll term runs
    in float32), so compare at float32 precision, not check_export's float64 1e-12."""
    x, t, w = _logits(N, C), _targets(N, ignored=[2]), _weight(np.float64)
    fn = lambda x, t: (F.nll_loss(x, t, weight=w),
                       F.cross_entropy(x, t, weight=w, label_smoothing=0.2, reduction="none"))
    model = E.onnx.export(fn, (x, t), None)
    for got, want in zip(run_onnx(model, [x.numpy(), t.numpy()]), ember_outputs(fn, (x, t))):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


# ---- regression losses -------------------------------------------------------------------

@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_regression_losses(opset, reduction):
    x, y, w = _logits(N, C), _logits(N, C, seed=1), _probs(N, C, seed=2)
    row = _logits(C, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)      # ember warns when they broadcast
        check_export(lambda x, y, row: (
            F.mse_loss(x, y, reduction=reduction), F.mse_loss(x, row, reduction=reduction),
            F.mse_loss(x, y, reduction=reduction, weight=w),
            F.l1_loss(x, y, reduction=reduction), F.l1_loss(row, x, reduction=reduction),
            F.l1_loss(x, y, reduction=reduction, weight=w),
            F.smooth_l1_loss(x, y, reduction=reduction),
            F.smooth_l1_loss(x, row, reduction=reduction, beta=0.5),
            F.smooth_l1_loss(x, y, reduction=reduction, beta=0.0)),
            (x, y, row), opset_version=opset)


# ---- binary losses -----------------------------------------------------------------------

@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy(opset, reduction):
    a = _rng(4).uniform(0, 1, (N, C)).astype(np.float32)
    a[0, :3] = [0.0, 1.0, 1e-30]                  # log clamped at -100, as ember
    p, t = E.tensor(a), _probs(N, C, seed=5)
    t[0, :2] = E.tensor([1.0, 0.0])
    w, w_row = _probs(N, C, seed=6), _weight()
    check_export(lambda p, t: (F.binary_cross_entropy(p, t, reduction=reduction),
                               F.binary_cross_entropy(p, t, w, reduction=reduction),
                               F.binary_cross_entropy(p, t, w_row, reduction=reduction)),
                 (p, t), opset_version=opset)


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_with_logits(opset, reduction):
    a = _rng(7).standard_normal((N, C)).astype(np.float32) * 5
    a[0, :4] = [100.0, -100.0, 40.0, -40.0]       # no overflow either way
    x, t = E.tensor(a), _probs(N, C, seed=8)
    w, pw = _probs(N, C, seed=9), _weight()
    m = check_export(lambda x, t: (
        F.binary_cross_entropy_with_logits(x, t, reduction=reduction),
        F.binary_cross_entropy_with_logits(x, t, w, reduction=reduction),
        F.binary_cross_entropy_with_logits(x, t, pos_weight=pw, reduction=reduction),
        F.binary_cross_entropy_with_logits(x, t, w, reduction=reduction, pos_weight=pw)),
        (x, t), opset_version=opset)
    assert "Exp" in ops_in(m)


# ---- nn Modules, dynamic batch -----------------------------------------------------------

def _module_cases():
    x, t = _logits(N, C), _targets(N, ignored=[2])
    p, q = _probs(N, C), _probs(N, C, seed=1)
    return [
        (nn.CrossEntropyLoss(weight=_weight(), label_smoothing=0.1), (x, t)),
        (nn.CrossEntropyLoss(reduction="none", ignore_index=3), (x, _with_repeats())),
        (nn.NLLLoss(weight=_weight(), reduction="sum"), (_log_probs(N, C), t)),
        (nn.MSELoss(), (x, q)),
        (nn.L1Loss(reduction="sum"), (x, q)),
        (nn.SmoothL1Loss(beta=0.3), (x, q)),
        (nn.BCELoss(weight=_weight()), (p, q)),
        (nn.BCEWithLogitsLoss(pos_weight=_weight(), reduction="none"), (x, q)),
    ]


@pytest.mark.parametrize("case", range(8))
def test_modules(case):
    module, inputs = _module_cases()[case]
    model = check_export(module, inputs)
    if getattr(module, "weight", None) is not None:
        assert "weight" in {i.name for i in model.graph.initializer}


def test_dynamic_batch():
    def fn(x, t, q):
        return (F.cross_entropy(x, t, weight=_weight(), label_smoothing=0.2),
                F.nll_loss(x, t, reduction="none"), F.mse_loss(x, q),
                F.binary_cross_entropy_with_logits(x, q, pos_weight=_weight()))

    small = (_logits(N, C), _targets(N, ignored=[1]), _probs(N, C))
    big = (_logits(9, C, seed=1), _targets(9, ignored=[4, 7], seed=1), _probs(9, C, seed=1))
    check_export(fn, small, dynamic_axes={0: [0], 1: [0], 2: [0]}, more_inputs=big)


def test_dynamic_classes_label_smoothing():
    """C follows a dynamic axis: eps / C is read from the input's shape."""
    x, p = _logits(N, C), F.softmax(_logits(N, C, seed=1), 1)
    t = _targets(N)
    check_export(lambda x, t, p: (F.cross_entropy(x, t, label_smoothing=0.2),
                                  F.cross_entropy(x, p, label_smoothing=0.2)),
                 (x, t, p), dynamic_axes={0: [1], 2: [1]},
                 more_inputs=(_logits(N, C + 2, seed=2), t, F.softmax(_logits(N, C + 2), 1)))


# ---- the g.fail paths (ember's own checks stop a trace before them) ----------------------

def _value(name, dtype, sizes):
    return OnnxValue(name, dtype, sizes, (False,) * len(sizes))


@pytest.mark.parametrize("call", [
    lambda g, x: loss_symbolics.mse_loss(g, x, x, "average", None),
    lambda g, x: loss_symbolics.l1_loss(g, x, x, "avg", None),
    lambda g, x: loss_symbolics.smooth_l1_loss(g, x, x, "max", 1.0),
    lambda g, x: loss_symbolics.binary_cross_entropy(g, x, x, None, "x"),
    lambda g, x: loss_symbolics.binary_cross_entropy_with_logits(g, x, x, None, None, ""),
    lambda g, x: loss_symbolics.nll_loss(g, x, x, None, "batchmean", -100),
    lambda g, x: loss_symbolics.cross_entropy_loss(g, x, x, None, "mean_all", -100, 0.0),
])
def test_unknown_reduction_fails(call):
    x = _value("x", E.float32, (N, C))
    with pytest.raises(OnnxExportError, match="reduction must be 'none', 'mean' or 'sum'"):
        call(GraphContext(17), x)


def test_negative_beta_fails():
    x = _value("x", E.float32, (N, C))
    with pytest.raises(OnnxExportError, match="beta must be >= 0"):
        loss_symbolics.smooth_l1_loss(GraphContext(17), x, x, "mean", -0.5)
