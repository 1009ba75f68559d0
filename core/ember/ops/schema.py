"""Parse PyTorch-syntax op schemas into frozen dataclasses that remember file:line.

The grammar (a subset of PyTorch's ``FunctionSchema``)::

    schema    := name ["." overload] "(" [args] ")" "->" returns
    args      := arg ("," arg)*            # a bare "*" starts the keyword-only arguments
    arg       := type [alias] name ["=" default]
    type      := base ["[" [N] "]"] ["?"]  # Tensor, Tensor?, Tensor[], int[2], int[1]?
    alias     := "(" letter ["!"] ")"       # Tensor(a) is a view, Tensor(a!) is written to
    returns   := ret | "(" ret ("," ret)* ")" | "()"
    ret       := type [alias] [name]

Example: ``add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor``.

A malformed schema raises :class:`SchemaError`, whose message starts with the
``file:line`` it came from, so a bad ``native_functions.yaml`` entry fails at import.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

BASE_TYPES = frozenset({
    "Tensor", "Scalar", "int", "float", "bool", "str", "ScalarType", "Device", "Generator",
    "Layout", "MemoryFormat", "Dimname", "SymInt",
    "Any",  # any Python value: the index of handwritten ops in autograd/derivatives.yaml
})
# base, alias before a list suffix (``Tensor(a)[]``), list suffix, ?, alias (``Tensor(a!)``)
_TYPE_RE = re.compile(r"^([A-Za-z]+)(?:\(([a-z])(!?)\))?(\[(\d*)\])?(\?)?(?:\(([a-z])(!?)\))?$")
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class SchemaError(ValueError):
    """A malformed op declaration; the message starts with ``file:line``."""


@dataclass(frozen=True)
class Location:
    """Where a declaration was written."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Alias:
    """An alias annotation: ``Tensor(a)`` (``is_write=False``, a view) or ``Tensor(a!)``."""

    set: str
    is_write: bool


@dataclass(frozen=True)
class ArgType:
    """An argument type: ``base``, whether it is a list (``size`` for ``int[2]``) and
    whether it is optional (``Tensor?``)."""

    base: str
    is_list: bool = False
    size: int | None = None
    optional: bool = False

    def __str__(self) -> str:
        s = self.base
        if self.is_list:
            s += f"[{self.size or ''}]"
        return s + ("?" if self.optional else "")

    @property
    def is_tensor(self) -> bool:
        return self.base == "Tensor" and not self.is_list

    @property
    def is_tensor_list(self) -> bool:
        return self.base == "Tensor" and self.is_list


@dataclass(frozen=True)
class Argument:
    """One argument: name, type, alias, default (a Python literal's source) and whether it is
    keyword-only."""

    name: str
    type: ArgType
    default: str | None = None
    kwarg_only: bool = False
    alias: Alias | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not None

    def __str__(self) -> str:
        alias = f"({self.alias.set}{'!' if self.alias.is_write else ''})" if self.alias else ""
        default = f"={self.default}" if self.default is not None else ""
        return f"{self.type}{alias} {self.name}{default}"


@dataclass(frozen=True)
class Return:
    """One return: type, alias (``Tensor(a)`` for a view of an input) and optional name."""

    type: ArgType
    name: str | None = None
    alias: Alias | None = None


@dataclass(frozen=True)
class FunctionSchema:
    """A parsed schema plus where it was declared."""

    name: str
    overload: str
    arguments: tuple[Argument, ...]
    returns: tuple[Return, ...]
    location: Location

    @property
    def qualified_name(self) -> str:
        """``name.overload`` or ``name``: the key of the op's kernel."""
        return f"{self.name}.{self.overload}" if self.overload else self.name

    @property
    def is_inplace(self) -> bool:
        """``add_(Tensor(a!) self, ...)``: writes to ``self``."""
        return self.name.endswith("_") and bool(self.arguments) and \
            self.arguments[0].alias is not None and self.arguments[0].alias.is_write

    @property
    def out_argument(self) -> Argument | None:
        """The keyword-only ``Tensor(a!) out`` of an out= variant, if any."""
        for a in self.arguments:
            if a.kwarg_only and a.alias is not None and a.alias.is_write and a.name == "out":
                return a
        return None

    @property
    def is_view(self) -> bool:
        """Whether a return aliases an input without writing it (``-> Tensor(a)``)."""
        return any(r.alias is not None and not r.alias.is_write for r in self.returns)

    def __str__(self) -> str:
        args, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                args.append("*")
                star = True
            args.append(str(a))
        rets = []
        for r in self.returns:
            alias = f"({r.alias.set}{'!' if r.alias.is_write else ''})" if r.alias else ""
            rets.append(f"{r.type}{alias}" + (f" {r.name}" if r.name else ""))
        ret = rets[0] if len(rets) == 1 else f"({', '.join(rets)})"
        return f"{self.qualified_name}({', '.join(args)}) -> {ret}"


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside brackets and parentheses."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def _parse_type(text: str, where: str) -> tuple[ArgType, Alias | None]:
    m = _TYPE_RE.match(text)
    if not m or m.group(1) not in BASE_TYPES:
        known = ", ".join(sorted(BASE_TYPES))
        raise SchemaError(f"{where}: unknown type {text!r}; expected one of {known}, "
                          f"optionally with [N], ? and an alias like (a!)")
    base, is_list, size, opt = m.group(1), m.group(4) is not None, m.group(5), m.group(6)
    if m.group(2) and m.group(7):
        raise SchemaError(f"{where}: type {text!r} has two alias annotations")
    alias_set, write = (m.group(2), m.group(3)) if m.group(2) else (m.group(7), m.group(8))
    alias = Alias(alias_set, bool(write)) if alias_set else None
    return ArgType(base, is_list, int(size) if size else None, bool(opt)), alias


def _check_default(default: str, where: str) -> str:
    if default in ("None", "True", "False"):
        return default
    try:
        ast.literal_eval(default)
    except (ValueError, SyntaxError):
        raise SchemaError(f"{where}: default {default!r} is not a Python literal") from None
    return default


def parse_schema(text: str, location: Location = Location("<string>", 0)) -> FunctionSchema:
    """Parse one schema string (see the module docstring for the grammar).

    Raises SchemaError, prefixed with ``location``, on any malformed part.
    """
    where = str(location)
    head, arrow, ret_text = text.partition("->")
    if not arrow:
        raise SchemaError(f"{where}: schema {text!r} has no '->' before its return type")
    head = head.strip()
    if not head.endswith(")") or "(" not in head:
        raise SchemaError(f"{where}: expected 'name(args) -> returns', got {text!r}")
    full_name, _, arg_text = head[:-1].partition("(")
    name, _, overload = full_name.strip().partition(".")
    if not _NAME_RE.match(name) or (overload and not _NAME_RE.match(overload)):
        raise SchemaError(f"{where}: bad op name {full_name!r}")

    arguments: list[Argument] = []
    kwarg_only = False
    seen: set[str] = set()
    if arg_text.strip():
        for piece in _split_top(arg_text):
            if piece == "*":
                if kwarg_only:
                    raise SchemaError(f"{where}: '*' appears twice in {name}")
                kwarg_only = True
                continue
            decl, eq, default = piece.partition("=")
            bits = decl.split()
            if len(bits) != 2:
                raise SchemaError(f"{where}: argument {piece!r} of {name} must be "
                                  f"'Type name' or 'Type name=default'")
            typ, alias = _parse_type(bits[0], where)
            arg_name = bits[1]
            if not _NAME_RE.match(arg_name) or arg_name in seen:
                raise SchemaError(f"{where}: bad or repeated argument name {arg_name!r} in "
                                  f"{name}")
            seen.add(arg_name)
            if eq:
                default = _check_default(default.strip(), where)
            elif arguments and arguments[-1].has_default and not kwarg_only:
                raise SchemaError(f"{where}: argument {arg_name!r} of {name} has no default "
                                  f"but follows one that does")
            arguments.append(Argument(arg_name, typ, default if eq else None, kwarg_only, alias))

    ret_text = ret_text.strip()
    if ret_text.startswith("(") and ret_text.endswith(")"):
        ret_parts = [p for p in _split_top(ret_text[1:-1]) if p]
    else:
        ret_parts = [ret_text]
    returns = []
    for part in ret_parts:
        bits = part.split()
        if not bits or len(bits) > 2:
            raise SchemaError(f"{where}: bad return {part!r} in {name}")
        typ, alias = _parse_type(bits[0], where)
        returns.append(Return(typ, bits[1] if len(bits) == 2 else None, alias))
    return FunctionSchema(name, overload, tuple(arguments), tuple(returns), location)
