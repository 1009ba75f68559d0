"""CpuFuser: FusionGroups on CPU tensors, compiled to ember's blocked elementwise engine.

At the sizes real models use, a chain of numpy ops is bound by memory traffic: each op
reads and writes whole arrays. A FusionGroup compiled here runs its ops block by block
(:mod:`ember.backends.elementwise`): every intermediate lives in a cache-sized scratch
buffer reused across blocks and calls, outputs are written in place, and blocks run on
ember's threads. For ``tanh(x * w + b)`` on a (1024, 1024) float32 ``x``::

    with prim::FusionGroup_0 = graph(%x, %w, %b):     # the group's Subgraph
      %a = ember::mul(%x, %w)
      %c = ember::add(%a, %b, %one)
      %d = ember::tanh(%c)
      return (%d)

compiles to one engine program (``print(kernel)`` shows it)::

    program fusion(in0: float32, in1: float32, in2: float32)
      v3 = multiply(in0, in1) : float32
      v4 = add(v3, in2) : float32
      v5 = tanh(v4) : float32
      out0 = v5 : float32

Each node becomes steps of the op's recipe (:mod:`ember.backends.elementwise.recipes`),
computing in float32 for float16/bfloat16 values as PyTorch's kernels do; an op without a
recipe (``erf``, ``remainder``) is a ``call`` of its eager op on each block, so every op
FuseGraph may group runs, and its errors (an integer division by zero) are eager's.

What fuses (``why_not`` gives the reason for anything else; FuseGraph asks it through
``can_fuse_node``, and ``compile`` raises it as ``FusionDeclined``):

- pointwise ops of ``ember.jit.runtime.fuser.FUSIBLE_KINDS`` (not chunks or concatenation: the
  engine walks one iteration space);
- ``sum``/``mean``/``amax``/``amin`` of a floating tensor over the last dim or all dims
  without ``dtype=``: a reduction splits the group into stages, one program per reduction
  (accumulated per block) and one for the pointwise outputs, each program recomputing the
  pointwise values it reads from the group's inputs (cheaper than storing them);
- tensors of known dtype other than complex, and at least ``min_elements`` elements when
  sizes are known: below that the plan's array-mode lines cost less than a kernel call
  (``too small to pay off``).

At run time a group whose pointwise outputs would not all have the shape of the whole
iteration space (an output that reads only a broadcast operand) runs that call unfused,
recorded as a fallback.

Reference: PyTorch's CPU fuser (``torch/csrc/jit/fuser/cpu``: one generated C++ loop per
group) and NNC's loop fusion; the blocking is Halide's ``split``/``compute_at``.
"""
from __future__ import annotations

import logging
import math
import sys
import threading
from typing import Optional

import numpy as np

from ember import dispatch as _d
from ember import types as _t
from ember.backends import registry as _registry
from ember.backends.elementwise import Program, compile_program
from ember.backends.elementwise.recipes import compute_dtype, emit
from ember.jit.runtime.fuser import (CHUNK_KINDS, FUSED_CONCAT, FUSIBLE_KINDS, Fuser,
                                     FusionDeclined, record_fallback)
from ember.jit.runtime.interpreter import run_graph
from ember.jit.ir.ir_types import TensorType
from ember.jit.ir.kinds import prim
from ember.jit.runtime.op_registry import op_info

__all__ = ["CpuFuser", "CpuFusedKernel", "REDUCTION_KINDS", "MIN_ELEMENTS"]

#: reductions a group may hold: kind -> whether its schema has a ``dtype`` argument
REDUCTION_KINDS = {"ember::sum": True, "ember::mean": True, "ember::amax": False,
                   "ember::amin": False}
#: groups on fewer elements than this run unfused (array mode is cheaper there)
MIN_ELEMENTS = 1 << 15
_POINTWISE_KINDS = FUSIBLE_KINDS - CHUNK_KINDS - {FUSED_CONCAT}
_FLOATS = frozenset({_t.float16, _t.bfloat16, _t.float32, _t.float64})
# operands that stay bool whatever the compute dtype: (op, position)
_BOOL_OPERANDS = {"where": (0,), "masked_fill": (1,)}


def _tensor_type(v) -> Optional[TensorType]:
    t = v.type
    return t if isinstance(t, TensorType) else None


def _numel(t: TensorType) -> Optional[int]:
    if t.sizes is None or any(s is None for s in t.sizes):
        return None
    return math.prod(t.sizes)


def _reduce_dims(node) -> Optional[str]:
    """``"last"`` / ``"all"`` for a reduction's constant dim argument, else None."""
    dim_v = node.inputs[1]
    t = _tensor_type(node.inputs[0])
    if not dim_v.is_constant or t is None or t.rank is None:
        return None
    dim = dim_v.to_ivalue()
    rank = t.rank
    if dim is None or dim == [] or dim == ():
        return "all"
    dims = list(dim) if isinstance(dim, (list, tuple)) else [dim]
    try:
        wrapped = sorted({d % rank for d in dims}) if rank else []
    except (TypeError, ZeroDivisionError):
        return None
    if wrapped == list(range(rank)):
        return "all"
    return "last" if wrapped == [rank - 1] else None


class CpuFuser(Fuser):
    """Compiles FusionGroups on ``cpu`` devices to the blocked elementwise engine.

    Args:
        min_elements: groups on fewer elements (by the traced sizes) are not fused.
    ``why_not(node)`` names what keeps a node out of a group; ``compile(subgraph)``
    returns a :class:`CpuFusedKernel` or raises ``FusionDeclined`` with the reason.
    """

    name = "cpu-blocked"
    device_type = "cpu"

    def __init__(self, min_elements: int = MIN_ELEMENTS):
        self.min_elements = int(min_elements)

    def __repr__(self) -> str:
        return f"CpuFuser(min_elements={self.min_elements})"

    def why_not(self, node) -> Optional[str]:
        """None when ``node`` may join a CPU FusionGroup, else why not (a sentence)."""
        kind = node.kind
        if kind not in _POINTWISE_KINDS and kind not in REDUCTION_KINDS:
            return f"{kind} is not a pointwise op or reduction the CPU engine runs"
        for v in list(node.inputs) + list(node.outputs):
            t = _tensor_type(v)
            if t is not None and t.dtype is None:
                return f"{kind}: a tensor of unknown dtype"
        if kind in REDUCTION_KINDS:
            t = _tensor_type(node.inputs[0])
            if t is None or t.dtype not in _FLOATS:
                return f"{kind}: only reductions of floating tensors fuse"
            if _reduce_dims(node) is None:
                return f"{kind}: only a reduction over the last dim or all dims fuses"
            for extra in node.inputs[2:]:
                if not extra.is_constant:
                    return f"{kind}: a non-constant argument"
            if REDUCTION_KINDS[kind] and node.inputs[3].to_ivalue() is not None:
                return f"{kind}: a dtype= argument does not fuse"
            size = _numel(t)
        else:
            t = _tensor_type(node.outputs[0]) if node.outputs else None
            size = None if t is None else _numel(t)
        if size is not None and size < self.min_elements:
            return (f"{kind}: too small to pay off ({size} elements < {self.min_elements}; "
                    f"the plan's array code is faster there)")
        return None

    def can_fuse_node(self, node) -> bool:
        """Whether FuseGraph may put ``node`` into a group (``why_not`` is None)."""
        return self.why_not(node) is None

    def compile(self, subgraph) -> "CpuFusedKernel":
        """A :class:`CpuFusedKernel` for ``subgraph``; raises FusionDeclined with the
        reason when a node may not be fused (``why_not``)."""
        for node in subgraph.nodes():
            if node.kind in (prim.Constant,):
                continue
            reason = self.why_not(node)
            if reason is not None and "too small" not in reason:
                raise FusionDeclined(reason)
        return CpuFusedKernel(subgraph)


class _Stage:
    """One engine program of a group: its kernel, where each of its inputs comes from
    (``("in", i)`` group input i, ``("red", j)`` the result of stage j) and what its
    outputs are (``("out", k)`` group output k, ``("red", j)`` stage j's result)."""

    def __init__(self, program, sources: list, results: list, leaves: list):
        self.program = program
        self.kernel = compile_program(program, np)
        self.sources = sources
        self.results = results
        self.leaves = leaves  # per output: the input positions its value reads
        self.out_dtypes = [o.dtype for o in program.outputs]


class _Lowering:
    """Builds the programs of one subgraph (see the module docstring)."""

    def __init__(self, subgraph):
        self.subgraph = subgraph
        self.erf = _registry.get_backend("cpu").type(_t.float32).kernels["erf"]
        self.input_index = {v: i for i, v in enumerate(subgraph.inputs)}
        self.reduced: dict = {}  # reduction output Value -> stage number
        for i, v in enumerate(subgraph.inputs):
            t = _tensor_type(v)
            if t is None or t.dtype is None:
                raise FusionDeclined(f"subgraph input {i} is not a tensor of known dtype")

    # -- one program -----------------------------------------------------------------------
    def new_program(self, name: str):
        self.prog = Program(name)
        self.env: dict = {}       # graph Value -> program Value (in its program dtype)
        self.casts: dict = {}     # (program Value, dtype) -> cast Value
        self.sources: list = []   # per program input: ("in", i) / ("red", j)
        self.leaf_of: dict = {}   # program Value -> frozenset of program input positions

    def source(self, v):
        """The program Value of graph value ``v``: computed, loaded, or a constant."""
        if v in self.env:
            return self.env[v]
        node = v.node
        if node.kind == prim.Constant:
            value = v.to_ivalue()
            if value is not None and not isinstance(value, (bool, int, float, str)):
                raise FusionDeclined(f"a constant of type {type(value).__name__} is not a "
                                     f"scalar the engine can hold")
            return value
        if v in self.input_index or v in self.reduced:
            src = ("in", self.input_index[v]) if v in self.input_index else \
                ("red", self.reduced[v])
            pv = self.prog.input(_tensor_type(v).dtype.numpy)
            self.leaf_of[pv] = frozenset({len(self.sources)})
            self.sources.append(src)
            self.env[v] = pv
            return pv
        self.env[v] = pv = self.node(node)
        return pv

    def cast(self, pv, dtype):
        dtype = np.dtype(dtype)
        if not hasattr(pv, "dtype") or pv.dtype == dtype:
            return pv
        key = (pv, dtype)
        if key not in self.casts:
            c = self.casts[key] = self.prog.cast(pv, dtype)
            self.leaf_of[c] = self.leaf_of[pv]
        return self.casts[key]

    def node(self, node):
        kind = node.kind
        if kind in REDUCTION_KINDS:
            raise AssertionError("reductions are stage results")  # pragma: no cover
        info = op_info(kind)
        op = kind.split("::", 1)[1]
        out_t = _tensor_type(node.output())
        out_dtype = out_t.dtype.numpy
        operands, layout, consts, logical = [], [], {}, []
        for pos, (a, v) in enumerate(zip(info.schema.arguments, node.inputs)):
            if a.type.base == "Tensor":
                pv = self.source(v)
                if hasattr(pv, "dtype"):
                    layout.append(("t", len(operands)))
                    operands.append(pv)
                    logical.append(_tensor_type(v))
                else:  # a Python number where the schema has a Tensor (x + 1)
                    layout.append(("c", pv))
                    operands.append(pv)
                    logical.append(None)
            else:
                if not v.is_constant:
                    raise FusionDeclined(f"{kind}: a non-constant {a.name}")
                value = v.to_ivalue()
                layout.append(("c", value))
                consts[a.name] = value
        dims = [t.dtype for t in logical if t is not None and t.rank]
        zero = [t.dtype for t in logical if t is not None and not t.rank]
        scalars = [x for x, t in zip(operands, logical) if t is None and x is not None
                   and isinstance(x, (bool, int, float))]
        promoted = _t.result_type(dims, zero, scalars).numpy if (dims or zero) else out_dtype
        ct = compute_dtype(op, out_dtype, promoted)
        bools = _BOOL_OPERANDS.get(op, ())
        args = [self.cast(x, np.bool_ if i in bools else ct) for i, x in enumerate(operands)]
        pv = emit(self.prog, op, ct, args, consts, erf=self.erf) if op != "gelu" or \
            ct.kind == "f" else None
        if pv is None:
            pv = self.eager_call(info, node, layout, operands, logical, out_dtype)
        self.leaf_of[pv] = frozenset().union(*[self.leaf_of[x] for x in operands
                                               if hasattr(x, "dtype")])
        return pv

    def eager_call(self, info, node, layout, operands, logical, out_dtype):
        """The op's eager wrapper on each block (operands in their own dtypes)."""
        backend = _registry.get_backend("cpu")
        tensors = [self.cast(x, t.dtype.numpy) for x, t in zip(operands, logical)
                   if t is not None]
        slots, k = [], 0
        for kind, x in layout:
            if kind == "t":
                slots.append(("t", k))
                k += 1
            else:
                slots.append(("c", x))
        call, wrap = info.call, _d.wrap

        def eager(*arrays):
            args = [wrap(arrays[x], backend) if kind == "t" else x for kind, x in slots]
            return call(*args)._data

        eager.__qualname__ = f"eager {node.kind}"
        pv = self.prog.call(eager, *tensors, dtype=out_dtype)
        return pv

    def finish(self, outputs: list, results: list) -> _Stage:
        leaves = [sorted(self.leaf_of.get(pv, ())) for pv in outputs]
        return _Stage(self.prog, self.sources, results, leaves)

    # -- the stages ------------------------------------------------------------------------
    def stages(self) -> list:
        stages = []
        outputs = list(self.subgraph.outputs)
        for node in self.subgraph.nodes():
            if node.kind not in REDUCTION_KINDS:
                continue
            self.new_program(f"reduce{len(stages)}")
            x = self.source(node.inputs[0])
            in_t = _tensor_type(node.inputs[0])
            out_t = _tensor_type(node.output())
            if not hasattr(x, "dtype"):
                raise FusionDeclined(f"{node.kind} of a constant")
            keepdim = bool(node.inputs[2].to_ivalue())
            ct = compute_dtype("sum", in_t.dtype.numpy, in_t.dtype.numpy)
            r = self.prog.reduce(node.kind.split("::")[1], self.cast(x, ct),
                                 dims=_reduce_dims(node), keepdim=keepdim, dtype=ct)
            self.prog.output(r, dtype=out_t.dtype.numpy)
            results = [("red", len(stages))]
            self.reduced[node.output()] = len(stages)
            stages.append(self.finish([r], results))
        pointwise = [(k, v) for k, v in enumerate(outputs) if v not in self.reduced]
        if pointwise:
            self.new_program("fusion")
            pvs = []
            for k, v in pointwise:
                pv = self.source(v)
                if not hasattr(pv, "dtype"):
                    raise FusionDeclined(f"group output {k} is a constant")
                self.prog.output(pv, dtype=_tensor_type(v).dtype.numpy)
                pvs.append(pv)
            stages.append(self.finish(pvs, [("out", k) for k, _ in pointwise]))
        for k, v in enumerate(outputs):
            if v in self.reduced:
                stages[self.reduced[v]].results.append(("out", k))
        if not stages:
            raise FusionDeclined("the group computes nothing")
        return stages


class CpuFusedKernel:
    """``kernel(*inputs) -> list of output Tensors`` for one CPU FusionGroup: its stages
    (engine programs) run in order on the inputs' arrays (see the module docstring).

    Attributes: ``stages`` (each with ``program`` and ``kernel``). ``str(kernel)`` prints
    the programs. Raises what the engine or an eager op raises for bad inputs.
    """

    def __init__(self, subgraph):
        self.subgraph = subgraph
        self.stages = _Lowering(subgraph).stages()
        self.num_outputs = len(subgraph.outputs)
        self.backend = _registry.get_backend("cpu")
        self._warned = False
        self._local = threading.local()  # this thread's last outputs (``_recycled``)

    def __str__(self) -> str:
        return "\n".join(str(s.program) for s in self.stages)

    def __call__(self, *inputs) -> list:
        arrays = [t._data for t in inputs]
        reduced: list = []
        outs: list = [None] * self.num_outputs
        for stage in self.stages:
            args = [arrays[i] if kind == "in" else reduced[i] for kind, i in stage.sources]
            out = None
            if stage.results[0][0] == "out":
                if not self._shapes_agree(stage, args):
                    return self._unfused(inputs)
                out = self._recycled(stage, args)
            results = stage.kernel(*args, out=out)
            if stage.results[0][0] == "red":  # a reduction: one result, maybe also an output
                reduced.append(results[0])
                for _, k in stage.results[1:]:
                    outs[k] = results[0]
            else:
                for (_, k), r in zip(stage.results, results):
                    outs[k] = r
                self._remember(results)
        wrap, backend = _d.wrap, self.backend
        return [wrap(a, backend) for a in outs]

    def _recycled(self, stage, args) -> Optional[list]:
        """Output buffers of this thread's previous call that nothing references any more
        (a reference count of ours alone), to be written again: a fresh multi-megabyte
        array costs a page fault per 4 KiB on first touch, as much as the kernel itself.
        None entries are allocated by the engine; the list is remembered for next time."""
        last = getattr(self._local, "outputs", None)
        shape = np.broadcast_shapes(*[a.shape for a in args]) if args else ()
        out = []
        for k, dtype in enumerate(stage.out_dtypes):
            buf = None if last is None else last[k]
            # NOTE: 3 = the list slot, ``buf`` and getrefcount's argument; a view, a
            # memoryview or a Tensor of the array holds one more
            if buf is None or sys.getrefcount(buf) > 3 or buf.shape != shape:
                buf = None
            out.append(buf)
        return out

    def _remember(self, results: list) -> None:
        if len({id(r) for r in results}) == len(results):
            self._local.outputs = list(results)

    @staticmethod
    def _shapes_agree(stage, args) -> bool:
        """Whether every output's own shape (its operands' broadcast) is the iteration
        shape; an output reading only a broadcast operand would not fill it."""
        shapes = [a.shape for a in args]
        first = shapes[0]
        if all(s == first for s in shapes):
            return True
        full = np.broadcast_shapes(*shapes)
        return all(np.broadcast_shapes(*[shapes[i] for i in leaves] or [()]) == full
                   for leaves in stage.leaves)

    def _unfused(self, inputs) -> list:
        if not self._warned:
            self._warned = True
            record_fallback(CpuFuser(), _t.Device("cpu"), "an output reads only broadcast "
                            "operands: this call runs unfused", self.subgraph, logging.INFO)
        return run_graph(self.subgraph, inputs)
