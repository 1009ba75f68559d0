"""Generate a backward Node class and a recorder function per ``derivatives.yaml`` entry.

For ``mul(Tensor self, Tensor other)`` with ``self: grad * other`` and ``other: grad *
self`` this writes (abridged; see ``source_of("mul")``)::

    class MulBackward0(_GeneratedNode):
        __slots__ = ('other_', 'self_', 'other_v', 'self_v')
        def apply(_node, _grads):
            grad = _grads[0]; grads = _grads
            _e = _node.next_functions
            _r = [None, None]
            if _e[0] is not None:
                other = _node.other_  # the Tensor itself, its version checked:
                if other.__class__ is _Tensor:
                    if (0 if other._vc is None else other._vc.value) != _node.other_v:
                        raise _modified_input(_node, 'other', other, _node.other_v)
                else:  # a number, a SavedVariable, or FREED after a backward (raises)
                    other = _unpack(other, _node)
                _r[0] = grad * other
            ...
        def release_variables(_node): ...  # saved Tensors -> FREED

    def record_MulBackward0(_inplace, self, other):
        _node = _new(MulBackward0)  # Node.__init__, inlined
        ...
        _e0 = (self.grad_fn, self.output_nr) if ... else _edge(self)
        _node.next_functions = (_e0, _e1,)
        if _e0 is not None:  # other is read by self's formula
            _node.other_, _node.other_v = other, <its version>
        ...
        return _node

A formula with a kernel form in ``fast_formulas.FAST`` (``tanh``, ``mm``, ``sum``...)
calls it first and evaluates the expression only when it declines (grad mode on). The
kernel forms of ``fast_formulas.DERIVED`` are compiled from the formulas here (by
``compile_all``); a hand-written one must name the formula's exact expression.

The op wrapper calls ``record_mul`` when grad mode is on and an input requires grad, then
``finish`` (outputs get ``grad_fn``; saved outputs are stored). Formulas are ember ops, so
when the engine runs with ``create_graph=True`` they record history themselves: double
backward needs no extra code.

For the JIT's symbolic autodiff, ``backward_function(name)`` (in ``free_functions.py``)
generates the same formulas as a free function of the gradients; the eager nodes above do
not change.
"""
from __future__ import annotations

import ast
import builtins

from . import anomaly_mode as _anomaly
from . import fast_formulas as _fast
from . import function as _function
from . import formulas as _formulas
from . import nn_formulas as _nn_formulas
from ..tensor import Tensor as _Tensor
from .derivatives import SAVED_ATTRS, Derivative, DerivativeError
from .function import (FREED, AccumulateGrad, Node, SavedVariable, _Freed, gradient_edge,
                       modified_input, save, unpack)

_SOURCES: dict[str, str] = {}
_SAFE_BUILTINS = ("None", "True", "False", "len", "range", "tuple", "list", "isinstance",
                  "int", "float", "zip", "enumerate", "any", "all", "min", "max", "sorted",
                  "reversed", "sum")


class GeneratedNode(Node):
    """Base of the generated backward nodes: releases saved tensors after backward."""

    __slots__ = ()
    _trusted_arity = True  # apply returns one gradient per edge by construction
    _saved_tensors: tuple = ()
    _result_slots: tuple = ()
    _out_attrs: tuple = ()
    _plain_outputs = True  # no _out_diff, _result_slots or _out_attrs (views.finish)
    _out_diff: tuple | None = None

    def release_variables(self) -> None:
        for slot in self._saved_tensors:
            v = getattr(self, slot, None)
            if v.__class__ is _Tensor or v.__class__ is SavedVariable or \
                    (v.__class__ is tuple and v and v[0].__class__ is SavedVariable):
                setattr(self, slot, FREED)


def _edge(v):
    """``gradient_edge(v)`` for a Tensor, None for anything else; a leaf's inline."""
    if v.__class__ is _Tensor and v.grad_fn is None and v._base is None:
        if not v._requires_grad:
            return None
        acc = getattr(v, "_grad_acc", None)
        if acc is not None and acc._out_meta[0].shape == v._data.shape:
            return (acc, 0)
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
                                  f"from autograd/formulas/")
        saved = sorted((names & (set(args) | set(outs))) | attr_names)
        uses[k] = (saved, rw.attrs)
        blocks.append((k, f, expr, saved, "grad_input_mask" in names))
    return blocks, uses


class _Plan:
    """What ``generate`` derives from an entry once: argument kinds and what is saved."""

    def __init__(self, d: Derivative, class_name: str, namespace: dict):
        schema = self.schema = d.schema
        self.d, self.class_name = d, class_name
        self.args = [a.name for a in schema.arguments]
        self.tensors = [a.name for a in schema.arguments if a.type.base == "Tensor"]
        self.outs = output_names(d)
        self.list_input = next((a.name for a in schema.arguments
                                if a.type.base == "Tensor" and a.type.is_list), None)
        self.diff = {n for f in d.formulas if f.expression for n in f.inputs}
        self.blocks, self.uses = _formula_blocks(d, namespace)
        self.edge_of = {n: i for i, n in enumerate(self.tensors)}
        # every saved thing, with what it is: an input, an output, or an attribute of one
        self.inputs_saved, self.outputs_saved, self.in_attrs, self.out_attrs = {}, {}, {}, {}
        for k, (saved, attrs) in self.uses.items():
            for s in saved:
                if s in self.args:
                    self.inputs_saved.setdefault(s, []).append(k)
                elif s in self.outs:
                    self.outputs_saved[s] = True
            for owner, attr, name in attrs:
                if owner in self.outs:
                    i = self.outs.index(owner)
                    self.out_attrs[name] = (None if schema.returns[i].type.is_list else i, attr)
                else:
                    self.in_attrs.setdefault(name, (owner, attr, []))[2].append(k)
        # NOTE: a Tensor input (not a list) is kept itself in slot ``x_``, its version in
        # ``x_v``; anything else that arrives there (a number, a subclass, an in-place op's
        # snapshot) goes through save(): a SavedVariable, or the value as it is
        self.direct = sorted(s for s in self.inputs_saved
                             if s in self.tensors and s != self.list_input)

    def need(self, f) -> str:
        """The test that formula ``f`` is needed (one of its inputs has an edge)."""
        if self.list_input is not None:
            return "_any(_x is not None for _x in _e)"
        return " or ".join(f"_e[{self.edge_of[n]}] is not None" for n in f.inputs)

    def unpack(self, s: str, indent: str) -> list:
        """Lines reading saved value ``s`` in apply (a Tensor's version checked)."""
        if s not in self.tensors and s not in self.outs:  # not a (saved) Tensor
            return [f"{indent}{s} = _node.{s}_"]
        if s in self.direct:
            return [f"{indent}{s} = _node.{s}_",
                    f"{indent}if {s}.__class__ is _Tensor:",
                    f"{indent}    if (0 if {s}._vc is None else {s}._vc.value) != _node.{s}_v:",
                    f"{indent}        raise _modified_input(_node, {s!r}, {s}, _node.{s}_v)",
                    f"{indent}else:",
                    f"{indent}    {s} = _unpack({s}, _node)"]
        return [f"{indent}{s} = _node.{s}_",
                f"{indent}{s} = {s}.unpack(_node) if {s}.__class__ in _SAVED else "
                f"_unpack({s}, _node)"]


def generate(d: Derivative, class_name: str, namespace: dict) -> str:
    """Source of the Node class and recorder for ``d``; names are checked against
    ``namespace`` (raises DerivativeError at the formula's file:line)."""
    plan = _Plan(d, class_name, namespace)
    return "\n".join(_class_lines(plan)) + "\n\n\n" + "\n".join(_recorder_lines(plan)) + "\n"


def _class_lines(p: _Plan) -> list:
    """The Node class: slots, class attributes, apply and release_variables."""
    d, schema, outs, edge_of = p.d, p.schema, p.outs, p.edge_of
    slots = [f"{s}_" for s in sorted(set(p.inputs_saved) | set(p.outputs_saved) |
                                     set(p.in_attrs) | set(p.out_attrs))]
    saved_tensor_slots = [f"{s}_" for s in sorted(set(p.inputs_saved) | set(p.outputs_saved))
                          if s in p.tensors or s in outs]
    result_slots = tuple((None if schema.returns[outs.index(o)].type.is_list else
                          outs.index(o), f"{o}_", o) for o in p.outputs_saved)
    out_attrs = tuple((i, a, n + "_") for n, (i, a) in p.out_attrs.items())
    lines = [f"class {p.class_name}(_GeneratedNode):",
             f"    # {schema}  ({d.location})",
             f"    __slots__ = {tuple(slots + [f'{s}_v' for s in p.direct])!r}",
             f"    _saved_tensors = {tuple(saved_tensor_slots)!r}",
             f"    _result_slots = {result_slots!r}",
             f"    _out_attrs = {out_attrs!r}"]
    if d.output_differentiability is not None:
        lines.append(f"    _out_diff = {d.output_differentiability!r}")
    if d.output_differentiability is not None or result_slots or out_attrs:
        lines.append("    _plain_outputs = False")
    if not saved_tensor_slots:
        lines.append("    _releases = False")
    lines += ["", "    def apply(_node, _grads):",
              "        grad = _grads[0]; grads = _grads",
              "        _e = _node.next_functions",
              "        _r = [None] * _len(_e)" if p.list_input is not None else
              f"        _r = [{', '.join(['None'] * len(p.tensors))}]"]
    # a saved value several formulas read is unpacked once, before them
    shared = sorted(n for n in {s for b in p.blocks for s in b[3]}
                    if sum(n in b[3] for b in p.blocks) > 1) if p.list_input is None else []
    if shared:
        conds = dict.fromkeys(p.need(b[1]) for b in p.blocks if set(shared) & set(b[3]))
        lines.append(f"        if {' or '.join(conds)}:")
        for n in shared:
            lines += p.unpack(n, "            ")
    for _, f, expr, saved, masked in p.blocks:
        lines.append(f"        if {p.need(f)}:")
        if masked:  # which of this formula's inputs need a gradient, in formula order
            mask = "".join(f"_e[{edge_of[n]}] is not None, " for n in f.inputs)
            lines.append(f"            grad_input_mask = ({mask})")
        for s in saved:
            if s not in shared:
                lines += p.unpack(s, "            ")
        fast = _fast_call(d, f, saved, masked)
        if p.list_input is not None:
            lines += [f"            _g = {expr}",
                      "            _r = [None if _e[_i] is None else _g[_i] "
                      "for _i in range(_len(_e))]"]
        elif fast is not None:  # the kernel form first; None: it declined
            lines += [f"            _g = {fast}",
                      f"            _r[{edge_of[f.inputs[0]]}] = {expr} if _g is None else _g"]
        elif len(f.inputs) == 1:
            lines.append(f"            _r[{edge_of[f.inputs[0]]}] = {expr}")
        else:
            lines.append(f"            _g = {expr}")
            for j, n in enumerate(f.inputs):
                i = edge_of[n]
                lines.append(f"            if _e[{i}] is not None: _r[{i}] = _g[{j}]")
    lines.append("        return _r")
    if saved_tensor_slots:  # release_variables, one test per slot
        lines += ["", "    def release_variables(_node):"]
        for slot in saved_tensor_slots:
            lines += [f"        _v = _getattr(_node, {slot!r}, None)",
                      "        if _v.__class__ is _Tensor or _v.__class__ is _SavedVariable or "
                      "_v.__class__ is _tuple and _v and _v[0].__class__ is _SavedVariable:",
                      f"            _node.{slot} = _FREED"]
    return lines


def _recorder_lines(p: _Plan) -> list:
    """``record_<Class>(_inplace, *args)``: the node, its edges and what it saves."""
    edge_of, tensors, list_input = p.edge_of, p.tensors, p.list_input
    rec = [f"def record_{p.class_name}(_inplace, {', '.join(p.args)}):",
           f"    _node = _new({p.class_name})  # Node.__init__, inlined",
           "    _node.sequence_nr = _next_sequence_nr(); _node._hooks = None; _node._out_meta = ()",
           "    if _anomaly.ENABLED: _anomaly.record(_node)"]
    if list_input is not None:
        rec.append(f"    _e = _tuple(_edge(_x) for _x in {list_input})")
        rec.append("    _node.next_functions = _e")
        cond_of = {k: "_any(_x is not None for _x in _e)" for k in p.uses}
    else:
        edges = []
        for n in tensors:
            if n in p.diff:  # a non-view result's edge inline, others through _edge
                rec.append(f"    _e{edge_of[n]} = ({n}.grad_fn, {n}.output_nr) if {n}.__class__ "
                           f"is _Tensor and {n}.grad_fn is not None and {n}._base is None "
                           f"else _edge({n})")
                edges.append(f"_e{edge_of[n]}")
            else:
                edges.append("None")
        rec.append(f"    _node.next_functions = ({', '.join(edges)},)")
        cond_of = {k: " or ".join(f"_e{edge_of[n]} is not None"
                                  for n in p.d.formulas[k].inputs) for k in p.uses}
    stores: dict[str, list] = {}  # condition -> statements, so each test is made once
    for s, ks in p.inputs_saved.items():
        cond = " or ".join(dict.fromkeys(cond_of[k] for k in ks))
        if s not in tensors:  # ints, bools, dims, Python scalars: kept as they are
            block = [f"_node.{s}_ = {s}"]
        else:
            if s == "self":
                e = f"_e{edge_of['self']}" if "self" in p.diff and list_input is None else "None"
                other = f"_save_input({s}, {s!r}, _inplace, {e})"
            else:
                other = f"_save({s}, {s!r})"
            if s in p.direct:
                inplace = " and not _inplace" if s == "self" else ""
                block = [f"if {s}.__class__ is _Tensor{inplace}:",
                         f"    _node.{s}_, _node.{s}_v = {s}, 0 if {s}._vc is None else "
                         f"{s}._vc.value",
                         "else:",
                         f"    _node.{s}_ = {other}"]
            else:
                block = [f"_node.{s}_ = {other}"]
        stores.setdefault(cond, []).extend(block)
    for name, (owner, attr, ks) in p.in_attrs.items():
        cond = " or ".join(dict.fromkeys(cond_of[k] for k in ks))
        # a shape is kept as the array's tuple: Tensor.shape would build a Size per op
        value = f"{owner}._data.shape" if attr == "shape" else f"{owner}.{attr}"
        stores.setdefault(cond, []).append(f"_node.{name}_ = {value} if {owner}.__class__ "
                                           f"is _Tensor else _attr({owner}, {attr!r})")
    for cond, lines_ in stores.items():
        rec.append(f"    if {cond}:")
        rec += [f"        {x}" for x in lines_]
    rec.append("    return _node")
    return rec


def _fast_call(d: Derivative, f, saved: list, masked: bool) -> str | None:
    """The call of the kernel form of formula ``f`` of ``d`` (fast_formulas.FAST), or None
    if it has none. Raises DerivativeError at the formula's file:line when that function
    reads a name the formula does not have."""
    fn = _fast.FAST.get((d.name, tuple(f.inputs)))
    if fn is None:
        return None
    if fn.formula != f.expression:
        raise DerivativeError(f"{f.location}: fast_formulas.{fn.__name__} computes "
                              f"{fn.formula!r}, but the formula for {', '.join(f.inputs)} of "
                              f"{d.name} is {f.expression!r}; update the kernel form to the "
                              f"formula or drop it")
    code = fn.__code__
    params = code.co_varnames[:code.co_argcount]
    have = {"grad", "grads", *saved} | ({"grad_input_mask"} if masked else set())
    missing = [p for p in params if p not in have]
    if missing or len(f.inputs) != 1:
        raise DerivativeError(f"{f.location}: fast_formulas.{fn.__name__} for "
                              f"{', '.join(f.inputs)} of {d.name} reads {missing} which the "
                              f"formula does not, or the formula has several inputs")
    return f"{_fast_name(d.name, f.inputs)}({', '.join(params)})"


def _fast_name(op: str, inputs) -> str:
    return "_fast_" + op.replace(".", "__") + "__" + "_".join(inputs)


def namespace() -> dict:
    """Globals of the generated code: helpers, every ember op (``ops/namespace.py``), safe
    builtins."""
    from ..ops import namespace as ops_namespace
    ns = {n: getattr(builtins, n) for n in _SAFE_BUILTINS if hasattr(builtins, n)}
    ns.update({k: v for k, v in ops_namespace.exports().items() if not k.startswith("_")})
    for helpers in (_formulas, _nn_formulas):
        ns.update({k: v for k, v in vars(helpers).items() if not k.startswith("_")})
    ns.update({"_GeneratedNode": GeneratedNode, "_unpack": unpack, "_edge": _edge,
               "_save_input": _save_input, "_save": save, "_attr": _attr,
               "_gradient_edge": gradient_edge, "_SavedVariable": SavedVariable,
               "_Tensor": _Tensor, "_len": len, "_any": any,
               "_tuple": tuple, "_getattr": getattr, "_FREED": FREED,
               "_SAVED": (SavedVariable, _Freed), "_modified_input": modified_input,
               "_new": object.__new__, "_next_sequence_nr": _function._sequence.__next__,
               "_anomaly": _anomaly,
               "__name__": "ember.autograd.generated"})
    ns.update({_fast_name(op, inputs): fn for (op, inputs), fn in _fast.FAST.items()})
    return ns


def compile_all(derivs: dict[str, Derivative]) -> dict[str, tuple]:
    """Compile every entry; returns op name -> (Node class, recorder)."""
    _fast.derive(derivs)  # the kernel forms compiled from the formulas, before namespace()
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


# the JIT's free backward functions live apart; imported from here by the JIT
from .free_functions import (BackwardFunction, backward_function,  # noqa: E402,F401
                             free_source_of, generate_free)
