"""The runtime of ``prim::DifferentiableGraph``: run ``f``, record a backward that runs
``df`` (the seeds' ``DifferentiableGraphOp`` and ``DifferentiableGraphBackward``).

A ``prim::DifferentiableGraph`` node carries a :class:`~ember.jit.autodiff.Gradient` in its
attributes (:func:`pack_gradient`: ``Subgraph`` = f, ``ReverseSubgraph`` = df, and the
int lists). The interpreter and every ExecutionPlan build one
:class:`DifferentiableGraphOp` per node (``register_prim_factory``); each call:

1. if grad mode is off or no input that ``df`` differentiates requires grad, runs ``f``
   and drops its temporary outputs: nothing is recorded;
2. otherwise makes a :class:`DifferentiableGraphBackward` node whose edges are those
   inputs' gradient edges (a tensor list gives one edge per tensor), saves the captured
   inputs (before detaching, so a double backward reaches their history), runs ``f`` on
   detached inputs under ``no_grad``, makes the node the ``grad_fn`` of every floating
   output listed in ``df_input_vjps`` (``output_nr`` counts tensors in that order),
   saves the captured outputs and returns the real outputs.

The backward node runs ``df`` through its own :class:`~ember.jit.executor.GraphExecutor`
(one per op, shared by its calls). Under ``create_graph=True`` the engine runs in grad
mode: the vjps require grad, captured inputs keep their history and captured outputs
come back with this node as ``grad_fn`` (as saved outputs do in eager mode), so ``df``'s
plan records eager autograd and double backward works.

Also here: how the prim kinds of :mod:`ember.jit.autodiff` run (``prim::TensorMeta``,
``prim::AutogradFormula``, ``prim::AutogradAddList``).

Reference: PyTorch's ``graph_executor.cpp`` (``DifferentiableGraphOp``,
``DifferentiableGraphBackward``, ``CaptureList``, ``UnpackInstructions``,
``packGradient``, ``getGradient``).
"""
from __future__ import annotations

from ember.autograd.function import Node, SavedVariable, gradient_edge, input_metadata, unpack
from ember.autograd.grad_mode import STATE, no_grad
from ember.jit.autodiff import (AUTOGRAD_ADD_LIST, AUTOGRAD_FORMULA, BROADCAST_META,
                                GRAD_SUM_TO_SIZE, META_KINDS, REDUCE_META, TENSOR_META,
                                Gradient)
from ember.jit.fuser import broadcast_shapes
from ember.jit.interpreter import register_prim, register_prim_factory, run_graph
from ember.jit.kinds import prim
from ember.tensor import Tensor

__all__ = ["DifferentiableGraphOp", "DifferentiableGraphBackward", "pack_gradient",
           "get_gradient", "TensorMeta", "tensor_meta", "cat_meta", "reduce_grad",
           "reduce_meta", "broadcast_meta"]

_INT_LISTS = ("df_input_vjps", "df_input_captured_inputs", "df_input_captured_outputs",
              "df_output_vjps")


class TensorMeta:
    """What a formula may read of a tensor without holding it: ``shape`` (an
    ``ember.Size``), ``dtype``, ``device``, ``ndim``. For a tensor list (``items`` set),
    each attribute is a list, one entry per tensor, as formulas read ``tensors.shape``.
    """

    __slots__ = ("_shape", "_type", "_dev", "items")

    def __init__(self, t=None, items=None):
        self.items = items
        if items is None:  # NOTE: only cheap fields here: this runs in every forward
            self._shape, self._type = t._data.shape, t._type
            self._dev = t._type.backend.device_of(t._data)

    def _each(self, name: str):
        return [getattr(m, name) for m in self.items]

    @property
    def shape(self):
        from ember.tensor import Size
        return self._each("shape") if self.items is not None else Size(self._shape)

    @property
    def dtype(self):
        return self._each("dtype") if self.items is not None else self._type.scalar_type

    @property
    def device(self):
        if self.items is not None:
            return self._each("device")
        from ember.types import Device
        return Device(self._type.backend.name, self._dev)

    @property
    def ndim(self):
        return self._each("ndim") if self.items is not None else len(self._shape)


def tensor_meta(x) -> TensorMeta:
    """The TensorMeta of a Tensor or of a list/tuple of Tensors (a TensorMeta stands for
    its tensor: FuseGraph computes the metas of values a group does not store). Raises
    TypeError for anything else."""
    if isinstance(x, (Tensor, TensorMeta)):
        return _as_meta(x)
    if isinstance(x, (list, tuple)) and all(isinstance(t, (Tensor, TensorMeta)) for t in x):
        return TensorMeta(items=[_as_meta(t) for t in x])
    raise TypeError(f"prim::TensorMeta: expected a Tensor or a list of Tensors, got "
                    f"{type(x).__name__}")


def _as_meta(x) -> TensorMeta:
    return x if x.__class__ is TensorMeta else TensorMeta(x)


def reduce_grad(g, meta):
    """The engine's rule: ``g`` summed down to ``meta``'s shape and cast to its dtype and
    device (``meta`` a Tensor or TensorMeta, or lists of them for a list gradient); None
    for a non-floating target, which never takes a gradient."""
    if g is None:
        return None
    if isinstance(g, (list, tuple)):
        metas = meta.items if isinstance(meta, TensorMeta) else meta
        return [reduce_grad(x, m) for x, m in zip(g, metas)]
    typ = meta._type
    if not typ.scalar_type.is_floating_point:
        return None
    shape = meta._shape if meta.__class__ is TensorMeta else meta._data.shape
    if g._data.shape != shape:
        from ember.autograd.formulas import is_expandable_to, sum_to
        if not is_expandable_to(shape, g._data.shape):
            raise RuntimeError(f"a backward formula returned a gradient of shape "
                               f"{list(g._data.shape)} for an input of shape {list(shape)}")
        g = sum_to(g, shape)
    if g._type is not typ:
        g = g.to(dtype=typ.scalar_type, device=typ.backend.name)
    return g


def _read_attr(v, attr: str):
    if isinstance(v, (list, tuple)):
        return [getattr(x, attr) for x in v]
    return getattr(v, attr)


def cat_meta(tensors, dim: int) -> TensorMeta:
    """The TensorMeta of ``cat(tensors, dim)`` without concatenating: the first tensor's
    dtype and device, its shape with ``dim`` the sum over ``tensors``. FuseGraph asks for
    it (``prim::TensorMeta[cat_dim=d](%p_0, ..., %p_n)``) when it moves a chunk above the
    op whose result a backward formula reads the shape of: the op's pieces remain.
    Raises ValueError for no tensors."""
    if not tensors:
        raise ValueError("prim::TensorMeta[cat_dim]: expected at least one tensor, got none")
    metas = [_as_meta(t) for t in tensors]
    meta = TensorMeta.__new__(TensorMeta)
    meta._type, meta._dev, meta.items = metas[0]._type, metas[0]._dev, None
    shape = list(metas[0]._shape)
    dim %= len(shape)
    shape[dim] = sum(m._shape[dim] for m in metas)
    meta._shape = tuple(shape)
    return meta


def broadcast_meta(tensors, leaves, scalar_type) -> TensorMeta:
    """The TensorMeta of a pointwise value a FusionGroup does not store, from the group's
    inputs ``tensors``: its shape is the broadcast of the shapes ``leaves`` names (the
    flat records of :mod:`ember.jit.passes.fusion_metas`: ``0, k`` for ``tensors[k]``;
    ``1, chunks, dim, j, m, k_1..k_m`` for piece ``j`` of ``chunk(chunks, dim)`` of the
    broadcast of ``tensors[k_1..k_m]``), its dtype ``scalar_type``, its device that of
    ``tensors[0]``. Raises ShapeError when the shapes do not broadcast."""
    shape = _leaves_shape(tuple(t._data.shape for t in tensors), leaves)
    return _meta_like(tensors[0], shape, scalar_type)


def _meta_like(first, shape: tuple, scalar_type) -> TensorMeta:
    backend = first._type.backend
    meta = TensorMeta.__new__(TensorMeta)
    meta._shape, meta.items = shape, None
    meta._type = backend.type(scalar_type)
    meta._dev = backend.device_of(first._data)
    return meta


def _leaves_shape(shapes: tuple, leaves) -> tuple:
    """The broadcast of the leaf shapes ``leaves`` names in the input ``shapes``."""
    out, i = [], 0
    while i < len(leaves):
        if leaves[i] == 0:
            out.append(shapes[leaves[i + 1]])
            i += 2
            continue
        chunks, dim, j, m = leaves[i + 1:i + 5]
        shape = list(broadcast_shapes([shapes[k] for k in leaves[i + 5:i + 5 + m]],
                                      BROADCAST_META))
        dim %= len(shape)
        size = -(-shape[dim] // chunks)
        shape[dim] = max(0, min(size, shape[dim] - j * size))
        out.append(tuple(shape))
        i += 5 + m
    return broadcast_shapes(out, BROADCAST_META)


def _shape_and_type(x) -> tuple:
    return (x._shape, x._type) if x.__class__ is TensorMeta else (x._data.shape, x._type)


def reduce_meta(target, like):
    """What a gradient shaped and typed like ``like`` must be reduced to for ``target``
    (each a Tensor or a TensorMeta): None when their shapes and Types (dtype and device)
    are equal, so no reduction is needed; else ``target``'s TensorMeta, for
    :func:`reduce_grad`. ``prim::ReduceMeta`` runs it in a forward graph; the backward's
    ArgumentSpec then tells None from a meta, and its plan drops the
    ``prim::GradSumToSize`` that reads a None (PyTorch's ``_size_if_not_equal``)."""
    shape, typ = _shape_and_type(target)
    if (shape, typ) == _shape_and_type(like):
        return None
    return target if target.__class__ is TensorMeta else TensorMeta(target)


@register_prim(BROADCAST_META)
def _broadcast_meta(node, args):
    # NOTE: no cache of its own: group_metas puts it in a prim::MetaGroup, which runs it
    # once per input shapes
    return [broadcast_meta(args, node.attr("leaves"), node.attr("dtype"))]


@register_prim(REDUCE_META)
def _reduce_meta(node, args):
    return [reduce_meta(args[0], args[1])]


@register_prim(GRAD_SUM_TO_SIZE)
def _grad_sum_to_size(node, args):
    g, meta = args
    return [g if meta is None else reduce_grad(g, meta)]


@register_prim(TENSOR_META)
def _tensor_meta(node, args):
    dim = node.attr("cat_dim", None)
    return [tensor_meta(args[0]) if dim is None else cat_meta(args, dim)]


@register_prim(AUTOGRAD_ADD_LIST)
def _autograd_add_list(node, args):
    from ember.jit.autograd_prims import autograd_add
    a, b = args
    if a is None or b is None:
        return [b if a is None else a]
    return [[autograd_add(x, y) for x, y in zip(a, b)]]


@register_prim_factory(AUTOGRAD_FORMULA)
def _autograd_formula(node):
    """Build the runner of one AutogradFormula node (see the module docstring)."""
    from ember.autograd.codegen import backward_function
    name = node.attr("op").split("::", 1)[1]
    bf = backward_function(name)
    mask = tuple(bool(m) for m in node.attr("mask"))
    ng = node.attr("num_grads")
    list_grads = ng == 1 and _single_list_return(name)
    index = {p: k for k, p in enumerate(bf.params)}
    feeds = [(index[p], i, bf.sources[index[p]][1])
             for p, i in zip(node.attr("params"), node.attr("param_inputs"))]
    picks = [(j, r) for j, r in zip((j for j, m in enumerate(mask) if m), node.attr("reduce"))]
    nparams, fn = len(bf.params), bf.fn

    def run(*args):
        grads = args[0] if list_grads else args[:ng]
        ps = [None] * nparams
        for k, i, attr in feeds:
            ps[k] = args[i] if attr is None else _read_attr(args[i], attr)
        r = fn(grads, mask, *ps)
        return [r[j] if ri < 0 else reduce_grad(r[j], args[ri]) for j, ri in picks]
    return run


def _single_list_return(name: str) -> bool:
    from ember.ops import DERIVATIVES
    rets = DERIVATIVES[name].schema.returns
    return len(rets) == 1 and rets[0].type.is_list


# ---- the Gradient in a node's attributes --------------------------------------------------
def pack_gradient(gradient: Gradient, node) -> None:
    """Store ``gradient`` in ``prim::DifferentiableGraph`` ``node``: ``Subgraph`` (f),
    ``ReverseSubgraph`` (df), ``f_real_outputs`` and the four offset lists.

    Raises ValueError for another node kind, or when the node's outputs do not match
    ``f_real_outputs`` or its inputs ``f``'s inputs.
    """
    if node.kind != prim.DifferentiableGraph:
        raise ValueError(f"pack_gradient: expected a {prim.DifferentiableGraph} node, got "
                         f"{node.kind}")
    if len(node.outputs) != gradient.f_real_outputs or \
            len(node.inputs) != len(gradient.f.inputs):
        raise ValueError(f"pack_gradient: the node has {len(node.inputs)} inputs and "
                         f"{len(node.outputs)} outputs but f takes {len(gradient.f.inputs)} "
                         f"and returns {gradient.f_real_outputs} real outputs")
    node.set_attr("Subgraph", gradient.f).set_attr("ReverseSubgraph", gradient.df)
    node.set_attr("f_real_outputs", int(gradient.f_real_outputs))
    for name in _INT_LISTS:
        node.set_attr(name, [int(i) for i in getattr(gradient, name)])


def get_gradient(node) -> Gradient:
    """The Gradient :func:`pack_gradient` stored in ``node`` (the graphs themselves, not
    copies). Raises ValueError when ``node`` holds none."""
    if node.kind != prim.DifferentiableGraph or not node.has_attr("ReverseSubgraph"):
        raise ValueError(f"get_gradient: {node.kind} node holds no Gradient (no "
                         f"ReverseSubgraph); differentiate its Subgraph and pack_gradient")
    return Gradient(node.g("Subgraph"), node.g("ReverseSubgraph"), node.attr("f_real_outputs"),
                    *[list(node.attr(name)) for name in _INT_LISTS])


# ---- the runtime --------------------------------------------------------------------------
class DifferentiableGraphBackward(Node):
    """The backward of one DifferentiableGraph call: runs ``df`` on the incoming gradients
    and the captured values; one output per tensor among the differentiated inputs (a
    tensor list counts each tensor)."""

    __slots__ = ("executor", "captures", "vjp_layout", "out_layout")

    def __init__(self, executor):
        super().__init__()
        self.executor = executor
        self.captures: list = []
        self.vjp_layout: list = []  # per df vjp input: None (one tensor) or a list length
        self.out_layout: list = []  # per df output: the same

    def apply(self, grads):
        args, i = [], 0
        for n in self.vjp_layout:
            if n is None:
                args.append(grads[i] if i < len(grads) else None)
                i += 1
            else:  # a tensor list: regroup its gradients (all None: undefined)
                part = [grads[j] if j < len(grads) else None for j in range(i, i + n)]
                args.append(part if any(g is not None for g in part) else None)
                i += n
        args += [unpack(c, self) for c in self.captures]
        outs = self.executor(*args)
        result = []
        for v, n in zip(outs, self.out_layout):
            if n is None:
                result.append(v if isinstance(v, Tensor) else None)
            else:
                result.extend([None] * n if v is None else v)
        return result

    def release_variables(self) -> None:
        from ember.autograd.function import FREED
        self.captures = [FREED if c.__class__ is SavedVariable else
                         tuple(FREED for _ in c) if _saved_list(c) else c
                         for c in self.captures]


def _saved_list(c) -> bool:
    return c.__class__ is tuple and bool(c) and c[0].__class__ is SavedVariable


class DifferentiableGraphOp:
    """Runs one ``prim::DifferentiableGraph`` node (see the module docstring). Built once
    per node; ``op(*inputs) -> list`` of the node's outputs.

    Attributes: ``grad`` (the Gradient), ``f_executor`` and ``grad_executor`` (the
    GraphExecutors of ``f`` and ``df``).
    """

    def __init__(self, node):
        from ember.jit.executor import GraphExecutor
        self.grad = g = get_gradient(node)
        # NOTE: f was optimized with the graph around it; its own executor still compiles a
        # plan per spec, because a no-grad plan runs its kernels on arrays (array mode)
        self.f_executor = GraphExecutor(g.f)
        self.grad_executor = GraphExecutor(g.df)
        self.real = g.f_real_outputs
        self._constants = {id(n.attr("value")) for n in g.f.nodes()
                           if n.kind == prim.Constant and isinstance(n.attr("value"), Tensor)}
        # captured outputs that are metas (shapes, never tensors) are kept as they are
        self._meta_outputs = [g.f.outputs[i].node.kind in _META_PRODUCERS
                              for i in g.df_input_captured_outputs]

    def __call__(self, *inputs) -> list:
        g = self.grad
        if not (STATE.enabled and any(_requires_grad(inputs[i]) for i in g.df_output_vjps)):
            with no_grad():
                return list(self.f_executor(*inputs)[:self.real])
        node = DifferentiableGraphBackward(self.grad_executor)
        edges = []
        for i in g.df_output_vjps:
            v = inputs[i]
            if isinstance(v, (list, tuple)):
                edges += [gradient_edge(t) if isinstance(t, Tensor) else None for t in v]
                node.out_layout.append(len(v))
            else:
                edges.append(gradient_edge(v) if isinstance(v, Tensor) else None)
                node.out_layout.append(None)
        node.next_functions = tuple(edges)
        captures = [_capture(inputs[i], node) for i in g.df_input_captured_inputs]
        with no_grad():
            outs = list(self.f_executor(*[_detach(v) for v in inputs]))
        meta, seen = [], {id(v) for v in inputs}
        seen |= self._constants  # outputs that are not fresh tensors get a fresh alias
        for i in g.df_input_vjps:
            v = outs[i]
            if isinstance(v, (list, tuple)):
                outs[i] = type(v)(_hook(t, node, meta, seen) for t in v)
                node.vjp_layout.append(len(v))
            else:
                outs[i] = _hook(v, node, meta, seen)
                node.vjp_layout.append(None)
        node._out_meta = tuple(meta)
        node.captures = captures + [outs[i] if meta else _capture(outs[i], node) for i, meta
                                    in zip(g.df_input_captured_outputs, self._meta_outputs)]
        return outs[:self.real]


# what makes the metas a forward captures (a list of metas included)
_META_PRODUCERS = META_KINDS | {prim.MetaGroup}


def _requires_grad(v) -> bool:
    if isinstance(v, Tensor):
        return v.requires_grad
    if isinstance(v, (list, tuple)):
        return any(isinstance(t, Tensor) and t.requires_grad for t in v)
    return False


def _detach(v):
    if isinstance(v, Tensor):
        return v.detach()
    if isinstance(v, (list, tuple)):
        return type(v)(t.detach() if isinstance(t, Tensor) else t for t in v)
    return v


def _hook(t, node, meta: list, seen: set):
    """Make ``node`` the ``grad_fn`` of output ``t`` (input ``len(meta)`` of the node)."""
    if not isinstance(t, Tensor) or not t._type.scalar_type.is_floating_point:
        meta.append(None)  # no gradient for integral outputs, as in eager mode
        return t
    if id(t) in seen:  # an output twice, an input or a constant: hook an alias instead
        t = t.detach()
    seen.add(id(t))
    t.grad_fn, t.output_nr, t._requires_grad = node, len(meta), True
    if t._base is not None:
        t._view_version = t._vc.value
    typ = t._type  # input_metadata, inlined: an index only on multi-device backends
    meta.append((t._data.shape, typ) if typ.backend.device_count == 1 else input_metadata(t))
    return t


def _capture(v, node):
    """What the backward keeps of ``v``: a SavedVariable per tensor (an output hooked to
    ``node`` is saved as an output, so it unpacks with ``node`` as its ``grad_fn``)."""
    if isinstance(v, Tensor):
        return SavedVariable(v, "captured", is_output=v.grad_fn is node)
    if isinstance(v, (list, tuple)) and v and all(isinstance(t, Tensor) for t in v):
        return tuple(SavedVariable(t, f"captured[{k}]", is_output=t.grad_fn is node)
                     for k, t in enumerate(v))
    return v


@register_prim_factory(prim.DifferentiableGraph)
def _differentiable_graph(node):
    if not node.has_attr("ReverseSubgraph"):  # not differentiated (yet): run f inline
        sub = node.g("Subgraph")
        return lambda *args: run_graph(sub, list(args))[:len(node.outputs)]
    return DifferentiableGraphOp(node)
