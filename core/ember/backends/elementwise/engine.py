"""Run a :class:`~ember.backends.elementwise.program.Program` over cache-sized blocks.

A chain of numpy ufuncs on large arrays is memory-bound: each op reads and writes whole
arrays. :func:`compile_program` turns a Program into a :class:`BlockedKernel` that runs
every step on one block of about ``block_elements`` elements before the next block, with
``out=`` into preallocated scratch registers, so intermediates stay in cache; blocks run
on ember's threads (:func:`ember.parallel.parallel_for`).

How a call runs:

* the iteration shape ``S`` is the broadcast shape of the inputs. When every input is
  C-contiguous with shape ``S`` or has one element (and every output is C-contiguous), the
  arrays are flattened to ``(N,)`` (``(M, L)`` when a reduction runs over the last axis);
  otherwise they are broadcast views of ``S``. Blocks slice the outermost axis ``k`` with
  ``prod(S[k+1:]) <= block_elements`` in runs of rows, for every index of the axes before
  ``k`` (whole rows when a reduction runs over the last axis). Inputs are never copied;
  one that overlaps an ``out=`` array other than element for element is.
* block boundaries depend only on ``S`` and ``block_elements``, never on the thread count,
  and reductions over all elements combine per-block partials in block order: 1 and N
  threads give bit-identical results.
* registers are assigned by liveness (a register is reused once its value is dead) and
  allocated once per block shape and thread, kept across blocks and calls; a tail block
  uses a leading slice. A step whose value is an output of the same dtype writes straight
  into the output block.

Reference: PyTorch's ``TensorIterator`` (the broadcast iteration shape, the
contiguous fast path, ``at::parallel_for`` over a grain size) and numexpr's virtual
machine (blocks of a few thousand elements through reused temporaries).
"""
from __future__ import annotations

import math
import threading
from itertools import product
from typing import Callable, NamedTuple

import numpy as np

from ember import parallel
from .program import REDUCTIONS, Dims, EngineError, Op, Program, Value

__all__ = ["BLOCK_ELEMENTS", "PARALLEL_MIN_BLOCKS", "BlockedKernel", "compile_program"]

#: default elements a block: 128 KiB a float32 register, so the 3-4 registers a chain keeps
#: live fit a 512 KiB L2. Measured on an EPYC (512 KiB L2 a core), 1 thread, ms: the
#: 10-op chain on 1e6 float32 4.9 / 3.7 / 3.2 / 3.4 and x * y + z on 1e7 19.8 / 16.4 /
#: 15.1 / 13.2 at 8K / 16K / 32K / 64K elements (numpy with out=: 3.7 and 14.3)
BLOCK_ELEMENTS = 32768
#: fewer blocks than this run on the calling thread: handing them to the pool costs more
PARALLEL_MIN_BLOCKS = 4
_CACHED_SHAPES = 8  # layouts and scratch sets a kernel keeps; the 9th shape clears them

POINTWISE, LAST, ALL = "pointwise", Dims.LAST, Dims.ALL


class _Plan(NamedTuple):
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


def compile_program(prog: Program, xp=np, *, block_elements: int | None = None
                    ) -> "BlockedKernel":
    """Compile ``prog`` for the array namespace ``xp`` (numpy, or one with its ufuncs,
    ``copyto``, ``broadcast_to`` and ``empty``, such as CuPy). ``block_elements``: about
    how many elements a block holds (default :data:`BLOCK_ELEMENTS`).

    Raises EngineError when ``prog`` is not a Program or has no outputs, when
    ``block_elements`` is not a positive int, or when ``xp`` lacks one of its ufuncs.
    """
    if not isinstance(prog, Program):
        raise EngineError(f"compile_program: expected a Program, got {type(prog).__name__}")
    if not prog.outputs:
        raise EngineError(f"{prog.name}: the program has no outputs; add prog.output(value)")
    block = BLOCK_ELEMENTS if block_elements is None else block_elements
    if isinstance(block, bool) or not isinstance(block, int) or block < 1:
        raise EngineError(f"{prog.name}: expected block_elements >= 1 (an int), got "
                          f"{block_elements!r}")
    return BlockedKernel(prog, xp, block)


class BlockedKernel:
    """``kernel(*arrays, out=None) -> list`` of arrays, one per ``program.outputs``.

    ``arrays``: one per ``prog.input``, of exactly its dtype, shapes broadcasting to the
    iteration shape ``S`` (0-d arrays allowed). Outputs have shape ``S`` (reductions: see
    ``Program.reduce``) and their declared dtype; ``out`` may give a list with an array
    (right shape and dtype, writable) or None for each, and those arrays are returned.

    Raises EngineError on a wrong number of arrays, a wrong dtype, shapes that do not
    broadcast, or an unusable ``out``; errors of the ufuncs and callables propagate.
    Floating-point warnings are silenced (``np.errstate(all="ignore")``), as in eager
    ember. Safe to call from several threads at once (a call that finds the cached
    scratch in use allocates its own). Attributes: ``program``, ``block_elements``,
    ``xp``; :meth:`explain`, :meth:`scratch_buffers`.
    """

    def __init__(self, program: Program, xp, block_elements: int):
        self.program, self.xp, self.block_elements = program, xp, block_elements
        self._in_dtypes = program.input_dtypes
        steps = program.steps
        self._kinds = tuple((POINTWISE, False) if steps[o.value.index].op is not Op.REDUCE
                            else (steps[o.value.index].dims, steps[o.value.index].keepdim)
                            for o in program.outputs)
        self._has_last = any(k is LAST for k, _ in self._kinds)
        self._has_reduce = any(k != POINTWISE for k, _ in self._kinds)
        self._plans = {True: _compile(program, xp, direct=True)}
        self._layouts: dict = {}  # internal shape -> (block shape, blocks)
        self._scratch: dict = {}  # (direct, block shape) -> [_Scratch of thread 0, 1, ...]
        self._lock = threading.Lock()  # NOTE: held by the call using the cached scratch

    # -- the call --------------------------------------------------------------------------
    def __call__(self, *arrays, out=None) -> list:
        dts = self._in_dtypes
        try:
            if len(arrays) != len(dts):
                raise AttributeError
            for a, dt in zip(arrays, dts):
                if a.dtype != dt:
                    raise AttributeError
            shapes = [a.shape for a in arrays]
        except AttributeError:
            raise self._input_error(arrays) from None
        shape = shapes[0] if shapes and shapes.count(shapes[0]) == len(shapes) else \
            _broadcast_shapes(self.program.name, shapes)
        outs, given = self._outputs(shape, out)
        direct = True
        if given:
            arrays, direct = self._untangle(list(arrays), outs, given)
        plan = self._plans.get(direct)
        if plan is None:
            plan = self._plans[direct] = _compile(self.program, self.xp, direct=direct)
        owned = self._lock.acquire(blocking=False)  # a concurrent call gets fresh scratch
        try:
            with np.errstate(all="ignore"):
                self._run(plan, shape, arrays, outs, given,
                          self._scratch if owned else None)
        finally:
            if owned:
                self._lock.release()
        return outs

    def _input_error(self, arrays) -> EngineError:
        name, dts = self.program.name, self._in_dtypes
        if len(arrays) != len(dts):
            return EngineError(f"{name}: expected {len(dts)} input arrays of dtypes "
                               f"{[str(d) for d in dts]}, got {len(arrays)}")
        for i, (a, dt) in enumerate(zip(arrays, dts)):
            got = getattr(a, "dtype", None)
            if got is None or not hasattr(a, "shape"):
                return EngineError(f"{name}: input {i}: expected an array of dtype {dt}, got "
                                   f"{type(a).__name__}; wrap scalars with xp.asarray")
            if got != dt:
                return EngineError(f"{name}: input {i}: expected an array of dtype {dt}, got "
                                   f"{got}; convert it (a.astype) or declare "
                                   f"prog.input({str(got)!r})")
        raise AssertionError("no bad input")  # pragma: no cover

    def _outputs(self, shape, out):
        """The output arrays (given or new) and the positions of the given ones."""
        xp, kinds, progout = self.xp, self._kinds, self.program.outputs
        shapes = [shape if k == POINTWISE else ((1,) * len(shape) if keep else ())
                  if k is ALL else shape[:-1] + ((1,) if keep and shape else ())
                  for k, keep in kinds] if self._has_reduce else [shape] * len(kinds)
        if out is None:
            return [xp.empty(s, o.dtype) for s, o in zip(shapes, progout)], ()
        if not isinstance(out, (list, tuple)) or len(out) != len(shapes):
            raise EngineError(f"{self.program.name}: out: expected a list of {len(shapes)} "
                              f"arrays or None, got {out!r:.80}")
        res = []
        for j, (o, s, po) in enumerate(zip(out, shapes, progout)):
            if o is None:
                res.append(xp.empty(s, po.dtype))
                continue
            flags = getattr(o, "flags", None)
            if getattr(o, "shape", None) != s or getattr(o, "dtype", None) is None or \
                    o.dtype != po.dtype or (flags is not None and not flags.writeable):
                raise EngineError(f"{self.program.name}: out[{j}]: expected a writable array "
                                  f"of shape {s} and dtype {po.dtype}, got "
                                  f"{getattr(o, 'shape', type(o).__name__)} "
                                  f"{getattr(o, 'dtype', '')}; pass None to allocate it")
            res.append(o)
        return res, tuple(j for j, o in enumerate(out) if o is not None)

    def _untangle(self, arrays, outs, given):
        """Copy inputs that overlap an ``out=`` array; one that shares it element for
        element (an in-place op) is kept, and the plan then stores outputs only at the end
        of each block (``direct=False``). Full reductions are stored after every block has
        run, so their ``out=`` may overlap anything."""
        may_share = getattr(self.xp, "may_share_memory", np.may_share_memory)
        direct = True
        for j in given:
            o = outs[j]
            for i, a in enumerate(arrays) if self._kinds[j][0] is not ALL else ():
                if may_share(o, a):
                    if self._kinds[j][0] == POINTWISE and _same_layout(o, a):
                        direct = False
                    else:
                        arrays[i] = a.copy()
        return arrays, direct

    # -- blocks ----------------------------------------------------------------------------
    def _run(self, plan: _Plan, shape, arrays, outs, given, cache) -> None:
        xp, n_in, last = self.xp, len(arrays), self._has_last
        fast = True
        for a in arrays:
            if a.size != 1 and (a.shape != shape or not a.flags.c_contiguous):
                fast = False
                break
        if fast and given:
            fast = all(outs[j].flags.c_contiguous for j in given)
        if fast:
            S = (math.prod(shape[:-1]), shape[-1] if shape else 1) if last else \
                (math.prod(shape),)
        else:
            S = (1,) * ((2 if last else 1) - len(shape)) + shape
        block_shape, blocks = self._layouts.get(S) or self._layout(S)
        sets = cache.get((plan.direct, block_shape)) if cache is not None else None
        if sets is None:
            sets = []
            if cache is not None:
                if len(cache) >= _CACHED_SHAPES:
                    cache.clear()
                cache[plan.direct, block_shape] = sets
        fixed = [(n_in + len(outs) + 2, S[-1])]  # the count slot
        sliced = []
        for i, a in enumerate(arrays):
            if a.size == 1:
                fixed.append((i, a.reshape(())))
            elif a.shape == S:
                sliced.append((i, a))
            else:
                sliced.append((i, a.reshape(S) if fast else xp.broadcast_to(a, S)))
        for j, (o, (kind, keep)) in enumerate(zip(outs, self._kinds)):
            if kind is ALL:
                continue
            want = S if kind == POINTWISE else S[:-1]
            if o.shape != want:
                if fast:
                    o = o.reshape(want)
                else:  # NOTE: views only: a given output need not be contiguous
                    if kind is LAST and keep and shape:
                        o = o[..., 0]
                    o = o[(None,) * (len(want) - o.ndim)]
            sliced.append((n_in + j, o))
        if plan.partials:
            partials = [xp.empty(len(blocks), dt) for _, _, dt, _ in plan.partials]
            fixed += [(p[0], a) for p, a in zip(plan.partials, partials)]
        n = len(blocks)
        threads = 1 if n < PARALLEL_MIN_BLOCKS or parallel.in_parallel_region() else \
            parallel.get_num_threads()
        used = min(threads, n)  # threads with blocks: each a contiguous run of them
        while len(sets) < used:
            sets.append(_Scratch(plan, block_shape, xp))
        args = (plan.ops, n_in + len(outs), blocks, fixed, sliced)
        if threads <= 1:
            _work(*args, sets[0], 0, n)
        else:
            def task(t):
                if t < used:
                    with np.errstate(all="ignore"):  # NOTE: errstate is per thread
                        _work(*args, sets[t], t * n // used, (t + 1) * n // used)
            # NOTE: one task a thread, each a contiguous run of blocks
            parallel.parallel_for(task, threads, threads=threads)
        for (_, kind, dt, js), p in zip(plan.partials, partials) if plan.partials else ():
            total = getattr(xp, REDUCTIONS[kind]).reduce(p, dtype=dt)
            if kind == "mean":  # a float64 count, as in reduce_last
                total = xp.asarray(xp.true_divide(total, np.float64(math.prod(shape))))
                total = total.astype(dt)
            for j in js:
                xp.copyto(outs[j], total, casting="unsafe")

    def _layout(self, S: tuple) -> tuple:
        """``(block shape, [(index or None, rows), ...])`` for the internal shape ``S``;
        cached (NOTE: a race between two calls only computes it twice)."""
        B = self.block_elements
        if math.prod(S) <= B:
            lay = S, [(None, S[0])]
        else:
            k, inner = len(S) - 1, 1  # the outermost k with prod(S[k+1:]) <= B
            while k > 0 and inner * S[k] <= B:
                inner *= S[k]
                k -= 1
            if self._has_last and k > len(S) - 2:  # blocks hold whole rows
                k, inner = len(S) - 2, S[-1]
            rows = max(1, min(S[k], B // inner))
            lay = (rows,) + S[k + 1:], [
                (outer + (slice(r, min(r + rows, S[k])),), min(rows, S[k] - r))
                for outer in product(*map(range, S[:k])) for r in range(0, S[k], rows)]
        if len(self._layouts) >= _CACHED_SHAPES:
            self._layouts.clear()
        self._layouts[S] = lay
        return lay

    # -- introspection ---------------------------------------------------------------------
    def scratch_buffers(self) -> dict:
        """``{block shape: [registers of thread 0, of thread 1, ...]}`` as cached now (the
        direct plan): the arrays a later call with that block shape reuses."""
        return {shape: [s.buffers for s in sets]
                for (direct, shape), sets in self._scratch.items() if direct}

    def explain(self) -> str:
        """The compiled steps, one a line, over the slots ``in<i>``, ``out<j>``,
        ``r<n>`` (registers), ``call<n>``, ``k<n>`` (constants) and ``p<n>`` (partials)."""
        plan = self._plans[True]
        regs = ", ".join(f"{plan.names[s]} {dt}{' (row)' if row else ''}"
                         for s, dt, row in plan.registers)
        return "\n".join([f"{self!r}", f"  registers: {regs or 'none'}"] +
                         [f"  {line}" for line in plan.lines])

    def __repr__(self) -> str:
        plan = self._plans[True]
        n = len(plan.registers)
        return (f"<BlockedKernel {self.program.name!r}: {len(plan.ops)} steps, {n} "
                f"register{'s' * (n != 1)}, block_elements={self.block_elements}>")


def _work(ops, block_slot, blocks, fixed, sliced, scratch, lo, hi) -> None:
    """Run blocks ``lo:hi`` on one thread's scratch: each gets a fresh ``env`` from the
    scratch template, its slices of the arrays, and every step in order."""
    for b in range(lo, hi):
        idx, rows = blocks[b]
        env = scratch.env(rows)
        for s, v in fixed:
            env[s] = v
        if idx is None:
            for s, v in sliced:
                env[s] = v
        else:
            for s, v in sliced:
                env[s] = v[idx]
        env[block_slot] = b
        for op in ops:
            op(env)


class _Scratch:
    """The registers of one thread for one block shape, and the ``env`` templates built
    on them for each row count seen (the full block and tails: leading slices)."""

    def __init__(self, plan: _Plan, block_shape: tuple, xp):
        self.block_shape, self._plan = block_shape, plan
        self.buffers = tuple(xp.empty(block_shape[:-1] if row else block_shape, dt)
                             for _, dt, row in plan.registers)
        self._templates: dict = {}

    def env(self, rows: int) -> list:
        template = self._templates.get(rows)
        if template is None:
            plan, full = self._plan, rows == self.block_shape[0]
            template = [None] * plan.n_slots
            for s, c in plan.consts:
                template[s] = c
            for (s, _, _), buf in zip(plan.registers, self.buffers):
                template[s] = buf if full else buf[:rows]
            template[plan.base + 1] = (rows,) + self.block_shape[1:]
            self._templates[rows] = template
        return template.copy()


def _broadcast_shapes(name: str, shapes: list) -> tuple:
    """numpy's broadcasting rule on shapes; EngineError naming them when they clash."""
    nd = max(map(len, shapes), default=0)
    res = [1] * nd
    for s in shapes:
        for i, d in enumerate(s, nd - len(s)):
            if d != res[i]:
                if res[i] != 1 and d != 1:
                    raise EngineError(f"{name}: input shapes {[tuple(s) for s in shapes]} do "
                                      f"not broadcast to one iteration shape")
                if res[i] == 1:
                    res[i] = d
    return tuple(res)


def _same_layout(a, b) -> bool:
    """Whether ``a`` and ``b`` see the same elements at the same positions."""
    def ptr(x):
        iface = getattr(x, "__array_interface__", None)
        return iface["data"][0] if iface else getattr(getattr(x, "data", None), "ptr", None)
    return a.shape == b.shape and a.strides == b.strides and ptr(a) == ptr(b)


def _compile(prog: Program, xp, direct: bool) -> _Plan:
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
    return _Plan(tuple(ops), len(names), tuple(regs), tuple(consts), finals, direct, base,
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
