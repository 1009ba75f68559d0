"""embedding_bag against a numpy float64 reference that reduces each bag by hand: every
mode, offsets and include_last_offset, 2-D input, per_sample_weights, padding_idx, empty
bags, max_norm, gradients (gradcheck and the padding row), errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError, ShapeError
from helpers import assert_close

INPUT = np.array([1, 2, 4, 5, 4, 3, 2, 0])
OFFSETS = np.array([0, 2, 2, 5])               # bags [1 2] [] [4 5 4] [3 2 0]


def _table(seed=0, rows=6, dim=3):
    return np.random.default_rng(seed).normal(size=(rows, dim))


def _np_bags(weight, bags, mode, psw=None, padding_idx=None):
    """Each bag (positions into INPUT) reduced by hand; padding_idx left out, empty -> 0."""
    out = np.zeros((len(bags), weight.shape[1]))
    for b, positions in enumerate(bags):
        rows = [weight[INPUT[p]] * (1.0 if psw is None else psw[p]) for p in positions
                if INPUT[p] != padding_idx]
        if rows:
            out[b] = {"sum": np.sum, "mean": np.mean, "max": np.max}[mode](rows, axis=0)
    return out


def _offset_bags(offsets, m, include_last_offset=False):
    starts = list(offsets[:-1]) if include_last_offset else list(offsets)
    ends = starts[1:] + [m]
    return [range(s, e) for s, e in zip(starts, ends)]


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 2, -2])
def test_offsets(mode, padding_idx):
    w = _table()
    out = F.embedding_bag(E.tensor(INPUT), E.tensor(w), E.tensor(OFFSETS), mode=mode,
                          padding_idx=padding_idx)
    pad = None if padding_idx is None else padding_idx % 6
    assert_close(out, _np_bags(w, _offset_bags(OFFSETS, 8), mode, padding_idx=pad))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_include_last_offset_and_2d_input(mode):
    w = _table(1)
    last = F.embedding_bag(E.tensor(INPUT), E.tensor(w), E.tensor([0, 2, 2, 5, 8]),
                           mode=mode, include_last_offset=True)
    assert_close(last, _np_bags(w, _offset_bags(OFFSETS, 8), mode))
    two_d = F.embedding_bag(E.tensor(INPUT.reshape(2, 4)), E.tensor(w), mode=mode)
    assert_close(two_d, _np_bags(w, [range(0, 4), range(4, 8)], mode))


def test_per_sample_weights_sum():
    w = _table(2)
    psw = np.linspace(0.5, 2.0, 8)
    out = F.embedding_bag(E.tensor(INPUT), E.tensor(w), E.tensor(OFFSETS), mode="sum",
                          per_sample_weights=E.tensor(psw), padding_idx=2)
    assert_close(out, _np_bags(w, _offset_bags(OFFSETS, 8), "sum", psw, padding_idx=2))


def test_gradients():
    w = E.tensor(_table(3), requires_grad=True)
    psw = E.tensor(np.linspace(0.5, 2.0, 8), requires_grad=True)
    inp, off = E.tensor(INPUT), E.tensor(OFFSETS)

    def summed(w, psw):
        return F.embedding_bag(inp, w, off, mode="sum", per_sample_weights=psw)
    assert gradcheck(summed, (w, psw))
    assert gradgradcheck(summed, (w, psw))
    for mode in ("mean", "max"):
        assert gradcheck(lambda w: F.embedding_bag(inp, w, off, mode=mode, padding_idx=2),
                         (w,))


def test_padding_row_and_max_route_gradient():
    w = E.tensor(_table(4), requires_grad=True)
    F.embedding_bag(E.tensor(INPUT), w, E.tensor(OFFSETS), mode="max", padding_idx=2) \
        .sum().backward()
    g = w.grad.numpy()
    assert not g[2].any()                                   # the padding row
    # each output element's gradient goes to exactly one row of its bag
    assert np.allclose(g.sum(0), 3.0)                       # three non-empty bags


def test_scale_grad_by_freq_divides_by_counts():
    w = E.tensor(_table(5), requires_grad=True)
    F.embedding_bag(E.tensor(INPUT), w, E.tensor(OFFSETS), mode="sum",
                    scale_grad_by_freq=True).sum().backward()
    # each occurrence contributes 1 / count: every row present gets exactly 1
    assert_close(w.grad, np.where(np.isin(np.arange(6), INPUT), 1.0, 0.0)[:, None]
                 * np.ones((1, 3)))


def test_max_norm_renormalizes_in_place():
    w = E.tensor(_table(6) * 5)
    F.embedding_bag(E.tensor(INPUT), w, E.tensor(OFFSETS), max_norm=1.0)
    norms = np.linalg.norm(w.numpy(), axis=1)
    assert np.allclose(norms[np.unique(INPUT)], 1.0, atol=1e-6)


def test_all_bags_empty():
    w = _table()
    out = F.embedding_bag(E.tensor(np.zeros(0, dtype=np.int64)), E.tensor(w),
                          E.tensor([0, 0]), mode="max")
    assert_close(out, np.zeros((2, 3)))


W = E.zeros(6, 3)
I, O = E.tensor(INPUT), E.tensor(OFFSETS)


@pytest.mark.parametrize("call, exc, words", [
    (lambda: F.embedding_bag(I, W, O, mode="min"), ValueError, "mode"),
    (lambda: F.embedding_bag(I, W), ValueError, "1-D offsets"),
    (lambda: F.embedding_bag(I.view(2, 4), W, O), ValueError, "offsets has to be None"),
    (lambda: F.embedding_bag(I, W, E.tensor([1, 2])), RuntimeError, "offsets[0] has to be 0"),
    (lambda: F.embedding_bag(I, W, E.tensor([0, 9])), RuntimeError, "greater than input"),
    (lambda: F.embedding_bag(I, W, E.tensor([0, 5, 2])), RuntimeError, "non-decreasing"),
    (lambda: F.embedding_bag(I, W, O, mode="mean", per_sample_weights=E.ones(8)),
     NotImplementedError, "mode='sum'"),
    (lambda: F.embedding_bag(I, W, O, mode="sum", per_sample_weights=E.ones(7)), ValueError,
     "input's shape"),
    (lambda: F.embedding_bag(I.float(), W, O), DtypeError, "int64 or int32"),
    (lambda: F.embedding_bag(I, W, O.float()), DtypeError, "offsets"),
    (lambda: F.embedding_bag(E.tensor([1, 7]), W, E.tensor([0])), IndexError, "out of range"),
    (lambda: F.embedding_bag(I, W, O, padding_idx=6), ValueError, "padding_idx"),
    (lambda: F.embedding_bag(I, E.zeros(6), O), ShapeError, "(num_embeddings"),
    (lambda: F.embedding_bag(I.view(2, 2, 2), W), ShapeError, "(B, N)"),
])
def test_errors(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    assert words in str(info.value)
