"""The Distribution base: default validation toggles, _validate_sample errors, shapes,
perplexity, expand of subclasses, abstract methods."""
import math

import pytest
from core.distributions.helpers import t

import ember
from ember.distributions import Distribution, Normal, constraints


@pytest.fixture
def restore_default_validation():
    yield
    Distribution.set_default_validate_args(True)


def test_set_default_validate_args(restore_default_validation):
    Distribution.set_default_validate_args(False)
    Normal(0.0, -1.0)  # no error while off
    Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="Expected parameter scale"):
        Normal(0.0, -1.0)
    with pytest.raises(ValueError):
        Distribution.set_default_validate_args("yes")


def test_validate_sample_errors():
    d = Normal(ember.zeros(2, 3), 1.0)
    with pytest.raises(ValueError, match="must be a Tensor"):
        d.log_prob([0.0])
    with pytest.raises(ValueError, match="not broadcastable with batch_shape"):
        d.log_prob(ember.zeros(4))
    with pytest.raises(ValueError, match="right-most size of value must match event_shape"):
        from ember.distributions import Dirichlet
        Dirichlet(ember.ones(3)).log_prob(ember.ones(2) / 2)
    assert d.log_prob(ember.zeros(5, 1, 3)).shape == (5, 2, 3)


def test_shapes_perplexity_and_stddev():
    d = Normal(t([[0.0], [1.0]]), t([1.0, 2.0, 3.0]))
    assert d.batch_shape == (2, 3) and isinstance(d.batch_shape, ember.Size)
    assert d._extended_shape((4,)) == (4, 2, 3) and d._extended_shape(4) == (4, 2, 3)
    assert d.sample(4).shape == (4, 2, 3)
    assert d.perplexity().numpy() == pytest.approx(ember.exp(d.entropy()).numpy())


class _Plain(Distribution):
    arg_constraints = {"rate": constraints.positive}

    def __init__(self, rate, validate_args=None):
        self.rate = rate
        super().__init__(rate.shape, validate_args=validate_args)


def test_base_defaults_and_custom_subclass():
    d = _Plain(t([1.0]))
    assert repr(d).startswith("_Plain(rate:")
    for name in ("mean", "variance", "support"):
        with pytest.raises(NotImplementedError):
            getattr(d, name)
    with pytest.raises(NotImplementedError, match="does not implement mode"):
        d.mode
    with pytest.raises(NotImplementedError, match="has_rsample is False"):
        d.rsample()
    with pytest.raises(ValueError, match="Expected parameter rate"):
        _Plain(t([-1.0]))
    _Plain(t([-1.0]), validate_args=False)

    class Sub(Normal):
        def __init__(self):
            super().__init__(0.0, 1.0)
    with pytest.raises(NotImplementedError, match="must also define a custom .expand"):
        Sub().expand((2,))


def test_expand_keeps_validation_flag_and_does_not_copy():
    loc = t([0.0, 1.0], requires_grad=True)
    d = Normal(loc, 1.0, validate_args=False).expand((3, 2))
    assert d._validate_args is False and d.loc.shape == (3, 2)
    d.log_prob(ember.tensor(math.nan, dtype=ember.float64))  # validation stays off
    d.rsample().sum().backward()
    assert loc.grad.numpy().tolist() == [3.0, 3.0]
