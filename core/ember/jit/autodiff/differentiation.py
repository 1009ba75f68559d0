"""Symbolic autodiff: ``differentiate(graph) -> Gradient``, a forward graph ``f`` and a
backward graph ``df`` built from the formulas of ``derivatives.yaml``.

For ``graph(%x, %y): %z = ember::add(%x, %y, %one); %w = ember::exp(%z); return (%w)``,
``differentiate`` gives ``f_real_outputs=1``, ``df_input_vjps=[0]``,
``df_input_captured_inputs=[]``, ``df_input_captured_outputs=[1, 2, 0]``,
``df_output_vjps=[0, 1]`` and::

    f = graph(%x : Tensor, %y : Tensor):
      %x_meta : Any = prim::TensorMeta(%x)
      %y_meta : Any = prim::TensorMeta(%y)
      %one : int = prim::Constant[value=1]()
      %z : Tensor = ember::add(%x, %y, %one)
      %z_meta : Any = prim::TensorMeta(%z)
      %14 : Any = prim::ReduceMeta(%y_meta, %z_meta)
      %10 : Any = prim::ReduceMeta(%x_meta, %z_meta)
      %w : Tensor = ember::exp(%z)
      return (%w, %14, %10)                  # the real output, then temporaries
    df = graph(%grad_w : Tensor, %17 : Any, %18 : Any, %w : Tensor):
      %7 : Tensor = prim::GradOf[name="ember::exp"](%grad_w)
        block0():
          %6 : Tensor = ember::mul(%grad_w, %w)
          -> (%6)
      %12 : Tensor, %16 : Tensor = prim::GradOf[name="ember::add"](%7)
        block0():
          %11 : Tensor = prim::GradSumToSize(%7, %18)
          %15 : Tensor = prim::GradSumToSize(%7, %17)
          -> (%11, %15)
      return (%12, %16)

An op whose formulas do not compile to ops (``mm``, ``chunk``, reductions) gets an opaque
``prim::AutogradFormula`` instead; for ``mm(%a, %b)``::

      %ga : Tensor, %gb : Tensor = prim::GradOf[name="ember::mm"](%grad)
        block0():
          %4 : Tensor, %5 : Tensor = prim::AutogradFormula[mask=[True, True],
              num_grads=1, op="ember::mm", param_inputs=[1, 2], params=["mat2", "self"],
              reduce=[2, 1]](%grad, %b, %a)
          -> (%4, %5)

Conventions (shared with ``autograd_prims``, ``specialize_autograd_zero`` and
``lower_grad_of``): an undefined gradient is None at run time (``prim::AutogradZero``);
the gradients of a value used several times are summed with ``prim::AutogradAdd``; one
``prim::GradOf`` per forward node, in reverse order, whose block runs only when some
incoming gradient is defined.

The kinds this module adds (and registers with the interpreter):

- ``prim::AutogradFormula[op, mask, num_grads, params, param_inputs, reduce](%grads...,
  %values...)``: the backward of one forward op, calling its generated free function
  (:func:`ember.autograd.codegen.backward_function`). ``mask`` has one bool per Tensor
  argument of the op (whether it needs a gradient); the node has one output per true
  entry. Input ``param_inputs[k]`` feeds the formula parameter ``params[k]``; a parameter
  such as ``self_shape`` reads the attribute from its input (a Tensor or a TensorMeta).
  ``reduce[k]`` is the input holding output ``k``'s forward input (or its TensorMeta):
  the gradient is summed down to that shape and cast to that dtype, the engine's rule
  (-1: none, for ops with one Tensor argument and no dtype argument, whose formulas give
  the input's shape and dtype already). A gradient for an input of non-floating dtype
  becomes None, as in eager mode.
- ``prim::TensorMeta(%x) -> Any``: shape, dtype, device and ndim of a tensor (or of each
  tensor of a list), computed in ``f``. ``prim::TensorMeta[cat_dim=d](%p_0, ..., %p_n)``
  is the meta of their concatenation along ``d``; FuseGraph writes it when a chunk moves
  above the op whose meta was read (``autodiff_prims.cat_meta``).

- ``prim::ReduceMeta(%target, %like) -> Any?`` (in ``f``; each input a TensorMeta or a
  tensor): None when a gradient shaped and typed like ``%like`` needs no reduction to
  ``%target``, else ``%target``'s TensorMeta.
- ``prim::GradSumToSize(%g, %reduce_meta) -> Tensor`` (in ``df``): ``%g`` summed to the
  meta's shape and cast to its dtype, or ``%g`` itself for a None meta.

The backward of an op with one output whose needed formulas compile to ``ember::`` ops
(:mod:`ember.jit.autodiff.symbolic_formulas`: the pointwise ops) is written as those ops instead of
an AutogradFormula, each gradient of a broadcasting op through a ``prim::GradSumToSize``
reading a ``prim::ReduceMeta`` of (input, output). The backward's ArgumentSpec sees which
ReduceMetas are None, and ``specialize_autograd_zero`` drops those reductions: the
backward of a pointwise chain is a chain of pointwise ops that FuseGraph fuses. For
``exp`` above, the GradOf block holds ``%6 = ember::mul(%grad_w, %w)``.

Why TensorMeta: a formula that reads only ``x.shape`` (``sum``) and the shape reduction
of broadcasting ops need the shape of a forward value, not the value. Capturing the
tensor would keep its memory alive (and trip version checks when it is later changed in
place), so ``f`` computes a TensorMeta, which ``df`` captures as a temporary output.
When the formula captures the tensor anyway (``mul`` saves ``self`` and ``other``), the
tensor itself serves, at no extra cost.

What is differentiable (:func:`is_differentiable`, in :mod:`ember.jit.autodiff.differentiability`):
``prim::Constant``, list and tuple construct/unpack, and out-of-place ``ember::`` ops
whose ``derivatives.yaml`` entry is differentiable. Composite ops have no entry: they stay
outside autodiff subgraphs and run through eager autograd.

Reference: PyTorch's ``torch/csrc/jit/runtime/autodiff.cpp`` (``differentiate``,
``addReverseInline``, ``lambdaLiftReverse``) and ``autodiff.h`` (``Gradient``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

# how f's, df's prims run
from ember.jit.autodiff import autodiff_prims as _autodiff_prims  # noqa: F401
from ember.jit.autodiff.differentiability import (SEQUENCE_INVERSE, derivative_of,
                                                  is_differentiable, values_needing_grad)
from ember.jit.ir.graph import Graph, Node, Value
from ember.jit.ir.ir_types import AnyType, JitType, ListType, TensorType, TupleType
from ember.jit.ir.kinds import prim

__all__ = ["Gradient", "differentiate", "is_differentiable", "AUTOGRAD_FORMULA",
           "TENSOR_META", "AUTOGRAD_ADD_LIST", "REDUCE_META", "GRAD_SUM_TO_SIZE", "BROADCAST_META",
           "META_KINDS"]

AUTOGRAD_FORMULA = prim.AutogradFormula
TENSOR_META = prim.TensorMeta
AUTOGRAD_ADD_LIST = prim.AutogradAddList
REDUCE_META = prim.ReduceMeta
GRAD_SUM_TO_SIZE = prim.GradSumToSize
#: FuseGraph's meta of a value a group does not store (:mod:`ember.jit.passes.fusion_metas`).
BROADCAST_META = prim.BroadcastMeta
#: The nodes of ``f`` that read only the metadata of tensors (never their elements).
META_KINDS = frozenset({TENSOR_META, REDUCE_META, BROADCAST_META})


@dataclass
class Gradient:
    """A graph split into a forward ``f`` and a backward ``df`` (PyTorch's ``Gradient``).

    Run it as ``outs = f(*inputs)``, then ``df(*[vjp for each df_input_vjps],
    *[inputs[i] for i in df_input_captured_inputs], *[outs[i] for i in
    df_input_captured_outputs])`` gives the gradients of ``inputs[i]`` for each ``i`` of
    ``df_output_vjps``, in that order.

    Attributes:
        f: the forward graph: the original inputs; outputs the original ones followed by
            temporaries that ``df`` needs.
        df: the backward graph; inputs: the vjps (gradients of ``f``'s outputs, None where
            undefined), then the captured inputs, then the captured outputs.
        f_real_outputs: how many of ``f``'s outputs are the original outputs; the rest are
            temporaries, dropped after the forward.
        df_input_vjps: offsets into ``f``'s outputs (temporaries included) whose gradients
            are ``df``'s first inputs, one each.
        df_input_captured_inputs: offsets into ``f``'s inputs saved for ``df``.
        df_input_captured_outputs: offsets into ``f``'s outputs saved for ``df``.
        df_output_vjps: offsets into ``f``'s inputs: ``df``'s output ``k`` is the gradient
            of input ``df_output_vjps[k]``.
    """

    f: Graph
    df: Graph
    f_real_outputs: int = 0
    df_input_vjps: list = field(default_factory=list)
    df_input_captured_inputs: list = field(default_factory=list)
    df_input_captured_outputs: list = field(default_factory=list)
    df_output_vjps: list = field(default_factory=list)


# ---- differentiate ------------------------------------------------------------------------
def differentiate(graph: Graph) -> Gradient:
    """Split ``graph`` into a forward ``f`` and a backward ``df`` (see the module doc).

    ``graph`` is not changed (``f`` starts as a copy). Which values need a gradient comes
    from the input types (``requires_grad=False`` or a non-floating dtype: no; unknown:
    yes), propagated through the differentiable nodes. Raises ValueError for a graph with
    a node that is not differentiable (:func:`is_differentiable`) on a gradient path.
    """
    f = graph.copy()
    return _Builder(f).run()


def _locate(last, block, loc) -> None:
    """Give the backward nodes made after ``last`` (nested ones too) the forward node's
    user line, so an error in the backward plan names it."""
    if loc is None:
        return
    n = last.next if last is not None else None
    stack = []
    while n is not None and n is not block.return_node:
        stack.append(n)
        n = n.next
    while stack:
        n = stack.pop()
        if n.source_location is None:
            n.source_location = loc
        for b in n.blocks:
            stack += list(b.nodes())


class _Builder:
    def __init__(self, f: Graph):
        self.f = f
        self.rg = values_needing_grad(f)
        self.grad_map: dict = {}   # f value -> gradient value in the reverse block
        self.metas: dict = {}      # f value -> its prim::TensorMeta value in f
        self.reduce_metas: dict = {}  # (target, out) -> their prim::ReduceMeta in f
        self.rev_node = f.create("prim::Reverse", num_outputs=0)
        f.block.append_node(self.rev_node)
        self.rev = self.rev_node.add_block()

    def run(self) -> Gradient:
        f, rev, grad = self.f, self.rev, Gradient(self.f, Graph())
        for i, out in enumerate(f.outputs):  # 1. a vjp input per output needing a gradient
            if out in self.rg:
                self.set_grad(out, rev.add_input(type=_grad_type(out.type)))
                grad.df_input_vjps.append(i)
        for n in list(f.nodes(reverse=True)):  # 2. each node's backward, last node first
            if n is not self.rev_node and any(o in self.grad_map for o in n.outputs):
                last = self.rev.return_node.prev
                self.backward_of(n)
                _locate(last, self.rev, n.source_location)
        for i, inp in enumerate(f.inputs):  # 3. df's outputs: the inputs' gradients
            if inp in self.rg and inp in self.grad_map:
                rev.register_output(self.grad_map[inp])
                grad.df_output_vjps.append(i)
        self.lambda_lift(grad)
        return grad

    # -- gradients -------------------------------------------------------------------------
    def get_grad(self, v: Value) -> Value:
        g = self.grad_map.get(v)
        if g is None:
            g = self.emit("prim::AutogradZero", [], _grad_type(v.type)).output()
        return g

    def set_grad(self, v: Value, g: Value) -> None:
        prev = self.grad_map.get(v)
        if prev is None:
            self.grad_map[v] = g
            return
        kind = AUTOGRAD_ADD_LIST if isinstance(v.type, (ListType, TupleType)) else \
            "prim::AutogradAdd"
        self.grad_map[v] = self.emit(kind, [prev, g], _grad_type(v.type)).output()

    def emit(self, kind: str, inputs, *out_types, block=None) -> Node:
        n = self.f.create(kind, inputs, num_outputs=0)
        for t in out_types:
            n.add_output(t)
        return (block or self.rev).append_node(n)

    def grad_of(self, n: Node, grads) -> tuple:
        """A ``prim::GradOf`` for forward node ``n`` reading ``grads``; returns it and its
        block (whose outputs the caller registers as the node's outputs)."""
        node = self.emit("prim::GradOf", grads)
        node.set_attr("name", n.kind)
        return node, node.add_block()

    def backward_of(self, n: Node) -> None:
        if n.kind in SEQUENCE_INVERSE:
            return self.backward_of_sequence(n)
        kind = _formulas_kind(n)
        d = derivative_of(kind)
        if d is None or d.not_differentiable:
            return  # constants and non-differentiable ops: no gradient flows through
        from ember.autograd.codegen import backward_function
        bf = backward_function(d.name)
        args = [a.name for a in d.schema.arguments]
        pos = {a: i for i, a in enumerate(args)}
        diff = set(d.differentiable_inputs)
        mask = [a in diff and n.inputs[pos[a]] in self.rg for a in bf.tensor_args]
        if not any(mask):
            return
        outs = _output_names(d)
        ins, where = [self.get_grad(o) for o in n.outputs], {}

        def feed(v: Value) -> int:
            if v not in where:
                where[v] = len(ins)
                ins.append(v)
            return where[v]

        def owner(name: str) -> Value:
            return n.inputs[pos[name]] if name in pos else n.outputs[outs.index(name)]
        needed = sorted({p for j, m in enumerate(mask) if m for p in bf.needs[j]})
        plain = {bf.sources[bf.params.index(p)][0] for p in needed
                 if bf.sources[bf.params.index(p)][1] is None}

        for o in sorted(plain):  # values the formula reads whole come first
            feed(owner(o))

        def meta(v: Value) -> int:  # the tensor itself when the formula reads it anyway
            return feed(v if v in where else self.meta_of(v))
        params, param_inputs = [], []
        for p in needed:
            o, attr = bf.sources[bf.params.index(p)]
            params.append(p)
            param_inputs.append(feed(owner(o)) if attr is None else meta(owner(o)))
        exact = _keeps_shape_and_dtype(d) or _exact_matrix_product(n, d)
        targets = [n.inputs[pos[a]] for a, m in zip(bf.tensor_args, mask) if m]
        if len(n.outputs) == 1 and self.symbolic_backward(n, d, mask, bf, exact):
            return
        reduce = [-1 if exact else meta(n.inputs[pos[a]])
                  for a, m in zip(bf.tensor_args, mask) if m]
        node, block = self.grad_of(n, ins[:len(n.outputs)])
        formula = self.emit(AUTOGRAD_FORMULA, ins, *[_formula_type(t.type) for t in targets],
                            block=block)
        formula.set_attr("op", kind).set_attr("mask", mask)
        formula.set_attr("num_grads", len(n.outputs)).set_attr("params", params)
        formula.set_attr("param_inputs", param_inputs).set_attr("reduce", reduce)
        for t, g in zip(targets, formula.outputs):
            block.register_output(g)
            self.set_grad(t, node.add_output(g.type))

    def symbolic_backward(self, n: Node, d, mask: list, bf, exact: bool) -> bool:
        """The backward of single-output ``n`` as ``ember::`` ops compiled from its
        formulas (:mod:`ember.jit.autodiff.symbolic_formulas`), in a ``prim::GradOf`` block; False
        (nothing made) when a needed formula does not compile. Inside the block the
        gradient is defined (the op has one output). A gradient that may need reducing to
        its input's shape or dtype goes through ``prim::GradSumToSize``, whose size is a
        ``prim::ReduceMeta`` of ``f``: None when no reduction is needed, which the
        backward's ArgumentSpec sees, so a plan drops the reduction."""
        from ember.jit.autodiff.symbolic_formulas import NotSymbolic, compile_formula
        args = [a.name for a in d.schema.arguments]
        env = dict(zip(args, n.inputs))
        env.update(zip(_output_names(d), n.outputs))
        exprs = []
        for a, m in zip(bf.tensor_args, mask):
            if m:
                f = next((f for f in d.formulas if a in f.inputs), None)
                if f is None or len(f.inputs) != 1 or f.expression is None:
                    return False
                exprs.append((n.inputs[args.index(a)], f.expression))
        node, block = self.grad_of(n, [self.get_grad(n.output())])
        env["grad"] = node.input()
        try:
            grads = [compile_formula(e, env, block) for _, e in exprs]
        except NotSymbolic:
            node.destroy()  # its block with what was compiled so far
            return False
        for (target, _), g in zip(exprs, grads):
            if not exact:
                reduce = self.emit(GRAD_SUM_TO_SIZE, [g, self.reduce_meta(target, n.output())],
                                   TensorType(), block=block)
                g = reduce.output()
            block.register_output(g)
            self.set_grad(target, node.add_output(TensorType()))
        return True

    def reduce_meta(self, target: Value, out: Value) -> Value:
        """``prim::ReduceMeta(meta(target), meta(out))`` in ``f``, made once per pair."""
        key = (target, out)
        m = self.reduce_metas.get(key)
        if m is None:
            a, b = self.meta_of(target), self.meta_of(out)
            n = self.f.create(REDUCE_META, [a, b])
            n.output().type = AnyType()
            n.insert_after(b.node if a.node.is_before(b.node) else a.node)
            m = self.reduce_metas[key] = n.output()
        return m

    def backward_of_sequence(self, n: Node) -> None:
        """ListConstruct <-> ListUnpack (and tuples): the gradient of a list is the list of
        its items' gradients (None items undefined)."""
        grads = [self.get_grad(o) for o in n.outputs]
        node, block = self.grad_of(n, grads)
        inverse = SEQUENCE_INVERSE[n.kind]
        types = [_grad_type(v.type) for v in n.inputs]
        if inverse in (prim.ListConstruct, prim.TupleConstruct):
            types = [_grad_type(n.input().type)]
        back = self.emit(inverse, grads, *types, block=block)
        for v, g in zip(n.inputs, back.outputs):
            block.register_output(g)
            out = node.add_output(g.type)
            if v in self.rg:
                self.set_grad(v, out)

    def meta_of(self, v: Value) -> Value:
        """``prim::TensorMeta(v)`` in ``f``, right after ``v`` is defined (made once)."""
        m = self.metas.get(v)
        if m is None:
            n = self.f.create(TENSOR_META, [v])
            n.output().type = AnyType()
            if not v.debug_name.isdigit():
                n.output().debug_name = v.debug_name + "_meta"
            if v.node.kind == prim.Param:  # inputs' metas first, in the order asked
                anchor = self.metas.get("anchor")
                n.insert_after(anchor) if anchor else self.f.block.prepend_node(n)
                self.metas["anchor"] = n
            else:
                n.insert_after(v.node)
            m = self.metas[v] = n.output()
        return m

    # -- lambda lifting: captures become df inputs, temporaries become f outputs ---------
    def lambda_lift(self, grad: Gradient) -> None:
        f, rev = self.f, self.rev
        self.metas.pop("anchor", None)
        for v, m in self.metas.items():  # a tensor captured anyway serves as its own meta
            if v.node.kind != prim.Constant and any(_inside(u.user, rev) for u in v.uses):
                m.replace_all_uses_with(v)
                m.node.destroy()
        captures = []
        for v in list(f.inputs) + [o for n in f.nodes() if n is not self.rev_node
                                   for o in n.outputs]:
            if v.node.kind != prim.Constant and any(_inside(u.user, rev) for u in v.uses):
                captures.append(v)
        grad.f_real_outputs = len(f.outputs)
        out_index, in_index = {}, {v: i for i, v in enumerate(f.inputs)}
        for i, v in enumerate(f.outputs):
            out_index.setdefault(v, i)
        for v in captures:
            if v in out_index:
                grad.df_input_captured_outputs.append(out_index[v])
            elif v in in_index:
                grad.df_input_captured_inputs.append(in_index[v])
            else:
                grad.df_input_captured_outputs.append(f.register_output(v))
        for i in range(grad.f_real_outputs, len(f.outputs)):  # vjps of temporaries
            tmp = f.outputs[i]
            prev = self.grad_map.get(tmp)
            if prev is None or tmp not in self.rg:
                continue
            vjp = rev.add_input(type=_grad_type(tmp.type))
            kind = AUTOGRAD_ADD_LIST if isinstance(tmp.type, (ListType, TupleType)) else \
                "prim::AutogradAdd"
            add = f.create(kind, [vjp, vjp]).insert_after(prev.node)
            add.output().type = prev.type
            prev.replace_all_uses_with(add.output())
            add.replace_input(1, prev)
            grad.df_input_vjps.append(i)
        formal = {}
        for v in [f.inputs[i] for i in grad.df_input_captured_inputs] + \
                 [f.outputs[i] for i in grad.df_input_captured_outputs]:
            formal.setdefault(v, len(rev.inputs))
            rev.add_input(type=v.type)
        df = grad.df
        consts: dict = {}

        def lookup(v: Value) -> Value:
            if v in formal:
                return df.inputs[formal[v]]
            if v.node.kind == prim.Constant:
                if v not in consts:
                    consts[v] = df.block.prepend_node(df.create_clone(v.node, {})).output()
                return consts[v]
            raise ValueError(f"differentiate: %{v.debug_name} is read by the backward but "
                             f"was not captured")
        df.block.clone_from(rev, lookup)
        self.rev_node.destroy()
        for v, i in formal.items():  # name the captures after what they hold
            if not v.debug_name.isdigit():
                df.inputs[i].debug_name = v.debug_name
        for k, i in enumerate(grad.df_input_vjps):
            name = f.outputs[i].debug_name
            if not name.isdigit():
                df.inputs[k].debug_name = "grad_" + name


def _keeps_shape_and_dtype(d) -> bool:
    """Whether the formula's gradient already has its input's shape and dtype: an op with
    one Tensor argument (nothing to broadcast against) and no dtype argument (nothing to
    cast), whose formulas restore the input's shape themselves (``sum_backward``,
    ``expand_backward``, ...); ``_to_copy`` changes dtype and device."""
    args = d.schema.arguments
    tensors = [a for a in args if a.type.base == "Tensor"]
    return len(tensors) == 1 and not tensors[0].type.is_list and \
        not any(a.type.base == "ScalarType" for a in args) and d.name != "_to_copy"


def _formulas_kind(n: Node) -> str:
    """The op whose ``derivatives.yaml`` formulas differentiate ``n``: its own, but mm's for
    a ``matmul`` of two matrices. matmul's formulas serve every rank through helpers, which
    stay opaque; mm's (``grad.mm(mat2.t())``) compile to ops. The forward keeps matmul, and
    with it matmul's errors; the arguments line up by position."""
    if n.kind == "ember::matmul" and all(isinstance(v.type, TensorType) and v.type.rank == 2
                                         for v in n.inputs):
        return "ember::mm"
    return n.kind


# Products whose formulas (``grad.mm(mat2.t())``, ...) give each input's gradient at that
# input's exact shape: nothing broadcasts, so only a promotion between two input dtypes
# could leave a gradient to cast back
_NO_BROADCAST = frozenset({"mm", "bmm"})


def _exact_matrix_product(n: Node, d) -> bool:
    """Whether ``n`` is an ``mm``/``bmm`` whose tensor inputs have one known dtype: then
    its gradients need no ``GradSumToSize`` (PyTorch's symbolic_script has none for mm)."""
    if d.name not in _NO_BROADCAST:
        return False
    dtypes = {v.type.dtype if isinstance(v.type, TensorType) else None for v in n.inputs}
    return len(dtypes) == 1 and None not in dtypes


def _inside(node: Node, block) -> bool:
    b = node.owning_block
    while b is not None:
        if b is block:
            return True
        b = b.owning_node.owning_block if b.owning_node is not None else None
    return False


def _grad_type(t: JitType) -> JitType:
    if isinstance(t, ListType) and isinstance(t.elem, TensorType):
        return ListType(TensorType())
    if isinstance(t, TupleType):
        return TupleType(tuple(_grad_type(e) for e in t.elems))
    return TensorType()


def _formula_type(t: JitType) -> JitType:
    """The type of a formula's gradient for an input of type ``t``: a Tensor of ``t``'s
    dtype when that is known and floating (the gradient is cast to it, and is defined when
    the incoming gradients are: ``specialize_autograd_zero`` reads this), else as
    :func:`_grad_type`."""
    if isinstance(t, TensorType) and t.dtype is not None and t.dtype.is_floating_point:
        return TensorType(dtype=t.dtype)
    return _grad_type(t)


def _output_names(d) -> list:
    from ember.autograd.codegen import output_names
    return output_names(d)

