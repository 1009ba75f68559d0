"""Generate a backward Node class and a recorder function per ``derivatives.yaml`` entry.

For ``mul(Tensor self, Tensor other)`` with ``self: grad * other`` and ``other: grad *
self`` this writes (see ``source_of("mul")``)::

    class MulBackward0(_Node):
        __slots__ = ('self_', 'other_')
        def apply(_node, _grads):
            grad = _grads[0]; grads = _grads
            _e = _node.next_functions
            _r = [None] * 2
            if _e[0] is not None:
                other = _unpack(_node.other_, _node)
                _r[0] = grad * other
            ...

    def record_mul(_inplace, self, other):
        _node = MulBackward0()
        _e0 = _edge(self); _e1 = _edge(other)
        _node.next_functions = (_e0, _e1)
        if _e1 is not None: _node.self_ = _save_input(self, 'self', _inplace, _e0)
        ...
        return _node

The op wrapper calls ``record_mul`` when grad mode is on and an input requires grad, then
``finish`` (outputs get ``grad_fn``; saved outputs are stored). Formulas are ember ops, so
when the engine runs with ``create_graph=True`` they record history themselves: double
backward needs no extra code.

For the JIT's symbolic autodiff, ``backward_function(name)`` generates (on first use) the
same formulas as a free function of the gradients, a needs-gradient mask and the saved
values (see :class:`BackwardFunction`); the eager nodes above do not change.
"""
from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass
from typing import Callable

from . import formulas as _formulas
from . import nn_formulas as _nn_formulas
from .derivatives import SAVED_ATTRS, Derivative, DerivativeError
from .function import FREED, AccumulateGrad, Node, SavedVariable, gradient_edge, save, unpack

_SOURCES: dict[str, str] = {}
_SAFE_BUILTINS = ("None", "True", "False", "len", "range", "tuple", "list", "isinstance",
                  "int", "float", "zip", "enumerate", "any", "all", "min", "max", "sorted",
                  "reversed", "sum")


class GeneratedNode(Node):
    """Base of the generated backward nodes: releases saved tensors after backward."""

    __slots__ = ()
    _saved_tensors: tuple = ()
    _result_slots: tuple = ()
    _out_attrs: tuple = ()
    _out_diff: tuple | None = None

    def release_variables(self) -> None:
        for slot in self._saved_tensors:
            v = getattr(self, slot, None)
            if v.__class__ is SavedVariable or \
                    (v.__class__ is tuple and v and v[0].__class__ is SavedVariable):
                setattr(self, slot, FREED)


def _edge(v):
    if isinstance(v, _Tensor):
        return gradient_edge(v)
    return None


def _save_input(v, name: str, inplace: bool, edge):
    """Save an input; an in-place op's ``self`` is about to be overwritten, so save a copy
    that keeps its old place in the graph."""
    if not inplace or name != "self":
        return save(v, name)
    from .. import dispatch as _d
    snap = _d.wrap(v._data.copy(), v._type.backend)
    if edge is not None:
        snap.grad_fn, snap.output_nr = edge
        snap._requires_grad = True
        if edge[0].__class__ is AccumulateGrad:
            snap.grad_fn = None  # a leaf: in-place on it raised already; keep it a leaf
    return save(snap, name)


def _attr(v, attr: str):
    if isinstance(v, _Tensor):
        return getattr(v, attr)
    if v.__class__ in (list, tuple):
        return [getattr(x, attr) for x in v]
    return None


def camel(name: str) -> str:
    """``log_softmax`` -> ``LogSoftmax`` (the stem of a node's class name)."""
    return "".join(p[:1].upper() + p[1:] for p in name.split("_") if p)


class _Rewrite(ast.NodeTransformer):
    """``self.shape`` -> ``self_shape`` for inputs and outputs (a saved attribute)."""

    def __init__(self, tensors: set):
        self.tensors, self.attrs = tensors, set()

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id in self.tensors and \
                node.attr in SAVED_ATTRS:
            name = f"{node.value.id}_{node.attr}"
            self.attrs.add((node.value.id, node.attr, name))
            return ast.copy_location(ast.Name(name, ast.Load()), node)
        return node


def output_names(d: Derivative) -> list[str]:
    """The names formulas use for the outputs: ``result``, or the declared return names."""
    rets = d.schema.returns
    if len(rets) == 1:
        return ["result"]
    return [r.name or f"result{i}" for i, r in enumerate(rets)]


def _formula_blocks(d: Derivative, namespace: dict):
    """Each formula of ``d`` rewritten (``self.shape`` -> ``self_shape``) and checked:
    returns ``(blocks, uses)``, ``blocks`` a list of ``(k, formula, expr, saved names,
    uses grad_input_mask)`` and ``uses`` formula index -> ``(saved names, attributes)``.
    Raises DerivativeError at the formula's file:line for an unknown name."""
    schema = d.schema
    args = [a.name for a in schema.arguments]
    tensors = [a.name for a in schema.arguments if a.type.base == "Tensor"]
    outs = output_names(d)
    known = set(args) | set(outs) | {"grad", "grads", "grad_input_mask"} | set(namespace) | \
        set(_SAFE_BUILTINS)
    blocks, uses = [], {}  # uses: formula index -> names of saved things it reads
    for k, f in enumerate(d.formulas):
        if f.expression is None:
            continue
        rw = _Rewrite(set(tensors) | set(outs))
        tree = rw.visit(ast.parse(f.expression, mode="eval"))
        expr = ast.unparse(tree)
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        attr_names = {a[2] for a in rw.attrs}
        for n in sorted(names - known - attr_names):
            raise DerivativeError(f"{f.location}: formula for {', '.join(f.inputs)} of "
                                  f"{schema.name} uses unknown name {n!r}; use an argument, "
                                  f"'grad', 'grads', 'result', an ember function or a helper "
                                  f"from autograd/formulas.py")
        saved = sorted((names & (set(args) | set(outs))) | attr_names)
        uses[k] = (saved, rw.attrs)
        blocks.append((k, f, expr, saved, "grad_input_mask" in names))
    return blocks, uses


def generate(d: Derivative, class_name: str, namespace: dict) -> str:
    """Source of the Node class and recorder for ``d``; names are checked against
    ``namespace`` (raises DerivativeError at the formula's file:line)."""
    schema = d.schema
    args = [a.name for a in schema.arguments]
    tensors = [a.name for a in schema.arguments if a.type.base == "Tensor"]
    outs = output_names(d)
    list_input = next((a.name for a in schema.arguments
                       if a.type.base == "Tensor" and a.type.is_list), None)
    diff = {n for f in d.formulas if f.expression for n in f.inputs}

    blocks, uses = _formula_blocks(d, namespace)

    # every saved thing, with what it is: an input, an output, or an attribute of one
    inputs_saved, outputs_saved, in_attrs, out_attrs = {}, {}, {}, {}
    for k, (saved, attrs) in uses.items():
        for s in saved:
            if s in args:
                inputs_saved.setdefault(s, []).append(k)
            elif s in outs:
                outputs_saved[s] = True
        for owner, attr, name in attrs:
            if owner in outs:
                i = outs.index(owner)
                out_attrs[name] = (None if schema.returns[i].type.is_list else i, attr)
            else:
                in_attrs.setdefault(name, (owner, attr, []))[2].append(k)

    edge_of = {n: i for i, n in enumerate(tensors)}
    slots = [f"{s}_" for s in sorted(set(inputs_saved) | set(outputs_saved) |
                                     set(in_attrs) | set(out_attrs))]
    saved_tensor_slots = [f"{s}_" for s in sorted(set(inputs_saved) | set(outputs_saved))
                          if s in tensors or s in outs]
    lines = [f"class {class_name}(_GeneratedNode):",
             f"    # {schema}  ({d.location})",
             f"    __slots__ = {tuple(slots)!r}",
             f"    _saved_tensors = {tuple(saved_tensor_slots)!r}"]
    result_slots = tuple((None if schema.returns[outs.index(o)].type.is_list else
                          outs.index(o), f"{o}_", o) for o in outputs_saved)
    lines.append(f"    _result_slots = {result_slots!r}")
    lines.append(f"    _out_attrs = {tuple((i, a, n + '_') for n, (i, a) in out_attrs.items())!r}")
    if d.output_differentiability is not None:
        lines.append(f"    _out_diff = {d.output_differentiability!r}")
    lines += ["", "    def apply(_node, _grads):",
              "        grad = _grads[0]; grads = _grads",
              "        _e = _node.next_functions",
              "        _r = [None] * _len(_e)"]

    def need(f) -> str:
        if list_input is not None:
            return "_any(_x is not None for _x in _e)"
        return " or ".join(f"_e[{edge_of[n]}] is not None" for n in f.inputs)

    for k, f, expr, saved, masked in blocks:
        lines.append(f"        if {need(f)}:")
        if masked:  # which of this formula's inputs need a gradient, in formula order
            mask = "".join(f"_e[{edge_of[n]}] is not None, " for n in f.inputs)
            lines.append(f"            grad_input_mask = ({mask})")
        for s in saved:
            plain = s not in tensors and s not in outs  # not a (saved) Tensor
            lines.append(f"            {s} = _node.{s}_" if plain else
                         f"            {s} = _unpack(_node.{s}_, _node)")
        if list_input is not None:
            lines += [f"            _g = {expr}",
                      "            _r = [None if _e[_i] is None else _g[_i] "
                      "for _i in range(_len(_e))]"]
        elif len(f.inputs) == 1:
            lines.append(f"            _r[{edge_of[f.inputs[0]]}] = {expr}")
        else:
            lines.append(f"            _g = {expr}")
            for j, n in enumerate(f.inputs):
                i = edge_of[n]
                lines.append(f"            if _e[{i}] is not None: _r[{i}] = _g[{j}]")
    lines.append("        return _r")

    # the recorder
    rec = [f"def record_{class_name}(_inplace, {', '.join(args)}):",
           f"    _node = {class_name}()"]
    if list_input is not None:
        rec.append(f"    _e = _tuple(_edge(_x) for _x in {list_input})")
        rec.append("    _node.next_functions = _e")
        cond_of = {k: "_any(_x is not None for _x in _e)" for k in uses}
    else:
        edges = []
        for n in tensors:
            if n in diff:
                rec.append(f"    _e{edge_of[n]} = _gradient_edge({n}) if {n}.__class__ is _Tensor "
                           f"else _edge({n})")
                edges.append(f"_e{edge_of[n]}")
            else:
                edges.append("None")
        rec.append(f"    _node.next_functions = ({', '.join(edges)},)")
        cond_of = {k: " or ".join(f"_e{edge_of[n]} is not None"
                                  for n in d.formulas[k].inputs) for k in uses}
    stores: dict[str, list] = {}  # condition -> statements, so each test is made once
    for s, ks in inputs_saved.items():
        cond = " or ".join(dict.fromkeys(cond_of[k] for k in ks))
        if s not in tensors:  # ints, bools, dims, Python scalars: kept as they are
            line = f"_node.{s}_ = {s}"
        elif s == "self":
            e = f"_e{edge_of['self']}" if "self" in diff and list_input is None else "None"
            line = f"_node.{s}_ = _save_input({s}, {s!r}, _inplace, {e})"
        else:
            line = (f"_node.{s}_ = _SavedVariable({s}, {s!r}) if {s}.__class__ is _Tensor "
                    f"else _save({s}, {s!r})")
        stores.setdefault(cond, []).append(line)
    for name, (owner, attr, ks) in in_attrs.items():
        cond = " or ".join(dict.fromkeys(cond_of[k] for k in ks))
        stores.setdefault(cond, []).append(f"_node.{name}_ = _attr({owner}, {attr!r})")
    for cond, lines_ in stores.items():
        rec.append(f"    if {cond}:")
        rec += [f"        {x}" for x in lines_]
    rec.append("    return _node")
    return "\n".join(lines) + "\n\n\n" + "\n".join(rec) + "\n"


def namespace() -> dict:
    """Globals of the generated code: helpers, every ember function, safe builtins."""
    import ember
    ns = {n: getattr(builtins, n) for n in _SAFE_BUILTINS if hasattr(builtins, n)}
    ns.update({k: v for k, v in vars(ember).items() if not k.startswith("_")})
    for helpers in (_formulas, _nn_formulas):
        ns.update({k: v for k, v in vars(helpers).items() if not k.startswith("_")})
    ns.update({"_GeneratedNode": GeneratedNode, "_unpack": unpack, "_edge": _edge,
               "_save_input": _save_input, "_save": save, "_attr": _attr,
               "_gradient_edge": gradient_edge, "_SavedVariable": SavedVariable,
               "_Tensor": _Tensor, "_len": len, "_any": any,
               "_tuple": tuple, "__name__": "ember.autograd.generated"})
    return ns


def compile_all(derivs: dict[str, Derivative]) -> dict[str, tuple]:
    """Compile every entry; returns op name -> (Node class, recorder)."""
    global _Tensor
    from ..tensor import Tensor
    _Tensor = Tensor
    ns = namespace()
    counts: dict[str, int] = {}
    out = {}
    for name, d in derivs.items():
        if d.not_differentiable:
            continue
        base = camel(d.schema.name) + "Backward"
        n = counts.get(base, 0)
        counts[base] = n + 1
        cls_name = f"{base}{n}"
        src = generate(d, cls_name, ns)
        exec(compile(src, f"<ember.autograd generated: {cls_name} from {d.location}>",  # noqa: S102
                     "exec"), ns)
        cls = ns[cls_name]
        cls.__module__ = "ember.autograd.generated"
        cls.__doc__ = f"Backward of ``{d.schema}`` (generated from {d.location})."
        _SOURCES[name] = src
        out[name] = (cls, ns[f"record_{cls_name}"])
    return out


def source_of(name: str) -> str:
    """The generated source of the backward of op ``name`` (``"mul"``, ``"max.dim"``)."""
    return _SOURCES[name]



# --- free functions for the JIT's symbolic autodiff ----------------------------------------

@dataclass(frozen=True)
class BackwardFunction:
    """The formulas of one ``derivatives.yaml`` entry as a free function (no Node, no saved
    variables), for the JIT's ``prim::AutogradFormula`` nodes.

    ``fn(grads, mask, *params)`` returns one gradient per Tensor argument (schema order;
    None where ``mask`` is false or the argument is ``non_differentiable``; a list for a
    ``Tensor[]``). ``grads``: the outputs' gradients (None where undefined; for an op
    returning one ``Tensor[]``, that list's gradients); ``mask``: one bool per Tensor
    argument. Gradients are not yet summed to the inputs' shapes or cast to their dtypes
    (the engine's rule, which the caller applies).

    Attributes: ``name`` (``max.dim``), ``fn``, ``tensor_args`` (names), ``params`` (the
    parameters after ``(grads, mask)``, each defaulting to None), ``sources`` (per param,
    ``(owner, attr)``: an argument or output name and None for the value itself, or
    ``shape``/``dtype``/``device``/``ndim`` read from it), ``needs`` (per Tensor argument,
    the params its formula reads).
    """

    name: str
    fn: Callable
    tensor_args: tuple
    params: tuple
    sources: tuple
    needs: tuple

    def __call__(self, grads, mask, *params):
        return self.fn(grads, mask, *params)


_FREE: dict[str, BackwardFunction] = {}
_FREE_NS: dict = {}


def backward_function(name: str) -> BackwardFunction:
    """The free backward function of op ``name`` (``"mul"``, ``"max.dim"``), generated
    on first use (see :class:`BackwardFunction`; ``source`` of it:
    ``free_source_of(name)``). Raises KeyError when the op has no derivative, ValueError
    when it is marked ``not_differentiable``."""
    hit = _FREE.get(name)
    if hit is not None:
        return hit
    from ..ops import DERIVATIVES
    d = DERIVATIVES.get(name)
    if d is None:
        raise KeyError(f"no derivatives.yaml entry for op {name!r}: add one, or keep the op "
                       f"out of symbolically differentiated graphs")
    if d.not_differentiable:
        raise ValueError(f"op {name!r} is marked not_differentiable in derivatives.yaml; "
                         f"it has no backward function")
    if not _FREE_NS:
        _FREE_NS.update(namespace())
    src, bf = generate_free(d, "_jit_" + name.replace(".", "__") + "_backward", _FREE_NS)
    _SOURCES["jit:" + name] = src
    _FREE[name] = bf
    return bf


def free_source_of(name: str) -> str:
    """The generated source of op ``name``'s free backward function."""
    backward_function(name)
    return _SOURCES["jit:" + name]


def generate_free(d: Derivative, fn_name: str, namespace: dict) -> tuple:
    """Source and :class:`BackwardFunction` of ``d``'s free function, compiled in
    ``namespace``; ``free_source_of("mul")`` shows one."""
    schema = d.schema
    tensors = [a.name for a in schema.arguments if a.type.base == "Tensor"]
    list_input = next((a.name for a in schema.arguments
                       if a.type.base == "Tensor" and a.type.is_list), None)
    blocks, uses = _formula_blocks(d, namespace)
    sources = {}
    for saved, attrs in uses.values():
        for s in saved:
            sources[s] = (s, None)
        for owner, attr, name in attrs:
            sources[name] = (owner, attr)
    params = tuple(sorted(sources))
    pos = {n: i for i, n in enumerate(tensors)}
    needs = [()] * len(tensors)
    lines = [f"def {fn_name}(_grads, _mask{''.join(f', {p}=None' for p in params)}):",
             f"    # {schema}  ({d.location})",
             "    grad = _grads[0] if _grads else None; grads = _grads",
             f"    _r = [None] * {len(tensors)}"]
    for k, f, expr, saved, masked in blocks:
        idx = [pos[n] for n in f.inputs]
        for i in idx:
            needs[i] = tuple(saved)
        lines.append(f"    if {' or '.join(f'_mask[{i}]' for i in idx)}:")
        if masked:
            lines.append(f"        grad_input_mask = ({''.join(f'_mask[{i}], ' for i in idx)})")
        if list_input is not None or len(idx) == 1:
            lines.append(f"        _r[{idx[0]}] = {expr}")
        else:
            lines.append(f"        _g = {expr}")
            lines += [f"        if _mask[{i}]: _r[{i}] = _g[{j}]" for j, i in enumerate(idx)]
    lines.append("    return _r")
    src = "\n".join(lines) + "\n"
    exec(compile(src, f"<ember.autograd generated: {fn_name} from {d.location}>",  # noqa: S102
                 "exec"), namespace)
    fn = namespace[fn_name]
    fn.__module__ = "ember.autograd.generated"
    bf = BackwardFunction(d.name, fn, tuple(tensors), params,
                          tuple(sources[p] for p in params), tuple(needs))
    return src, bf

_Tensor = None
