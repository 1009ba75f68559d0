"""How symbolic autodiff's prim kinds run: the metadata a forward keeps for its backward
(``prim::TensorMeta``, ``prim::ReduceMeta``, ``prim::BroadcastMeta``) and the backward's
own steps (``prim::AutogradFormula``, ``prim::GradSumToSize``, ``prim::AutogradAddList``).
:mod:`ember.jit.autodiff` documents what each kind means; importing that module registers
these runners, so a graph it makes can run through the interpreter or an ExecutionPlan.

A :class:`TensorMeta` stands for a tensor whose elements a backward formula does not read:
``shape``, ``dtype``, ``device`` and ``ndim`` only, so ``f`` keeps no tensor alive for them.
:func:`reduce_grad` is the engine's rule for a gradient that reaches an input of another
shape or Type (summed down, cast), :func:`reduce_meta` the forward's test whether that is
needed.

Reference: PyTorch's ``graph_executor.cpp`` and ``symbolic_script.cpp``
(``_size_if_not_equal``, ``_grad_sum_to_size``; ``AutogradAdd`` for lists).
"""
from __future__ import annotations

from ember.jit.runtime.autograd_prims import autograd_add
from ember.jit.runtime.fuser import broadcast_shapes
from ember.jit.runtime.interpreter import register_prim, register_prim_factory
from ember.jit.ir.kinds import prim
from ember.tensor import Size, Tensor
from ember.types import Device

__all__ = ["TensorMeta", "tensor_meta", "cat_meta", "reduce_grad", "reduce_meta",
           "broadcast_meta"]

AUTOGRAD_FORMULA, AUTOGRAD_ADD_LIST = prim.AutogradFormula, prim.AutogradAddList
TENSOR_META, REDUCE_META, BROADCAST_META = prim.TensorMeta, prim.ReduceMeta, prim.BroadcastMeta
GRAD_SUM_TO_SIZE = prim.GradSumToSize


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
        return self._each("shape") if self.items is not None else Size(self._shape)

    @property
    def dtype(self):
        return self._each("dtype") if self.items is not None else self._type.scalar_type

    @property
    def device(self):
        if self.items is not None:
            return self._each("device")
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
