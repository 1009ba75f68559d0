"""Load ``native_functions.yaml`` into ``NativeFunction`` records.

Each entry of the yaml file is one op::

    - func: add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
      variants: function, method   # which Python variants to generate (default: function)
      dispatch: abstract           # abstract: a backend kernel; composite: ops/composite.py
      promote: common              # dtype promotion of the Tensor operands before the
                                   #   kernel: common (PyTorch's result_type) or float
                                   #   (same, but int/bool results become the default dtype)
      promote_args: [self, other]  # which arguments take part (default: every Tensor arg);
                                   #   these may also be Python numbers, except self (see
                                   #   number_self). A composite does no casting itself:
                                   #   the ops inside it promote.
      number_self: true            # whether a promoted self may be a Python number: false
                                   #   (default: TypeError, as torch.sin(2.0)), true (any
                                   #   time, as torch.add(2, 3) or torch.where(c, 1, 2.5)),
                                   #   or with_tensor (only beside a Tensor operand, as
                                   #   PyTorch's Scalar-self overloads: torch.pow(2, x))
      structured: inplace, out     # also generate add_ (method) and out= (function)
      check: no_bool               # an operand check run before promotion (ops/checks.py)
      cross_device: [src]          # Tensor arguments that may live on another device than
                                   #   self: the wrapper moves them to self's device first
                                   #   (copy_ transfers, as torch.Tensor.copy_ does); every
                                   #   other Tensor argument on another device raises
                                   #   DeviceMismatchError
      wrap_dims: true              # normalize arguments named dim/dims/dim0/... against
                                   #   self.ndim (+ dim_extra); default true
      dim_extra: 0                 # unsqueeze accepts one dim past the end: dim_extra: 1
      doc: Adds other, scaled by alpha, to self. ...   # the docstring body (shapes, dtypes,
                                   #   errors, reference); the schema line is added to it

Any unknown key, bad value or malformed schema raises ``SchemaError`` naming file:line.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import yaml

from .schema import (Alias, Argument, ArgType, FunctionSchema, Location, Return, SchemaError,
                     parse_schema)

YAML_PATH = Path(__file__).with_name("native_functions.yaml")
_KEYS = {"func", "variants", "dispatch", "promote", "promote_args", "structured", "wrap_dims",
         "dim_extra", "doc", "check", "cross_device", "number_self"}
DIM_ARG_NAMES = frozenset({"dim", "dims", "dim0", "dim1", "start_dim", "end_dim"})


@dataclass(frozen=True)
class NativeFunction:
    """One op declaration, ready for code generation.

    ``schema`` is the functional form; ``inplace_schema`` / ``out_schema`` are derived from
    it when ``structured`` asks for them (``add_`` and ``add.out``).
    """

    schema: FunctionSchema
    variants: frozenset
    dispatch: str
    promote: str | None
    promote_args: tuple
    structured: frozenset
    wrap_dims: bool
    dim_extra: int
    doc: str = ""
    check: str | None = None
    inplace_schema: FunctionSchema | None = None
    out_schema: FunctionSchema | None = None
    cross_device: tuple = ()
    number_self: bool | str = False

    @property
    def name(self) -> str:
        return self.schema.name

    @property
    def kernel_name(self) -> str:
        return self.schema.qualified_name

    @property
    def location(self) -> Location:
        return self.schema.location


def _derive_inplace(s: FunctionSchema) -> FunctionSchema:
    w = Alias("a", True)
    args = (dataclasses.replace(s.arguments[0], alias=w),) + s.arguments[1:]
    return FunctionSchema(s.name + "_", s.overload, args, (Return(ArgType("Tensor"), None, w),),
                          s.location)


def _derive_out(s: FunctionSchema) -> FunctionSchema:
    w = Alias("a", True)
    out = Argument("out", ArgType("Tensor"), None, True, w)
    return FunctionSchema(s.name, "out" if not s.overload else s.overload + "_out",
                          s.arguments + (out,), (Return(ArgType("Tensor"), None, w),),
                          s.location)


def _split_words(v, where: str, key: str) -> list[str]:
    if isinstance(v, str):
        return [w.strip() for w in v.split(",") if w.strip()]
    if isinstance(v, list) and all(isinstance(w, str) for w in v):
        return v
    raise SchemaError(f"{where}: '{key}' must be a comma-separated string or a list of names")


def parse_entry(entry: dict, location: Location) -> NativeFunction:
    """Validate one yaml entry and build its NativeFunction. Raises SchemaError."""
    where = str(location)
    if not isinstance(entry, dict) or "func" not in entry:
        raise SchemaError(f"{where}: each entry needs a 'func: <schema>' key, got {entry!r}")
    unknown = set(entry) - _KEYS
    if unknown:
        raise SchemaError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: {sorted(_KEYS)}")
    schema = parse_schema(str(entry["func"]), location)
    variants = frozenset(_split_words(entry.get("variants", "function"), where, "variants"))
    if not variants or variants - {"function", "method"}:
        raise SchemaError(f"{where}: variants must be 'function', 'method' or both, got "
                          f"{sorted(variants)}")
    if "method" in variants and (not schema.arguments or schema.arguments[0].name != "self"):
        raise SchemaError(f"{where}: a method variant needs 'self' as first argument")
    dispatch = entry.get("dispatch", "abstract")
    if dispatch not in ("abstract", "composite"):
        raise SchemaError(f"{where}: dispatch must be 'abstract' or 'composite', got "
                          f"{dispatch!r}")
    promote = entry.get("promote")
    if promote not in (None, "common", "float"):
        raise SchemaError(f"{where}: promote must be 'common' or 'float', got {promote!r}")
    tensor_args = [a.name for a in schema.arguments if a.type.base == "Tensor"]
    promote_args = tuple(_split_words(entry.get("promote_args", tensor_args), where,
                                      "promote_args")) if promote else ()
    for n in promote_args:
        if n not in tensor_args:
            raise SchemaError(f"{where}: promote_args names {n!r}, which is not a Tensor "
                              f"argument of {schema.name}")
    number_self = entry.get("number_self", False)
    if not (isinstance(number_self, bool) or number_self == "with_tensor"):
        raise SchemaError(f"{where}: number_self must be false, true or with_tensor, got "
                          f"{number_self!r}")
    if number_self and "self" not in promote_args:
        raise SchemaError(f"{where}: number_self needs a promoted 'self' (promote and "
                          f"promote_args); {schema.name} promotes {list(promote_args)}")
    if number_self == "with_tensor" and len(promote_args) < 2:
        raise SchemaError(f"{where}: number_self: with_tensor needs another promoted operand "
                          f"besides self")
    structured = frozenset(_split_words(entry.get("structured", []), where, "structured"))
    if structured - {"inplace", "out"}:
        raise SchemaError(f"{where}: structured takes 'inplace' and/or 'out', got "
                          f"{sorted(structured)}")
    if structured and (len(schema.returns) != 1 or not schema.returns[0].type.is_tensor):
        raise SchemaError(f"{where}: structured variants need a single Tensor return")
    wrap_dims = entry.get("wrap_dims", True)
    dim_extra = entry.get("dim_extra", 0)
    if not isinstance(wrap_dims, bool) or not isinstance(dim_extra, int):
        raise SchemaError(f"{where}: wrap_dims must be a bool and dim_extra an int")
    doc = entry.get("doc", "")
    if not isinstance(doc, str):
        raise SchemaError(f"{where}: doc must be a string")
    from .checks import CHECKS
    check = entry.get("check")
    if check is not None and check not in CHECKS:
        raise SchemaError(f"{where}: unknown check {check!r}; known: {sorted(CHECKS)} "
                          f"(ops/checks.py)")
    cross_device = tuple(_split_words(entry.get("cross_device", []), where, "cross_device"))
    for n in cross_device:
        if n not in tensor_args or n == "self" or n in promote_args:
            raise SchemaError(f"{where}: cross_device names {n!r}, which is not a Tensor "
                              f"argument of {schema.name} other than self and the promoted "
                              f"ones")
    return NativeFunction(
        schema, variants, dispatch, promote, promote_args, structured, wrap_dims, dim_extra,
        doc.strip(), check, _derive_inplace(schema) if "inplace" in structured else None,
        _derive_out(schema) if "out" in structured else None, cross_device, number_self)


# NOTE: libyaml's parser, where PyYAML has it, reads the op tables ~5x faster (about
# 0.3 s of import time); its nodes carry the same marks.
class _LineLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """A SafeLoader that records the line of each mapping as ``__line__``."""


def _construct_mapping(loader, node, deep=False):
    mapping = yaml.SafeLoader.construct_mapping(loader, node, deep=deep)
    mapping["__line__"] = node.start_mark.line + 1
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load(path: Path | str = YAML_PATH, text: str | None = None) -> list[NativeFunction]:
    """Parse a native_functions file (or ``text``, reported as ``path``).

    Raises SchemaError with file:line for a malformed entry or a repeated op name.
    """
    path = Path(path)
    display = path.name if text is None else str(path)
    try:
        data = yaml.load(path.read_text() if text is None else text, Loader=_LineLoader)
    except yaml.YAMLError as e:
        raise SchemaError(f"{display}: not valid YAML: {e}") from None
    if not isinstance(data, list):
        raise SchemaError(f"{display}: expected a list of '- func: ...' entries")
    out, seen = [], {}
    for entry in data:
        line = entry.pop("__line__", 0) if isinstance(entry, dict) else 0
        nf = parse_entry(entry, Location(display, line))
        names = [nf.kernel_name] + ([nf.inplace_schema.qualified_name] if nf.inplace_schema
                                    else [])
        for n in names:
            if n in seen:
                raise SchemaError(f"{nf.location}: op {n!r} is declared twice (first at "
                                  f"{seen[n]})")
            seen[n] = nf.location
        out.append(nf)
    return out
