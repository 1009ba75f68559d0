"""The multivariate normal distribution (``torch.distributions.MultivariateNormal``)."""
from __future__ import annotations

import math

from ember import linalg
from ember.ops import namespace as E
from ember.tensor import Tensor

from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    """``bmat @ bvec`` for ``(..., n, n)`` matrices and ``(..., n)`` vectors, broadcasting."""
    return E.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """``|L^-1 x|^2`` over the last dim, for lower-triangular ``L`` ``(..., n, n)`` and
    ``x`` ``(..., n)`` whose batch dims broadcast; shape: the broadcast batch shape.

    NOTE: torch reshapes ``x`` so one factor serves every sample; here ``L`` is broadcast
    against ``x`` by ``solve_triangular`` (simpler, same values)."""
    return linalg.solve_triangular(bL, bx.unsqueeze(-1), upper=False).squeeze(-1) \
        .pow(2).sum(-1)


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of ``P^-1``, without forming the inverse: flip ``P``,
    take its Cholesky factor, flip back (an upper factor ``U`` with ``P = U U^T``), then
    ``L = U^-T``."""
    Lf = linalg.cholesky(E.flip(P, (-2, -1)))
    L_inv = E.flip(Lf, (-2, -1)).mT
    eye = E.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return linalg.solve_triangular(L_inv, eye, upper=False)


def _need_matrix(name, value):
    if not isinstance(value, Tensor):
        raise TypeError(f"MultivariateNormal: expected `{name}` to be a Tensor, got "
                        f"{type(value).__name__}")
    if value.dim() < 2:
        raise ValueError(f"{name} must be at least two-dimensional, with optional leading "
                         f"batch dimensions")


class MultivariateNormal(Distribution):
    """Multivariate normal with mean ``loc`` and covariance given by exactly one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril``.

    Args:
        loc (Tensor): ``(*batch, n)`` mean.
        covariance_matrix (Tensor): ``(*batch, n, n)`` symmetric positive definite.
        precision_matrix (Tensor): ``(*batch, n, n)`` symmetric positive definite inverse
            covariance.
        scale_tril (Tensor): ``(*batch, n, n)`` lower-triangular factor with positive
            diagonal (``covariance = L L^T``).
        validate_args: see ``Distribution``.
    Batch dims of ``loc`` and the matrix broadcast to ``batch_shape``; ``event_shape``
    is ``(n,)``. ``rsample`` is ``loc + L eps``, differentiable in ``loc`` and the matrix.
    Raises ValueError for a 0-D ``loc``, a matrix of fewer than two dims, not exactly one
    matrix, and (validation) a matrix that is not positive definite / lower Cholesky.
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if not isinstance(loc, Tensor):
            raise TypeError(f"MultivariateNormal: expected `loc` to be a Tensor, got "
                            f"{type(loc).__name__}")
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = {k: v for k, v in (("covariance_matrix", covariance_matrix),
                                   ("precision_matrix", precision_matrix),
                                   ("scale_tril", scale_tril)) if v is not None}
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        (name, matrix), = given.items()
        _need_matrix(name, matrix)
        batch_shape = E.broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)

    def expand(self, batch_shape, _instance=None):
        n = self.event_shape[0]
        new = self._expand_params(MultivariateNormal, batch_shape, _instance, ("loc",),
                                  event_shape=(n,))
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(tuple(new.batch_shape) + (n, n)))
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return E.matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return E.cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self):
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
