"""nll_loss_forward and nll_loss_backward (kernels/loss.py) against loops in float64 that
follow PyTorch's CPU kernel: ignored targets add nothing (and write +0 for 'none'), 'mean'
divides by the summed weights of the targets that count, total_weight is that sum."""
import warnings

import numpy as np
import pytest
from helpers import FLOAT_DTYPES, LOW_FLOAT_DTYPES, assert_close, make, rand, to_np

import ember as E
import ember.nn.functional as F
from ember.errors import DtypeError, ShapeError


def np_nll(x, t, w, reduction, ignore_index):
    """(output, total_weight, grad of the output's sum) of x (N, C, *D) or (C,), float64."""
    x = np.asarray(x, np.float64)
    axis = 0 if x.ndim == 1 else 1
    xs = np.moveaxis(x, axis, -1).reshape(-1, x.shape[axis])   # (rows, C)
    ts = np.asarray(t).reshape(-1)
    out, grad, total = np.zeros(len(ts)), np.zeros_like(xs), 0.0
    for i, c in enumerate(ts):
        if c == ignore_index:
            continue
        wc = 1.0 if w is None else float(w[c])
        out[i] = -wc * xs[i, c]
        grad[i, c] = -wc
        total += wc
    grad = np.moveaxis(grad.reshape(np.moveaxis(x, axis, -1).shape), -1, axis)
    if reduction == "none":
        return out.reshape(np.shape(t)), total, grad
    if reduction == "sum":
        return out.sum(), total, grad
    return out.sum() / total, total, grad / total


CASES = [  # (input shape, targets, ignore_index)
    ((4, 3), [1, 2, 0, 2], -100),
    ((4, 3), [1, -100, 0, 2], -100),
    ((4, 3), [1, 2, 0, 2], 2),            # ignore_index is itself a class
    ((3,), 1, -100),                       # (C,) input, 0-d target
    ((2, 3, 2, 2), [[[0, 2], [1, 1]], [[2, -1], [0, 1]]], -1),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + LOW_FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape,target,ignore_index", CASES)
def test_forward_and_backward_match_the_loops(shape, target, ignore_index, weighted,
                                              reduction, dtype):
    x, _ = make(shape, dtype, seed=len(shape))
    t = E.tensor(np.array(target, dtype=np.int64))
    w = E.tensor(np.array([0.5, 2.0, 1.5]), dtype=dtype) if weighted else None
    out, total = E.nll_loss_forward(x, t, w, reduction, ignore_index)
    ref, ref_total, ref_grad = np_nll(to_np(x), target, None if w is None else to_np(w),
                                      reduction, ignore_index)
    assert_close(out, ref, dtype)
    assert total.dtype is (E.float32 if dtype in LOW_FLOAT_DTYPES else dtype)
    assert float(total) == pytest.approx(ref_total, rel=1e-3)
    go = E.ones(out.shape, dtype=dtype)
    grad = E.nll_loss_backward(go, x, t, w, reduction, ignore_index, total)
    assert_close(grad, ref_grad, dtype)


def test_ignored_targets_give_plus_zero_and_no_nan():
    # class 0 (where ignored targets point) holds -inf: -inf * 0 must not leak a NaN
    x = E.tensor([[-np.inf, -1.0], [-np.inf, -2.0]])
    t = E.tensor([1, -100])
    out, total = E.nll_loss_forward(x, t, None, "none", -100)
    assert to_np(out).tolist() == [1.0, 0.0] and not np.signbit(to_np(out)[1])
    assert float(E.nll_loss_forward(x, t, None, "sum", -100)[0]) == 1.0
    assert float(total) == 1.0
    grad = E.nll_loss_backward(E.tensor([np.nan, np.nan]), x, t, None, "none", -100, total)
    assert np.isnan(to_np(grad)[0, 1]) and (to_np(grad)[1] == 0).all()


def test_mean_with_nothing_counted_is_nan_without_a_warning():
    x = E.zeros(2, 3)
    t = E.tensor([-100, -100])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, total = E.nll_loss_forward(x, t, None, "mean", -100)
        grad = E.nll_loss_backward(E.tensor(1.0), x, t, None, "mean", -100, total)
    assert np.isnan(float(out)) and float(total) == 0
    assert (to_np(grad) == 0).all()


def test_int32_and_uint8_targets():
    x = rand(3, 4)
    for dtype in (E.int32, E.uint8):
        t = E.tensor([3, 0, 1], dtype=dtype)
        assert_close(E.nll_loss_forward(x, t, None, "sum", -100)[0],
                     np_nll(to_np(x), [3, 0, 1], None, "sum", -100)[0])


@pytest.mark.parametrize("call,error,match", [
    (lambda x: E.nll_loss_forward(x, E.tensor([1, 4]), None, "mean", -100), IndexError,
     r"Target 4 is out of bounds: class indices must be in \[0, 4\)"),
    (lambda x: E.nll_loss_forward(x, E.tensor([-2, 0]), None, "mean", -100), IndexError,
     r"Target -2 is out of bounds"),
    (lambda x: E.nll_loss_forward(x, E.tensor([1, 2, 0]), None, "mean", -100), ShapeError,
     r"expected target of shape \(2,\)"),
    (lambda x: E.nll_loss_forward(x, E.tensor([1.0, 2.0]), None, "mean", -100), DtypeError,
     "must be integral"),
    (lambda x: E.nll_loss_forward(x, E.tensor([1, 2]), E.ones(3), "mean", -100), ShapeError,
     r"expected weight of shape \(4,\)"),
    (lambda x: E.nll_loss_forward(x, E.tensor([1, 2]), None, "avg", -100), ValueError,
     "reduction must be"),
    (lambda x: E.nll_loss_backward(E.ones(2), x, E.tensor([1, 2]), None, "mean", -100,
                                   E.tensor(2.0)),
     ShapeError, r"expected grad_output of shape \(\)"),
    (lambda x: E.nll_loss_forward(E.tensor([[1, 2]]), E.tensor([1]), None, "sum", -100),
     NotImplementedError, "nll_loss_forward"),
])
def test_bad_calls_raise_clear_errors(call, error, match):
    with pytest.raises(error, match=match):
        call(rand(2, 4, dtype=E.float32))


def test_cross_entropy_records_one_fused_node():
    # (N, C) inputs: log_softmax and nll_loss in one kernel pair (backends/kernels/
    # loss_fused.py), one node; other shapes keep log_softmax then the nll kernel
    x = rand(5, 3, requires_grad=True)
    loss = F.cross_entropy(x, E.tensor([0, 2, 1, 1, 0]))
    assert loss.grad_fn.name() == "CrossEntropyLossBackward0"
    assert loss.grad_fn.next_functions[0][0].name() == "AccumulateGrad"
    x3 = rand(5, 3, 2, requires_grad=True)
    loss = F.cross_entropy(x3, E.tensor([[0, 2], [1, 1], [0, 0], [2, 2], [1, 0]]))
    assert loss.grad_fn.name() == "NllLossForwardBackward0"
    assert loss.grad_fn.next_functions[0][0].name() == "LogSoftmaxBackward0"


def test_a_weight_that_requires_grad_takes_the_differentiable_form():
    x = rand(5, 3, requires_grad=True)
    w = E.tensor([0.5, 2.0, 1.5], requires_grad=True)
    t = E.tensor([0, 2, 1, 1, 0])
    F.cross_entropy(x, t, weight=w).backward()
    assert w.grad is not None
    # d mean / d w_c = sum over targets of class c of (-logp - loss) / total
    logp = to_np(F.log_softmax(x, 1).detach())
    picked = logp[np.arange(5), to_np(t)]
    loss = -(to_np(w)[to_np(t)] * picked).sum() / to_np(w)[to_np(t)].sum()
    total = to_np(w)[to_np(t)].sum()
    ref = [sum(-picked[i] - loss for i in range(5) if to_np(t)[i] == c) / total
           for c in range(3)]
    assert_close(w.grad, np.array(ref))
    # the kernel itself refuses, naming the way out
    x2 = rand(5, 3, requires_grad=True)
    out = E.nll_loss_forward(x2, t, w, "mean", -100)[0]
    with pytest.raises(NotImplementedError, match="w.r.t. weight is not implemented"):
        out.backward()
