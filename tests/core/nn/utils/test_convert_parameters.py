"""``parameters_to_vector`` / ``vector_to_parameters`` (``ember/nn/utils/
convert_parameters.py``): the flat layout against numpy, the round trip, gradients through
the flat vector, and errors that leave the parameters unchanged.
Reference: torch.nn.utils.parameters_to_vector."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
from ember import nn
from ember.nn.utils import parameters_to_vector, vector_to_parameters
from helpers import assert_close


def test_vector_is_the_parameters_flattened_in_order():
    m = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    want = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
    v = parameters_to_vector(m.parameters())
    assert v.shape == (3 * 4 + 4 + 4 * 2 + 2,)
    assert_close(v, want)


def test_round_trip_and_inverse():
    m = nn.Linear(3, 2, dtype=E.float64)
    new = np.arange(8, dtype=np.float64)
    vector_to_parameters(E.tensor(new), m.parameters())
    assert_close(m.weight, new[:6].reshape(2, 3))
    assert_close(m.bias, new[6:])
    assert_close(parameters_to_vector(m.parameters()), new)
    assert m.weight.requires_grad and m.weight.grad_fn is None


def test_gradients_flow_through_the_vector():
    m = nn.Linear(2, 2, dtype=E.float64)
    (parameters_to_vector(m.parameters()) * E.arange(6, dtype=E.float64)).sum().backward()
    assert_close(m.weight.grad, np.arange(4.0).reshape(2, 2))
    assert_close(m.bias.grad, np.array([4.0, 5.0]))


def test_wrong_length_raises_before_writing():
    m = nn.Linear(3, 2)
    before = parameters_to_vector(m.parameters()).detach().numpy().copy()
    with pytest.raises(ValueError, match="1-D vec of 8 elements.*got shape \\[7\\]"):
        vector_to_parameters(E.zeros(7), m.parameters())
    with pytest.raises(ValueError, match="got shape \\[2, 4\\]"):
        vector_to_parameters(E.zeros(2, 4), m.parameters())
    with pytest.raises(TypeError, match="vec to be a Tensor, but got list"):
        vector_to_parameters([0.0] * 8, m.parameters())
    assert_close(parameters_to_vector(m.parameters()), before)
