"""Throughput of ember's kernels against torch at real sizes (issue 30: "every kernel within
reach of torch").

What it measures: for each case of ``_throughput_cases.py`` (~500 ops of
native_functions.yaml and of the nn.functional / special / linalg front ends that torch
also has, in families: unary, special, binary, scalar, integer, reduction, activation,
shape/index, blas, linalg, nn, loss, random, factory, inplace), at about 1e3 and 1e6
elements (vectors for pointwise ops; (1000, 1000) rows with the op over -1 for row-wise
ops and reductions; (B, n, n) batches for linalg; (N, C, H, W) images for conv, pooling
and norms; losses with matching targets), the time of the forward call and of forward +
backward (``out.sum().backward()`` on the first output that requires grad, ``.grad``
reset to None before each call) in ember and in torch, and their ratio ember / torch.

How: both libraries run in this one process at the same thread count
(``ember.set_num_threads(n)`` and ``torch.set_num_threads(n)``; ``--threads 1`` by
default, ``--threads default`` for the usable cores), on the same float32 inputs, timed in
turn round after round (``_timing.interleaved_capped``) so that load from other processes
hits both alike. A time is the minimum over rounds of the wall-clock time per call
(``time.perf_counter``), a round being as many calls as fill ~2 ms, at most 5 rounds and
0.5 s a case after the first round; a call slower than that 0.5 s is timed once (the check
call below), as the run would otherwise take hours. Before timing, each case runs once in
each library and the results are compared: a shape (or dtype kind) difference is flagged
"MISMATCH shape" and left out of the means; a value difference beyond rtol 1e-3 (atol
1e-4 x max |torch|, at least 1e-5) is flagged "mismatch value" and kept (random ops and
sign-ambiguous factorisations compare shapes only); in fwd+bwd mode the gradients are
compared the same way (an absent gradient counts as zeros). An exception in either
library gives an error row naming the library and the exception type; the run goes on.

Output: the rows sorted worst ratio first (``!!`` marks a ratio over 2), the error rows,
then the geometric mean of the ratios per family for each size and mode, and overall.
The budget of the issue: no op over 2 x torch at 1e6 or 1e3, forward or forward +
backward, at equal threads; the geometric mean at or below 1.0 x.

Run (the full default run, ~1760 rows, took 12 minutes on a shared 2-core machine; most of
it is ember's slowest special functions at 1e6, seconds a call)::

    python benchmarks/bench_throughput.py                        # everything, 1 thread
    python benchmarks/bench_throughput.py --family activation --family unary
    python benchmarks/bench_throughput.py --op 'conv|pool' --size 1e6 --mode bwd
    python benchmarks/bench_throughput.py --threads default --csv /tmp/throughput.csv --top 50
    python benchmarks/bench_throughput.py --list                 # the cases, not timed

Like the other benchmarks it asserts nothing: a shared machine is noisy, so re-run a
suspicious row alone with ``--op``.
"""
from __future__ import annotations

import argparse
import csv
import gc
import math
import os
import re
import resource
import sys
import time
from typing import NamedTuple, Optional

import numpy as np

import ember
import torch
from _throughput_cases import CASES, SIZES, SKIPPED, Diff, Gen
from _timing import interleaved_capped

FLAG = 2.0  # ratio over which a row is flagged (the budget)
_SLOW = 0.05  # s: a check call this slow also serves as the warm-up call that sizes rounds
MODES = {"fwd": "fwd", "bwd": "fwd+bwd"}
LIBS = (("ember", ember), ("torch", torch))


class Row(NamedTuple):
    op: str
    family: str
    size: str
    mode: str
    shape: str
    ember_ms: Optional[float]
    torch_ms: Optional[float]
    note: str

    @property
    def ratio(self) -> Optional[float]:
        if self.ember_ms is None or self.torch_ms is None or self.torch_ms <= 0:
            return None
        return self.ember_ms / self.torch_ms

    @property
    def counted(self) -> bool:
        """In the geometric means: both timed and computing the same shapes."""
        return self.ratio is not None and "MISMATCH" not in self.note


def _tensors(L, args, grad: bool) -> tuple:
    """The arguments for library ``L``: arrays become tensors (a Diff one requires grad in
    fwd+bwd mode); the leaves that require grad come back too."""
    out, leaves = [], []
    for a in args:
        if isinstance(a, Diff):
            t = L.from_numpy(a.a.copy())
            if grad:
                t.requires_grad_(True)
                leaves.append(t)
            out.append(t)
        elif isinstance(a, np.ndarray):
            out.append(L.from_numpy(a.copy()))
        else:
            out.append(a)
    return out, leaves


def _first_grad_output(out):
    if isinstance(out, (tuple, list)):
        for o in out:
            if getattr(o, "requires_grad", False):
                return o
        raise TypeError("no output requires grad")
    return out


def _callable(call, L, inputs, leaves, bwd: bool):
    if not bwd:
        return lambda: call(L, *inputs)

    def fwd_bwd():
        for t in leaves:
            t.grad = None
        _first_grad_output(call(L, *inputs)).sum().backward()
        # NOTE: no gradient (None) is compared as zeros
        return [L.zeros_like(t) if t.grad is None else t.grad for t in leaves]
    return fwd_bwd


def _arrays(out) -> list:
    """The results of a call as numpy arrays, tuples and named tuples flattened."""
    if isinstance(out, (tuple, list)):
        return [a for o in out for a in _arrays(o)]
    if torch.is_tensor(out):  # force: torch's gradients of sgn etc. are ZeroTensors
        return [np.asarray(out.detach().numpy(force=True))]
    if ember.is_tensor(out):
        return [np.asarray(out.detach().numpy())]
    return [np.asarray(out)]


def compare(e, t, check: str) -> str:
    """'' when ember's results ``e`` agree with torch's ``t``, else a short marker."""
    if check == "none":
        return ""
    ea, ta = _arrays(e), _arrays(t)
    if len(ea) != len(ta):
        return f"MISMATCH shape ({len(ea)} vs {len(ta)} outputs)"
    worst = 0.0
    for a, b in zip(ea, ta):
        if a.shape != b.shape:
            return f"MISMATCH shape {a.shape} vs {b.shape}"
        if (a.dtype.kind == "b") != (b.dtype.kind == "b") or (
                (a.dtype.kind == "f") != (b.dtype.kind == "f")):
            return f"MISMATCH dtype {a.dtype} vs {b.dtype}"
        if check != "value" or a.size == 0:
            continue
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        finite = np.isfinite(b64)
        scale = float(np.max(np.abs(b64[finite]))) if finite.any() else 1.0
        # NOTE: the 1e-5 floor: gradients that are zero in exact arithmetic (batch_norm's
        # input under a sum) come out as float32 noise in both libraries
        with np.errstate(invalid="ignore"):
            err = np.abs(a64 - b64) - 1e-3 * np.abs(b64) - 1e-4 * scale - 1e-5
        err = np.where(np.isnan(a64) & np.isnan(b64), 0.0, err)
        err = np.where(np.isinf(b64) & (a64 == b64), 0.0, err)
        if np.any(np.isnan(err)) or np.any(err > 0):
            bad = np.nanmax(np.abs(a64 - b64)) if not np.all(np.isnan(err)) else np.nan
            worst = max(worst, float(bad / max(scale, 1e-30)))
            if np.isnan(bad):
                worst = math.inf
    return f"mismatch value (max err {worst:.1e} x max|torch|)" if worst else ""


def _err(e: BaseException) -> str:
    msg = " ".join(str(e).split())
    return f"{type(e).__name__}: {msg[:70]}" if msg else type(e).__name__


def run_case(case, size: str, bwd: bool, args) -> Row:
    mode = MODES["bwd" if bwd else "fwd"]
    shape = ""
    try:
        built = case.build(Gen(size))
        first = next((a.a if isinstance(a, Diff) else a for a in built
                      if isinstance(a, (Diff, np.ndarray))), None)
        shape = "x".join(map(str, first.shape)) if first is not None else str(built[0])
    except Exception as e:  # a broken builder is a bug of the table: say so, go on
        return Row(case.op, case.family, size, mode, shape, None, None, f"build error: {_err(e)}")
    fns, results, firsts, errors = {}, {}, {}, []
    for name, L in LIBS:
        call = case.torch_call if (name == "torch" and case.torch_call) else case.call
        try:
            inputs, leaves = _tensors(L, built, bwd)
            fn = _callable(call, L, inputs, leaves, bwd)
            t0 = time.perf_counter()
            results[name] = fn()
            firsts[name] = time.perf_counter() - t0
            if firsts[name] > _SLOW:  # the first call may pay one-time costs (an import):
                t0 = time.perf_counter()  # a slow case is timed from its second call
                fn()
                firsts[name] = time.perf_counter() - t0
            fns[name] = fn
        except Exception as e:
            errors.append(f"{name} error: {_err(e)}")
    note = "; ".join(errors)
    if not errors:
        try:
            note = compare(results["ember"], results["torch"], case.check)
        except Exception as e:
            note = f"check error: {_err(e)}"
    del results
    times = {}
    if fns:
        try:
            times = interleaved_capped(fns, repeat=args.repeat, min_time=args.min_time,
                                       cap=args.cap, first={k: v for k, v in firsts.items()
                                                            if v > _SLOW})
        except Exception as e:
            note = (note + "; " if note else "") + f"timing error: {_err(e)}"
    ms = {k: (v / 1e3 if k in fns and math.isfinite(v) else None) for k, v in times.items()}
    return Row(case.op, case.family, size, mode, shape, ms.get("ember"), ms.get("torch"), note)


def select(args) -> list:
    fams = {f for spec in args.family or [] for f in spec.split(",") if f}
    unknown = fams - {c.family for c in CASES}
    if unknown:
        raise SystemExit(f"bench_throughput: unknown family {sorted(unknown)}; expected one "
                         f"of {sorted({c.family for c in CASES})}")
    pat = None
    if args.op:
        try:
            pat = re.compile(args.op)
        except re.error:
            pat = re.compile(re.escape(args.op))
    return [c for c in CASES if (not fams or c.family in fams)
            and (pat is None or pat.search(c.op))]


def _fmt(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.4g}"


def print_table(rows: list, top: Optional[int]) -> None:
    timed = sorted((r for r in rows if r.ratio is not None), key=lambda r: -r.ratio)
    if top:
        timed = timed[:top]
    head = ("op", "family", "size", "mode", "shape", "ember ms", "torch ms", "ratio", "note")
    table = [head] + [(r.op, r.family, r.size, r.mode, r.shape, _fmt(r.ember_ms),
                       _fmt(r.torch_ms), f"{r.ratio:.2f}" + (" !!" if r.ratio > FLAG else ""),
                       r.note) for r in timed]
    widths = [max(len(t[i]) for t in table) for i in range(len(head) - 1)]
    for t in table:
        print("  ".join(c.ljust(w) if i < 5 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(t, widths))) + "  " + t[-1])
    failed = [r for r in rows if r.ratio is None]
    if failed:
        print(f"\n{len(failed)} rows without a ratio (errors):")
        for r in failed:
            print(f"  {r.op}  [{r.family}, {r.size}, {r.mode}]  ember {_fmt(r.ember_ms)} ms, "
                  f"torch {_fmt(r.torch_ms)} ms: {r.note}")


def _gmean(vals: list) -> str:
    return f"{math.exp(sum(map(math.log, vals)) / len(vals)):.2f} ({len(vals)})" if vals else "-"


def print_summary(rows: list) -> None:
    cols = [(s, m) for s in SIZES for m in MODES.values()
            if any(r.size == s and r.mode == m for r in rows)]
    fams = sorted({r.family for r in rows})
    print("\ngeometric mean of ember/torch (number of rows); MISMATCH shape rows left out")
    head = ["family"] + [f"{s} {m}" for s, m in cols] + ["all"]
    lines = [head]
    for fam in fams + ["ALL"]:
        sel = [r for r in rows if r.counted and (fam == "ALL" or r.family == fam)]
        lines.append([fam] + [_gmean([r.ratio for r in sel if (r.size, r.mode) == c])
                              for c in cols] + [_gmean([r.ratio for r in sel])])
    widths = [max(len(t[i]) for t in lines) for i in range(len(head))]
    for t in lines:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(t, widths))))
    for s in SIZES:
        over = [r for r in rows if r.counted and r.size == s and r.ratio > FLAG]
        n = sum(1 for r in rows if r.counted and r.size == s)
        if n:
            print(f"{s}: {len(over)} of {n} rows over {FLAG:g} x")
    notes = [r for r in rows if r.note and r.ratio is not None]
    if notes:
        print(f"{len(notes)} timed rows carry a note (mismatch or one-sided error)")


CSV_HEAD = ["op", "family", "size", "mode", "shape", "ember_ms", "torch_ms", "ratio", "note"]


def csv_row(r: Row) -> list:
    return [r.op, r.family, r.size, r.mode, r.shape, r.ember_ms, r.torch_ms,
            None if r.ratio is None else round(r.ratio, 4), r.note]


def limit_memory(gb: float) -> None:
    """Cap this process's address space, so that a case that would need tens of GB raises
    MemoryError (an error row) instead of waking the OOM killer on a shared machine."""
    if gb > 0:
        limit = int(gb * 2 ** 30)
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def threads(spec: str) -> int:
    if spec == "default":
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except (AttributeError, OSError):
            return max(1, os.cpu_count() or 1)
    try:
        n = int(spec)
    except ValueError:
        n = 0
    if n < 1:
        raise SystemExit(f"bench_throughput: --threads expects an int >= 1 or 'default', "
                         f"got {spec!r}")
    return n


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--family", action="append",
                   help="only this family (repeat, or comma-separate, for several)")
    p.add_argument("--op", help="only ops matching this regex (or substring)")
    p.add_argument("--size", choices=list(SIZES), action="append",
                   help="only this size (default both)")
    p.add_argument("--mode", choices=list(MODES), help="fwd, or bwd for fwd+bwd (default both)")
    p.add_argument("--threads", default="1", help="threads for both libraries: N or 'default'")
    p.add_argument("--csv", help="write every row to this CSV file")
    p.add_argument("--top", type=int, help="print only the N worst rows")
    p.add_argument("--repeat", type=int, default=5, help="rounds per case (default 5)")
    p.add_argument("--min-time", type=float, default=0.002,
                   help="seconds of calls per round (default 0.002)")
    p.add_argument("--cap", type=float, default=0.5,
                   help="no new round after this many seconds a case (default 0.5)")
    p.add_argument("--max-memory-gb", type=float, default=8.0,
                   help="address-space cap of the process, 0 for none (default 8)")
    p.add_argument("--list", action="store_true", help="list the selected cases and exit")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = p.parse_args(argv)
    n = threads(args.threads)
    ember.set_num_threads(n)
    torch.set_num_threads(n)
    ember.zeros(1), torch.zeros(1)  # one-time costs (ember loads its plugins) before any case
    cases = select(args)
    sizes = args.size or list(SIZES)
    modes = [args.mode == "bwd"] if args.mode else [False, True]
    if args.list:
        for c in cases:
            print(f"{c.family:12} {c.op:40} {'fwd+bwd' if c.grad else 'fwd'} check={c.check}")
        print(f"{len(cases)} cases; skipped (missing in one library): {SKIPPED or 'none'}")
        return
    names = [MODES["bwd" if b else "fwd"] for b in modes]
    print(f"bench_throughput: {len(cases)} cases x {sizes} x {names}, {n} thread(s) each "
          f"(ember {ember.get_num_threads()}, torch {torch.get_num_threads()}), "
          f"wall time, min of <= {args.repeat} rounds", flush=True)
    limit_memory(args.max_memory_gb)
    out = None
    if args.csv:  # rows are written as they come, so that a crash keeps what was measured
        out = open(args.csv, "w", newline="")
        writer = csv.writer(out)
        writer.writerow(CSV_HEAD)
    rows = []
    for i, case in enumerate(cases):
        for size in sizes:
            for bwd in modes:
                if bwd and not case.grad:
                    continue
                row = run_case(case, size, bwd, args)
                rows.append(row)
                if out is not None:
                    writer.writerow(csv_row(row))
                    out.flush()
                if not args.quiet:
                    ratio = "-" if row.ratio is None else f"{row.ratio:.2f}"
                    print(f"[{i + 1}/{len(cases)}] {row.op} {row.size} {row.mode}: {ratio} "
                          f"{row.note}", file=sys.stderr, flush=True)
        gc.collect()
    print()
    print_table(rows, args.top)
    print_summary(rows)
    if SKIPPED:
        print(f"skipped (missing in one library): {SKIPPED}")
    if out is not None:
        out.close()
        print(f"wrote {len(rows)} rows to {args.csv}")


if __name__ == "__main__":
    main()
