"""``Distribution``: the base class of every probability distribution
(``torch.distributions.Distribution``).

Shapes: a distribution has a ``batch_shape`` (independent, possibly differently
parametrized distributions) and an ``event_shape`` (the shape of one draw). ``sample``
and ``rsample`` return ``sample_shape + batch_shape + event_shape``; ``log_prob(value)``
takes ``value`` broadcastable to ``batch_shape + event_shape`` and returns its shape less
the event dims.

Validation (as torch): on by default (off under ``python -O``), toggled for every
instance by ``Distribution.set_default_validate_args`` or per instance by
``validate_args=``. It checks the parameters against ``arg_constraints`` at construction
and values against ``support`` in ``log_prob`` / ``cdf``, raising ValueError with torch's
wording.

Sampling draws from ember's default generators, so ``ember.manual_seed`` makes it
reproducible; the streams differ from torch's (different bit generators and algorithms),
the distributions do not.
"""
from __future__ import annotations

import warnings

from ember.ops import namespace as E
from ember._base.grad_mode import no_grad
from ember.tensor import Size, Tensor

from . import constraints
from .utils import _size, lazy_property

__all__ = ["Distribution"]


class Distribution:
    """The abstract base class for probability distributions.

    Args:
        batch_shape: the shape over which parameters are batched.
        event_shape: the shape of a single sample (without batching).
        validate_args: whether to validate parameters and values (None: the class
            default, see ``set_default_validate_args``).

    Subclasses define ``arg_constraints``, ``support``, ``log_prob``, ``rsample`` (or
    ``sample``), moments and ``expand``. Raises ValueError when validation finds a
    parameter outside its constraint.
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for every distribution that is not given
        ``validate_args=`` (``torch.distributions.Distribution.set_default_validate_args``).
        Raises ValueError unless ``value`` is True or False."""
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args: expected True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape = _size(batch_shape)
        self._event_shape = _size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with "
                              "`validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # cannot be checked
                if param not in self.__dict__ and isinstance(getattr(type(self), param),
                                                             lazy_property):
                    continue  # derived lazily from a checked parameter
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None):
        """A new distribution with batch dims expanded to ``batch_shape`` (parameters are
        expanded, not copied; no re-validation). Raises the broadcasting error when the
        batch shape does not expand."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        """A dict from parameter name to the ``Constraint`` it must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The ``Constraint`` holding the values of this distribution."""
        raise NotImplementedError

    @property
    def mean(self):
        """The mean, shape ``batch_shape + event_shape``."""
        raise NotImplementedError

    @property
    def mode(self):
        """The mode, shape ``batch_shape + event_shape``."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        """The variance, shape ``batch_shape + event_shape``."""
        raise NotImplementedError

    @property
    def stddev(self):
        """The standard deviation, ``variance.sqrt()``."""
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()):
        """A sample of shape ``sample_shape + batch_shape + event_shape``, not tracked by
        autograd."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        """A reparameterized sample, shape ``sample_shape + batch_shape + event_shape``:
        a differentiable function of the parameters and parameter-free noise. Raises
        NotImplementedError where ``has_rsample`` is False."""
        raise NotImplementedError(f"{type(self).__name__} has no reparameterized sampler "
                                  f"(has_rsample is False); use sample() instead")

    def log_prob(self, value):
        """The log density (or mass) at ``value``; shape ``broadcast(value.shape,
        batch_shape + event_shape)`` less the event dims."""
        raise NotImplementedError

    def cdf(self, value):
        """The cumulative distribution function at ``value`` (elementwise)."""
        raise NotImplementedError

    def icdf(self, value):
        """The inverse cumulative distribution function at ``value`` in ``[0, 1]``."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True):
        """Every value of a discrete distribution along dim 0: shape ``(cardinality,) +
        batch_shape + event_shape`` (``expand=False``: singleton batch dims)."""
        raise NotImplementedError

    def entropy(self):
        """The entropy in nats, shape ``batch_shape``."""
        raise NotImplementedError

    def perplexity(self):
        """``exp(entropy())``, shape ``batch_shape``."""
        return E.exp(self.entropy())

    def _extended_shape(self, sample_shape=Size()) -> Size:
        """``sample_shape + batch_shape + event_shape``."""
        if isinstance(sample_shape, int):
            sample_shape = (sample_shape,)
        return Size(tuple(_size(sample_shape)) + self._batch_shape + self._event_shape)

    def _validate_sample(self, value) -> None:
        """Raise ValueError unless ``value`` is a Tensor whose rightmost dims match
        ``event_shape``, that broadcasts with ``batch_shape + event_shape`` and lies in
        ``support``."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        start = value.dim() - len(self._event_shape)
        if tuple(value.shape[start:]) != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.shape} vs {self._event_shape}.")
        actual, expected = value.shape, self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual} vs {Size(expected)}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample "
                          "validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=2)
            return
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}")

    def _expand_params(self, cls, batch_shape, _instance, names, event_shape=()):
        """``expand`` for a distribution whose parameters ``names`` have shape
        ``batch_shape + event_shape``: expand each one already set on ``self``."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = _size(batch_shape)
        for name in names:
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(batch_shape + tuple(event_shape)))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        try:
            names = [k for k in self.arg_constraints if k in self.__dict__]
        except NotImplementedError:
            names = []
        args = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in names)
        return f"{self.__class__.__name__}({args})"
