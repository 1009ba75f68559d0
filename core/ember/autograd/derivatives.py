"""Load ``derivatives.yaml``: one backward formula per differentiable input of each op.

Each entry names an op by its schema (which must match ``native_functions.yaml``) and
gives, per Tensor input, a Python expression over ember ops::

    - name: mul(Tensor self, Tensor other) -> Tensor
      self: grad * other
      other: grad * self

Names a formula may use:

* ``grad`` (the gradient of the only, or first, output) and ``grads`` (all of them, None
  where an output got no gradient);
* ``grad_input_mask``: a tuple of bools, one per input of the formula (in the order the
  key names them), true where that input needs a gradient, so a joint formula can skip
  work (``input, weight, bias: convolution_backward(..., grad_input_mask)``);
* the op's arguments by name (``self``, ``other``, ``dim``, ...), which are saved for
  backward only when a formula that will run uses them;
* ``result`` (or the outputs' names, ``values``), saved as outputs;
* ``x.shape``, ``x.dtype``, ``x.device``, ``x.ndim`` of any input or output ``x``: saved as
  plain values, without keeping the tensor alive;
* the helpers in ``autograd/formulas/`` and every ``ember`` function.

Other keys: ``a, b: expr`` (one expression that returns both gradients), ``x:
non_differentiable`` (no gradient flows to ``x``), ``not_differentiable: true`` (the whole
op: comparisons, argmax, ...), ``output_differentiability: [true, false]``, and
``handwritten: true`` for ops written by hand rather than declared in
``native_functions.yaml`` (``Tensor.to``, indexing). Gradients are reduced to each input's
shape and cast to its dtype by the engine, so formulas may return broadcast shapes.

A malformed entry raises DerivativeError with the file:line of the offending key.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..ops.schema import FunctionSchema, Location, SchemaError, parse_schema

YAML_PATH = Path(__file__).with_name("derivatives.yaml")
SAVED_ATTRS = ("shape", "dtype", "device", "ndim")
_ENTRY_KEYS = {"name", "not_differentiable", "output_differentiability", "handwritten"}


class DerivativeError(SchemaError):
    """A malformed ``derivatives.yaml`` entry; the message starts with ``file:line``."""


@dataclass(frozen=True)
class Formula:
    """``inputs: expression``; ``expression`` is None for ``non_differentiable``."""

    inputs: tuple
    expression: str | None
    location: Location


@dataclass(frozen=True)
class Derivative:
    """One ``derivatives.yaml`` entry."""

    schema: FunctionSchema
    formulas: tuple
    not_differentiable: bool
    output_differentiability: tuple | None
    handwritten: bool
    location: Location

    @property
    def name(self) -> str:
        """The qualified op name, ``max.dim``."""
        return self.schema.qualified_name

    @property
    def differentiable_inputs(self) -> list[str]:
        """The Tensor inputs that have a formula (not ``non_differentiable``)."""
        return [i for f in self.formulas if f.expression is not None for i in f.inputs]


# NOTE: libyaml's parser, where PyYAML has it, reads the op tables ~5x faster (about
# 0.3 s of import time); its nodes carry the same marks.
class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """Records the line of every key as ``__lines__`` in its mapping."""


def _mapping(loader, node, deep=False):
    out = yaml.SafeLoader.construct_mapping(loader, node, deep=deep)
    out["__lines__"] = {k.value: k.start_mark.line + 1 for k, _ in node.value}
    out["__line__"] = node.start_mark.line + 1
    return out


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def load(path: Path | str = YAML_PATH, text: str | None = None) -> dict[str, Derivative]:
    """Parse a derivatives file (or ``text``); returns qualified op name -> Derivative.

    Raises DerivativeError with file:line for malformed entries or repeated ops.
    """
    path = Path(path)
    display = path.name if text is None else str(path)
    try:
        data = yaml.load(path.read_text() if text is None else text, Loader=_Loader)
    except yaml.YAMLError as e:
        raise DerivativeError(f"{display}: not valid YAML: {e}") from None
    if not isinstance(data, list):
        raise DerivativeError(f"{display}: expected a list of '- name: ...' entries")
    out: dict[str, Derivative] = {}
    for entry in data:
        d = _entry(entry, display)
        if d.name in out:
            raise DerivativeError(f"{d.location}: derivative for {d.name!r} given twice "
                                  f"(first at {out[d.name].location})")
        out[d.name] = d
    return out


def _entry(entry, display: str) -> Derivative:
    if not isinstance(entry, dict) or "name" not in entry:
        raise DerivativeError(f"{display}: each entry must be a mapping starting with "
                              f"'name: <schema>', got {entry!r}")
    lines = entry.pop("__lines__")
    where = Location(display, entry.pop("__line__"))
    try:
        schema = parse_schema(str(entry["name"]), where)
    except SchemaError as e:
        raise DerivativeError(str(e)) from None
    args = {a.name: a for a in schema.arguments}
    tensor_args = [a.name for a in schema.arguments if a.type.base == "Tensor"]
    formulas, covered = [], set()
    for key, value in entry.items():
        if key in _ENTRY_KEYS:
            continue
        at = Location(display, lines.get(key, where.line))
        names = tuple(n.strip() for n in str(key).split(","))
        for n in names:
            if n not in args:
                raise DerivativeError(f"{at}: {schema.name} has no argument {n!r} (its "
                                      f"arguments: {', '.join(args)})")
            if args[n].type.base != "Tensor":
                raise DerivativeError(f"{at}: {n!r} of {schema.name} is not a Tensor; only "
                                      f"Tensor inputs take formulas")
            if n in covered:
                raise DerivativeError(f"{at}: two formulas for {n!r} of {schema.name}")
            covered.add(n)
        if not isinstance(value, str) or not value.strip():
            raise DerivativeError(f"{at}: the formula for {key!r} must be a Python "
                                  f"expression or 'non_differentiable', got {value!r}")
        expr = None if value.strip() == "non_differentiable" else value.strip()
        if expr is not None:
            try:
                ast.parse(expr, mode="eval")
            except SyntaxError as e:
                raise DerivativeError(f"{at}: formula for {key!r} is not a Python expression: "
                                      f"{e.msg}: {expr!r}") from None
        formulas.append(Formula(names, expr, at))
    nd = entry.get("not_differentiable", False)
    if nd not in (True, False):
        raise DerivativeError(f"{where}: not_differentiable must be true or false, got {nd!r}")
    if nd and formulas:
        raise DerivativeError(f"{where}: {schema.name} is marked not_differentiable but also "
                              f"gives formulas")
    if not nd:
        missing = [n for n in tensor_args if n not in covered]
        if missing:
            raise DerivativeError(f"{where}: {schema.name} gives no formula for Tensor "
                                  f"input(s) {', '.join(missing)}; write one, or "
                                  f"'{missing[0]}: non_differentiable'")
        lists = [n for n in tensor_args if args[n].type.is_list]
        if lists and len(tensor_args) > 1:
            raise DerivativeError(f"{where}: a Tensor[] input ({lists[0]}) must be the op's "
                                  f"only Tensor input")
    od = entry.get("output_differentiability")
    if od is not None:
        if not isinstance(od, list) or len(od) != len(schema.returns) or \
                any(v not in (True, False) for v in od):
            raise DerivativeError(f"{where}: output_differentiability must list true/false "
                                  f"for each of the {len(schema.returns)} outputs, got {od!r}")
        od = tuple(od)
    hw = entry.get("handwritten", False)
    if hw not in (True, False):
        raise DerivativeError(f"{where}: handwritten must be true or false, got {hw!r}")
    return Derivative(schema, tuple(formulas), nd, od, hw, where)


def check_against(native: list, derivs: dict[str, Derivative]) -> None:
    """Each entry must name a declared op with the same schema (or be ``handwritten``).

    Raises DerivativeError at the entry's file:line."""
    by_name = {nf.kernel_name: nf for nf in native}
    for name, d in derivs.items():
        nf = by_name.get(name)
        if d.handwritten:
            if nf is not None:
                raise DerivativeError(f"{d.location}: {name!r} is declared in "
                                      f"native_functions.yaml ({nf.location}); drop "
                                      f"'handwritten: true'")
            continue
        if nf is None:
            raise DerivativeError(f"{d.location}: no op {name!r} in native_functions.yaml; "
                                  f"declare it there, or mark a hand-written op with "
                                  f"'handwritten: true'")
        if str(nf.schema) != str(d.schema):
            raise DerivativeError(f"{d.location}: the schema of {name!r} differs from its "
                                  f"declaration at {nf.location}:\n  here:     {d.schema}\n"
                                  f"  declared: {nf.schema}")
