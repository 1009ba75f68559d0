"""Flatten and Unflatten: shapes, round trip, errors, repr."""
import pytest

import ember as E
from ember import nn


def test_flatten_unflatten():
    x = E.arange(2 * 3 * 4 * 5, dtype=E.float32).reshape(2, 3, 4, 5)
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 1)(x).shape == (6, 4, 5)
    y = nn.Unflatten(1, (3, 4, 5))(nn.Flatten()(x))
    assert y.shape == (2, 3, 4, 5) and y.tolist() == x.tolist()
    assert nn.Unflatten(1, [3, -1])(E.ones(2, 12)).shape == (2, 3, 4)


def test_unflatten_errors():
    with pytest.raises(TypeError, match="tuple of ints"):
        nn.Unflatten(1, 12)
    with pytest.raises(TypeError, match="at pos 1"):
        nn.Unflatten(1, (3, 4.0))


def test_repr():
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"
    assert repr(nn.Unflatten(1, (2, 2))) == "Unflatten(dim=1, unflattened_size=(2, 2))"
