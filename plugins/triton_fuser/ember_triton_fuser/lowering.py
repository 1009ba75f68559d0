"""Lowering: a FusionGroup's ``Subgraph`` -> a :class:`KernelPlan`, the kernel's recipe.

The plan is what the generated source depends on apart from the runtime layout (which
operands are broadcast, merged dimensions): the tensor arguments the kernel loads, one
:class:`Step` per computed value (a Triton expression from ``ops.lower``, or a reduction
over the last dimension), and the outputs it stores. Its ``canonical`` text names values
by position, so two groups with the same ops, dtypes and ranks share compiled kernels.

What a group may hold (anything else is declined, and the group runs unfused):

- pointwise ops of ``ops.SUPPORTED_KINDS`` whose non-tensor arguments are constants;
- ``chunk``/``split``/``split.sizes`` of a group input (the seeds' LSTM cell): each piece
  becomes its own tensor argument, a strided view of the input, so the kernel reads the
  whole gates tensor in place; and ``prim::BroadcastingChunk`` of group inputs (what
  FuseGraph makes of a chunk of ``x @ w + h @ u + b``): each input is viewed at the
  inputs' broadcast shape (stride 0 where it broadcasts), then chunked;
- reductions over the last dimension (``sum``, ``mean``, ``amax``, ``amin`` with
  ``dim=[-1]``, and ``softmax``/``log_softmax`` with ``dim=-1``): the kernel then handles
  whole rows (softmax, the layer_norm decomposition). A reduction without ``keepdim`` may
  only feed group outputs: broadcasting its ``(R,)`` result against ``(R, C)`` values
  would pair the wrong elements;
- ``prim::FusedConcat`` whose result is a group output (what FuseGraph makes of a ``cat``
  of values the group computes): each piece is stored into its slice of one buffer, a
  piece the kernel does not compute (an input) through a copy step. Its ``results``
  entry lists the stores of its pieces.

Every tensor value needs a known dtype (the tracer records them).

Reference: PyTorch's ``torch/csrc/jit/fuser/codegen.cpp`` (``generateKernel``: inputs,
chunk descriptors, one statement per node, outputs) and its ``FusedKernelSpec``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

from ember import types as _t
from ember.jit.runtime.fuser import BROADCASTING_CHUNK, CHUNK_KINDS, FUSED_CONCAT, FusionDeclined
from ember.jit.ir.ir_types import TensorType
from ember.jit.ir.kinds import prim

from . import ops
from .binary_rules import INT_DIVISION_BY_TENSOR

__all__ = ["TensorArg", "Step", "OutputSpec", "KernelPlan", "lower_subgraph",
           "REDUCTION_KINDS", "ROW_KINDS", "can_lower_node", "literal"]

#: reductions over the last dimension: ``kind -> (takes keepdim, takes dtype)``
REDUCTION_KINDS = {"ember::sum": True, "ember::mean": True, "ember::amax": False,
                   "ember::amin": False}
#: row ops over the last dimension whose result keeps the input's shape
ROW_KINDS = frozenset({"ember::softmax", "ember::log_softmax"})

_SUPPORTED_DTYPES = frozenset({_t.bool_, _t.uint8, _t.int8, _t.int16, _t.int32, _t.int64,
                               _t.float16, _t.bfloat16, _t.float32, _t.float64})
# integer quotients and remainders, which eager refuses for a 0 in a tensor divisor
_DIVISION_KINDS = frozenset({"ember::floor_divide", "ember::remainder", "ember::fmod",
                             "ember::div"})


@dataclass(frozen=True)
class TensorArg:
    """One pointer the kernel loads: subgraph input ``input``, or one piece of it.

    Attributes:
        input: the subgraph input's position.
        piece: None for the whole input, else ``(kind, dim, param, index)``: the
            ``index``-th piece of ``chunk(x, param, dim)`` / ``split(x, param, dim)`` /
            ``split.sizes(x, param, dim)`` (``dim`` normalized to ``[0, rank)``); for
            ``prim::BroadcastingChunk``, ``param`` is ``(chunks, sources, pieces)``: ``x``
            expanded to the broadcast shape of the inputs at positions ``sources``, then
            chunked, into ``pieces`` pieces.
        dtype: the element type (an ember ScalarType).
        rank: the rank of what is loaded (the broadcast rank for a BroadcastingChunk).
    """

    input: int
    piece: Optional[tuple]
    dtype: _t.ScalarType
    rank: int


@dataclass(frozen=True)
class Step:
    """One computed value ``name`` of dtype ``dtype``.

    ``kind`` is the node kind; ``expr`` is the Triton expression of a pointwise op (from
    ``ops.lower``) or None for a reduction/row op, which codegen writes from ``kind``,
    ``source`` (the input's name) and ``keepdim``. ``deps`` are the names of the tensor
    values it reads (for the runtime shape of each value).
    """

    name: str
    kind: str
    dtype: _t.ScalarType
    expr: Optional[str]
    deps: tuple
    source: Optional[str] = None
    keepdim: bool = True


@dataclass(frozen=True)
class OutputSpec:
    """One store of the kernel: the value's name and the dtype it is stored as."""

    name: str
    dtype: _t.ScalarType


@dataclass(frozen=True)
class KernelPlan:
    """The recipe of one fused kernel (see the module docstring).

    Attributes:
        args: the loaded tensors; ``args[i]`` is named ``x{i}`` in the kernel.
        steps: computed values in order.
        outputs: the stores, in order; the kernel's pointer ``y{k}`` is store ``k``.
        results: per subgraph output, ``(dim, stores)``: ``(None, (k,))`` for a value
            stored whole by store ``k``; for a ``prim::FusedConcat``, its dimension
            (normalized to ``[0, rank)``) and the stores of its pieces, in order.
        rowwise: True when a step reduces over the last dimension (a row kernel).
        canonical: the plan's text with positional names: the compile cache key.
        num_inputs: the subgraph's input count (the kernel's call arity).
    """

    args: tuple
    steps: tuple
    outputs: tuple
    results: tuple
    rowwise: bool
    canonical: str
    num_inputs: int
    dtypes: dict = field(default_factory=dict, compare=False)


def literal(value) -> str:
    """Python/Triton source for a constant scalar (``float("inf")`` for infinities)."""
    if isinstance(value, float):
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return 'float("inf")' if value > 0 else 'float("-inf")'
        return repr(value)
    return repr(value)


def _tensor_type(v):
    t = v.type
    return t if isinstance(t, TensorType) else None


def _dim_is_last(dim, rank) -> bool:
    if isinstance(dim, (list, tuple)):
        if len(dim) != 1:
            return False
        dim = dim[0]
    return isinstance(dim, int) and rank is not None and rank > 0 and dim in (-1, rank - 1)


def can_lower_node(node) -> Optional[str]:
    """None when ``node`` may go into a Triton FusionGroup, else the reason it may not
    (checked by the fuser's ``can_fuse_node``; ``lower_subgraph`` re-checks in full)."""
    kind = node.kind
    for v in list(node.inputs) + list(node.outputs):
        t = _tensor_type(v)
        if t is not None:
            if t.dtype is None:
                return f"{kind}: a tensor of unknown dtype"
            if t.dtype not in _SUPPORTED_DTYPES:
                return f"{kind}: dtype {t.dtype} has no Triton kernel"
    if kind == FUSED_CONCAT:
        known = [t.sizes for t in map(_tensor_type, node.inputs) if t and t.sizes is not None]
        for sizes in known[1:]:
            if len(sizes) != len(known[0]) or any(
                    a is not None and b is not None and a != b
                    for a, b in zip(sizes, known[0])):
                return (f"{kind} of pieces of shapes {[list(k) for k in known]}: one kernel "
                        f"walks one shape")
        return None
    if kind in _DIVISION_KINDS and not node.inputs[1].is_constant:
        out = _tensor_type(node.outputs[0])
        if out is not None and not out.dtype.is_floating_point:
            # NOTE: only this node stays out; the pointwise ops around it still fuse
            return f"{kind}: {INT_DIVISION_BY_TENSOR}"
    if kind in CHUNK_KINDS or kind in ops.SUPPORTED_KINDS:
        return None
    if kind in REDUCTION_KINDS or kind in ROW_KINDS:
        rank = _tensor_type(node.inputs[0]).rank if _tensor_type(node.inputs[0]) else None
        dim = node.inputs[1]
        if not dim.is_constant or not _dim_is_last(dim.to_ivalue(), rank):
            return f"{kind}: only a reduction over the last dimension fuses"
        for extra in node.inputs[2:]:
            if not extra.is_constant:
                return f"{kind}: a non-constant argument"
        if kind in ROW_KINDS or (kind in REDUCTION_KINDS and REDUCTION_KINDS[kind]):
            if node.inputs[-1].to_ivalue() is not None:
                return f"{kind}: a dtype= argument does not fuse"
        return None
    return f"{kind} is not an op the Triton fuser generates"


def lower_subgraph(subgraph) -> KernelPlan:
    """The :class:`KernelPlan` of a FusionGroup ``subgraph``.

    Raises FusionDeclined (its message the reason) for anything the module docstring
    does not allow; ``ops.lower`` raises it for an op or dtype it cannot express.
    """
    names: dict = {}        # Value -> name ("x0", "v3") or constant Operand
    args: list = []
    steps: list = []
    dtypes: dict = {}
    ranks: dict = {}        # name -> rank (a 0-d tensor promotes below dimensioned ones)
    reduced_nokeep: set = set()
    lines: list = []
    inputs = list(subgraph.inputs)
    for i, v in enumerate(inputs):
        t = _tensor_type(v)
        if t is None or t.dtype is None or t.rank is None:
            raise FusionDeclined(f"subgraph input {i} is not a tensor of known dtype and rank "
                                 f"({v.type})")
        if t.dtype not in _SUPPORTED_DTYPES:
            raise FusionDeclined(f"subgraph input {i} has dtype {t.dtype}, which the Triton "
                                 f"fuser does not load")

    def arg_name(input_index, piece, rank=None):
        v = inputs[input_index]
        key = (input_index, piece)
        for j, a in enumerate(args):
            if (a.input, a.piece) == key:
                return f"x{j}"
        t = _tensor_type(v)
        rank = t.rank if rank is None else rank
        args.append(TensorArg(input_index, piece, t.dtype, rank))
        name = f"x{len(args) - 1}"
        dtypes[name] = t.dtype
        ranks[name] = rank
        lines.append(f"{name} = load(in{input_index}, {piece}) : {t.dtype} rank {rank}")
        return name

    def operand(v):
        if v in names:
            n = names[v]
            return n if isinstance(n, ops.Operand) else ops.Operand(n, dtypes[n],
                                                                     rank=ranks.get(n))
        if v.node.kind == prim.Constant:
            value = v.to_ivalue()
            if value is not None and not isinstance(value, (bool, int, float, str)):
                raise FusionDeclined(f"a constant of type {type(value).__name__} "
                                     f"({value!r}) is not a scalar the kernel can hold")
            return ops.Operand(literal(value), None, value)
        if v in input_index:
            return ops.Operand(arg_name(input_index[v], None), _tensor_type(v).dtype,
                               rank=_tensor_type(v).rank)
        raise FusionDeclined(f"value %{v.debug_name} comes from outside the kernel")

    def concat_pieces(node) -> tuple:
        """``(dim, piece names, dtype)`` of a FusedConcat; a piece the kernel does not
        compute gets a copy step, so every piece is a step's value."""
        nonlocal count
        out = node.output()
        t = _tensor_type(out)
        dim, rank = node.attr("dim"), t.rank
        if not rank or not -rank <= dim < rank:
            raise FusionDeclined(f"{FUSED_CONCAT} along dim {dim} of rank-{rank} tensors")
        if out.uses and any(u.user.kind != prim.Return for u in out.uses):
            raise FusionDeclined(f"{FUSED_CONCAT} whose result is read inside the group")
        piece_names = []
        for v in node.inputs:
            o = operand(v)
            if o.is_constant or o.expr in reduced_nokeep:
                raise FusionDeclined(f"{FUSED_CONCAT} of a constant or a keepdim=False "
                                     f"reduction")
            if not o.expr.startswith("v"):   # an input or a piece of one: copied
                name = f"v{count}"
                count += 1
                steps.append(Step(name, FUSED_CONCAT, o.dtype, o.expr, (o.expr,)))
                dtypes[name], ranks[name] = o.dtype, ranks.get(o.expr)
                lines.append(f"{name} = copy({o.expr}) : {o.dtype}")
                o = ops.Operand(name, o.dtype)
            piece_names.append(o.expr)
        return dim % rank, tuple(piece_names), t.dtype

    input_index = {v: i for i, v in enumerate(inputs)}
    concats: dict = {}      # FusedConcat output Value -> (dim, piece names, dtype)
    pieces: dict = {}       # ListUnpack output Value -> (input index, piece)
    rowwise = False
    count = 0
    for node in subgraph.nodes():
        kind = node.kind
        if kind == prim.Constant:
            continue
        if kind == BROADCASTING_CHUNK:
            for v in node.inputs:
                if v not in input_index:
                    raise FusionDeclined(f"{kind} of a value computed in the group")
            sources = tuple(input_index[v] for v in node.inputs)
            rank = max(_tensor_type(v).rank for v in node.inputs)
            chunks, dim = node.attr("chunks"), node.attr("dim")
            n = len(node.outputs) // len(sources)
            if not rank or not -rank <= dim < rank:
                raise FusionDeclined(f"{kind} along dim {dim} of rank-{rank} tensors")
            param = (chunks, sources, n)
            for m, src in enumerate(sources):
                for j in range(n):
                    names[node.outputs[m * n + j]] = arg_name(
                        src, (kind, dim % rank, param, j), rank)
            continue
        if kind in CHUNK_KINDS:
            src = node.inputs[0]
            if src not in input_index:
                raise FusionDeclined(f"{kind} of a value computed in the group (FuseGraph "
                                     f"keeps chunks on group inputs)")
            param, dim = node.inputs[1].to_ivalue(), node.inputs[2].to_ivalue()
            if not (node.inputs[1].is_constant and node.inputs[2].is_constant):
                raise FusionDeclined(f"{kind} with non-constant arguments")
            unpack = [u.user for u in node.output().uses]
            if len(unpack) != 1 or unpack[0].kind != prim.ListUnpack:
                raise FusionDeclined(f"{kind} whose list is used other than by one "
                                     f"prim::ListUnpack")
            param = tuple(param) if isinstance(param, list) else param
            rank = _tensor_type(src).rank
            if not rank or not -rank <= dim < rank:
                raise FusionDeclined(f"{kind} along dim {dim} of a rank-{rank} tensor")
            dim %= rank
            for j, out in enumerate(unpack[0].outputs):
                pieces[out] = (input_index[src], (kind, dim, param, j))
            continue
        if kind == FUSED_CONCAT:
            concats[node.output()] = concat_pieces(node)
            continue
        if kind == prim.ListUnpack:
            for out in node.outputs:
                if out not in pieces:
                    raise FusionDeclined("a prim::ListUnpack of a list that is not a chunk")
                names[out] = arg_name(*pieces[out])
            continue
        reason = can_lower_node(node)
        if reason is not None:
            raise FusionDeclined(reason)
        if len(node.outputs) != 1 or _tensor_type(node.output()) is None:
            raise FusionDeclined(f"{kind} does not have one tensor output")
        out_dtype = _tensor_type(node.output()).dtype
        name = f"v{count}"
        count += 1
        if kind in REDUCTION_KINDS or kind in ROW_KINDS:
            rowwise = True
            src = operand(node.inputs[0])
            if src.is_constant:
                raise FusionDeclined(f"{kind} of a constant")
            if src.expr in reduced_nokeep:
                raise FusionDeclined(f"{kind} of a keepdim=False reduction")
            keepdim = True
            if kind in REDUCTION_KINDS:
                keepdim = bool(node.inputs[2].to_ivalue())
                if kind in ("ember::amax", "ember::amin") and src.dtype == _t.bool_:
                    raise FusionDeclined(f"{kind} of a bool tensor")
            step = Step(name, kind, out_dtype, None, (src.expr,), src.expr, keepdim)
            if not keepdim:
                reduced_nokeep.add(name)
            lines.append(f"{name} = {kind}({src.expr}, keepdim={keepdim}) : {out_dtype}")
        else:
            operands = [operand(v) for v in node.inputs]
            for o in operands:
                if o.expr in reduced_nokeep:
                    raise FusionDeclined(f"{kind} reads a keepdim=False reduction; only group "
                                         f"outputs may")
            expr = ops.lower(kind, operands, out_dtype)
            deps = tuple(o.expr for o in operands if not o.is_constant)
            step = Step(name, kind, out_dtype, expr, deps)
            text = ", ".join(o.expr if not o.is_constant else literal(o.value)
                             for o in operands)
            lines.append(f"{name} = {kind}({text}) : {out_dtype}")
        steps.append(step)
        names[node.output()] = name
        dtypes[name] = out_dtype
        ranks[name] = _tensor_type(node.output()).rank
    outputs, results = [], []
    for v in subgraph.outputs:
        if v in concats:
            dim, piece_names, dtype = concats[v]
            first = len(outputs)
            outputs.extend(OutputSpec(n, dtype) for n in piece_names)
            results.append((dim, tuple(range(first, len(outputs)))))
            lines.append(f"store concat(dim={dim}) {', '.join(piece_names)} : {dtype}")
            continue
        n = names.get(v)
        if not isinstance(n, str) or not n.startswith("v"):
            raise FusionDeclined(f"group output %{v.debug_name} is not computed by the "
                                 f"kernel (an input, a piece or a constant)")
        results.append((None, (len(outputs),)))
        outputs.append(OutputSpec(n, dtypes[n]))
        lines.append(f"store {n}")
    if not steps:
        raise FusionDeclined("the group computes nothing")
    return KernelPlan(tuple(args), tuple(steps), tuple(outputs), tuple(results), rowwise,
                      "\n".join(lines), len(inputs), dtypes)
