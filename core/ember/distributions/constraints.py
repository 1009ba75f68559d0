"""Constraints: regions over which a distribution's parameters or samples are valid
(``torch.distributions.constraints``).

A constraint's ``check(value)`` returns a bool Tensor of shape ``value.shape`` less its
``event_dim`` rightmost dims (``sample_shape + batch_shape``), True where the event is
valid. Distributions use them in ``arg_constraints`` (parameters) and ``support`` (values);
validation (on by default) raises ValueError where a check fails.

Singletons (``real``, ``positive``, ``unit_interval``, ``simplex``, ``boolean``, ...) and
parametrized classes (``interval(lo, hi)``, ``integer_interval(lo, hi)``,
``greater_than(lb)``, ``independent(c, n)``, ...) carry torch's names.
"""
from __future__ import annotations

from .. import linalg
from ..ops import namespace as E

__all__ = [
    "Constraint", "boolean", "cat", "dependent", "dependent_property", "greater_than",
    "greater_than_eq", "half_open_interval", "independent", "integer_interval", "interval",
    "is_dependent", "less_than", "lower_cholesky", "lower_triangular", "multinomial",
    "nonnegative", "nonnegative_integer", "one_hot", "positive", "positive_definite",
    "positive_integer", "positive_semidefinite", "real", "real_vector", "simplex", "square",
    "stack", "symmetric", "unit_interval",
]


class Constraint:
    """A region over which a variable is valid (``torch.distributions.constraints.Constraint``).

    Attributes:
        is_discrete: whether the region is discrete (default False).
        event_dim: how many rightmost dims form one event; ``check`` reduces over them.
    """

    is_discrete = False
    event_dim = 0

    def check(self, value):
        """A bool Tensor, ``value.shape[:value.dim() - event_dim]``: whether each event of
        ``value`` lies in the region."""
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder for a variable whose support depends on other variables (``Uniform``'s
    support depends on ``low``/``high``); it cannot be checked: ``check`` raises ValueError."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        """``dependent(is_discrete=True, event_dim=1)``: a placeholder with static attributes."""
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint) -> bool:
    """Whether ``constraint`` is a ``dependent`` placeholder (validation skips those)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property that is a ``dependent`` constraint on the class and the computed
    constraint on an instance (``Uniform.support`` -> ``interval(self.low, self.high)``)."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):  # used as @dependent_property(is_discrete=..., event_dim=...)
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """``base_constraint`` with ``reinterpreted_batch_ndims`` more dims taken as event dims:
    an event is valid only if every entry in it is."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"independent: expected a Constraint, got "
                            f"{type(base_constraint).__name__}")
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError(f"independent: expected reinterpreted_batch_ndims >= 0, got "
                             f"{reinterpreted_batch_ndims!r}")
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.dim() < n:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        return result.reshape(tuple(result.shape[:result.dim() - n]) + (-1,)).all(-1)

    def __repr__(self):
        return (f"{self.__class__.__name__[1:]}({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        is_boolean = (value == 0) | (value == 1)
        return is_boolean.all(-1) & (value.sum(-1) == 1)


def _is_integer(value):
    return value == value.floor() if value.dtype.is_floating_point else value == value


class _IntegerInterval(Constraint):
    """Integers in ``[lower_bound, upper_bound]``."""

    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value):
        return _is_integer(value) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return (f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound}, "
                f"upper_bound={self.upper_bound})")


class _IntegerGreaterThan(Constraint):
    """Integers ``>= lower_bound``."""

    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return _is_integer(value) & (value >= self.lower_bound)

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound})"


class _Real(Constraint):
    def check(self, value):
        return value == value  # False for NaNs


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return self.lower_bound <= value


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    """The closed interval ``[lower_bound, upper_bound]``."""

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return (f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound}, "
                f"upper_bound={self.upper_bound})")


class _HalfOpenInterval(_Interval):
    """The half-open interval ``[lower_bound, upper_bound)``."""

    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    """Vectors of nonnegative entries summing to 1 (within 1e-6) over the last dim."""

    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Nonnegative integer count vectors summing to at most ``upper_bound``."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


def _all_matrix(mask):
    return mask.reshape(tuple(mask.shape[:-2]) + (-1,)).all(-1)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        return _all_matrix(value.tril() == value)


class _LowerCholesky(Constraint):
    """Lower-triangular square matrices with a positive diagonal."""

    event_dim = 2

    def check(self, value):
        positive = (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)
        return _all_matrix(value.tril() == value) & positive


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        return E.full(tuple(value.shape[:-2]), value.shape[-1] == value.shape[-2],
                      dtype=E.bool, device=value.device)


class _Symmetric(_Square):
    def check(self, value):
        square = super().check(value)
        if not bool(square.all()):
            return square
        return _all_matrix(E.isclose(value, value.mT, atol=1e-6))


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        sym = super().check(value)
        if not bool(sym.all()):
            return sym
        return (linalg.eigvalsh(value) >= 0).all(-1)


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        sym = super().check(value)
        if not bool(sym.all()):
            return sym
        return linalg.cholesky_ex(value).info == 0


class _Cat(Constraint):
    """``cseq[i]`` applied to the ``lengths[i]``-long slice ``i`` of dim ``dim``."""

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq = list(cseq)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise ValueError(f"cat: expected {len(self.cseq)} lengths, got {len(self.lengths)}")
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        checks, start = [], 0
        for constr, length in zip(self.cseq, self.lengths):
            checks.append(constr.check(value.narrow(self.dim, start, length)))
            start += length
        return E.cat(checks, self.dim)


class _Stack(Constraint):
    """``cseq[i]`` applied to slice ``i`` of dim ``dim``."""

    def __init__(self, cseq, dim=0):
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        vs = [value.select(self.dim, i) for i in range(value.size(self.dim))]
        return E.stack([c.check(v) for v, c in zip(vs, self.cseq)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
