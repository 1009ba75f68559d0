"""ctc_loss against a numpy float64 forward recursion and, for tiny T, a brute-force sum
over every alignment: padded and concatenated targets, batched and unbatched input,
lengths as tensors or tuples, every reduction, zero_infinity, gradcheck and
gradgradcheck of the exact derivative, errors."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError, ShapeError
from helpers import assert_close

REDUCTIONS = ["none", "mean", "sum"]


def _log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _np_ctc(lp, target, blank=0):
    """-log p(target | lp) for one sequence lp (T, C) by the alpha recursion."""
    t_len = lp.shape[0]
    ext = [blank]
    for lab in target:
        ext += [lab, blank]
    if t_len == 0:
        return 0.0 if not target else np.inf
    alpha = np.full(len(ext), -np.inf)
    alpha[0] = lp[0, blank]
    if len(ext) > 1:
        alpha[1] = lp[0, ext[1]]
    for t in range(1, t_len):
        new = np.full(len(ext), -np.inf)
        for s in range(len(ext)):
            terms = [alpha[s]] + ([alpha[s - 1]] if s >= 1 else [])
            if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                terms.append(alpha[s - 2])
            new[s] = np.logaddexp.reduce(terms) + lp[t, ext[s]]
        alpha = new
    tail = alpha[-2] if len(ext) > 1 else -np.inf
    return -np.logaddexp(alpha[-1], tail)


def _brute_ctc(lp, target, blank=0):
    """-log of the summed probability of every path that collapses to target."""
    t_len, c = lp.shape
    total = 0.0
    for path in itertools.product(range(c), repeat=t_len):
        merged = [k for i, k in enumerate(path) if i == 0 or k != path[i - 1]]
        if [k for k in merged if k != blank] == list(target):
            total += np.exp(sum(lp[t, k] for t, k in enumerate(path)))
    return -np.log(total) if total > 0 else np.inf


def _np_batch(lp, targets, in_lens, tg_lens, blank, reduction, zero_infinity=False):
    losses = np.array([_np_ctc(lp[:il, n], list(targets[n][:tl]), blank)
                       for n, (il, tl) in enumerate(zip(in_lens, tg_lens))])
    if zero_infinity:
        losses = np.where(np.isinf(losses), 0.0, losses)
    if reduction == "mean":
        return (losses / np.maximum(np.array(tg_lens), 1)).mean()
    return losses.sum() if reduction == "sum" else losses


def _data(t=6, n=3, c=5, s=3, seed=0):
    rng = np.random.default_rng(seed)
    lp = _log_softmax(rng.normal(size=(t, n, c)))
    targets = rng.integers(1, c, size=(n, s))
    return lp, targets


def test_recursion_matches_brute_force():
    # the numpy reference itself, against every alignment, repeats and blanks included
    rng = np.random.default_rng(1)
    for target in ([1, 2], [1, 1], [2], [], [1, 2, 1]):
        lp = _log_softmax(rng.normal(size=(4, 3)))
        assert np.isclose(_np_ctc(lp, target), _brute_ctc(lp, target))


@pytest.mark.parametrize("target", [[1, 2], [1, 1], [2], [], [2, 1, 2]])
def test_tiny_against_brute_force(target):
    lp = _log_softmax(np.random.default_rng(2).normal(size=(4, 1, 3)))
    out = F.ctc_loss(E.tensor(lp), E.tensor([target or [0]]), [4], [len(target)],
                     reduction="sum")
    assert_close(out, np.array(_brute_ctc(lp[:, 0], target)))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", [E.float32, E.float64])
def test_padded_targets_variable_lengths(reduction, dtype):
    lp, targets = _data()
    in_lens, tg_lens = [6, 4, 5], [3, 1, 2]
    out = F.ctc_loss(E.tensor(lp).to(dtype), E.tensor(targets), in_lens, tg_lens,
                     reduction=reduction)
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype is E.float32 else {}
    assert out.dtype is dtype
    assert_close(out, _np_batch(lp, targets, in_lens, tg_lens, 0, reduction), **tol)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_concatenated_targets_and_tensor_lengths(reduction):
    lp, targets = _data()
    in_lens, tg_lens = [6, 5, 3], [2, 3, 1]
    flat = np.concatenate([targets[i, :k] for i, k in enumerate(tg_lens)])
    out = F.ctc_loss(E.tensor(lp), E.tensor(flat), E.tensor(in_lens), E.tensor(tg_lens),
                     reduction=reduction)
    padded = F.ctc_loss(E.tensor(lp), E.tensor(targets), tuple(in_lens), tuple(tg_lens),
                        reduction=reduction)
    assert_close(out, _np_batch(lp, targets, in_lens, tg_lens, 0, reduction))
    assert_close(out, padded.numpy())


def test_unbatched_input():
    lp, targets = _data(n=1)
    out = F.ctc_loss(E.tensor(lp[:, 0]), E.tensor(targets[0]), 6, 3, reduction="none")
    assert tuple(out.shape) == ()
    assert_close(out, np.array(_np_ctc(lp[:, 0], list(targets[0]))))
    mean = F.ctc_loss(E.tensor(lp[:, 0]), E.tensor(targets[0]), E.tensor(6), E.tensor(3))
    assert_close(mean, np.array(_np_ctc(lp[:, 0], list(targets[0])) / 3))


def test_other_blank_and_padding_past_length_ignored():
    lp, targets = _data(c=4)
    targets = np.where(targets == 3, 1, targets) - 1          # labels in {0, 1, 2}
    padded = targets.copy()
    padded[1, 1:] = 99                                        # past target_lengths[1]
    out = F.ctc_loss(E.tensor(lp), E.tensor(padded), [6, 6, 6], [3, 1, 3], blank=3,
                     reduction="none")
    assert_close(out, _np_batch(lp, targets, [6, 6, 6], [3, 1, 3], 3, "none"))


def test_empty_targets_and_zero_input_length():
    lp, targets = _data()
    out = F.ctc_loss(E.tensor(lp), E.tensor(targets), [6, 0, 4], [0, 0, 2], reduction="none")
    ref = _np_batch(lp, targets, [6, 0, 4], [0, 0, 2], 0, "none")
    assert_close(out, ref)
    assert out.tolist()[1] == 0.0


def test_impossible_alignment_and_zero_infinity():
    lp, _ = _data()
    targets = np.array([[1, 1, 1], [2, 3, 4], [1, 2, 3]])     # 1 1 1 needs 5 frames
    x = E.tensor(lp, requires_grad=True)
    out = F.ctc_loss(x, E.tensor(targets), [4, 6, 6], [3, 3, 3], reduction="none")
    assert np.isinf(out.tolist()[0]) and np.isfinite(out.tolist()[1:]).all()
    zeroed = F.ctc_loss(x, E.tensor(targets), [4, 6, 6], [3, 3, 3], reduction="sum",
                        zero_infinity=True)
    assert_close(zeroed, np.array(sum(out.tolist()[1:])))
    zeroed.backward()
    g = x.grad.numpy()
    assert np.isfinite(g).all() and not g[:, 0].any()        # no gradient, not NaN


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradcheck_exact_derivative(reduction):
    rng = np.random.default_rng(3)
    x = E.tensor(rng.normal(size=(4, 2, 3)), requires_grad=True)   # not normalized
    targets = E.tensor([[1, 2], [2, 2]])

    def fn(x):
        return F.ctc_loss(x, targets, [4, 3], [2, 1], reduction=reduction)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_gradient_through_log_softmax_against_numpy():
    # d loss / d logits = softmax - occupancy: checked by central differences of the
    # numpy reference
    rng = np.random.default_rng(4)
    logits = rng.normal(size=(5, 1, 4))
    target = [1, 3]
    x = E.tensor(logits, requires_grad=True)
    F.ctc_loss(E.log_softmax(x, 2), E.tensor([target]), [5], [2], reduction="sum").backward()
    num = np.zeros_like(logits)
    for idx in np.ndindex(*logits.shape):
        for sign in (1, -1):
            z = logits.copy()
            z[idx] += sign * 1e-6
            num[idx] += sign * _np_ctc(_log_softmax(z)[:, 0], target) / 2e-6
    assert_close(x.grad, num, rtol=1e-5, atol=1e-6)


def test_module_matches_functional():
    lp, targets = _data()
    m = E.nn.CTCLoss(blank=0, reduction="sum", zero_infinity=True)
    out = m(E.tensor(lp), E.tensor(targets), [6, 6, 6], [3, 3, 3])
    assert_close(out, _np_batch(lp, targets, [6, 6, 6], [3, 3, 3], 0, "sum"))


def _call(lp=None, targets=None, il=(6, 6, 6), tl=(3, 3, 3), **kw):
    lp0, tg0 = _data()
    lp = E.tensor(lp0) if lp is None else lp
    targets = E.tensor(tg0) if targets is None else targets
    return F.ctc_loss(lp, targets, il, tl, **kw)


@pytest.mark.parametrize("kwargs, exc, words", [
    ({"il": (7, 6, 6)}, ValueError, "input_lengths in [0, 6]"),
    ({"il": (6, 6)}, ShapeError, "batch_size"),
    ({"tl": (3, 3)}, ShapeError, "batch_size"),
    ({"tl": (4, 3, 3)}, ValueError, "target_lengths"),
    ({"blank": 5}, ValueError, "blank must be in label range"),
    ({"reduction": "avg"}, ValueError, "reduction"),
    ({"targets": E.tensor([1, 2, 3, 4])}, ShapeError, "sum(target_lengths) = 9"),
    ({"targets": E.ones(3, 3)}, DtypeError, "integral targets"),
    ({"targets": E.tensor([[1, 9, 2]] * 3)}, IndexError, "label 9 is out of range"),
    ({"lp": E.zeros(6, 3, 5, 2)}, ShapeError, "(T, N, C)"),
    ({"lp": E.zeros(6, 3, 5, dtype=E.int64)}, DtypeError, "floating log_probs"),
    ({"il": E.tensor([6.0, 6.0, 6.0])}, DtypeError, "integral input_lengths"),
    ({"il": 1.5}, TypeError, "a tuple or a list of ints"),
])
def test_errors(kwargs, exc, words):
    with pytest.raises(exc) as info:
        _call(**kwargs)
    assert words in str(info.value)
