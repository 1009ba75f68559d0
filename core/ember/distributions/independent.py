"""``Independent``: batch dims of a distribution reinterpreted as event dims
(``torch.distributions.Independent``)."""
from __future__ import annotations

from . import constraints
from .distribution import Distribution
from .utils import _size, _sum_rightmost

__all__ = ["Independent"]


class Independent(Distribution):
    """Reinterprets the ``reinterpreted_batch_ndims`` rightmost batch dims of
    ``base_distribution`` as event dims, so ``log_prob`` sums over them (e.g. a diagonal
    multivariate normal from ``Normal(loc, scale)`` with ``loc`` ``(B, n)``: batch ``(B,)``,
    event ``(n,)``).

    Args:
        base_distribution (Distribution): the distribution to reinterpret.
        reinterpreted_batch_ndims (int): how many batch dims become event dims.
        validate_args: see ``Distribution``.
    Raises ValueError when ``reinterpreted_batch_ndims`` exceeds the base's batch dims.
    """

    arg_constraints: dict = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        if not isinstance(base_distribution, Distribution):
            raise TypeError(f"Independent: expected a Distribution, got "
                            f"{type(base_distribution).__name__}")
        nbatch = len(base_distribution.batch_shape)
        if not isinstance(reinterpreted_batch_ndims, int) or \
                not 0 <= reinterpreted_batch_ndims <= nbatch:
            raise ValueError(f"Expected reinterpreted_batch_ndims <= len(base_distribution."
                             f"batch_shape), actual {reinterpreted_batch_ndims} vs {nbatch}")
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        cut = len(shape) - event_dim
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = _size(batch_shape)
        n = self.reinterpreted_batch_ndims
        new.base_dist = self.base_dist.expand(tuple(batch_shape) + tuple(self.event_shape[:n]))
        new.reinterpreted_batch_ndims = n
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        return self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self):
        return (f"{self.__class__.__name__}({self.base_dist!r}, "
                f"{self.reinterpreted_batch_ndims})")
