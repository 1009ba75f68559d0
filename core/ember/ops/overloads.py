"""Overloads that share a Python name (``max``, ``max.dim``, ``max.other``) behind one callable.

PyTorch's argument parser tries each signature; so does ``make_overload_dispatcher``, in
declaration order, matching arguments by binding and by kind (Tensor, number, str, ...)
as recorded from each schema by ``record_overload``. A call that fits none raises a
TypeError listing what was given and every accepted signature. A positional-only call
remembers the overload it took by its arguments' types, so ``x.max()`` matches once.
"""
from __future__ import annotations

import inspect

from .. import dispatch as _d
from ..types import ScalarType
from .schema import FunctionSchema


def _kind_ok(kind, value) -> bool:
    """Whether ``value`` may fill a parameter of dispatch kind ``kind`` (see record_overload)."""
    if kind is None:
        return True
    is_tensor = isinstance(value, _d._Tensor)
    if kind == "tensor":
        return is_tensor
    if kind == "nontensor":
        return not is_tensor
    if kind == "number":
        return not (is_tensor or isinstance(value, (list, tuple, str)))
    if kind == "str":
        return isinstance(value, str)
    if kind == "dtype":
        return isinstance(value, ScalarType)
    if kind == "tensor_or_number":
        return not isinstance(value, (str, list, tuple))
    return True


def _matcher(fn):
    """A fast ``(args, kwargs) -> bool``: do they bind to ``fn`` with the right kinds?

    Equivalent to ``inspect.Signature.bind`` plus the kind checks, without building a
    BoundArguments (that costs microseconds on every call of ``x.max()``).
    """
    sig = inspect.signature(fn)
    name = fn.__qualname__
    positional, kwonly, required = [], {}, set()
    for p in sig.parameters.values():
        if p.kind is p.VAR_POSITIONAL:  # variadic overloads are rare: bind them fully
            def slow(args, kwargs, sig=sig):
                try:
                    bound = sig.bind(*args, **kwargs)
                except TypeError:
                    return False
                return all(_kind_ok(_ARG_KIND.get((name, k)), v)
                           for k, v in bound.arguments.items() if k != p.name)
            return slow
        kind = _ARG_KIND.get((name, p.name))
        if p.default is p.empty:
            required.add(p.name)
        if p.kind is p.KEYWORD_ONLY:
            kwonly[p.name] = kind
        else:
            positional.append((p.name, kind))
    by_name = dict(positional, **kwonly)
    n_pos = len(positional)

    def match(args, kwargs) -> bool:
        if len(args) > n_pos:
            return False
        for (pname, kind), v in zip(positional, args):
            if not _kind_ok(kind, v):
                return False
        filled = len(args)
        for k, v in kwargs.items():
            if k not in by_name or any(k == positional[i][0] for i in range(filled)):
                return False
            if not _kind_ok(by_name[k], v):
                return False
        for i in range(filled, n_pos):
            pname = positional[i][0]
            if pname in required and pname not in kwargs:
                return False
        return all(k in kwargs for k in kwonly if k in required)
    return match


_type = type
_MAX_CHOSEN = 64  # type tuples remembered per dispatcher


def _plain_types(args) -> bool:
    """Whether no argument's ``__class__`` differs from its type (a proxy's may: isinstance
    then sees both, so its type alone would not decide the match)."""
    for a in args:
        if _type(a) is not a.__class__:
            return False
    return True


def make_overload_dispatcher(name: str, fns: list) -> object:
    """One Python callable for several overloads (``max``, ``max.dim``, ``max.other``).

    Tries each overload in declaration order: the first whose arguments bind and whose
    Tensor / number / str positions match is called. Otherwise raises a TypeError that lists
    what was given and every accepted signature, like PyTorch's argument parser.
    """
    candidates = [(_matcher(fn), fn) for fn in fns]
    # NOTE: the matchers test only arity and isinstance, so the overload a positional-only
    # call takes follows from its arguments' types: each type tuple is matched once (x.max()).
    chosen: dict = {}

    def dispatcher(*args, **kwargs):
        if not kwargs:
            key = _type(args[0]) if len(args) == 1 else tuple(map(_type, args))
            fn = chosen.get(key)
            if fn is not None:
                return fn(*args)
        for match, fn in candidates:
            if match(args, kwargs):
                if not kwargs and len(chosen) < _MAX_CHOSEN and _plain_types(args):
                    chosen[key] = fn
                return fn(*args, **kwargs)
        got = ", ".join([_d.type_name(a) for a in args] +
                        [f"{k}={_d.type_name(v)}" for k, v in kwargs.items()])
        options = "\n".join(f" * {_OVERLOAD_SCHEMA[fn.__qualname__]}" for fn in fns)
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({got}), but expected one of:\n{options}")

    dispatcher.chosen = chosen  # (to look at: argument types -> overload)
    dispatcher.__name__ = dispatcher.__qualname__ = name
    dispatcher.__module__ = "ember"
    dispatcher.__doc__ = "\n\n".join(fn.__doc__ or "" for fn in fns)
    return dispatcher


# (generated function name, parameter) -> "tensor" | "number" | "str" | "nontensor" |
# "tensor_or_number"; filled by record_overload.
_ARG_KIND: dict = {}
_OVERLOAD_SCHEMA: dict = {}


def record_overload(fn_name: str, schema: FunctionSchema, promote_args=None,
                    number_self=False) -> None:
    """Remember which parameters of an overload must (not) be Tensors, for dispatching.

    ``promote_args`` (the op's promoted Tensor arguments, if known) tells which Tensor
    parameters may also take numbers: the others must be Tensors (``scatter(..., src)``
    versus ``scatter.value(..., value)``).
    """
    _OVERLOAD_SCHEMA[fn_name] = str(schema)
    for a in schema.arguments:
        if a.type.base == "ScalarType" and not a.type.optional and not a.type.is_list:
            _ARG_KIND[fn_name, a.name] = "dtype"  # x.view(ember.int32) versus x.view(6)
        elif a.type.is_tensor and not a.type.optional and (
                (a.name == "self" and not number_self) or
                (promote_args is not None and a.name not in promote_args)):
            _ARG_KIND[fn_name, a.name] = "tensor"
        elif a.type.base == "str" and not a.type.is_list:
            _ARG_KIND[fn_name, a.name] = "str"  # norm(x, 'fro') versus norm(x, 2)
        elif a.type.base in ("int", "float", "bool", "str") and not a.type.is_list:
            # a plain number: neither a Tensor nor a list (``split`` vs ``split.sizes``)
            _ARG_KIND[fn_name, a.name] = "number"
        elif a.type.base in ("int", "float", "bool", "str") or a.type.is_tensor_list:
            _ARG_KIND[fn_name, a.name] = "nontensor"
        elif a.type.is_tensor and not a.type.optional:
            # Tensor operands may be wrapped numbers, but an overload that takes a number
            # elsewhere in the same position (max.dim) is tried first by declaration order.
            _ARG_KIND[fn_name, a.name] = "tensor_or_number"
