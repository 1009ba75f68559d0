"""Generate each op's Python wrapper as real source from its schema.

``add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`` becomes::

    def add(self, other, *, alpha=1, out=None):
        # add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor  (native_functions.yaml:12)
        if alpha.__class__ is not _int and alpha.__class__ is not _float:
            alpha = _check_scalar(alpha, 'add', 'alpha', 3)
        if self.__class__ is _Tensor and other.__class__ is _Tensor and self._type is other._type:
            _T = self._type; _a_self = self._data; _a_other = other._data
        else:  # (the slow path: None, a number of a higher category, mixed Types)
            if self is None: _check_tensor(self, 'add', 'self', 1)
            if other is None: _check_tensor(other, 'add', 'other', 2)
            _T, (_a_self, _a_other) = _promote('add', 'common', (self, other), ('self', 'other'))
        try:
            _r = _T.kernels['add'](_a_self, _a_other, alpha)
        except ValueError as _e:  # names the op, the operands and their shapes
            raise _value_error('add', _kernel_error('add', _e), (self, other), ...) from None
        except MemoryError as _e:  # numpy's "Unable to allocate", with the op's name
            raise _kernel_error('add', _e)
        if out is not None:
            return _write_out('add', out, _r)
        return _wrap(_r, _T.backend)

Python binds the arguments (so a bad keyword gives Python's own message); the generated
checks give PyTorch-style type errors, and each skips its call for a value it would return
unchanged (a default, a plain number, a Tensor); None for a required Tensor is looked for
only where the all-Tensor fast paths were not taken (or, in a composite, once it failed),
so a correct call pays nothing for it; nothing is looked up by name at call time
except the kernel, which the Type caches. ``source_of(name)`` returns the text for a reader;
``runtime.py`` holds what the wrappers call.
"""
from __future__ import annotations

import linecache
from collections import namedtuple

from .native import DIM_ARG_NAMES, NativeFunction
from .runtime import namespace as _namespace
from .schema import Argument, FunctionSchema

_SOURCES: dict[str, str] = {}
NAMESPACE: dict = {}  # the generated wrappers' globals (ember.autograd adds its recorders)


def recorder_name(qualified: str) -> str:
    """Global name of an op's autograd recorder in the wrappers' namespace."""
    return "_ag_" + qualified.replace(".", "__")


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
        fn = "_check_optional_tensor" if t.optional else "_check_tensor"  # (these raise)
        return [f"if {guard}{n}.__class__ is not _Tensor: {fn}({args})"]
    if t.base in ("int", "SymInt"):
        if t.is_list:
            return [f"{opt}{n} = _check_int_list({args}, {t.size})"]
        return [f"if {guard}{n}.__class__ is not _int: {n} = _check_int({args})"]
    # NOTE: each check below skips its call for the values it returns unchanged (defaults,
    # plain numbers): the fast path pays a comparison, not a call
    if t.base == "Scalar" or t.base == "float":
        fn = "_check_scalar" if t.base == "Scalar" else "_check_float"
        return [f"if {guard}{n}.__class__ is not _int and {n}.__class__ is not _float: "
                f"{n} = {fn}({args})"]
    if t.base == "bool" and t.is_list:
        return [f"{opt}{n} = _check_bool_list({args}, {t.size})"]
    if t.base == "bool":
        return [f"if {guard}{n} is not True and {n} is not False: {n} = _check_bool({args})"]
    if t.base == "str":
        return [f"if {guard}{n}.__class__ is not _str: {n} = _check_str({args})"]
    if t.base == "ScalarType":  # None stays None
        return [f"if {n} is not None: {n} = _check_dtype({args})"]
    return []  # Generator, Device, Layout, ...: converted where used


def _self_guard(nf: NativeFunction, op: str) -> list[str]:
    """Source lines that refuse a Python number as a promoted ``self`` where PyTorch does
    (``sin(2.0)``; ``pow(2, 3)`` for ``number_self: with_tensor``); see native.py.

    Promotion would take the number, so the guard goes where the wrappers reach promotion
    (after their all-Tensor fast paths); its ``__class__`` test keeps it to a pointer
    comparison for a Tensor ``self``."""
    if "self" not in nf.promote_args or nf.number_self is True:
        return []
    args = nf.schema.arguments
    if nf.number_self == "with_tensor":
        names = ("self",) + tuple(n for n in nf.promote_args if n != "self")
        cond = " and ".join(f"not _isinstance({n}, _Tensor)" for n in names)
        return [f"if self.__class__ is not _Tensor and {cond}: "
                f"raise _no_tensor_error({op!r}, ({', '.join(names)},), {names!r})"]
    pos = 1 + [a.name for a in args].index("self")
    return [f"if self.__class__ is not _Tensor and not _isinstance(self, _Tensor): "
            f"raise _self_error({op!r}, self, {pos}, {len(args) > pos})"]


def _none_checks(schema: FunctionSchema, names, op: str) -> list[str]:
    """Source lines that refuse None for the promoted arguments among ``names`` that are
    required Tensors (``add(x, None)``, ``where(c, x, None)``), with the argument's
    TypeError (``add(): argument 'other' (position 2) must be Tensor, not NoneType``).

    Promotion lets None through for optional Tensors (``clamp(x, None, 1)``), so a
    required one must be refused before it; the lines go where the wrappers reach
    promotion (after their all-Tensor fast paths), so a Tensor pays nothing for them."""
    return [f"if {a.name} is None: _check_tensor({a.name}, {op!r}, {a.name!r}, {pos})"
            for pos, a in enumerate(schema.arguments, 1)
            if a.name in names and a.type.is_tensor and not a.type.optional]


def _one_type_path(schema: FunctionSchema, names: list, rule: str) -> list[str]:
    """The first lines of an ``if``/``else`` that skips promotion when every promoted
    operand is a Tensor of one Type (``addmm(bias, x, w)``), where it would change nothing;
    [] when an operand may be None."""
    if not all(a.type.is_tensor and not a.type.optional
               for a in schema.arguments if a.name in names):
        return []
    x = names[0]
    test = [f"{n}.__class__ is _Tensor" for n in names] + \
        [f"{n}._type is {x}._type" for n in names[1:]]
    if rule == "float":
        test.append(f"{x}._type.scalar_type.is_floating_point")
    return [f"if {' and '.join(test)}:",
            f"    _T = {x}._type; " + "; ".join(f"_a_{n} = {n}._data" for n in names),
            "else:"]


def _number_bounds_path(schema: FunctionSchema, names: list, rule: str) -> list[str]:
    """The first lines of an ``if``/``else`` that skips promotion when the first promoted
    operand is a Tensor and the others (optional Tensors: ``clamp(self, min, max)``) are
    None or Python numbers that do not raise its category, as the two-operand path does;
    [] for other signatures."""
    args = {a.name: a for a in schema.arguments}
    x, rest = names[0], names[1:]
    if rule != "common" or not rest or args[x].type.optional or not args[x].type.is_tensor \
            or not all(args[n].type.is_tensor and args[n].type.optional for n in rest):
        return []
    test = [f"{x}.__class__ is _Tensor"] + \
        [f"({n} is None or _SCALAR_CATEGORY.get({n}.__class__, 9) <= "
         f"{x}._type.scalar_type._category)" for n in rest]
    return [f"if {' and '.join(test)}:",
            f"    _T = {x}._type; _a_{x} = {x}._data; " +
            "; ".join(f"_a_{n} = {n}" for n in rest),
            "else:"]


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


def _returns(schema: FunctionSchema, nt_name: str | None, view: tuple | None):
    """(expression for the result, expression for its tuple of outputs) or None for a
    non-Tensor return. ``view`` = (op name, its args) for a view op."""
    rets = schema.returns

    def wrap(e: str, index: str = "None") -> str:
        if view is None:
            return f"_wrap({e}, _T.backend)"
        fn, args = view
        return f"_wrap_view({e}, _T.backend, self, {fn}, ({args}), {index})"
    if len(rets) == 1 and rets[0].type.is_tensor:
        return wrap("_r"), "(_res,)"
    if len(rets) == 1 and rets[0].type.is_tensor_list:
        if view is not None:
            return f"_tuple({wrap('_x', '_i')} for _i, _x in _enumerate(_r))", "_res"
        return f"_tuple({wrap('_x')} for _x in _r)", "_res"
    if len(rets) > 1:
        items = ", ".join(wrap(f"_r[{i}]") if r.type.is_tensor else f"_r[{i}]"
                          for i, r in enumerate(rets))
        return f"{nt_name}({items})", "_res"
    return None


def _requires_grad(schema: FunctionSchema, names, promoted: set) -> str:
    """Source of the test 'does any differentiable input require grad?'."""
    parts = []
    for a in schema.arguments:
        if a.type.base != "Tensor" or a.name not in names:
            continue
        n = a.name
        # NOTE: a view requires grad when its base does, even one made before the base
        # got a history (PyTorch's DifferentiableViewMeta::requires_grad).
        rg = f"({n}._requires_grad or {n}._base is not None and {n}._base._requires_grad)"
        if a.type.is_list:
            parts.append(f"_any_rg({n})")
        elif n in promoted:
            parts.append(f"(_isinstance({n}, _Tensor) and {rg})")
        elif a.type.optional:
            parts.append(f"({n} is not None and {rg})")
        else:
            parts.append(rg)
    return " or ".join(parts)


def _trace_hook(schema: FunctionSchema, fn_name: str, qualified: str, with_out: bool) -> str:
    """The first line of every wrapper: while a trace is open, hand the call to the tracer,
    which runs this wrapper again and records it as one ``ember::<op>`` node."""
    variadic = is_variadic(schema)
    pos, kw = [], []
    for a in schema.arguments:
        if a.kwarg_only:
            kw.append(f"{a.name!r}: {a.name}")
        else:
            pos.append(f"*{a.name}" if variadic and a.type.is_list else a.name)
    if with_out:
        kw.append("'out': out")
    args = "(" + "".join(p + ", " for p in pos) + ")"
    # ``_wrapper_<name>``, not ``<name>``: an argument may share the op's name (``pad``)
    return (f"if _tr.active and _tr.claim(): return _record({'ember::' + qualified!r}, "
            f"_wrapper_{fn_name}, {args}, {{{', '.join(kw)}}})")


def wrapper_name(nf: NativeFunction, inplace: bool = False) -> str:
    """The generated function's name: ``add``, ``add_``, ``max__dim``, ``max___dim``."""
    op = nf.name + "_" if inplace else nf.name
    return op if not nf.schema.overload else f"{op}__{nf.schema.overload}"


def _into_path(nf: NativeFunction, rg: str, promoted: set) -> list[str]:
    """The fast path of a generated in-place op (``mul_``): the backend's ``into:<kernel>``
    entry, where it has one, writes the result straight into self's array (no result
    array, no copy back) and returns False, before writing anything, for the cases it
    leaves to the general path (other dtypes, broadcasting, ...). Taken only when self's
    array is the kernel's operand itself (no promotion), self is writable and not
    expanded, and no autograd node is recorded."""
    self_arr = "_a_self" if "self" in promoted else "self._data"
    cond = [f"{self_arr} is self._data"] if "self" in promoted else []
    cond += ["0 not in self._data.strides", "self._data.flags.writeable"]
    if rg:
        cond.append(f"not (({rg}) and _gm.enabled)")
    kargs = ", ".join(_kernel_arg(a, promoted) for a in nf.schema.arguments)
    return [f"_k = _T.backend.kernels.get('into:{nf.kernel_name}')",
            f"if _k is not None and {' and '.join(cond)} and _k({kargs}):",
            "    self._bump_version()",
            "    return self"]


def generate(nf: NativeFunction, inplace: bool = False, deriv=None) -> tuple[str, str, dict]:
    """Source of one wrapper: (python name, source, extra globals).

    ``inplace=True`` generates ``add_`` from the functional declaration. ``deriv`` is the
    op's ``derivatives.yaml`` entry (None if it has none: then the wrapper raises when
    asked to record a gradient).
    """
    schema = nf.schema
    op = schema.name + "_" if inplace else schema.name
    fn_name = wrapper_name(nf, inplace)
    with_out = "out" in nf.structured and not inplace
    shown = nf.inplace_schema if inplace else schema
    lines = [f"def {fn_name}({_params(schema, with_out)}):",
             f"    # {shown}  ({nf.location})"]
    body: list[str] = [_trace_hook(schema, fn_name, op if not schema.overload else
                                   f"{op}.{schema.overload}", with_out)]
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
        body.append(f"if self.__class__ is not _Tensor: _check_tensor(self, {op!r}, 'self', 1)")
    if nf.check is not None:  # before promotion, which could hide what it looks for
        operands = "".join(a + ", " for a in nf.promote_args)
        body.append(f"_checks[{nf.check!r}]({op!r}, ({operands}))")
    guard = _self_guard(nf, op)
    nones: list[str] = []  # a composite looks for None only when it fails (see below)
    if nf.promote and nf.dispatch == "composite":
        body += guard  # the ops inside the composite promote; its promote_args may be numbers
        nones = _none_checks(schema, nf.promote_args, op)
    elif nf.promote:
        guard = _none_checks(schema, nf.promote_args, op) + guard  # None: before promotion
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
                     # and the mirror image, ``2 - x`` (rsub, __rtruediv__), where a number
                     # may take self's place at all (number_self)
                     *([f"elif {y}.__class__ is _Tensor and _SCALAR_CATEGORY.get("
                        f"{x}.__class__, 9) <= {y}._type.scalar_type._category:",
                        f"    _T = {y}._type; _a_{x} = {x}; _a_{y} = {y}._data"]
                       if x != "self" or nf.number_self else []),
                     "else:", *("    " + g for g in guard),
                     f"    _T, (_a_{x}, _a_{y}) = _promote({op!r}, {nf.promote!r}, ({x}, {y}), "
                     f"{tuple(names)!r})"]
        elif len(names) == 1 and nf.promote == "float":
            x = names[0]
            body += [f"if {x}.__class__ is _Tensor and {x}._type.scalar_type.is_floating_point:",
                     f"    _T = {x}._type; _a_{x} = {x}._data",
                     "else:", *("    " + g for g in guard),
                     f"    _T, (_a_{x},) = _promote({op!r}, 'float', ({x},), ({x!r},))"]
        else:
            targets = "".join(f"_a_{n}, " for n in names)
            promote = (f"_T, ({targets}) = _promote({op!r}, {nf.promote!r}, "
                       f"({', '.join(names)},), {tuple(names)!r})")
            fast = _one_type_path(schema, names, nf.promote) or \
                _number_bounds_path(schema, names, nf.promote)
            body += [*fast, *("    " + g for g in guard), "    " + promote] if fast else \
                [*guard, promote]
    elif primary is not None and primary.type.is_tensor_list:
        body.append(f"_T = {primary.name}[0]._type if {primary.name} else None")
    elif primary is not None:
        body.append(f"_T = {primary.name}._type")
    for a in tensors:
        if a.name in promoted or a is primary:
            continue
        if nf.promote and nf.dispatch == "composite":
            break  # no _T to compare with: the ops inside the composite check devices
        if a.name in nf.cross_device:  # moved before autograd sees it: grads flow back
            body.append(f"{a.name} = _to_device_of(_T, {a.name}, self)")
            continue
        n = a.name
        if a.type.is_list:
            body.append(f"for _x in {n}: _same_device({op!r}, _T, _x, {n!r})")
        else:  # called only where the Backend objects differ (same_device compares names)
            guard = f"{n} is not None and " if a.type.optional else ""
            body.append(f"if {guard}{n}._type.backend is not _T.backend: "
                        f"_same_device({op!r}, _T, {n}, {n!r})")

    if nf.wrap_dims and primary is not None and primary.name == "self" and \
            primary.type.is_tensor:
        nd = "self._data.ndim" + (f" + {nf.dim_extra}" if nf.dim_extra else "")
        for a in schema.arguments:
            if a.name in DIM_ARG_NAMES and a.type.base == "int":
                d = a.name  # a dim already in [0, ndim) (or None) is returned as it is
                if a.type.is_list or a.type.optional:
                    opt = f"if {d} is not None: " if a.type.optional else ""
                    body.append(f"{opt}{d} = _wrap_dims({d}, {nd}, {op!r})")
                else:
                    body.append(f"if not 0 <= {d} < {nd}: {d} = _wrap_dim({d}, {nd}, {op!r})")

    kargs = ", ".join(_kernel_arg(a, promoted) for a in schema.arguments)
    nt_name = None
    if len(schema.returns) > 1:
        nt_name = f"_RT_{fn_name}"
        fields = [r.name or f"result{i}" for i, r in enumerate(schema.returns)]
        extra[nt_name] = namedtuple(schema.name, fields, module="ember.return_types")
    if nf.dispatch == "composite":
        cname = nf.kernel_name
        cargs = ", ".join(a.name for a in schema.arguments)
        call = f"_res = _composite[{cname!r}]({cargs})"
        if nones:  # NOTE: try costs nothing until it raises: None is looked for only then
            body += ["try:", f"    {call}", "except Exception:", *("    " + c for c in nones),
                     "    raise"]
        else:
            body.append(call)
        if inplace:  # the composite recorded its graph: copy_ keeps it for autograd
            body += [f"if _res._requires_grad: return _composite_inplace({op!r}, self, _res)",
                     f"return _write_inplace({op!r}, self, _res._data)"]
        else:
            if with_out:
                body.append(f"if out is not None: return _write_out({op!r}, out, _res._data)")
            body.append("return _res")
    else:
        call = f"_r = _T.kernels[{nf.kernel_name!r}]({kargs})"
        # the autograd layer: only ops with a gradient, only if an input requires grad
        if deriv is None:
            rg = _requires_grad(schema, {a.name for a in tensors}, promoted)
        elif deriv.not_differentiable:
            rg = ""
        else:
            rg = _requires_grad(schema, set(deriv.differentiable_inputs), promoted)
        record = f"{recorder_name(nf.kernel_name)}" if deriv is not None else None
        rec_args = ", ".join(a.name for a in schema.arguments)
        if schema.is_inplace and rg:  # declared in place (fill_, copy_): record before
            body += [f"if ({rg}) and _gm.enabled:",
                     f"    _node = _begin_inplace({op!r}, self, {record}, ({rec_args},))"
                     if record else f"    raise _no_derivative({op!r})",
                     "else:", "    _node = None"]
        if schema.is_inplace:  # its kernel writes self
            body.append(f"_check_writable({op!r}, self)")
        if inplace:
            body += _into_path(nf, rg, promoted)
        # NOTE: try costs nothing in CPython 3.11+ until it raises.
        body += ["try:", f"    {call}"]
        if len(tensors) > 1 or (primary is not None and primary.type.is_tensor_list):
            ops_ = ", ".join(a.name for a in tensors)
            body += ["except ValueError as _e:",
                     f"    raise _value_error({op!r}, _kernel_error({op!r}, _e), ({ops_},), "
                     f"{tuple(a.name for a in tensors)!r}) from None",
                     "except MemoryError as _e:"]
        else:
            body.append("except (ValueError, MemoryError) as _e:")
        body.append(f"    raise _kernel_error({op!r}, _e)")  # (the same _e keeps its cause)
        if inplace:
            if rg:
                body += [f"if ({rg}) and _gm.enabled:",
                         f"    return _record_inplace({op!r}, self, _r, {record}, ({rec_args},))"
                         if record else f"    raise _no_derivative({op!r})"]
            body.append(f"return _write_inplace({op!r}, self, _r)")
        elif schema.is_inplace:
            # NOTE: the kernel validated everything before writing self's array in place
            body += ["self._bump_version()"]
            if rg:
                body.append("if _node is not None: _end_inplace(self, _node)")
            body += ["return self"]
        else:
            if with_out:
                body.append("if out is not None:")
                if rg:
                    body.append(f"    if ({rg}) and _gm.enabled: raise _out_grad_error({op!r})")
                body.append(f"    return _write_out({op!r}, out, _r)")
            view = None
            if schema.is_view:
                view_args = "".join(f"{a.name}, " for a in schema.arguments if a.name != "self")
                view = (fn_name, view_args)
            ret = _returns(schema, nt_name, view)
            if ret is None:
                body.append("return _r")
            elif not rg:
                body.append(f"return {ret[0]}")
            else:
                body += [f"_res = {ret[0]}", f"if ({rg}) and _gm.enabled:",
                         f"    _finish({record}(False, {rec_args}), {ret[1]})" if record else
                         f"    raise _no_derivative({op!r})",
                         "return _res"]
    lines += ["    " + b for b in body]
    return fn_name, "\n".join(lines) + "\n", extra


def compile_functions(nfs: list[NativeFunction], derivs: dict | None = None) -> dict[str, object]:
    """Compile every wrapper; returns python name (``add``, ``add_``, ``max__dim``) -> function.

    ``derivs``: the ``derivatives.yaml`` entries by qualified op name."""
    ns = NAMESPACE
    ns.clear()
    ns.update(_namespace())
    out = {}
    for nf in nfs:
        variants = [False] + ([True] if nf.inplace_schema is not None else [])
        for inplace in variants:
            name, src, extra = generate(nf, inplace, (derivs or {}).get(nf.kernel_name))
            ns.update(extra)
            filename = f"<ember.ops generated: {name} from {nf.location}>"
            exec(compile(src, filename, "exec"), ns)  # noqa: S102 - generated from the yaml
            # tracebacks and inspect.getsource show the wrapper's lines (as torch.fx's
            # generated code); one entry per wrapper, kept as long as the process
            linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
            fn = ns[name]
            ns[f"_wrapper_{name}"] = fn   # what its trace hook calls (see _trace_hook)
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
