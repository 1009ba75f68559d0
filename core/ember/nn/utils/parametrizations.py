"""``ember.nn.utils.parametrizations``: weight normalization and spectral normalization
as parametrizations (``torch.nn.utils.parametrizations``).

Both register through ``parametrize.register_parametrization``, so the constrained
weight is recomputed from its unconstrained parts at every access and state dicts hold
``parametrizations.weight.original0``/``original1`` (weight norm's g and v) or
``parametrizations.weight.original`` plus ``parametrizations.weight.0._u``/``_v``
(spectral norm's power-iteration vectors), with PyTorch's key names.
``orthogonal`` is not provided yet.
"""
from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from ..functional import normalize
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from .parametrize import register_parametrization

__all__ = ["norm_except_dim", "spectral_norm", "weight_norm"]


def weight_matrix(weight: Tensor, dim: int) -> Tensor:
    """``weight`` as the (h, w) matrix spectral normalization works on: ``dim`` first, the
    other dims flattened (a 1-D weight is a column (h, 1))."""
    if dim != 0:
        weight = weight.permute(dim, *(d for d in range(weight.ndim) if d != dim))
    return weight.reshape(weight.shape[0], -1)


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dim but ``dim``, shaped to broadcast against
    ``v`` (size 1 except at ``dim``); ``dim=-1`` gives the norm of all of ``v`` (0-d).
    Reference: torch.norm_except_dim."""
    if dim == -1:
        return v.norm(pow)
    dim = dim % v.ndim
    return v.norm(pow, dim=[d for d in range(v.ndim) if d != dim], keepdim=True)


class _WeightNorm(Module):
    """w = g * v / ||v||, the norm over every dim but ``dim`` (all dims for dim=-1)."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_v * (weight_g / norm_except_dim(weight_v, 2, self.dim))

    def right_inverse(self, weight: Tensor):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (Salimans & Kingma 2016):
    magnitude ``g`` (``original0``, size 1 except at ``dim``) and direction ``v``
    (``original1``, the weight's shape). ``dim=None`` normalizes the whole tensor.
    Returns ``module``.

    Raises ValueError when ``module`` has no tensor ``name``.
    Reference: torch.nn.utils.parametrizations.weight_norm.
    """
    return register_parametrization(module, name, _WeightNorm(dim), unsafe=True)


class _SpectralNorm(Module):
    """w / sigma(w), sigma estimated by power iteration on w as a matrix (``dim`` first,
    the other dims flattened), one step per training forward; 1-D weights are divided
    by their 2-norm."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if not -ndim <= dim < max(ndim, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim % max(ndim, 1)
        self.eps = eps
        self.n_power_iterations = n_power_iterations
        if ndim > 1:
            matrix = self._as_matrix(weight)
            h, w = matrix.shape
            self.register_buffer("_u", normalize(matrix.new_empty((h,)).normal_(), dim=0,
                                                 eps=eps))
            self.register_buffer("_v", normalize(matrix.new_empty((w,)).normal_(), dim=0,
                                                 eps=eps))
            self._power_method(matrix, 15)

    def _as_matrix(self, weight: Tensor) -> Tensor:
        return weight_matrix(weight, self.dim)

    def _power_method(self, matrix: Tensor, iterations: int) -> None:
        # NOTE: updates the buffers in place, so a module copied for data parallelism or
        # saved in a state dict sees the latest estimate (as PyTorch's).
        with no_grad():
            for _ in range(iterations):
                self._u.copy_(normalize(matrix @ self._v, dim=0, eps=self.eps))
                self._v.copy_(normalize(matrix.t() @ self._u, dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        matrix = self._as_matrix(weight)
        if self.training:
            self._power_method(matrix, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = (u * (matrix @ v)).sum()
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Reparametrize ``module.<name>`` as ``w / sigma(w)``, sigma its largest singular
    value estimated by power iteration (Miyato et al. 2018, "Spectral Normalization for
    GANs"); one iteration per forward in training mode, none in eval. ``dim`` is the
    output-channel dim (default 1 for ConvTranspose, else 0). Returns ``module``.

    Raises ValueError when ``module`` has no tensor ``name`` or for
    ``n_power_iterations <= 0``, IndexError for ``dim`` out of range.
    Reference: torch.nn.utils.parametrizations.spectral_norm.
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{type(module).__name__}' has no parameter or buffer with "
                         f"name '{name}'")
    if dim is None:
        transposed = (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)
        dim = 1 if isinstance(module, transposed) else 0
    return register_parametrization(module, name,
                                    _SpectralNorm(weight, n_power_iterations, dim, eps))
