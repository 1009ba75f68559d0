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
* registers are assigned by liveness (a register is reused once its value is dead;
  ``steps.py`` compiles the step closures) and allocated once per block shape and
  thread, kept across blocks and calls; a tail block
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

import numpy as np

from ember import parallel
from .program import REDUCTIONS, Dims, EngineError, Op, Program
from .steps import StepPlan, compile_steps

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
        self._plans = {True: compile_steps(program, xp, direct=True)}
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
            plan = self._plans[direct] = compile_steps(self.program, self.xp, direct=direct)
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
    def _run(self, plan: StepPlan, shape, arrays, outs, given, cache) -> None:
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

    def __init__(self, plan: StepPlan, block_shape: tuple, xp):
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
