"""Generate each op's Python wrapper as real source from its schema.

``add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`` becomes::

    def add(self, other, *, alpha=1, out=None):
        # add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor  (native_functions.yaml:12)
        alpha = _check_scalar(alpha, 'add', 'alpha', 3)
        if self.__class__ is _Tensor and other.__class__ is _Tensor and self._type is other._type:
            _T = self._type; _a_self = self._data; _a_other = other._data
        else:
            _T, (_a_self, _a_other) = _promote('add', 'common', (self, other), ('self', 'other'))
        _r = _T.kernels['add'](_a_self, _a_other, alpha)
        if out is not None:
            return _write_out('add', out, _r)
        return _wrap(_r, _T.backend)

Python binds the arguments (so a bad keyword gives Python's own message); the generated
checks give PyTorch-style type errors; nothing is looked up by name at call time except the
kernel, which the Type caches. ``source_of(name)`` returns the text for a reader.
"""
from __future__ import annotations

from collections import namedtuple

from .. import dispatch as _d
from .native import DIM_ARG_NAMES, NativeFunction
from .schema import Argument, FunctionSchema

_SOURCES: dict[str, str] = {}


def _namespace() -> dict:
    from . import checks, composite
    return {
        "_checks": checks.CHECKS,
        # warnings raised by kernels called straight from a wrapper are attributed here
        "__name__": "ember.ops.generated",
        "_Tensor": _d._Tensor, "_wrap": _d.wrap, "_wrap_view": _d.wrap_view,
        "_promote": _d.promote_operands, "_promote_list": _d.promote_list,
        "_write_out": _d.write_out, "_write_inplace": _d.write_inplace,
        "_check_writable": _d.check_writable,
        "_check_tensor": _d.check_tensor, "_check_optional_tensor": _d.check_optional_tensor,
        "_check_tensor_list": _d.check_tensor_list, "_check_int": _d.check_int,
        "_check_int_list": _d.check_int_list, "_check_float": _d.check_float,
        "_check_bool": _d.check_bool, "_check_scalar": _d.check_scalar,
        "_check_str": _d.check_str, "_check_dtype": _d.check_dtype,
        "_wrap_dim": _d.wrap_dim, "_wrap_dims": _d.wrap_dims, "_same_device": same_device,
        "_gen": _generator_arg, "_value_error": _d.kernel_value_error,
        "_composite": composite.COMPOSITES, "_len": len,
        "_isinstance": isinstance, "_int": int, "_float": float, "_tuple": tuple,
        "_SCALAR_CATEGORY": {float: 2, int: 1, bool: 0},
    }


def same_device(op: str, typ, t, name: str) -> None:
    """Raise DeviceMismatchError unless tensor ``t`` lives on ``typ``'s backend."""
    if t._type.backend is not typ.backend:
        raise _d.DeviceMismatchError(
            f"{op}(): expected '{name}' on '{typ.backend.name}' like the other tensors, but it "
            f"is on {t.device}; move it with .to('{typ.backend.name}')")


def _generator_arg(g, backend):
    from ..random import backend_rng
    return backend_rng(g, backend)


def is_variadic(schema: FunctionSchema) -> bool:
    """Whether the trailing list argument may also be passed spread out: ``view(Tensor self,
    int[] size)`` as ``x.view(2, 3)``, and a trailing ``Tensor[]`` after non-Tensor
    arguments (``einsum(str equation, Tensor[] tensors)``) as ``einsum("ij,jk", a, b)``."""
    pos = [a for a in schema.arguments if not a.kwarg_only]
    if not pos or not pos[-1].type.is_list or pos[-1].type.optional or pos[-1].has_default:
        return False
    if pos[-1].type.base in ("int", "SymInt"):
        return len(pos) == 2 and pos[0].name == "self"
    return pos[-1].type.base == "Tensor" and not any(
        a.type.is_list or a.type.base == "Tensor" for a in pos[:-1])


def _params(schema: FunctionSchema, with_out: bool) -> str:
    parts, star = [], False
    variadic = is_variadic(schema)
    for a in schema.arguments:
        if a.kwarg_only and not star:
            parts.append("*")
            star = True
        if variadic and not a.kwarg_only and a.type.is_list:
            parts.append(f"*{a.name}")
            star = True
            continue
        parts.append(a.name + (f"={a.default}" if a.has_default else ""))
    if with_out:
        if not star:
            parts.append("*")
        parts.append("out=None")
    return ", ".join(parts)


def _check(a: Argument, pos: int, op: str, promoted: bool) -> list[str]:
    """Source lines that check and convert one argument in place."""
    t, n = a.type, a.name
    args = f"{n}, {op!r}, {n!r}, {pos}"
    opt = f"if {n} is not None: " if t.optional else ""
    guard = f"{n} is not None and " if t.optional else ""  # for lines that are an `if` already
    if t.base == "Tensor":
        if promoted:
            return []
        if t.is_list:
            return [f"{n} = _check_tensor_list({args})"]
        return [f"{n} = _check_optional_tensor({args})" if t.optional
                else f"if {n}.__class__ is not _Tensor: _check_tensor({args})"]
    if t.base in ("int", "SymInt"):
        if t.is_list:
            return [f"{opt}{n} = _check_int_list({args}, {t.size})"]
        return [f"if {guard}{n}.__class__ is not _int: {n} = _check_int({args})"]
    simple = {"float": "_check_float", "bool": "_check_bool", "str": "_check_str"}
    if t.base == "Scalar":  # hot (alpha=1): skip the call for plain numbers
        return [f"if {guard}{n}.__class__ is not _int and {n}.__class__ is not _float: "
                f"{n} = _check_scalar({args})"]
    if t.base in simple:
        fn = simple[t.base]
        return [f"{opt}{n} = {fn}({args})"]
    if t.base == "ScalarType":
        return [f"{n} = _check_dtype({args})"]
    return []  # Generator, Device, Layout, ...: converted where used


def _kernel_arg(a: Argument, promoted: set[str]) -> str:
    t, n = a.type, a.name
    if t.base == "Tensor":
        if n in promoted:
            return f"_a_{n}"
        if t.is_list:
            return f"[_x._data for _x in {n}]"
        return f"(None if {n} is None else {n}._data)" if t.optional else f"{n}._data"
    if t.base == "Generator":
        return f"_gen({n}, _T.backend)"
    return n


def _returns(schema: FunctionSchema, nt_name: str | None, view_of: str | None) -> list[str]:
    rets = schema.returns
    wrap = (lambda e: f"_wrap_view({e}, _T.backend, {view_of})") if view_of else \
        (lambda e: f"_wrap({e}, _T.backend)")
    if len(rets) == 1 and rets[0].type.is_tensor:
        return [f"return {wrap('_r')}"]
    if len(rets) == 1 and rets[0].type.is_tensor_list:
        return [f"return _tuple({wrap('_x')} for _x in _r)"]
    if len(rets) > 1:
        items = ", ".join(wrap(f"_r[{i}]") if r.type.is_tensor else f"_r[{i}]"
                          for i, r in enumerate(rets))
        return [f"return {nt_name}({items})"]
    return ["return _r"]


def wrapper_name(nf: NativeFunction, inplace: bool = False) -> str:
    """The generated function's name: ``add``, ``add_``, ``max__dim``, ``max___dim``."""
    op = nf.name + "_" if inplace else nf.name
    return op if not nf.schema.overload else f"{op}__{nf.schema.overload}"


def generate(nf: NativeFunction, inplace: bool = False) -> tuple[str, str, dict]:
    """Source of one wrapper: (python name, source, extra globals).

    ``inplace=True`` generates ``add_`` from the functional declaration.
    """
    schema = nf.schema
    op = schema.name + "_" if inplace else schema.name
    fn_name = wrapper_name(nf, inplace)
    with_out = "out" in nf.structured and not inplace
    shown = nf.inplace_schema if inplace else schema
    lines = [f"def {fn_name}({_params(schema, with_out)}):",
             f"    # {shown}  ({nf.location})"]
    body: list[str] = []
    extra: dict = {}
    promoted = set(nf.promote_args)
    if is_variadic(schema):
        last = [a for a in schema.arguments if a.type.is_list and not a.kwarg_only][0]
        v, item = last.name, "_Tensor" if last.type.base == "Tensor" else "_int"
        body.append(f"if _len({v}) == 1 and not _isinstance({v}[0], {item}): {v} = {v}[0]")
    for pos, a in enumerate(schema.arguments, 1):
        body += _check(a, pos, op, a.name in promoted)

    tensors = [a for a in schema.arguments if a.type.base == "Tensor"]
    primary = tensors[0] if tensors else None
    if inplace:  # in-place ops write self: it must be a Tensor even if it is promoted
        body.append(f"if not _isinstance(self, _Tensor): _check_tensor(self, {op!r}, 'self', 1)")
    if nf.check is not None:  # before promotion, which could hide what it looks for
        operands = "".join(a + ", " for a in nf.promote_args)
        body.append(f"_checks[{nf.check!r}]({op!r}, ({operands}))")
    if nf.promote and nf.dispatch == "composite":
        pass  # the ops inside the composite promote; its promote_args may be numbers
    elif nf.promote:
        names = list(nf.promote_args)
        if len(names) == 1 and next(a for a in schema.arguments
                                    if a.name == names[0]).type.is_tensor_list:
            n = names[0]
            body.append(f"_T, _a_{n} = _promote_list({op!r}, {n}, {n!r})")
        elif len(names) == 2 and nf.promote == "common":
            x, y = names
            body += [f"if {x}.__class__ is _Tensor and {y}.__class__ is _Tensor and "
                     f"{x}._type is {y}._type:",
                     f"    _T = {x}._type; _a_{x} = {x}._data; _a_{y} = {y}._data",
                     # a Python number that does not raise the tensor's category keeps its
                     # dtype (torch.result_type), so skip the general promotion
                     f"elif {x}.__class__ is _Tensor and _SCALAR_CATEGORY.get({y}.__class__, 9) "
                     f"<= {x}._type.scalar_type._category:",
                     f"    _T = {x}._type; _a_{x} = {x}._data; _a_{y} = {y}",
                     "else:",
                     f"    _T, (_a_{x}, _a_{y}) = _promote({op!r}, {nf.promote!r}, ({x}, {y}), "
                     f"{tuple(names)!r})"]
        elif len(names) == 1 and nf.promote == "float":
            x = names[0]
            body += [f"if {x}.__class__ is _Tensor and {x}._type.scalar_type.is_floating_point:",
                     f"    _T = {x}._type; _a_{x} = {x}._data",
                     "else:",
                     f"    _T, (_a_{x},) = _promote({op!r}, 'float', ({x},), ({x!r},))"]
        else:
            targets = "".join(f"_a_{n}, " for n in names)
            body.append(f"_T, ({targets}) = _promote({op!r}, {nf.promote!r}, "
                        f"({', '.join(names)},), {tuple(names)!r})")
    elif primary is not None and primary.type.is_tensor_list:
        body.append(f"_T = {primary.name}[0]._type if {primary.name} else None")
    elif primary is not None:
        body.append(f"_T = {primary.name}._type")
    for a in tensors:
        if a.name in promoted or a is primary:
            continue
        def check(value: str, a=a) -> str:
            return f"_same_device({op!r}, _T, {value}, {a.name!r})"
        if a.type.is_list:
            body.append(f"for _x in {a.name}: {check('_x')}")
        elif a.type.optional:
            body.append(f"if {a.name} is not None: {check(a.name)}")
        else:
            body.append(check(a.name))

    if nf.wrap_dims and primary is not None and primary.name == "self" and \
            primary.type.is_tensor:
        nd = "self._data.ndim" + (f" + {nf.dim_extra}" if nf.dim_extra else "")
        for a in schema.arguments:
            if a.name in DIM_ARG_NAMES and a.type.base == "int":
                fn = "_wrap_dims" if a.type.is_list or a.type.optional else "_wrap_dim"
                body.append(f"{a.name} = {fn}({a.name}, {nd}, {op!r})")

    kargs = ", ".join(_kernel_arg(a, promoted) for a in schema.arguments)
    nt_name = None
    if len(schema.returns) > 1:
        nt_name = f"_RT_{fn_name}"
        fields = [r.name or f"result{i}" for i, r in enumerate(schema.returns)]
        extra[nt_name] = namedtuple(schema.name, fields, module="ember.return_types")
    if nf.dispatch == "composite":
        cname = nf.kernel_name
        cargs = ", ".join(a.name for a in schema.arguments)
        body.append(f"_res = _composite[{cname!r}]({cargs})")
        if inplace:
            body.append(f"return _write_inplace({op!r}, self, _res._data)")
        else:
            if with_out:
                body.append(f"if out is not None: return _write_out({op!r}, out, _res._data)")
            body.append("return _res")
    else:
        call = f"_r = _T.kernels[{nf.kernel_name!r}]({kargs})"
        if schema.is_inplace:  # declared in place (fill_, copy_): its kernel writes self
            body.append(f"_check_writable({op!r}, self)")
        if len(tensors) > 1 or (primary is not None and primary.type.is_tensor_list):
            # NOTE: try costs nothing in CPython 3.11+ until it raises.
            ops_ = ", ".join(a.name for a in tensors)
            body += ["try:", f"    {call}", "except ValueError as _e:",
                     f"    raise _value_error({op!r}, _e, ({ops_},), "
                     f"{tuple(a.name for a in tensors)!r}) from None"]
        else:
            body.append(call)
        if inplace:
            body.append(f"return _write_inplace({op!r}, self, _r)")
        elif schema.is_inplace:
            # NOTE: the kernel validated everything before writing self's array in place
            body += ["self._bump_version()", "return self"]
        else:
            if with_out:
                body.append(f"if out is not None: return _write_out({op!r}, out, _r)")
            view_of = "self" if schema.is_view else None
            body += _returns(schema, nt_name, view_of)
    lines += ["    " + b for b in body]
    return fn_name, "\n".join(lines) + "\n", extra


def compile_functions(nfs: list[NativeFunction]) -> dict[str, object]:
    """Compile every wrapper; returns python name (``add``, ``add_``, ``max__dim``) -> function."""
    ns = _namespace()
    out = {}
    for nf in nfs:
        variants = [False] + ([True] if nf.inplace_schema is not None else [])
        for inplace in variants:
            name, src, extra = generate(nf, inplace)
            ns.update(extra)
            filename = f"<ember.ops generated: {name} from {nf.location}>"
            exec(compile(src, filename, "exec"), ns)  # noqa: S102 - generated from the yaml
            fn = ns[name]
            fn.__module__ = "ember"
            fn.__qualname__ = name
            fn.__doc__ = _docstring(nf, inplace)
            _SOURCES[name] = src
            out[name] = fn
    return out


def _docstring(nf: NativeFunction, inplace: bool) -> str:
    s = nf.inplace_schema if inplace else nf.schema
    base = nf.doc
    if inplace:
        base = f"In-place version of :func:`ember.{nf.name}`; writes into ``self``.\n\n" \
               f"Raises DtypeError if the result dtype cannot be stored in ``self``."
    return f"{s}\n\n{base}\n\nDeclared at {nf.location}."


def source_of(name: str) -> str:
    """The generated source of wrapper ``name`` (``"add"``, ``"add_"``, ``"max__dim"``)."""
    return _SOURCES[name]
