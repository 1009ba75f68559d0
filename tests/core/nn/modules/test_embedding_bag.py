"""EmbeddingBag: forward against a numpy reference, the padding row, from_pretrained
(shared and frozen), parameter name and state_dict, repr, construction errors."""
import numpy as np
import pytest
from helpers import assert_close

import ember as E
from ember import nn


def test_forward_modes_and_padding_row():
    E.manual_seed(0)
    m = nn.EmbeddingBag(6, 3, mode="sum", padding_idx=-1)
    assert m.padding_idx == 5
    w = m.weight.detach().numpy()
    assert not w[5].any()                              # padding row zeroed
    out = m(E.tensor([1, 5, 2, 2, 0]), E.tensor([0, 2]))
    assert_close(out, np.stack([w[1], w[2] * 2 + w[0]]))
    psw = E.tensor([2.0, 1.0, 0.5, 0.5, 1.0])
    assert_close(m(E.tensor([1, 5, 2, 2, 0]), E.tensor([0, 2]), psw),
                 np.stack([2 * w[1], w[2] + w[0]]))
    m.mode = "max"
    assert_close(m(E.tensor([[1, 2], [3, 3]])), np.stack([np.maximum(w[1], w[2]), w[3]]))


def test_from_pretrained_shares_and_freezes():
    table = E.tensor(np.arange(12.0).reshape(4, 3))
    m = nn.EmbeddingBag.from_pretrained(table, mode="mean")
    assert m.weight.requires_grad is False
    assert_close(m(E.tensor([[0, 2]])), np.array([[3.0, 4.0, 5.0]]))
    assert nn.EmbeddingBag.from_pretrained(table, freeze=False).weight.requires_grad
    with pytest.raises(ValueError, match="2-dimensional"):
        nn.EmbeddingBag.from_pretrained(E.zeros(3))


def test_gradient_state_dict_and_repr():
    m = nn.EmbeddingBag(5, 2, mode="mean", include_last_offset=True)
    assert list(m.state_dict()) == ["weight"]
    m(E.tensor([0, 1, 1, 4]), E.tensor([0, 1, 4])).sum().backward()
    assert_close(m.weight.grad, np.array([[1.0, 1], [2 / 3, 2 / 3], [0, 0], [0, 0],
                                          [1 / 3, 1 / 3]]))
    assert repr(m) == "EmbeddingBag(5, 2, mode='mean')"
    assert repr(nn.EmbeddingBag(5, 2, max_norm=1.0, mode="max", padding_idx=0)) == \
        "EmbeddingBag(5, 2, max_norm=1.0, mode='max', padding_idx=0)"


def test_construction_errors():
    with pytest.raises(ValueError, match="mode"):
        nn.EmbeddingBag(3, 2, mode="min")
    with pytest.raises(ValueError, match="padding_idx"):
        nn.EmbeddingBag(3, 2, padding_idx=3)
    with pytest.raises(ValueError, match="does not match"):
        nn.EmbeddingBag(3, 2, _weight=E.zeros(2, 2))
