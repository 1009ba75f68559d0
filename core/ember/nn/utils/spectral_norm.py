"""``spectral_norm`` / ``remove_spectral_norm``: the hook-based spectral normalization
(``torch.nn.utils.spectral_norm``), kept for code written against it; new code should
use ``ember.nn.utils.parametrizations.spectral_norm``, as PyTorch recommends.

The parameter ``w`` becomes ``<name>_orig``, with buffers ``<name>_u`` and ``<name>_v``
(the power-iteration vectors); a forward pre-hook sets ``module.<name> = w / sigma(w)``
before each call, running ``n_power_iterations`` steps first in training mode. Departure:
PyTorch also records a state-dict version to migrate very old checkpoints; ember has no
such metadata, so state dicts hold just the three tensors.
"""
from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ..functional import normalize
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from ..parameter import Parameter
from .parametrizations import weight_matrix
from .weight_norm import _find_hook

__all__ = ["SpectralNorm", "remove_spectral_norm", "spectral_norm"]


class SpectralNorm:
    """The forward pre-hook of ``spectral_norm``: recomputes ``module.<name>``."""

    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float) -> None:
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.n_power_iterations, self.dim, self.eps = (name, n_power_iterations,
                                                                  dim, eps)

    def as_matrix(self, weight):
        """``weight`` as an (h, w) matrix (``parametrizations.weight_matrix``)."""
        return weight_matrix(weight, self.dim)

    def compute_weight(self, module: Module, do_power_iteration: bool):
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        matrix = self.as_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(normalize(matrix.t() @ u, dim=0, eps=self.eps))
                    u.copy_(normalize(matrix @ v, dim=0, eps=self.eps))
            # NOTE: the clones keep the values autograd saves from the next in-place update
            u, v = u.clone(), v.clone()
        return weight / (u * (matrix @ v)).sum()

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module, module.training))


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide parameter ``name`` by its largest singular value before every forward
    (Miyato et al. 2018). ``dim``: the output-channel dim (default 1 for ConvTranspose,
    else 0). Returns ``module``.

    Raises RuntimeError for a second spectral norm on the same parameter, ValueError when
    ``name`` is not a parameter or for ``n_power_iterations <= 0``.
    Reference: torch.nn.utils.spectral_norm.
    """
    if _find_hook(module, SpectralNorm, name)[1] is not None:
        raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter "
                           f"{name}")
    weight = module._parameters.get(name)
    if weight is None:
        raise ValueError(f"Module '{type(module).__name__}' has no parameter named '{name}'")
    if dim is None:
        transposed = (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)
        dim = 1 if isinstance(module, transposed) else 0
    hook = SpectralNorm(name, n_power_iterations, dim % weight.ndim, eps)
    with no_grad():
        h, w = hook.as_matrix(weight).shape
        u = normalize(weight.new_empty((h,)).normal_(), dim=0, eps=eps)
        v = normalize(weight.new_empty((w,)).normal_(), dim=0, eps=eps)
    del module._parameters[name]
    module.register_parameter(name + "_orig", weight)
    setattr(module, name, weight.detach())
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    module.register_forward_pre_hook(hook)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Replace ``<name>_orig`` and the vectors by a parameter ``name`` holding the current
    normalized weight; return ``module``.

    Raises ValueError when ``module`` has no spectral norm on ``name``.
    Reference: torch.nn.utils.remove_spectral_norm.
    """
    key, hook = _find_hook(module, SpectralNorm, name)
    if hook is None:
        raise ValueError(f"spectral_norm of '{name}' not found in {type(module).__name__}")
    with no_grad():
        weight = hook.compute_weight(module, do_power_iteration=False)
    del module._forward_pre_hooks[key]
    delattr(module, name)
    for suffix in ("_u", "_v"):
        del module._buffers[name + suffix]
    del module._parameters[name + "_orig"]
    module.register_parameter(name, Parameter(weight.detach()))
    return module
