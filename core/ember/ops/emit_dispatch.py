"""The dispatch layer's part of each generated wrapper: argument checks, dtype promotion,
device checks and dim wrapping (the lines between the trace hook and the kernel call).

``codegen.generate`` calls these in order; each returns source lines of the wrapper's body
(unindented) for one ``WrapperContext``. What they call at run time is in ``dispatch.py``
and ``runtime.py`` (the wrapper's globals); a non-Tensor argument is checked as its schema
type's entry of ``arguments.ARGUMENT_CONVERSIONS`` says, the table the JIT's array-mode
plans read too. Example, for ``sum.dim_IntList``::

    if dim is not None: dim = _check_int_list(dim, 'sum', 'dim', 2, None)
    ...
    _T = self._type
    if dim is not None: dim = _wrap_dims(dim, self._data.ndim, 'sum')

Reference: torchgen's per-concern generators (``torchgen/api/python.py`` argument parsing,
``torchgen/dest/register_dispatch_key.py``).
"""
from __future__ import annotations

from . import arguments as _arguments
from .native import DIM_ARG_NAMES, NativeFunction
from .schema import Argument, FunctionSchema


def argument_lines(ctx) -> list[str]:
    """Spread variadic lists back into one argument, then check and convert each argument
    (PyTorch-style TypeErrors) and run the op's declared ``check``."""
    schema, op = ctx.schema, ctx.op
    body: list[str] = []
    if ctx.variadic:
        last = [a for a in schema.arguments if a.type.is_list and not a.kwarg_only][0]
        v, item = last.name, "_Tensor" if last.type.base == "Tensor" else "_int"
        body.append(f"if _len({v}) == 1 and not _isinstance({v}[0], {item}): {v} = {v}[0]")
    for pos, a in enumerate(schema.arguments, 1):
        body += _check(a, pos, op, a.name in ctx.promoted)
    if ctx.inplace:  # in-place ops write self: it must be a Tensor even if it is promoted
        body.append(f"if self.__class__ is not _Tensor: _check_tensor(self, {op!r}, 'self', 1)")
    nf = ctx.nf
    if nf.check is not None:  # before promotion, which could hide what it looks for
        operands = "".join(a + ", " for a in nf.promote_args)
        body.append(f"_checks[{nf.check!r}]({op!r}, ({operands}))")
    return body


def promotion_lines(ctx) -> tuple[list[str], list[str]]:
    """(lines that pick the Type ``_T`` and the kernel's operand arrays ``_a_<name>``,
    None checks a composite runs only once it failed).

    Each promoting signature gets an all-Tensor fast path that skips the general
    promotion where it would change nothing."""
    nf, schema, op = ctx.nf, ctx.schema, ctx.op
    body: list[str] = []
    guard = _self_guard(nf, op)
    nones: list[str] = []  # a composite looks for None only when it fails (see codegen)
    primary = ctx.primary
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
    return body, nones


def device_lines(ctx) -> list[str]:
    """Lines that refuse (or, for ``cross_device`` arguments, move) a Tensor argument on
    another backend than ``_T``'s."""
    nf, op = ctx.nf, ctx.op
    body: list[str] = []
    for a in ctx.tensors:
        if a.name in ctx.promoted or a is ctx.primary:
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
    return body


def dim_lines(ctx) -> list[str]:
    """Lines that wrap negative dims of a Tensor ``self`` into ``[0, ndim)`` (a dim already
    in range, or None, is left as it is)."""
    nf, op, primary = ctx.nf, ctx.op, ctx.primary
    if not (nf.wrap_dims and primary is not None and primary.name == "self" and
            primary.type.is_tensor):
        return []
    body: list[str] = []
    nd = "self._data.ndim" + (f" + {nf.dim_extra}" if nf.dim_extra else "")
    for a in ctx.schema.arguments:
        if a.name in DIM_ARG_NAMES and a.type.base == "int":
            d = a.name
            if a.type.is_list or a.type.optional:
                opt = f"if {d} is not None: " if a.type.optional else ""
                body.append(f"{opt}{d} = _wrap_dims({d}, {nd}, {op!r})")
            else:
                body.append(f"if not 0 <= {d} < {nd}: {d} = _wrap_dim({d}, {nd}, {op!r})")
    return body


def _check(a: Argument, pos: int, op: str, promoted: bool) -> list[str]:
    """Source lines that check and convert one argument in place: a Tensor operand here,
    any other argument by its schema type's entry in ``arguments.ARGUMENT_CONVERSIONS``
    (the table the JIT's array-mode plans convert constants with)."""
    t, n = a.type, a.name
    if t.base != "Tensor":
        return _arguments.argument_lines(a, pos, op)
    if promoted:
        return []
    args = f"{n}, {op!r}, {n!r}, {pos}"
    if t.is_list:
        return [f"{n} = _check_tensor_list({args})"]
    guard = f"{n} is not None and " if t.optional else ""
    fn = "_check_optional_tensor" if t.optional else "_check_tensor"  # (these raise)
    return [f"if {guard}{n}.__class__ is not _Tensor: {fn}({args})"]


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
