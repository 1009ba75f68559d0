"""``ember.nn.Module``: the base class of every layer and model (``torch.nn.Module``).

A Module owns three ordered registries, filled by ``__setattr__``: ``_parameters``
(``Parameter`` values), ``_buffers`` (plain tensors such as running statistics; a buffer
registered with ``persistent=False`` stays out of ``state_dict``) and ``_modules``
(submodules). Names are dotted paths through the tree (``"features.0.weight"``), in
registration order; traversals visit a module shared by two parents once.

Choices, following PyTorch:
- ``to(dtype)`` converts floating parameters and buffers only; ``to(device)`` moves all.
  Parameters stay the same objects (their memory is swapped through ``Parameter.data``),
  so an optimizer built before ``to`` keeps training the live weights; their ``.grad`` is
  converted too. Buffers are replaced by the converted tensors.
- ``state_dict`` returns detached tensors sharing memory with the model;
  ``load_state_dict`` copies values in place under ``no_grad`` and reports mismatches in
  PyTorch's words (see ``_state.py``).
- ``__call__`` runs forward pre-hooks, ``forward`` and forward hooks, and with full
  backward hooks wraps the inputs and outputs (``_hooks.py``); with no hooks it is a few
  dict checks and the ``forward`` call.
"""
from __future__ import annotations

import itertools
from collections import OrderedDict

from ...tensor import Tensor
from ..parameter import Buffer, Parameter
from ._convert import ConvertMixin
from ._hooks import BackwardHooksMixin
from ._lookup import LookupMixin
from ._state import StateDictMixin

__all__ = ["Module", "RemovableHandle"]


class RemovableHandle:
    """Returned by ``register_forward_hook`` & co.: ``remove()`` unregisters the hook
    (idempotent); also a context manager that removes it on exit."""

    _next_id = itertools.count()

    def __init__(self, hooks_dict: dict):
        self.hooks_dict = hooks_dict
        self.id = next(RemovableHandle._next_id)

    def remove(self) -> None:
        self.hooks_dict.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _addindent(s: str, num_spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(num_spaces * " " + line for line in lines[1:])


def _typename(v) -> str:
    return type(v).__module__ + "." + type(v).__qualname__ if isinstance(v, Tensor) \
        else type(v).__name__


class Module(ConvertMixin, StateDictMixin, BackwardHooksMixin, LookupMixin):
    """Base class for neural-network layers and models.

    Subclass it, call ``super().__init__()`` first in ``__init__``, assign Parameters,
    tensors registered with ``register_buffer`` and submodules as attributes, and define
    ``forward``. Call the module (``model(x)``), not ``forward``, so hooks run.

    Attributes: ``training`` (bool, set by ``train()`` / ``eval()``).
    Raises (on assignment): AttributeError if a Parameter or Module is assigned before
    ``Module.__init__`` ran; TypeError when replacing a registered parameter, buffer or
    submodule with a value of the wrong kind.
    Reference: torch.nn.Module.
    """

    training: bool

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments "
                            f"{args or ''}{kwargs or ''}; Module.__init__ takes none")
        # NOTE: object.__setattr__ skips the registry logic (and is faster).
        set_ = object.__setattr__
        set_(self, "training", True)
        set_(self, "_parameters", OrderedDict())
        set_(self, "_buffers", OrderedDict())
        set_(self, "_non_persistent_buffers_set", set())
        set_(self, "_modules", OrderedDict())
        set_(self, "_forward_pre_hooks", OrderedDict())
        set_(self, "_forward_hooks", OrderedDict())
        set_(self, "_hook_kwargs", set())  # ids of hooks registered with_kwargs=True
        set_(self, "_backward_hooks", OrderedDict())  # see _hooks.py
        set_(self, "_backward_pre_hooks", OrderedDict())

    def forward(self, *args, **kwargs):
        """The computation; every subclass defines it."""
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  f'"forward" function')

    # --- registration --------------------------------------------------------------------
    def _check_name(self, name, kind: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain ".", got "{name}"')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True):
        """Register ``tensor`` (or None) as buffer ``name``: saved in ``state_dict`` when
        ``persistent``, moved and converted by ``to()``, not a parameter.

        Raises KeyError for a bad or taken name, TypeError for a non-Tensor."""
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            f"(ember Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` (a Parameter, or None) as parameter ``name``.

        Raises KeyError for a bad or taken name, TypeError for a non-Parameter, ValueError
        for a non-leaf tensor."""
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None:
            if not isinstance(param, Parameter):
                raise TypeError(f"cannot assign '{_typename(param)}' object to parameter "
                                f"'{name}' (ember.nn.Parameter or None required)")
            if param.grad_fn is not None:
                raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                                 f"parameters must be created explicitly. To express '{name}' "
                                 f"as a function of another Tensor, compute the value in the "
                                 f"forward() method.")
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Register ``module`` (or None) as submodule ``name`` (``self.name`` works too).

        Raises KeyError for a bad or taken name, TypeError for a non-Module."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path ``target`` (``""`` is ``self``).

        Raises AttributeError naming the first missing step."""
        mod = self
        for item in target.split(".") if target else ():
            if not isinstance(getattr(mod, "_modules", None), dict) or item not in mod._modules:
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = mod._modules[item]
        return mod

    def __getattr__(self, name: str):
        # Only reached when normal lookup fails: parameters, buffers and modules live in
        # the registries, not in __dict__.
        d = self.__dict__
        for reg in ("_parameters", "_buffers", "_modules"):
            r = d.get(reg)
            if r is not None and name in r:
                return r[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep=params)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                f"(ember.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if d.get("_modules") is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep=d["_modules"])
            d["_modules"][name] = value
        elif d.get("_modules") is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                f"(ember.nn.Module or None expected)")
            d["_modules"][name] = None
        elif isinstance(value, Buffer):  # nn.Buffer: registered, with its persistence
            self.register_buffer(name, value, value.persistent)
        elif d.get("_buffers") is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                f"(ember Tensor or None expected)")
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: dict) -> None:
        """Drop ``name`` from ``__dict__`` and every registry but ``keep`` (where it is
        about to be set, keeping its position)."""
        self.__dict__.pop(name, None)
        for reg in (self._parameters, self._buffers, self._modules):
            if reg is not keep:
                reg.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __delattr__(self, name: str) -> None:
        for reg in (self._parameters, self._buffers, self._modules):
            if name in reg:
                del reg[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = itertools.chain(dir(type(self)), self.__dict__, self._parameters,
                               self._modules, self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    # --- traversal -----------------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True):
        """Yield ``(dotted_name, module)`` for this module and every descendant, depth
        first in registration order; a module reachable twice is yielded once unless
        ``remove_duplicate=False``."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        """Yield this module and every descendant once."""
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        """Yield ``(name, module)`` for the direct submodules (each module once)."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def children(self):
        """Yield the direct submodules."""
        for _, m in self.named_children():
            yield m

    def _named_members(self, registry: str, prefix: str, recurse: bool, remove_duplicate):
        memo = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for mod_prefix, mod in mods:
            for k, v in getattr(mod, registry).items():
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield mod_prefix + ("." if mod_prefix else "") + k, v

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True):
        """Yield ``(dotted_name, Parameter)``; a shared parameter is yielded once (under
        its first name) unless ``remove_duplicate=False``."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True):
        """Yield every Parameter once (this module's only if ``recurse=False``)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True):
        """Yield ``(dotted_name, tensor)`` for every buffer (persistent or not)."""
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True):
        """Yield every buffer once."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # --- modes and in-place transforms ----------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode on this module and every descendant; returns ``self``.

        Raises ValueError if ``mode`` is not a bool."""
        if not isinstance(mode, bool):
            raise ValueError(f"training mode is expected to be boolean, got "
                             f"{type(mode).__name__}")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> Module:
        """``train(False)``: dropout off, batch norm uses running statistics."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` on every parameter (freeze with False); returns ``self``."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's ``.grad``: to None (default), or to zeros in place."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if p.grad.grad_fn is not None:
                    p.grad.detach_()
                else:
                    p.grad.requires_grad_(False)
                p.grad.zero_()

    def apply(self, fn) -> Module:
        """Call ``fn(module)`` on every descendant, children first, then on ``self``
        (the usual way to run a custom initialisation); returns ``self``."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # --- calling and hooks ---------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Run ``hook(module, args)`` before ``forward``; a non-None result replaces the
        positional args (a non-tuple is wrapped in one). With ``with_kwargs=True`` it is
        ``hook(module, args, kwargs)`` and returns None or ``(args, kwargs)``."""
        return self._add_hook(self._forward_pre_hooks, hook, prepend, with_kwargs)

    def register_forward_hook(self, hook, *, prepend: bool = False,
                              with_kwargs: bool = False) -> RemovableHandle:
        """Run ``hook(module, args, output)`` (or ``hook(module, args, kwargs, output)``
        with ``with_kwargs=True``) after ``forward``; a non-None result replaces the
        output."""
        return self._add_hook(self._forward_hooks, hook, prepend, with_kwargs)

    def _add_hook(self, hooks: OrderedDict, hook, prepend, with_kwargs) -> RemovableHandle:
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        if with_kwargs:
            self._hook_kwargs.add(handle.id)
        return handle

    def __call__(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or
                self._backward_pre_hooks):
            return self.forward(*args, **kwargs)
        with_kw = self._hook_kwargs
        for hid, hook in list(self._forward_pre_hooks.items()):
            if hid in with_kw:
                res = hook(self, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError(f"forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {res}.")
                    args, kwargs = res
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        bw_hook = self._backward_hook_for_call()
        if bw_hook is not None:
            args = bw_hook.setup_input_hook(args)
        out = self.forward(*args, **kwargs)
        for hid, hook in list(self._forward_hooks.items()):
            res = hook(self, args, kwargs, out) if hid in with_kw else hook(self, args, out)
            if res is not None:
                out = res
        return out if bw_hook is None else bw_hook.setup_output_hook(out)

    # --- printing ------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The text inside this module's parentheses in ``repr``; layers override it."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({k}): " + _addindent(repr(m), 2) for k, m in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                body = extra_lines[0]
            else:
                body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"
