"""Embedding: init, padding row, forward, gradients, from_pretrained, repr."""
import numpy as np
import pytest
from helpers import assert_close, to_np

import ember as E
from ember import nn


def test_embedding_init_and_forward():
    E.manual_seed(0)
    m = nn.Embedding(1000, 50)
    w = to_np(m.weight)
    assert w.shape == (1000, 50) and abs(w.std() - 1) < 0.02 and abs(w.mean()) < 0.02
    idx = E.tensor([[1, 5], [5, 999]])
    assert_close(m(idx), w[[[1, 5], [5, 999]]])


def test_padding_idx_row_zero_and_no_grad():
    m = nn.Embedding(5, 3, padding_idx=-1, dtype=E.float64)
    assert m.padding_idx == 4
    assert to_np(m.weight)[4].tolist() == [0, 0, 0]
    m(E.tensor([4, 1, 4, 1])).sum().backward()
    g = to_np(m.weight.grad)
    assert g[4].tolist() == [0, 0, 0] and g[1].tolist() == [2, 2, 2]
    with pytest.raises(ValueError, match="padding_idx"):
        nn.Embedding(5, 3, padding_idx=5)


def test_from_pretrained():
    table = E.tensor(np.arange(6.0).reshape(3, 2))
    m = nn.Embedding.from_pretrained(table)
    assert not m.weight.requires_grad and m.num_embeddings == 3 and m.embedding_dim == 2
    assert_close(m(E.tensor([2])), np.array([[4.0, 5.0]]), dtype=E.float64)
    assert nn.Embedding.from_pretrained(table, freeze=False).weight.requires_grad
    with pytest.raises(ValueError, match="2-dimensional"):
        nn.Embedding.from_pretrained(E.ones(3))


def test_repr():
    assert repr(nn.Embedding(10, 3)) == "Embedding(10, 3)"
    assert repr(nn.Embedding(10, 3, padding_idx=0, max_norm=1.0)) == \
        "Embedding(10, 3, padding_idx=0, max_norm=1.0)"
