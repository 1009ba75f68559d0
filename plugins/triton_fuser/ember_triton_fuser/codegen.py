"""Code generation: a KernelPlan plus a stride pattern -> the source of one Triton kernel.

A pointwise kernel walks the merged iteration space in blocks of ``BLOCK`` elements::

    @triton.jit
    def fused_1f2e3d(p_x0, p_x1, p_y0, N, x1_s0, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < N
        c0 = offs
        x0 = tl.load(p_x0 + c0, mask=mask, other=0)
        x1 = tl.load(p_x1 + c0 * x1_s0, mask=mask, other=0)
        v0 = x0 * x1
        v1 = libdevice.tanh(v0)
        tl.store(p_y0 + c0, v1.to(tl.float32), mask=mask)

A row kernel (one with a reduction over the last dimension) takes ``BLOCK_R`` rows of
``BLOCK_C >= C`` columns per program, so a row's reduction happens in registers
(``tl.sum(..., axis=1, keep_dims=True)``) and later ops broadcast the ``(BLOCK_R, 1)``
result back over the row, as in softmax and layer_norm. An operand whose column stride
is 0 is loaded as ``(BLOCK_R, 1)`` ("narrow"), and so is every value computed from
narrow values only.

Coordinates come from the flat index by ``%`` and ``//`` over the merged sizes (runtime
arguments); an operand's offset adds ``coordinate * stride`` for its non-zero strides,
with a stride of 1 written as a bare coordinate. float16/bfloat16 are loaded into
float32, bools from bytes; each store casts to the output's dtype.

Reference: PyTorch's ``torch/csrc/jit/fuser/cuda/resource_strings.h`` (the kernel
template) and Triton's fused-softmax tutorial (rows held in one block).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ember import types as _t

from .ops import compute_dtype, triton_type

__all__ = ["KernelSource", "generate", "MAX_BLOCK_C"]

#: the widest row a row kernel holds in one block; wider rows run unfused
MAX_BLOCK_C = 16384
_INT_MIN = {_t.uint8: 0, _t.int8: -2 ** 7, _t.int16: -2 ** 15, _t.int32: -2 ** 31,
            _t.int64: -2 ** 63}
_INT_MAX = {_t.uint8: 2 ** 8 - 1, _t.int8: 2 ** 7 - 1, _t.int16: 2 ** 15 - 1,
            _t.int32: 2 ** 31 - 1, _t.int64: 2 ** 63 - 1}


@dataclass(frozen=True)
class KernelSource:
    """Generated source: ``text`` defines ``@triton.jit def name(...)``; ``strides`` lists
    the runtime stride arguments in signature order as ``(operand, dim)`` (``dim`` "c"
    for a row kernel's column stride; operands are the plan's args, then its outputs);
    ``num_sizes`` is how many merged sizes follow ``N`` (or ``R, C``)."""

    text: str
    name: str
    strides: tuple
    num_sizes: int


def _load_cast(dtype) -> str:
    if dtype == _t.bool_:
        return " != 0"
    if dtype in (_t.float16, _t.bfloat16):
        return ".to(tl.float32)"
    return ""


def _store_type(dtype) -> str:
    return "tl.int8" if dtype == _t.bool_ else triton_type(dtype)


def _cast(expr: str, from_dtype, to_dtype) -> str:
    if compute_dtype(from_dtype) == compute_dtype(to_dtype):
        return expr
    return f"{expr}.to({triton_type(compute_dtype(to_dtype))})"


def generate(plan, pattern: tuple, wide: bool) -> KernelSource:
    """The source of ``plan``'s kernel for the layout ``pattern`` (``Layout.pattern``:
    per operand, stride codes per merged dim, then the column code for a row kernel) and
    index width ``wide``. The kernel's name hashes the plan and pattern."""
    operands = [f"x{i}" for i in range(len(plan.args))] + \
               [f"y{i}" for i in range(len(plan.outputs))]
    ndims = len(pattern[0]) - (1 if plan.rowwise else 0) if pattern else 1
    stride_args, params = [], []
    for j, (name, codes) in enumerate(zip(operands, pattern)):
        dims = list(range(ndims)) + (["c"] if plan.rowwise else [])
        for d, code in zip(dims, codes):
            if code == 2:
                stride_args.append((j, d))
                params.append(f"{name}_s{d}")
    sizes = [f"d{d}" for d in range(1, ndims)]
    head = ["R", "C"] if plan.rowwise else ["N"]
    consts = ["BLOCK_R: tl.constexpr", "BLOCK_C: tl.constexpr"] if plan.rowwise else \
        ["BLOCK: tl.constexpr"]
    digest = hashlib.sha1(f"{plan.canonical}|{pattern}|{wide}".encode()).hexdigest()[:12]
    name = f"fused_{'row' if plan.rowwise else 'pw'}_{digest}"
    signature = [f"p_{o}" for o in operands] + head + sizes + params + consts
    body = []
    emit = body.append
    index = "rows" if plan.rowwise else "offs"
    if plan.rowwise:
        pid = "tl.program_id(0).to(tl.int64)" if wide else "tl.program_id(0)"
        emit(f"rows = {pid} * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]")
        emit("cols = tl.arange(0, BLOCK_C)[None, :]")
        emit("rmask = rows < R")
        emit("mask = rmask & (cols < C)")
    else:
        pid = "tl.program_id(0).to(tl.int64)" if wide else "tl.program_id(0)"
        emit(f"offs = {pid} * BLOCK + tl.arange(0, BLOCK)")
        emit("mask = offs < N")
    if ndims == 1:
        emit(f"c0 = {index}")
    else:
        emit(f"i = {index}")
        for d in range(ndims - 1, 0, -1):
            emit(f"c{d} = i % d{d}")
            emit(f"i = i // d{d}")
        emit("c0 = i")

    def offset(j: int, rows_only: bool = False) -> tuple:
        codes = pattern[j]
        terms = []
        for d in range(ndims):
            if codes[d] == 1:
                terms.append(f"c{d}")
            elif codes[d] == 2:
                terms.append(f"c{d} * {operands[j]}_s{d}")
        narrow = False
        if plan.rowwise:
            col = 0 if rows_only else codes[-1]
            if col == 1:
                terms.append("cols")
            elif col == 2:
                terms.append(f"cols * {operands[j]}_sc")
            else:
                narrow = True
        if not terms:
            terms.append(f"{index} * 0")
        return " + ".join(terms), narrow

    narrow: set = set()
    for j, arg in enumerate(plan.args):
        off, is_narrow = offset(j)
        m = "rmask" if is_narrow else "mask"
        emit(f"x{j} = tl.load(p_x{j} + ({off}), mask={m}, other=0){_load_cast(arg.dtype)}")
        if is_narrow:
            narrow.add(f"x{j}")
    dtypes = plan.dtypes
    for step in plan.steps:
        if step.expr is not None:
            emit(f"{step.name} = {step.expr}")
            if plan.rowwise and step.deps and all(d in narrow for d in step.deps):
                narrow.add(step.name)
            continue
        _reduction(emit, step, dtypes[step.source], step.source in narrow)
        if step.kind not in ("ember::softmax", "ember::log_softmax") or step.source in narrow:
            narrow.add(step.name)
    for k, out in enumerate(plan.outputs):
        # a (BLOCK_R, 1) value is stored once per row
        off, _ = offset(len(plan.args) + k, rows_only=out.name in narrow)
        m = "rmask" if out.name in narrow else "mask"
        emit(f"tl.store(p_y{k} + ({off}), {out.name}.to({_store_type(out.dtype)}), "
             f"mask={m})")
    text = (f"@triton.jit\ndef {name}({', '.join(signature)}):\n"
            + "".join(f"    {line}\n" for line in body))
    return KernelSource(text, name, tuple(stride_args), len(sizes))


def _reduction(emit, step, src_dtype, narrow: bool) -> None:
    """Emit the statements of a reduction/row step (see the module docstring)."""
    v, kind, out = step.name, step.kind, step.dtype
    s = _cast(step.source, src_dtype, out)
    ctype = compute_dtype(out)
    if narrow:      # a (BLOCK_R, 1) value: the reduction runs over a size-1 dimension
        if kind == "ember::softmax":
            emit(f"{v} = tl.exp({s} - {s}) / tl.exp({s} - {s})")
        elif kind == "ember::log_softmax":
            emit(f"{v} = {s} - {s}")
        else:
            emit(f"{v} = {s}")
        return
    if kind in ("ember::sum", "ember::mean"):
        zero = "0.0" if ctype.is_floating_point else "0"
        emit(f"{v} = tl.sum(tl.where(mask, {s}, {zero}), axis=1, keep_dims=True)")
        if kind == "ember::mean":
            emit(f"{v} = {v} / C")
        return
    if kind in ("ember::amax", "ember::amin"):
        fn = "tl.max" if kind == "ember::amax" else "tl.min"
        if ctype.is_floating_point:
            fill = 'float("-inf")' if kind == "ember::amax" else 'float("inf")'
        else:
            fill = str(_INT_MIN[ctype] if kind == "ember::amax" else _INT_MAX[ctype])
        emit(f"{v} = {fn}(tl.where(mask, {s}, {fill}), axis=1, keep_dims=True)")
        if ctype.is_floating_point:   # numpy's amax/amin propagate NaN
            emit(f"{v} = tl.where(tl.max(tl.where(mask & ({s} != {s}), 1, 0), axis=1, "
                 f"keep_dims=True) > 0, float(\"nan\"), {v})")
        return
    emit(f"{v}_m = tl.max(tl.where(mask, {s}, float(\"-inf\")), axis=1, keep_dims=True)")
    emit(f"{v}_e = tl.where(mask, tl.exp({s} - {v}_m), 0.0)")
    if kind == "ember::softmax":
        emit(f"{v} = {v}_e / tl.sum({v}_e, axis=1, keep_dims=True)")
    else:
        emit(f"{v} = {s} - {v}_m - tl.log(tl.sum({v}_e, axis=1, keep_dims=True))")
