"""AdaptiveLogSoftmaxWithLoss against a numpy float64 reference built from its parameters:
forward (output, loss), log_prob, predict, unbatched input, gradients, PyTorch's parameter
names, errors."""
import numpy as np
import pytest
from helpers import assert_close

import ember as E
from ember import nn
from ember.autograd import gradcheck


def _log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def _np_full_log_prob(m, x):
    p = {k: v.detach().numpy() for k, v in m.named_parameters()}
    head = x @ p["head.weight"].T + p.get("head.bias", 0)
    head_lp = _log_softmax(head)
    pieces = [head_lp[:, :m.shortlist_size]]
    for i in range(m.n_clusters):
        tail = (x @ p[f"tail.{i}.0.weight"].T) @ p[f"tail.{i}.1.weight"].T
        pieces.append(_log_softmax(tail) + head_lp[:, m.shortlist_size + i:][:, :1])
    return np.concatenate(pieces, 1)


def _model(head_bias=True):
    E.manual_seed(0)
    return nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 6, 9], div_value=2.0,
                                         head_bias=head_bias, dtype=E.float64)


def test_parameter_names_and_shapes():
    m = _model()
    shapes = {k: tuple(v.shape) for k, v in m.state_dict().items()}
    assert shapes == {"head.weight": (6, 8), "head.bias": (6,), "tail.0.0.weight": (4, 8),
                      "tail.0.1.weight": (3, 4), "tail.1.0.weight": (2, 8),
                      "tail.1.1.weight": (3, 2), "tail.2.0.weight": (1, 8),
                      "tail.2.1.weight": (3, 1)}
    assert m.cutoffs == [3, 6, 9, 12] and m.head_size == 6
    assert "head.bias" not in _model(head_bias=False).state_dict()


def test_forward_log_prob_predict():
    m = _model()
    xn = np.random.default_rng(1).normal(size=(7, 8))
    target = np.array([0, 2, 4, 11, 7, 9, 5])
    full = _np_full_log_prob(m, xn)
    out = m(E.tensor(xn), E.tensor(target))
    assert type(out).__name__ == "_ASMoutput" and out._fields == ("output", "loss")
    picked = full[np.arange(7), target]
    assert_close(out.output, picked)
    assert_close(out.loss, -picked.mean())
    assert_close(m.log_prob(E.tensor(xn)), full)
    assert_close(E.exp(m.log_prob(E.tensor(xn))).sum(1), np.ones(7))
    assert m.predict(E.tensor(xn)).tolist() == full.argmax(1).tolist()


def test_unbatched():
    m = _model()
    xn = np.random.default_rng(2).normal(size=8)
    full = _np_full_log_prob(m, xn[None])[0]
    out = m(E.tensor(xn), E.tensor(10))
    assert tuple(out.output.shape) == ()
    assert_close(out.output, np.array(full[10]))
    assert_close(m.log_prob(E.tensor(xn)), full)
    assert m.predict(E.tensor(xn)).item() == int(full.argmax())


def test_gradients():
    m = _model()
    x = E.tensor(np.random.default_rng(3).normal(size=(4, 8)), requires_grad=True)
    target = E.tensor([1, 4, 8, 11])
    assert gradcheck(lambda x: m(x, target).loss, (x,))
    m(x, target).loss.backward()
    assert all(p.grad is not None for p in m.parameters())


@pytest.mark.parametrize("cutoffs", [[], [6, 3], [0, 3], [3, 12], [3, 3], [2.5]])
def test_bad_cutoffs(cutoffs):
    with pytest.raises(ValueError, match="cutoffs should be"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 12, cutoffs)


def test_forward_errors():
    m = _model()
    with pytest.raises(RuntimeError, match=r"should be in \[0, 11\]"):
        m(E.zeros(2, 8, dtype=E.float64), E.tensor([0, 12]))
    with pytest.raises(RuntimeError, match="same size in the batch"):
        m(E.zeros(2, 8, dtype=E.float64), E.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="0D target tensor expects 1D"):
        m(E.zeros(2, 8, dtype=E.float64), E.tensor(0))
    with pytest.raises(RuntimeError, match="multi-target not supported"):
        m(E.zeros(2, 8, dtype=E.float64), E.zeros(2, 2, dtype=E.int64))
