"""utils: broadcast_all's dtype/shape rules, logits <-> probs, clamp_probs, lazy_property."""
import numpy as np
import pytest
from core.distributions.helpers import t

import ember
from ember.distributions.utils import (broadcast_all, clamp_probs, lazy_property,
                                       logits_to_probs, probs_to_logits)


def test_broadcast_all():
    a, b = broadcast_all(t([1.0, 2.0]), 3)
    assert a.shape == b.shape == (2,) and b.dtype == ember.float64
    a, b = broadcast_all(1, 2.5)
    assert a.shape == () and a.dtype == ember.get_default_dtype()
    a, b = broadcast_all(ember.zeros(3, 1), ember.zeros(2))
    assert a.shape == b.shape == (3, 2)
    with pytest.raises(ValueError, match="Number or ember.Tensor"):
        broadcast_all([1.0], 2.0)


def test_logits_probs_round_trip():
    p = np.array([0.1, 0.5, 0.9])
    logit = probs_to_logits(t(p), is_binary=True).numpy()
    np.testing.assert_allclose(logit, np.log(p / (1 - p)))
    np.testing.assert_allclose(logits_to_probs(t(logit), is_binary=True).numpy(), p)
    lg = np.array([[1.0, 2.0, 0.5]])
    probs = logits_to_probs(t(lg)).numpy()
    np.testing.assert_allclose(probs, np.exp(lg) / np.exp(lg).sum(-1, keepdims=True))
    np.testing.assert_allclose(probs_to_logits(t(probs)).numpy(), np.log(probs))


def test_clamp_probs():
    out = clamp_probs(ember.tensor([0.0, 0.5, 1.0])).numpy()
    eps = ember.finfo(ember.float32).eps
    assert out[0] == np.float32(eps) and out[1] == 0.5 and out[2] == np.float32(1 - eps)


def test_lazy_property_computes_once_with_grad():
    calls = []

    class Thing:
        def __init__(self, x):
            self.x = x

        @lazy_property
        def doubled(self):
            calls.append(1)
            return self.x * 2

    x = t([1.0], requires_grad=True)
    thing = Thing(x)
    with ember.no_grad():
        first = thing.doubled
    assert first.requires_grad  # computed under enable_grad
    assert thing.doubled is first and len(calls) == 1
    assert isinstance(Thing.doubled, lazy_property)
