"""``ember.nn.utils.parametrize``: express a module's tensor as a function of others
(``torch.nn.utils.parametrize``).

``register_parametrization(module, "weight", P())`` moves ``module.weight`` to
``module.parametrizations.weight.original`` and makes ``module.weight`` a property that
returns ``P()(original)``, recomputed at every access (inside ``cached()``, once per
context). Assigning ``module.weight = X`` stores ``P.right_inverse(X)`` in ``original``.
Several parametrizations on one tensor chain in registration order. Optimizers keep
working: the ``original`` tensors are what ``module.parameters()`` yields, and they keep
the identity of the tensor that was parametrized whenever the shapes allow.

The property lives on a subclass made for the module (``ParametrizedLinear`` for a
``Linear``); removing the last parametrization restores the original class. State dicts
hold ``parametrizations.<name>.original`` (or ``original0``, ``original1``, ... when
``right_inverse`` returns several tensors) and each parametrization's own buffers.

Where ember departs from PyTorch: there is no ``Tensor.set_``, so when a parametrization
(with ``unsafe=True``) changes the original's shape, a new Parameter replaces it and an
optimizer built before must be rebuilt; ``transfer_parametrizations_and_params`` is not
provided. Reference: torch.nn.utils.parametrize; Lezcano-Casado 2019, "Trivializations
for gradient-based optimization on manifolds".
"""
from __future__ import annotations

import contextlib

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "type_before_parametrizations"]

_cache_depth = 0
_cache: dict = {}


@contextlib.contextmanager
def cached():
    """Within the block, each parametrized tensor is computed once per module and name,
    on first access, and reused (e.g. a weight shared across the steps of an RNN).
    Blocks nest; the cache empties when the outermost one exits.
    Reference: torch.nn.utils.parametrize.cached."""
    global _cache_depth
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache.clear()


def _register_tensor(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _check_like(value, reference: Tensor, what: str) -> None:
    if not isinstance(value, Tensor):
        raise ValueError(f"{what} must return a tensor, got {type(value).__name__}")
    if value.dtype != reference.dtype:
        raise ValueError(f"{what} may not change the dtype: expected {reference.dtype}, got "
                         f"{value.dtype}; register with unsafe=True to allow it")
    if tuple(value.shape) != tuple(reference.shape):
        raise ValueError(f"{what} may not change the shape: expected "
                         f"{list(reference.shape)}, got {list(value.shape)}; register with "
                         f"unsafe=True to allow it")


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor (``module.parametrizations.<name>``), applied in
    order, and the unconstrained tensor(s) they are applied to: ``original`` or
    ``original0``, ``original1``, ... when the first parametrization's ``right_inverse``
    returns a sequence.

    Args:
        modules: the parametrizations (Modules).
        original: the tensor being parametrized (a Parameter or a buffer).
        unsafe: skip the checks that the parametrization keeps shape and dtype.

    Raises:
        ValueError: with ``unsafe=False``, a parametrization or its ``right_inverse``
            that changes the shape or dtype, or does not return tensors.
    """

    def __init__(self, modules, original: Tensor, unsafe: bool = False) -> None:
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    new = module.right_inverse(new)
        is_param = isinstance(original, Parameter)
        if isinstance(new, Tensor):
            self.is_tensor, self.ntensors = True, 1
            if not unsafe:
                _check_like(new, original, "right_inverse")
            if new is not original:
                if new.shape == original.shape and new.dtype == original.dtype:
                    with no_grad():  # keeps the tensor an optimizer may already hold
                        original.copy_(new)
                else:
                    original = (Parameter(new.detach(), original.requires_grad) if is_param
                                else new.detach())
            _register_tensor(self, "original", original)
        else:
            new = tuple(new)
            if not all(isinstance(t, Tensor) for t in new):
                raise ValueError(f"right_inverse must return a tensor or a sequence of "
                                 f"tensors, got {[type(t).__name__ for t in new]}")
            self.is_tensor, self.ntensors = False, len(new)
            for i, t in enumerate(new):
                t = Parameter(t.detach(), original.requires_grad) if is_param else t.detach()
                _register_tensor(self, f"original{i}", t)
        if not unsafe:
            with no_grad():
                _check_like(self(), original, "a parametrization")

    def forward(self) -> Tensor:
        """The parametrized tensor: the parametrizations applied to the original(s)."""
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x

    def right_inverse(self, value: Tensor) -> None:
        """Store ``value`` as the parametrized tensor: run the ``right_inverse`` of each
        parametrization, last first, and copy the result into the original(s).

        Raises RuntimeError for a parametrization without ``right_inverse``, ValueError
        for a result of another shape, dtype or number of tensors."""
        with no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       f"implement right_inverse; assign to the original "
                                       f"tensor(s) instead")
                value = module.right_inverse(value)
            if self.is_tensor:
                _check_like(value, self.original, "right_inverse")
                self.original.copy_(value)
                return
            if isinstance(value, Tensor) or len(value) != self.ntensors:
                got = 1 if isinstance(value, Tensor) else len(value)
                raise ValueError(f"right_inverse must return a sequence of {self.ntensors} "
                                 f"tensors, got {got}")
            for i, t in enumerate(value):
                original = getattr(self, f"original{i}")
                _check_like(t, original, f"right_inverse's output {i}")
                original.copy_(t)


def _parametrized_class(module: Module) -> None:
    """Give ``module`` a class of its own, so properties can be added to it alone."""
    cls = module.__class__
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {"_unparametrized": cls})


def _add_property(module: Module, name: str) -> None:
    def get(self):
        parametrization = self.parametrizations[name]
        if not _cache_depth:
            return parametrization()
        key = (id(self), name)
        if key not in _cache:
            _cache[key] = parametrization()
        return _cache[key]

    def set_(self, value):
        self.parametrizations[name].right_inverse(value)

    setattr(module.__class__, name, property(get, set_, doc=f"The parametrized {name}."))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make ``module.<tensor_name>`` the output of ``parametrization`` (a Module whose
    ``forward`` maps the original tensor, or the tensors its optional ``right_inverse``
    returns, to a tensor); return ``module``.

    A second call on the same name chains the new parametrization after the first.
    ``unsafe=True`` skips the shape and dtype checks.

    Raises:
        ValueError: ``module`` has no parameter, buffer or parametrized tensor of that
            name; or (without ``unsafe``) the parametrization changes shape or dtype.
    Reference: torch.nn.utils.parametrize.register_parametrization.
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            current = getattr(module, tensor_name)
            with no_grad():
                _check_like(parametrization(current), current, "the new parametrization")
                if hasattr(parametrization, "right_inverse"):
                    _check_like(parametrization.right_inverse(current), current,
                                "the new parametrization's right_inverse")
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(f"Module '{type(module).__name__}' does not have a parameter, a "
                         f"buffer, or a parametrized element with name '{tensor_name}'")
    original = getattr(module, tensor_name)
    if original is None:
        raise ValueError(f"'{tensor_name}' of {type(module).__name__} is None; there is "
                         f"nothing to parametrize")
    parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        module.parametrizations = ModuleDict()
        _parametrized_class(module)
    module.parametrizations[tensor_name] = parametrizations
    _add_property(module, tensor_name)
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has any parametrization (or one on ``tensor_name``).
    Reference: torch.nn.utils.parametrize.is_parametrized."""
    parametrizations = module._modules.get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undo ``register_parametrization`` on ``tensor_name``; return ``module``.

    ``leave_parametrized=True`` keeps the current parametrized value as the plain tensor
    (written into the original tensor when shapes match, so optimizers keep working);
    False restores the original tensor itself. With the last parametrization gone, the
    module gets its original class back.

    Raises ValueError when ``tensor_name`` is not parametrized, or for
    ``leave_parametrized=False`` when it is parametrized by several tensors.
    Reference: torch.nn.utils.parametrize.remove_parametrizations.
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {type(module).__name__} does not have a parametrization on "
                         f"{tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
                if value.shape == original.shape and value.dtype == original.dtype:
                    original.copy_(value)
                else:
                    original = (Parameter(value, original.requires_grad)
                                if isinstance(original, Parameter) else value)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a "
                             "tensor that is parametrized in terms of a sequence of tensors")
        first = parametrizations.original0
        with no_grad():
            value = getattr(module, tensor_name)
        original = (Parameter(value, first.requires_grad) if isinstance(first, Parameter)
                    else value)
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_tensor(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__._unparametrized
    return module


def type_before_parametrizations(module: Module) -> type:
    """The class ``module`` had before it was parametrized (its class if it is not).
    Reference: torch.nn.utils.parametrize.type_before_parametrizations."""
    return module.__class__._unparametrized if is_parametrized(module) else type(module)
