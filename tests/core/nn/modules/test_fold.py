"""Fold and Unfold layers: forward as F.fold / F.unfold, the round trip, repr."""
import numpy as np
from helpers import assert_close, make, to_np

import ember as E
import ember.nn.functional as F
from ember import nn


def test_unfold_then_fold_counts_covering_blocks():
    x, xn = make((1, 2, 3, 3), E.float64)
    cols = nn.Unfold(2)(x)
    assert cols.shape == (1, 8, 4)
    assert_close(cols, to_np(F.unfold(x, 2)))
    # each cell of a 3x3 plane is covered by 1, 2 or 4 of the 2x2 blocks
    cover = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]])
    assert_close(nn.Fold((3, 3), 2)(cols), xn * cover)


def test_arguments_are_passed_on():
    x, _ = make((2, 1, 5, 4), E.float32)
    m = nn.Unfold((2, 3), dilation=(2, 1), padding=1, stride=(1, 2))
    assert_close(m(x), to_np(F.unfold(x, (2, 3), (2, 1), 1, (1, 2))))
    y, _ = make(tuple(m(x).shape), E.float32, seed=1)
    f = nn.Fold((5, 4), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2))
    assert_close(f(y), to_np(F.fold(y, (5, 4), (2, 3), (2, 1), 1, (1, 2))))


def test_repr():
    assert repr(nn.Unfold(2)) == "Unfold(kernel_size=2, dilation=1, padding=0, stride=1)"
    assert repr(nn.Fold(3, 2)) == \
        "Fold(output_size=3, kernel_size=2, dilation=1, padding=0, stride=1)"
