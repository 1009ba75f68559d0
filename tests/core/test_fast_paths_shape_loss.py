"""The faster forms of issue 30 against float64 references: cdist's and pdist's GEMM
form past 25 rows, equal's early exit, one_hot, tril/triu_indices computed per row, and
multilabel_margin_loss's (N, K, C) hinge with K the longest target list."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from helpers import assert_close


def _np_cdist(a, b):
    return np.sqrt(((a[..., :, None, :] - b[..., None, :, :]) ** 2).sum(-1))


@pytest.mark.parametrize("mode", [None, "use_mm_for_euclid_dist",
                                  "use_mm_for_euclid_dist_if_necessary"])
@pytest.mark.parametrize("sa,sb", [((30, 4), (7, 4)), ((2, 26, 3), (1, 5, 3)), ((3, 2), (4, 2))])
def test_cdist_mm_matches_reference(mode, sa, sb):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    assert_close(E.cdist(E.tensor(a), E.tensor(b), compute_mode=mode), _np_cdist(a, b))
    a32 = E.tensor(a.astype(np.float32))
    out = E.cdist(a32, E.tensor(b.astype(np.float32)), compute_mode=mode)
    assert out.dtype is E.float32
    np.testing.assert_allclose(out.numpy(), _np_cdist(a, b), rtol=1e-4, atol=1e-4)


def test_cdist_mm_gradients_and_zero_distance():
    rng = np.random.default_rng(1)
    x = E.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    y = E.tensor(rng.standard_normal((5, 3)), requires_grad=True)
    f = lambda s, t: E.cdist(s, t, compute_mode="use_mm_for_euclid_dist")  # noqa: E731
    assert gradcheck(f, (x, y))
    assert gradgradcheck(f, (x, y))
    z = E.ones(1, 2, dtype=E.float64, requires_grad=True)
    d = E.cdist(z, E.ones(1, 2, dtype=E.float64), compute_mode="use_mm_for_euclid_dist")
    d.sum().backward()
    assert float(d) == 0.0
    assert_close(z.grad, np.zeros((1, 2)))  # a zero distance: a zero gradient


def test_pdist_mm_matches_reference_and_gradients():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((30, 3))
    i, j = np.triu_indices(30, 1)
    assert_close(F.pdist(E.tensor(x)), np.sqrt(((x[i] - x[j]) ** 2).sum(-1)))
    t = E.tensor(x, requires_grad=True)
    assert gradcheck(F.pdist, (t,))
    assert gradgradcheck(F.pdist, (t,))


@pytest.mark.parametrize("n", [0, 1, 4095, 4096, 4097, 20000])
def test_equal_blocks(n):
    a = E.arange(n, dtype=E.float32)
    assert E.equal(a, a.clone())
    for k in {0, n // 2, n - 1} if n else set():
        b = a.clone()
        b[k] = -1.0
        assert not E.equal(a, b)
    assert not E.equal(a, E.arange(n + 1, dtype=E.float32))
    m = E.arange(12.0).reshape(3, 4)
    assert E.equal(m.t(), m.t().contiguous())


def test_one_hot_matches_reference():
    labels = np.array([[3, 0], [1, 3], [2, 2]])
    expected = (labels[..., None] == np.arange(5)).astype(np.int64)
    out = F.one_hot(E.tensor(labels), 5)
    assert out.dtype is E.int64 and np.array_equal(out.numpy(), expected)
    assert np.array_equal(F.one_hot(E.tensor(labels)).numpy(), expected[..., :4])
    assert tuple(F.one_hot(E.zeros(0, 2, dtype=E.int64), 3).shape) == (0, 2, 3)


@pytest.mark.parametrize("row,col,offset", itertools.product([0, 1, 4, 7], [0, 1, 5, 7],
                                                             [-8, -2, 0, 1, 3, 9]))
def test_triangle_indices_match_numpy(row, col, offset):
    for fn, ref in ((E.tril_indices, np.tril_indices), (E.triu_indices, np.triu_indices)):
        expected = np.stack(ref(row, offset, col)) if row and col else np.zeros((2, 0))
        out = fn(row, col, offset)
        assert out.dtype is E.int64
        assert np.array_equal(out.numpy(), expected.astype(np.int64))


def _np_multilabel(x, t):
    out = []
    for row, tr in zip(x, t):
        targets = list(itertools.takewhile(lambda c: c >= 0, tr))
        others = [i for i in range(len(row)) if i not in targets]
        out.append(sum(max(0.0, 1 - row[j] + row[i]) for j in targets for i in others)
                   / len(row))
    return np.array(out)


def test_multilabel_margin_loss_lists_of_every_length():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 6))
    t = np.full((5, 6), -1)
    t[0, :2] = [4, 4]           # a repeat counts twice
    t[1, :6] = rng.integers(0, 6, 6)  # a full list, no -1
    t[3, 0] = 5
    t[4, :3] = [1, 2, 0]
    t[4, 4] = 3                 # after the first -1: ignored
    xt = E.tensor(x, requires_grad=True)
    out = F.multilabel_margin_loss(xt, E.tensor(t), reduction="none")
    assert_close(out, _np_multilabel(x, t))
    assert gradcheck(lambda s: F.multilabel_margin_loss(s, E.tensor(t)), (xt,))
    none = F.multilabel_margin_loss(E.tensor(x), E.full((5, 6), -1), reduction="none")
    assert_close(none, np.zeros(5))
