"""The step list of a blocked kernel: a Program compiled to closures over one block.

:func:`compile_steps` does what ``engine.py`` runs on every block: dead-code elimination,
liveness, register assignment (a register is reused once its value is dead), and one
closure ``op(env)`` per step, reading its arguments from slots of the per-block ``env``
list and writing its result with ``out=`` into its register (or the output block itself).
``where(cond, x, 0)`` on numpy is a branch-free select of bit patterns (``_blend_where``).

Reference: numexpr's virtual machine (registers reused across a program's opcodes);
PyTorch's ``TensorIterator`` loops write through ``out`` the same way.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from .program import REDUCTIONS, Dims, EngineError, Op, Program, Value

__all__ = ["StepPlan", "compile_steps"]


class StepPlan(NamedTuple):
    """The compiled step list of one Program; slots index the per-block ``env`` list:
    inputs, outputs, then ``block`` (block index), ``shape`` (block shape), ``count``
    (last-axis length), then registers, call results, constants and partials."""
    ops: tuple[Callable, ...]
    n_slots: int
    registers: tuple[tuple[int, np.dtype, bool], ...]  # (slot, dtype, row-shaped)
    consts: tuple[tuple[int, object], ...]
    partials: tuple[tuple[int, str, np.dtype, tuple], ...]  # (slot, kind, dtype, outputs)
    direct: bool
    base: int  # the block slot; shape = base + 1, count = base + 2
    names: dict  # slot -> name, for explain()
    lines: tuple[str, ...]


def compile_steps(prog: Program, xp, direct: bool) -> StepPlan:
    """Dead-code elimination, liveness, register assignment and the step closures.

    ``direct``: a step whose value is an output of its dtype writes into the output block
    itself; without it (an input is also an ``out=`` array) outputs are stored at the end
    of each block. Last-axis reductions always write into their output when dtypes match.
    """
    steps, outs = prog.steps, prog.outputs
    n_in, n_out = len(prog.input_dtypes), len(outs)
    base = n_in + n_out
    for fn in ("copyto", "broadcast_to", "empty"):
        if not hasattr(xp, fn):
            raise EngineError(f"{prog.name}: the array namespace {xp!r:.60} lacks {fn}")
    live, stack = set(), [o.value.index for o in outs]
    while stack:  # NOTE: steps are in build order, which is topological
        i = stack.pop()
        if i not in live:
            live.add(i)
            stack.extend(a.index for a in steps[i].args if isinstance(a, Value))
    order = sorted(live)
    last = {}  # value -> position of its last reader; outputs are read at the end
    for p, i in enumerate(order):
        last.update((a.index, p) for a in steps[i].args if isinstance(a, Value))
    last.update((o.value.index, len(order)) for o in outs)
    for i in reversed(order):  # a callable may return a view of an argument: keep it alive
        if steps[i].op is Op.CALL:
            for a in steps[i].args:
                if isinstance(a, Value):
                    last[a.index] = max(last[a.index], last[i])
    written = {}  # value -> the output it is computed into
    for j, o in enumerate(outs):
        s = steps[o.value.index]
        if o.value.index not in written and o.dtype == s.value.dtype and (
                (s.op is Op.REDUCE and s.dims is Dims.LAST) or
                (direct and s.op in (Op.CAST, Op.UFUNC, Op.WHERE))):
            written[o.value.index] = j
    names = {**{i: f"in{i}" for i in range(n_in)}, **{n_in + j: f"out{j}" for j in range(n_out)},
             base: "block", base + 1: "shape", base + 2: "count"}
    slot_of, regs, consts, partials, free, dying, ops, lines = {}, [], [], {}, {}, {}, [], []

    def new_slot(name: str) -> int:
        names[len(names)] = name
        return len(names) - 1

    def register(i: int, dt, row: bool) -> int:
        key = (dt, row)
        r = free[key].pop() if free.get(key) else None
        if r is None:
            r = new_slot(f"r{len(regs)}")
            regs.append((r, dt, row))
        dying.setdefault(last[i], []).append((key, r))
        return r

    def release(p: int) -> None:
        for key, r in dying.pop(p, ()):
            free.setdefault(key, []).append(r)

    def arg_slot(a) -> int:
        if isinstance(a, Value):
            return slot_of[a.index]
        consts.append((new_slot(repr(a)[:40]), a))
        return consts[-1][0]

    for p, i in enumerate(order):
        s = steps[i]
        if s.op is Op.INPUT:
            slot_of[i] = s.target
            continue
        args = [arg_slot(a) for a in s.args]
        if s.op is not Op.WHERE:  # the others may write over an argument that dies here
            release(p)
        if i in written:
            o = n_in + written[i]
        elif s.op is Op.REDUCE and s.dims is Dims.ALL:
            o = partials[i] = new_slot(f"p{len(partials)}")
        else:
            o = register(i, s.value.dtype, s.op is Op.REDUCE)
        release(p)
        slot_of[i] = new_slot(f"call{p}") if s.op is Op.CALL else o
        ops.append(_make_op(s, xp, args, o, slot_of[i], base, prog.name))
        via = f" (copied into {names[o]} when cast)" if s.op is Op.CALL else ""
        lines.append(f"{names[slot_of[i]]} = {_text(s, [names[a] for a in args])} : "
                     f"{s.value.dtype}{via}")
    for j, o in enumerate(outs):
        src, i = slot_of[o.value.index], o.value.index
        if src != n_in + j and i not in partials:
            ops.append(_store(xp, n_in + j, src))
            lines.append(f"out{j} = store({names[src]}) : {o.dtype}")
    finals = tuple((slot, steps[i].target, steps[i].value.dtype,
                    tuple(j for j, o in enumerate(outs) if o.value.index == i))
                   for i, slot in partials.items())
    lines += [f"out{j} = combine {kind}({names[slot]}) : {outs[j].dtype}"
              for slot, kind, _, js in finals for j in js]
    return StepPlan(tuple(ops), len(names), tuple(regs), tuple(consts), finals, direct, base,
                 names, tuple(lines))


def _text(s, args: list) -> str:
    if s.op is Op.UFUNC:
        return f"{s.target.__name__}({', '.join(args)})"
    if s.op is Op.CALL:
        fn = s.target
        return f"call {getattr(fn, '__qualname__', None) or fn!r}({', '.join(args)})"
    if s.op is Op.REDUCE:
        return f"{s.target}({args[0]}, dims={s.dims.value})"
    return f"{s.op.value}({', '.join(args)})"


def _store(xp, dst: int, src: int) -> Callable:
    copyto = xp.copyto
    return lambda env: copyto(env[dst], env[src], casting="unsafe")


def _make_op(s, xp, a: list, o: int, c: int, base: int, name: str) -> Callable:
    """The closure ``op(env)`` running step ``s`` on one block: arguments in slots ``a``,
    result into slot ``o`` (a call's result is the value of slot ``c``)."""
    copyto, dt = xp.copyto, s.value.dtype
    if s.op is Op.CAST:
        src = a[0]
        return lambda env: copyto(env[o], env[src], casting="unsafe")
    if s.op is Op.UFUNC:
        f = s.target if xp is np else getattr(xp, s.target.__name__, None)
        if f is None:
            raise EngineError(f"{name}: the array namespace {xp!r:.60} has no ufunc "
                              f"{s.target.__name__!r}")
        return _ufunc_op(f, a, o, unsafe=s.loop_dtype != dt)
    if s.op is Op.WHERE:
        blend = _blend_where(s, xp, a, o)
        if blend is not None:
            return blend
        cond, x, y = a
        select = xp.where

        def where(env):
            # NOTE: xp.where and one copy: a masked copyto (copyto(out, x, where=cond))
            # is 2-3 x slower on numpy 2
            copyto(env[o], select(env[cond], env[x], env[y]), casting="unsafe")
        return where
    shape_slot = base + 1
    if s.op is Op.CALL:
        fn = s.target

        def call(env):
            res = fn(*[env[i] for i in a])
            if getattr(res, "shape", None) == env[shape_slot] and res.dtype == dt:
                env[c] = res
            else:  # a scalar, a broadcastable result or another dtype
                copyto(env[o], res, casting="unsafe")
                env[c] = env[o]
        return call
    red, broadcast_to, src = getattr(xp, REDUCTIONS[s.target]).reduce, xp.broadcast_to, a[0]
    if s.dims is Dims.ALL:
        def reduce_all(env):
            x, shape = env[src], env[shape_slot]
            if x.shape != shape:  # a one-element input
                x = broadcast_to(x, shape)
            env[o][env[base]] = red(x, axis=None, dtype=dt)
        return reduce_all
    divide, mean = xp.divide, s.target == "mean"

    def reduce_last(env):
        x, shape, out = env[src], env[shape_slot], env[o]
        if x.shape != shape:
            x = broadcast_to(x, shape)
        red(x, axis=-1, dtype=dt, out=out)
        if mean:  # NOTE: a float64 count: a float16 one overflows past 65504
            divide(out, np.float64(env[base + 2]), out=out)
    return reduce_last


def _is_zero_bits(c) -> bool:
    """Whether constant ``c`` is a real number whose bit pattern is all zeros (not -0.0)."""
    return isinstance(c, (bool, int, float, np.integer, np.floating)) and c == 0 and \
        not np.signbit(c)


def _blend_where(s, xp, a: list, o: int):
    """A branch-free ``where(cond, x, 0)`` / ``where(cond, 0, y)`` on numpy, or None: the
    kept branch's bit pattern times the mask as uint8 is the pattern or 0, one ufunc pass
    (numpy's where branches per element: 3-6 x slower on unpredictable masks such as
    relu's backward). Exact for NaN, inf and -0.0 (bits are copied, not computed)."""
    _, x_arg, y_arg = s.args
    dt = s.value.dtype
    uint = {2: np.uint16, 4: np.uint32, 8: np.uint64}.get(dt.itemsize)
    if xp is not np or uint is None or dt.kind not in "fiu":
        return None
    cond, x, y = a
    if isinstance(x_arg, Value) and x_arg.dtype == dt and _is_zero_bits(y_arg):
        keep, invert = x, False
    elif isinstance(y_arg, Value) and y_arg.dtype == dt and _is_zero_bits(x_arg):
        keep, invert = y, True
    else:
        return None
    multiply, logical_not, u8 = np.multiply, np.logical_not, np.uint8

    def blend(env):
        c = env[cond]
        if invert:
            c = logical_not(c)
        multiply(env[keep].view(uint), c.view(u8), out=env[o].view(uint))
    return blend


def _ufunc_op(f, a: list, o: int, unsafe: bool) -> Callable:
    """``f(*args, out=env[o])``; ``unsafe``: the loop's dtype is not the value's, so the
    store casts (as ``astype``)."""
    if unsafe:
        return lambda env: f(*[env[i] for i in a], out=env[o], casting="unsafe")
    if len(a) == 1:
        x, = a
        return lambda env: f(env[x], out=env[o])
    if len(a) == 2:
        x, y = a
        return lambda env: f(env[x], env[y], out=env[o])
    return lambda env: f(*[env[i] for i in a], out=env[o])
