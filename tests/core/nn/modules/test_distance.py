"""Distance layers: forward against numpy references, options, repr."""
import numpy as np
from helpers import assert_close, make

import ember as E
from ember import nn


def test_cosine_similarity():
    a, an = make((3, 4), E.float64, seed=1)
    b, bn = make((3, 4), E.float64, seed=2)
    cos = lambda x, y, d: (x * y).sum(d) / np.sqrt((x * x).sum(d) * (y * y).sum(d))
    assert_close(nn.CosineSimilarity()(a, b), cos(an, bn, 1))
    assert_close(nn.CosineSimilarity(dim=0, eps=1e-3)(a, b), cos(an, bn, 0))
    assert nn.CosineSimilarity(dim=0, eps=0.5)(E.zeros(3), E.ones(3)).item() == 0.0


def test_pairwise_distance():
    a, an = make((3, 4), E.float64, seed=1)
    b, bn = make((4,), E.float64, seed=2)
    d = an - bn + 1e-6
    assert_close(nn.PairwiseDistance()(a, b), np.sqrt((d * d).sum(1)))
    m = nn.PairwiseDistance(p=1.0, eps=0.0, keepdim=True)
    assert m.norm == 1.0      # PyTorch's attribute name
    assert_close(m(a, b), np.abs(an - bn).sum(1, keepdims=True))


def test_repr():
    assert repr(nn.CosineSimilarity(dim=0)) == "CosineSimilarity()"
    assert repr(nn.PairwiseDistance(3.0)) == "PairwiseDistance()"
