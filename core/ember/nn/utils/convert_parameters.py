"""Parameters to one flat vector and back (``torch.nn.utils.convert_parameters``)."""
from __future__ import annotations

from ...autograd import no_grad
from ...tensor import Tensor
from .clip_grad import _tensors

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_device(params: list, what: str) -> None:
    devices = {str(p.device) for p in params}
    if len(devices) > 1:
        raise TypeError(f"{what}: found parameters on different devices "
                        f"({', '.join(sorted(devices))}); move them to one device first")


def parameters_to_vector(parameters) -> Tensor:
    """All of ``parameters`` flattened and concatenated: shape ``(sum of numel,)``, in
    the promoted dtype. Differentiable (a ``cat`` of views).

    Raises TypeError for parameters on several devices or a non-Tensor item. Reference:
    torch.nn.utils.parameters_to_vector.
    """
    from ...ops.namespace import cat
    params = _tensors(parameters, "parameters_to_vector")
    _check_device(params, "parameters_to_vector")
    return cat([p.reshape(-1) for p in params])


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Copy consecutive slices of the 1-D ``vec`` into ``parameters`` in place (under
    ``no_grad``), the inverse of :func:`parameters_to_vector`.

    Raises TypeError when ``vec`` is not a Tensor; ValueError when it is not 1-D or its
    length is not the parameters' total number of elements (checked before anything is
    written). Reference: torch.nn.utils.vector_to_parameters.
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"vector_to_parameters: expected vec to be a Tensor, but got "
                        f"{type(vec).__name__}")
    params = _tensors(parameters, "vector_to_parameters")
    _check_device(params, "vector_to_parameters")
    total = sum(p.numel() for p in params)
    if vec.ndim != 1 or vec.numel() != total:
        raise ValueError(f"vector_to_parameters: expected a 1-D vec of {total} elements "
                         f"(the parameters' total), got shape {list(vec.shape)}")
    with no_grad():
        start = 0
        for p in params:
            n = p.numel()
            p.copy_(vec[start:start + n].view(p.shape))
            start += n
