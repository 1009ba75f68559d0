"""FusedKernel: runs one FusionGroup's generated kernel on ember Tensors.

Per call it needs the inputs' shapes and strides: from them it works out the pieces of
chunked inputs, each value's shape (broadcasting), the outputs' shapes, and the
:class:`~ember_triton_fuser.layout.Layout`. All of that is kept per distinct
``(shape, strides)`` of the inputs (a ``CallSpec``), so a steady loop does a dict lookup,
allocates the outputs and launches. The compiled kernel comes from the compile cache,
whose key has no sizes: a new batch size builds a new CallSpec, not a new kernel.

A call the kernel cannot take (a row wider than ``codegen.MAX_BLOCK_C``, shapes that do
not broadcast) runs the group's ops unfused for that call; the reason is logged and kept
in ``ember.jit.runtime.fuser.fusion_fallbacks()`` once per distinct input layout. Unfused ops
raise the error a caller should see (a shape mismatch, in eager op's words).

Reference: PyTorch's ``torch/csrc/jit/fuser/executor.cpp`` (``runFusion``: expand the
inputs' sizes, compute the output map, launch or fall back).
"""
from __future__ import annotations

import logging

import numpy as np

from ember.dispatch import wrap
from ember.jit.runtime.fuser import BROADCASTING_CHUNK, record_fallback
from ember.jit.runtime.interpreter import run_graph

from . import cache, codegen
from .layout import broadcast_shapes, make_layout

__all__ = ["FusedKernel", "CallSpec"]

_MAX_SPECS = 64
_BLOCK = 1024           # elements per program of a pointwise kernel
_ROW_ELEMENTS = 4096    # elements per program of a row kernel (BLOCK_R * BLOCK_C)


class CallSpec:
    """What one input layout needs: per group output, the ``shapes``/``dtypes`` to
    allocate; the launch ``grid``, the scalar arguments ``scalars`` and ``constexprs``,
    ``kernel``; ``args``: per plan arg, ``(input position, byte offset)`` of its first
    element in that input (a chunk's piece is its input plus an offset: no view is cut
    per call); ``stores``: per store, ``(output position, byte offset)`` (a piece of a
    FusedConcat is its slice of the output); or ``unfused`` (a reason) when this layout
    runs unfused."""

    __slots__ = ("shapes", "dtypes", "grid", "scalars", "constexprs", "kernel",
                 "source", "unfused", "num_warps", "args", "stores")

    def __init__(self):
        self.unfused = None
        self.kernel = self.source = None


def _next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


class FusedKernel:
    """``kernel(*inputs) -> list of outputs`` for one FusionGroup (see the module doc).

    Args:
        plan: the group's :class:`~ember_triton_fuser.lowering.KernelPlan`.
        subgraph: the group's Subgraph (run unfused when a call cannot launch).
        fuser: the TritonFuser (its ``pointer``, ``capability`` and ``interpret``).
        device: the group's ember Device (for fallback records), or None.
    """

    def __init__(self, plan, subgraph, fuser, device=None):
        self.plan, self.subgraph, self.fuser, self.device = plan, subgraph, fuser, device
        self._specs: dict = {}

    def __call__(self, *inputs) -> list:
        arrays = [t._data for t in inputs]
        key = tuple((a.shape, a.strides, a.dtype) for a in arrays)
        spec = self._specs.get(key)
        if spec is None:
            spec = self._build(arrays, inputs[0]._type.backend)
            if len(self._specs) >= _MAX_SPECS:
                self._specs.clear()
            self._specs[key] = spec
        if spec.unfused is not None:
            return run_graph(self.subgraph, inputs)
        backend = inputs[0]._type.backend
        xp = backend.xp
        outs = [xp.empty(s, dtype=d) for s, d in zip(spec.shapes, spec.dtypes)]
        if spec.grid[0] > 0:
            pointer = self.fuser.pointer
            ptrs = [pointer(arrays[i], offset) for i, offset in spec.args]
            ptrs += [pointer(outs[k], offset) for k, offset in spec.stores]
            self.fuser.launch(spec.kernel[spec.grid], ptrs + spec.scalars, spec.constexprs,
                              spec.num_warps)
        return [wrap(o, backend) for o in outs]

    def _arg_arrays(self, arrays, backend) -> list:
        """The array of each plan arg (when a CallSpec is built): an input, or a piece of
        one cut by the backend's
        own ``chunk``/``split``/``split.sizes`` kernel, after broadcasting it for a
        ``prim::BroadcastingChunk`` (views: nothing is copied). Raises IndexError when an
        input splits into fewer pieces than the trace unpacked, ValueError when the
        inputs of a BroadcastingChunk do not broadcast or split into other than its
        piece count."""
        out, cut = [], {}
        for arg in self.plan.args:
            a = arrays[arg.input]
            if arg.piece is not None:
                kind, dim, param, index = arg.piece
                key = (arg.input, kind, dim, param)
                pieces = cut.get(key)
                if pieces is None:
                    pieces = cut[key] = _cut(backend, a, arrays, kind, dim, param)
                a = pieces[index]
            out.append(a)
        return out

    # ---- building a CallSpec ---------------------------------------------------------
    def _build(self, arrays, backend) -> CallSpec:
        spec = CallSpec()
        try:
            self._fill(spec, arrays, backend)
        except (ValueError, IndexError) as e:
            spec.unfused = str(e)
        if spec.unfused is not None:
            record_fallback(self.fuser, self.device,
                            f"inputs {[tuple(a.shape) for a in arrays]}: {spec.unfused}",
                            self.subgraph, logging.INFO)
        return spec

    def _fill(self, spec: CallSpec, arrays, backend) -> None:
        plan = self.plan
        if len(arrays) != plan.num_inputs:
            raise ValueError(f"the kernel takes {plan.num_inputs} inputs, got {len(arrays)}")
        views, spec.args = [], []
        for arg, view in zip(plan.args, self._arg_arrays(arrays, backend)):
            if np.dtype(view.dtype) != np.dtype(arg.dtype.numpy):
                raise ValueError(f"input {arg.input} has dtype {view.dtype}, the kernel was "
                                 f"built for {arg.dtype}")
            views.append((tuple(view.shape), tuple(s // view.itemsize for s in view.strides)))
            spec.args.append((arg.input, _address(view) - _address(arrays[arg.input])))
        shapes = {f"x{j}": v[0] for j, v in enumerate(views)}
        nokeep = set()
        for step in plan.steps:
            if step.expr is not None:
                shapes[step.name] = broadcast_shapes(*(shapes[d] for d in step.deps))
            elif step.kind in ("ember::softmax", "ember::log_softmax"):
                shapes[step.name] = shapes[step.source]
            else:
                src = shapes[step.source]
                shapes[step.name] = src[:-1] + ((1,) if step.keepdim else ())
                if not step.keepdim:
                    nokeep.add(step.name)
        shape = broadcast_shapes(*(v[0] for v in views))
        stores = [None] * len(plan.outputs)      # (shape, element strides) per store
        spec.shapes, spec.dtypes, spec.stores = [], [], [None] * len(plan.outputs)
        for r, (dim, ks) in enumerate(plan.results):
            dtype = np.dtype(plan.outputs[ks[0]].dtype.numpy)
            if dim is None:
                (k,), name = ks, plan.outputs[ks[0]].name
                out_shape = shapes[name]
                strides = _contiguous_strides(out_shape)
                stores[k] = ((out_shape + (1,), strides + (0,)) if name in nokeep
                             else (out_shape, strides))
                spec.stores[k] = (r, 0)
            else:
                piece_shapes = [shapes[plan.outputs[k].name] for k in ks]
                out_shape, starts = _concat_shape(piece_shapes, dim)
                strides = _contiguous_strides(out_shape)
                for k, piece, start in zip(ks, piece_shapes, starts):
                    stores[k] = (piece, strides)
                    spec.stores[k] = (r, start * strides[dim] * dtype.itemsize)
            spec.shapes.append(out_shape)
            spec.dtypes.append(dtype)
        layout = make_layout(shape, views + stores, plan.rowwise)
        if plan.rowwise:
            block_c = _next_pow2(layout.cols)
            if block_c > codegen.MAX_BLOCK_C:
                raise ValueError(f"rows of {layout.cols} elements do not fit one block "
                                 f"(at most {codegen.MAX_BLOCK_C})")
            block_r = max(1, _ROW_ELEMENTS // block_c)  # not from R: batch sizes share it
            spec.constexprs = {"BLOCK_R": block_r, "BLOCK_C": block_c}
            spec.grid = (-(-layout.rows // block_r) if layout.cols else 0,)
            head = [layout.rows, layout.cols]
            spec.num_warps = 4 if block_r * block_c <= 2048 else 8
        else:
            spec.constexprs = {"BLOCK": _BLOCK}
            spec.grid = (-(-layout.numel // _BLOCK),)
            head = [layout.numel]
            spec.num_warps = 4
        source, kernel = cache.get_kernel(plan, layout.pattern, layout.wide,
                                          self.fuser.capability(), self.fuser.interpret)
        scalars = head + list(layout.sizes[1:])
        for j, d in source.strides:
            scalars.append(layout.col_strides[j] if d == "c" else layout.strides[j][d])
        spec.scalars, spec.kernel, spec.source = scalars, kernel, source


def _address(a) -> int:
    """The address of element ``(0, ..., 0)`` of a CuPy (``data.ptr``) or numpy array."""
    if isinstance(a, np.ndarray):  # (a bfloat16 array has no buffer-protocol .data)
        return a.__array_interface__["data"][0]
    return a.data.ptr


def _cut(backend, a, arrays, kind: str, dim: int, param) -> list:
    """The pieces of input array ``a`` for a plan arg's ``(kind, dim, param)``."""
    if kind != BROADCASTING_CHUNK:
        return backend.kernels[kind[len("ember::"):]](a, param, dim)
    chunks, sources, n = param
    shape = broadcast_shapes(*(tuple(arrays[i].shape) for i in sources))
    pieces = backend.kernels["chunk"](backend.xp.broadcast_to(a, shape), chunks, dim)
    if len(pieces) != n:
        raise ValueError(f"chunk({chunks}, dim={dim}) of shape {list(shape)} gives "
                         f"{len(pieces)} pieces, the group reads {n}")
    return pieces


def _concat_shape(pieces: list, dim: int) -> tuple:
    """``(shape of cat(pieces, dim), start of each piece along dim)`` for piece shapes
    ``pieces``. Raises ValueError (the call runs unfused, and cat raises its own error)
    when their ranks differ or their sizes differ outside ``dim``."""
    first = pieces[0]
    starts, total = [], 0
    for p in pieces:
        if len(p) != len(first) or any(a != b for d, (a, b) in enumerate(zip(p, first))
                                       if d != dim):
            raise ValueError(f"FusedConcat along dim {dim} of pieces of shapes "
                             f"{[list(q) for q in pieces]}: they differ outside dim {dim}")
        starts.append(total)
        total += p[dim]
    return first[:dim] + (total,) + first[dim + 1:], starts


def _contiguous_strides(shape: tuple) -> tuple:
    strides, step = [], 1
    for s in reversed(shape):
        strides.append(step)
        step *= max(s, 1)
    return tuple(reversed(strides))
